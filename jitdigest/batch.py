"""Many messages at once: ``hash_many``, ``hexdigests``, ``uuid3_many``/``uuid5_many``.

One call hashes a whole batch into one (n, digest_size) uint8 array. ``jitdigest.engine.layout``
brings the messages (a 2-D uint8 array, values with offsets, a list of bytes-like objects,
numpy S arrays, pandas or pyarrow binary/string columns: text as UTF-8, by the rule in
``engine/text.py``; nulls refused) to one layout -- a byte buffer ``values`` and, per
message, ``starts`` and ``lengths`` -- and proves every bound before a kernel runs (Numba does
not bounds-check). The rows then go to the algorithm's ``hash_rows`` kernel entry
(``jitdigest.engine.dispatch``): per-message kernels loop over the one-shot driver, lane
kernels hash a group of messages across SIMD lanes. Rows of one width are hashed as a grid, a
window at a time; mixed lengths are ordered by block count so lane groups stay even. Large
batches are cut into chunks of about equal work hashed by a ``prange`` loop
(``kernels/_rows.py``), with Ctrl-C taken between calls; an ``out`` that may overlap the input
is written only after the input is read. Every row of the table is served, with the keywords
its objects take (``key=``, ``derive_key_context=``, ``length=``) where its row allows them.
"""
from __future__ import annotations

import functools
import operator
import os
import uuid as _uuid
from typing import Any, Iterable, Literal, overload

import numpy as np
import numpy.typing as npt  # (at run time too: typing.get_type_hints resolves the annotations)

from ._typing import ReadableBuffer
from .base import algorithms as _algorithms, config as _config
from .engine import cpu as _cpu, dispatch as _dispatch, layout as _layout, parallel as _parallel

__all__ = ["hash_many", "hexdigests", "uuid3_many", "uuid5_many", "uuid_strings"]


# --- threads --------------------------------------------------------------------------------

def default_threads():
    """Threads ``hash_many`` uses when not told: once Numba's threading layer runs in this
    process, ``numba.get_num_threads()`` for this thread (so ``numba.set_num_threads`` applies);
    before that ``NUMBA_NUM_THREADS`` if set, else the CPUs this process may run on (1 when the
    JIT is off: interpreted kernels hold the GIL)."""
    if not _cpu.jit_enabled():
        return 1
    current = _parallel.current_threads()
    if current is not None:
        return current
    env = os.environ.get("NUMBA_NUM_THREADS")
    if env:
        try:
            return max(1, int(env))
        except ValueError:
            pass
    return _cpus()


@functools.lru_cache(maxsize=None)
def _cpus():
    count = getattr(os, "process_cpu_count", None)       # Python 3.13+
    if count is not None:
        return count() or 1
    try:
        return len(os.sched_getaffinity(0)) or 1
    except AttributeError:
        return os.cpu_count() or 1


def _thread_cap(threads):
    if threads is None:
        return default_threads()
    # A bool is refused, not read as 1: threads=True means "use threads", the opposite of one.
    if isinstance(threads, (bool, np.bool_)):
        raise TypeError("threads must be an int or None, not bool")
    if not isinstance(threads, int):
        try:
            threads = operator.index(threads)
        except TypeError:
            raise TypeError(f"threads must be an int or None, not {type(threads).__name__}") \
                from None
    if threads < 1:
        raise ValueError(f"threads must be at least 1, not {threads}")
    return threads


# --- the driver -----------------------------------------------------------------------------



def initial_state(spec):
    """The read-only initial state words an algorithm's ``hash_rows`` starts from."""
    return spec.initial_state


def _out_length(spec, length):
    if spec.digest_size == 0:
        if length is None:
            raise TypeError(f"hash_many() for {spec.name} needs length= (the number of output "
                            "bytes per message), as its digest() does")
        length = operator.index(length)
        if length < 0:
            raise ValueError("length must be non-negative")
        return length
    if length is not None:
        raise TypeError(f"length= is for SHAKE only: {spec.name} digests are "
                        f"{spec.digest_size} bytes")
    return spec.digest_size


def _entry(ks, spec, grid=None):
    """The kernel set's ``hash_rows`` (``grid`` None), else its ``prange`` entry over a grid's
    windows (``grid`` true) or over chunks of rows: compiled here, in the calling thread, on
    first use."""
    try:
        if grid is None:
            return ks.hash_rows
        return ks.grid_chunks if grid else ks.hash_chunks
    except AttributeError:
        raise NotImplementedError(f"no batch kernel (hash_rows) for {spec.name} in {ks!r}") \
            from None


def _bounds(cuts, n):
    """Chunk boundaries from cut points: on multiples of ``_config.ALIGN`` rows, none empty."""
    align = _config.ALIGN
    cuts = (cuts + align // 2) // align * align
    return np.unique(np.concatenate(([0], np.clip(cuts, 0, n), [n]))).tolist()


def _plan(n, total, work, max_threads):
    """(chunk boundaries, threads) for ``n`` rows of ``total`` blocks of work: up to
    ``max_threads`` threads (fewer below ``_config.MIN_BLOCKS_PER_THREAD`` blocks each), and
    chunks of about ``_config.CHUNK_BLOCKS`` blocks, as many per thread, so that a long call can
    be interrupted between them; ``work()`` gives the running sum of the rows' work in hashing
    order (None: every row costs the same)."""
    groups = -(-n // _config.ALIGN)
    k = max(1, min(max_threads, total // _config.MIN_BLOCKS_PER_THREAD, groups))
    chunks = min(k * max(1, -(-total // (_config.CHUNK_BLOCKS * k))), groups)
    if chunks <= 1:
        return [0, n], 1
    fractions = np.arange(1, chunks, dtype=np.float64) / chunks
    if work is None:
        cuts = (fractions * n).astype(np.int64)
    else:
        work = work()
        cuts = np.searchsorted(work, fractions * float(work[-1]))
    bounds = _bounds(cuts, n)
    return bounds, min(k, len(bounds) - 1)


def _run(kernels, spec, iv, seg, out, max_threads):
    """Hash one segment into ``out`` (its rows only), on up to ``max_threads`` threads."""
    _layout.check_segment(seg)
    n = seg.n
    bs = spec.block_size
    extra = spec.min_padding + bs - 1
    if seg.width is not None:                        # the grid form: rows of one width
        blocks = max(1, (seg.width + extra) // bs)
        bounds, k = _plan(n, blocks * n, None, max_threads)
        starts, lengths, window = _layout.grid_window(seg.width, n)
        _chunks(kernels, spec, True, (seg.values, starts, lengths), window, bounds, (iv, out), k)
        return
    key = seg.lengths + extra
    key //= bs                                       # blocks per message (roughly, for BLAKE2)
    if n <= _config.FEW_ROWS:                        # Python ints: numpy's calls cost more
        listed = key.tolist()
        kmin, kmax, total = min(listed), max(listed), sum(listed) + n
    else:
        kmin, kmax = int(key.min()), int(key.max())
        total = int(key.sum()) + n
    if kmin == kmax:                                 # same block count: no reordering
        rows = np.arange(n, dtype=np.int64)
        bounds, k = _plan(n, total, None, max_threads)
    else:
        rows = np.argsort(key.astype(np.uint16) if kmax < 65536 else key, kind="stable")
        bounds, k = _plan(n, total, lambda: np.cumsum(key[rows] + 1),   # +1: per message
                          max_threads)
    _layout.check_rows(rows, n)
    _chunks(kernels, spec, False, (seg.values, seg.starts, seg.lengths), rows, bounds,
            (iv, out), k)


def _chunks(kernels, spec, grid, head, rows, bounds, tail, threads):
    """The kernel on every chunk of ``rows`` (``bounds``: positions in them; ``grid``: rows of
    the grid, ``rows`` and ``head``'s index arrays a window's): on ``threads`` threads by the
    backend's ``prange`` entry, ``threads`` chunks per call; on one thread by ``hash_rows``, a
    chunk (a grid: a window) per call. Between calls the calling thread takes signals, so
    Ctrl-C ends a long batch within about a chunk."""
    if threads > 1 and _parallel.usable():
        entry = _entry(kernels, spec, bool(grid))
        cuts = np.asarray(bounds, dtype=np.int64)
        step = threads * _config.CHUNKS_PER_CALL
        with _parallel.region(threads):
            for i in range(0, len(cuts) - 1, step):
                entry(*head, rows, cuts[i:i + step + 1], *tail)
        return
    entry = _entry(kernels, spec)
    for args in _calls(grid, head, rows, bounds, tail):
        entry(*args)


def _calls(grid, head, rows, bounds, tail):
    """``hash_rows``' arguments for each chunk of ``rows`` in turn; a grid's for each window of
    each chunk (what ``kernels/_rows.over_grid`` does in parallel)."""
    if not grid:
        for a, b in zip(bounds[:-1], bounds[1:]):
            yield (*head, rows[a:b], *tail)
        return
    values, starts, lengths = head
    iv, out = tail
    width, window = int(lengths[0]), len(rows)
    for a, b in zip(bounds[:-1], bounds[1:]):
        for first in range(a, b, window):
            stop = min(first + window, b)
            yield (values[first * width:stop * width], starts, lengths, rows[:stop - first], iv,
                   out[first:stop])


def _hash_segments(spec, segments, n, outlen, given_out, threads, iv=None):
    """Hash every segment into ``out`` (checked; made when not given), from ``iv`` (None: the
    algorithm's initial state)."""
    target = out = _layout.check_out(given_out, n, outlen)
    if n == 0 or outlen == 0:
        return out if given_out is None else given_out
    if _layout.overlaps(out, segments):
        target = np.empty_like(out)      # as numpy does: never write over unread input
    if iv is None:
        iv = initial_state(spec)
    mean = sum(seg.nbytes() for seg in segments) // n
    kernels = _dispatch.batch_kernels_for(spec, n, mean)
    for seg in segments:
        view = target if seg.n == n else target[seg.row0:seg.row0 + seg.n]
        _run(kernels, spec, iv, seg, view, threads)
    if target is not out:
        out[...] = target
    return out if given_out is None else given_out


# the algorithms whose batches take key= and derive_key_context= (in hash_many's error)
_KEYED_NAMES = " and ".join(name for name, spec in _algorithms.TABLE.items() if spec.derive_key)


@overload
def hash_many(name: str, messages: Any, offsets: Any = None, *,
              key: ReadableBuffer | None = None,
              derive_key_context: str | ReadableBuffer | None = None,
              length: int | None = None,
              out: npt.NDArray[np.uint8] | None = None, threads: int | None = None,
              hex: Literal[False] = False) -> npt.NDArray[np.uint8]: ...
@overload
def hash_many(name: str, messages: Any, offsets: Any = None, *,
              key: ReadableBuffer | None = None,
              derive_key_context: str | ReadableBuffer | None = None,
              length: int | None = None,
              out: None = None, threads: int | None = None,
              hex: Literal[True]) -> npt.NDArray[np.bytes_]: ...
def hash_many(name: str, messages: Any, offsets: Any = None, *,
              key: ReadableBuffer | None = None,
              derive_key_context: str | ReadableBuffer | None = None,
              length: int | None = None,
              out: npt.NDArray[np.uint8] | None = None, threads: int | None = None,
              hex: bool = False) -> npt.NDArray[np.uint8] | npt.NDArray[np.bytes_]:
    """Digests of many messages at once: a C-contiguous (n, digest_size) uint8 array whose row
    i is ``hashlib.new(name, message_i).digest()``; with ``hex=True`` their lowercase hex.

    ``name``: any name ``jitdigest.new`` takes (BLAKE2 with its default parameters), and
    the names of the table's other rows: row i is then ``jitdigest.new(name, message_i, key=key,
    derive_key_context=derive_key_context).digest(length)`` (``length`` default 32; ``key``
    and ``derive_key_context`` only for those, checked as their package checks them).
    ``messages``: a 2-D C-contiguous uint8 array (n messages of equal length), a 1-D uint8
    array or bytes-like ``values`` with ``offsets`` (n + 1 integers: message i is
    ``values[offsets[i]:offsets[i+1]]``), a sequence of bytes-like objects, or a pyarrow
    binary/string array, or a 1-D numpy ``S`` array (item i as numpy reads it, ``arr[i]``:
    trailing NUL bytes stripped; for all the itemsize bytes pass
    ``arr.view(np.uint8).reshape(n, -1)``).
    Text: a container whose type says it holds text is hashed as each item's UTF-8 bytes: a
    pandas Series, Index or array of a string dtype (``str``, pandas 3's default;
    ``string[python]``, ``string[pyarrow]``, ``ArrowDtype`` of a string type) and pyarrow
    string, large_string and string_view arrays. A Python ``str`` anywhere else (alone, in a
    list or tuple, a numpy object or ``U`` array, an object-dtype Series) raises hashlib's
    TypeError: encode it first. Nulls in a pandas or pyarrow column (None, NaN, pd.NA) raise
    ValueError naming how many and the first one's row (in a list, None is refused as
    hashlib refuses it, TypeError). (The rule: ``jitdigest.engine.text``.)
    ``length``: for SHAKE, the output bytes per message (required, as for its digest()); for
    the other rows, as for their digest() (default 32).
    ``out``: a C-contiguous writable (n, digest_size) uint8 array ((n, length) for SHAKE and
    the other rows) to write into (and return);
    it may overlap the input (the rows are then computed first and copied in, as numpy does).
    ``threads``: the most threads to use, an int (default: ``default_threads()``; the
    parallel region's thread count for this call, as ``numba.set_num_threads``); small
    batches use one. Ctrl-C ends a long call between chunks of about
    ``_config.CHUNK_BLOCKS`` blocks.
    ``hex``: return the lowercase hex of each digest as a 1-D numpy ``S{2 * size}`` array
    (ASCII, one byte a digit: ``hx[i].decode()`` is ``hexdigest()``), made in place in that
    array's own memory, so that the call needs little more than the hex text itself. Not a
    ``U`` array (four bytes a digit) nor Python str objects, which cost several times that;
    not pyarrow, which jitdigest does not require (``pyarrow.array(hx, pyarrow.string())``
    converts it; ``hx.astype(str)`` gives what ``hexdigests`` does). ``out`` is for digests
    only, not with ``hex=True``.
    """
    spec = _algorithms.lookup_any(name)
    if not spec.hashlib:                    # its package's parameters and errors
        from ._constructors import object_type
        objects = object_type(spec)
        iv = objects._batch_params(key, derive_key_context)
        outlen = objects._output_length(length)
    else:
        if key is not None or derive_key_context is not None:
            raise TypeError(f"key= and derive_key_context= are for {_KEYED_NAMES}, not "
                            f"{spec.name} (for a keyed hash of many messages see hmac_many)")
        iv = None
        outlen = _out_length(spec, length)
    threads = _thread_cap(threads)
    if hex and out is not None:
        raise TypeError("out= takes digests: it does not go with hex=True")
    segments, n = _layout.segments(messages, offsets)
    if not hex:
        return _hash_segments(spec, segments, n, outlen, out, threads, iv)
    if outlen > _MAX_STR_BYTES:
        raise ValueError(f"digests of {outlen} bytes are too long for a numpy bytes array")
    if outlen == 0:
        return np.zeros(n, "S1")
    # The digests are hashed into the second half of the text's memory, then rewritten front
    # to back as hex: text row i ends at byte 2 * size * (i + 1) <= size * (n + i + 1), the
    # start of digest row i + 1, so no digest is overwritten before it is read.
    text = np.empty(2 * n * outlen, np.uint8)
    digests = text[n * outlen:].reshape(n, outlen)
    _hash_segments(spec, segments, n, outlen, digests, threads, iv)
    _hex_into(digests, text.view(np.uint16))
    return text.view(f"S{2 * outlen}")


# --- hex and UUID strings -------------------------------------------------------------------

def _digest_array(digests: Any, what: str = "digests") -> npt.NDArray[np.uint8]:
    """``digests`` as a C-contiguous plain ndarray (a copy if it has another layout)."""
    if not isinstance(digests, np.ndarray):
        raise TypeError(f"{what} must be a numpy uint8 array, not {type(digests).__name__}")
    digests = _layout.plain(digests)
    if digests.dtype != np.uint8:
        raise TypeError(f"{what} must have dtype uint8, not {digests.dtype}")
    if digests.ndim != 2:
        raise ValueError(f"{what} must be 2-D (n, size), not {digests.ndim}-D")
    return np.ascontiguousarray(digests)


# Byte value -> its two hex digits as two UCS4 code points, i.e. numpy's ``<U2`` layout: a
# gather through this table gives the str array's memory directly (no S -> U conversion).
_HEX_PAIRS = np.array([[ord(c) for c in "%02x" % i] for i in range(256)], "<u4").view("<u8")[:, 0]
_DASH = ord("-")
# a UUID string's 36 code points as indices into the 32 hex digits + a dash at index 32
_UUID_LAYOUT = np.array([*range(0, 8), 32, *range(8, 12), 32, *range(12, 16), 32,
                         *range(16, 20), 32, *range(20, 32)])


_MAX_STR_BYTES = np.iinfo(np.int32).max // 8     # numpy's str itemsize limit, in hex digit pairs
# byte value -> its two lowercase hex digits as ASCII, read as one native uint16
_HEX_ASCII = np.frombuffer("".join(f"{i:02x}" for i in range(256)).encode(), np.uint16)
_HEX_BLOCK = 1 << 16             # digest bytes made hex a step at a time (bounds the temporaries)


def _hex_into(digests: npt.NDArray[np.uint8], text: npt.NDArray[np.uint16]) -> None:
    """The hex of (n, size) uint8 ``digests`` into ``text`` (n * size uint16, two ASCII digits
    each), a block of rows at a time, each block copied before its text is written: the
    digests may lie in ``text``'s memory past the rows written so far (``hash_many``'s
    ``hex=True``)."""
    n, size = digests.shape
    step = max(1, _HEX_BLOCK // size)
    for a in range(0, n, step):
        b = min(a + step, n)
        block = digests[a:b].reshape(-1).copy()
        np.take(_HEX_ASCII, block, out=text[a * size:b * size], mode="clip")


def hexdigests(digests: npt.NDArray[np.uint8], *, as_bytes: bool = False) -> npt.NDArray[Any]:
    """Row-wise lowercase hex of a (n, size) uint8 array (e.g. from ``hash_many``): a numpy
    array of n str, like ``[bytes(row).hex() for row in digests]`` but vectorised; with
    ``as_bytes=True`` a numpy ``S{2 * size}`` array of the ASCII hex (one byte a digit, a
    quarter of the str array's memory), as ``hash_many(..., hex=True)`` returns."""
    digests = _digest_array(digests)
    n, size = digests.shape
    if size == 0:
        return np.zeros(n, dtype="S1" if as_bytes else "<U1")
    if size > _MAX_STR_BYTES:
        raise ValueError(f"rows of {size} bytes are too long for a numpy str array")
    if as_bytes:
        text = np.empty(n * size, np.uint16)
        _hex_into(digests, text)
        return text.view(f"S{2 * size}")
    return _HEX_PAIRS[digests].view(f"<U{2 * size}").reshape(n)


def uuid_strings(uuids: npt.NDArray[np.uint8]) -> npt.NDArray[np.str_]:
    """A (n, 16) uint8 array of UUID bytes as a numpy array of n str formatted as
    ``str(uuid.UUID(bytes=row))`` (``xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx``)."""
    uuids = _digest_array(uuids, "uuids")
    if uuids.shape[1] != 16:
        raise ValueError(f"uuids must have 16 bytes per row, not {uuids.shape[1]}")
    n = uuids.shape[0]
    pairs = np.empty((n, 17), "<u8")
    pairs[:, :16] = _HEX_PAIRS[uuids]
    points = pairs.view("<u4")                     # (n, 34): 32 digits, a dash, padding
    points[:, 32] = _DASH
    return np.take(points, _UUID_LAYOUT, axis=1).view("<U36").reshape(n)


def _uuid_many(version, algorithm, namespace, names, as_strings, threads):
    threads = _thread_cap(threads)
    if not isinstance(namespace, _uuid.UUID):
        raise TypeError(f"namespace must be a uuid.UUID, not {type(namespace).__name__}")
    if isinstance(names, (str, bytes, bytearray, memoryview)):
        raise TypeError("names must be a sequence of str or bytes, not a single "
                        f"{type(names).__name__}")
    seg = _layout.uuid_messages(namespace.bytes, names)
    spec = _algorithms.SPECS[algorithm]
    # hash_rows writes the first out.shape[1] bytes: 16 of SHA-1's 20
    out = _hash_segments(spec, [seg], seg.n, 16, None, threads)
    out[:, 6] &= 0x0F
    out[:, 6] |= version << 4
    out[:, 8] &= 0x3F
    out[:, 8] |= 0x80
    return uuid_strings(out) if as_strings else out


def uuid3_many(namespace: _uuid.UUID, names: Iterable[str | ReadableBuffer], *,
               as_strings: bool = False, threads: int | None = None) -> npt.NDArray[Any]:
    """``uuid.uuid3(namespace, name)`` for every name (str, UTF-8 encoded, or bytes), as a
    (n, 16) uint8 array of UUID bytes, or with ``as_strings=True`` a numpy array of their
    ``str()`` forms."""
    return _uuid_many(3, "md5", namespace, names, as_strings, threads)


def uuid5_many(namespace: _uuid.UUID, names: Iterable[str | ReadableBuffer], *,
               as_strings: bool = False, threads: int | None = None) -> npt.NDArray[Any]:
    """``uuid.uuid5(namespace, name)`` for every name (str, UTF-8 encoded, or bytes), as a
    (n, 16) uint8 array of UUID bytes, or with ``as_strings=True`` a numpy array of their
    ``str()`` forms."""
    return _uuid_many(5, "sha1", namespace, names, as_strings, threads)
