"""Many messages at once: ``hash_many``, ``hexdigests``, ``uuid3_many``/``uuid5_many``.

One call hashes a whole batch into one (n, digest_size) uint8 array. The messages are first
brought to one layout -- a byte buffer ``values`` and, per message, ``starts`` and ``lengths``
(int64) -- then handed, as row numbers, to the algorithm's ``hash_rows`` kernel entry (see
``jitdigest._dispatch``): the per-message kernels loop over the one-shot driver, multi-buffer
("lanes") kernels hash a group of messages across SIMD lanes. Python never touches a message
one at a time (except to join a list of separate ``bytes`` objects into one buffer).

Layouts accepted by ``hash_many``:

* a 2-D C-contiguous uint8 array (n, L): n messages of L bytes;
* a 1-D uint8 ``values`` array (or any bytes-like object) with ``offsets`` of length n + 1:
  message i is ``values[offsets[i]:offsets[i+1]]`` (Arrow's binary layout; int64 offsets, or
  another integer dtype converted safely);
* a list, tuple or other iterable of bytes-like objects (joined once into one buffer);
* pyarrow ``binary``, ``large_binary``, ``string``, ``large_string`` (the UTF-8 bytes),
  ``fixed_size_binary`` and view arrays, plain or chunked, when pyarrow is installed (it is
  recognised by its module name; jitdigest never imports it otherwise). Slices are honoured.
  **Nulls are refused** (``ValueError``): hashing a null as the empty message would give a
  plausible-looking digest for missing data; drop or fill them first (``arr.drop_null()``,
  ``pyarrow.compute.fill_null(arr, b"")``).

Design:

* A 2-D array (and an Arrow ``fixed_size_binary`` array) goes to the grid form of
  ``hash_rows`` (``jitdigest/kernels/_rows.py``): rows of one width, no index arrays. Building
  ``starts``/``lengths``/``rows`` for 100k 64-byte rows (2.4 MB, fresh pages every call) took
  as long as MD5's hashing of them.
* Rows are reordered by their block count (a stable ``np.argsort``, a radix sort on 16-bit keys)
  when lengths differ, so that a lane kernel's groups of consecutive rows need about the same
  number of blocks; the kernels themselves still handle mixed lengths. Output rows are written
  in place (``out[r]``), so the order never shows.
* Cores: the rows are cut into chunks of about equal work (blocks, not rows; cut points on
  multiples of 64 rows so lane groups stay whole), and Python threads from one shared pool call
  the GIL-free ``hash_rows`` entry on disjoint chunks, the calling thread taking the first.
  That is thread-safe by construction (each call writes only its own rows of its own ``out``),
  so several threads may call ``hash_many`` at once; it needs no ``parallel=True`` kernel
  (Numba's parallel layers abort or serialise when two threads enter one at once). A batch
  under about 2048 blocks per thread runs on the calling thread alone.
"""
import functools
import operator
import os
import threading
import uuid as _uuid

import numpy as np

from . import _algorithms, _cpu, _dispatch

__all__ = ["hash_many", "hexdigests", "uuid3_many", "uuid5_many", "uuid_strings"]

ALIGN = 64                      # chunk boundaries fall on multiples of this many sorted rows
MIN_BLOCKS_PER_THREAD = 2048    # below this much work per thread, fewer threads
_INT64_MAX = np.iinfo(np.int64).max

# --- threads --------------------------------------------------------------------------------

def default_threads():
    """Threads ``hash_many`` uses when not told: ``NUMBA_NUM_THREADS`` if set, else the CPUs
    this process may run on (1 when the JIT is off: interpreted kernels hold the GIL)."""
    env = os.environ.get("NUMBA_NUM_THREADS")
    if env:
        try:
            return max(1, int(env))
        except ValueError:
            pass
    if not _cpu.jit_enabled():
        return 1
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


_pool = None
_pool_lock = threading.Lock()


def _executor():
    global _pool
    if _pool is None:
        with _pool_lock:
            if _pool is None:
                from concurrent.futures import ThreadPoolExecutor
                _pool = ThreadPoolExecutor(max_workers=max(32, os.cpu_count() or 1),
                                           thread_name_prefix="jitdigest")
    return _pool


def _forget_pool():
    global _pool, _pool_lock
    _pool = None                 # a forked child has none of the parent's threads
    _pool_lock = threading.Lock()
    _cpus.cache_clear()


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_forget_pool)


def _thread_cap(threads):
    if threads is None:
        return default_threads()
    if isinstance(threads, bool) or not isinstance(threads, int):
        try:
            threads = operator.index(threads)
        except TypeError:
            raise TypeError(f"threads must be an int or None, not {type(threads).__name__}") \
                from None
    if threads < 1:
        raise ValueError(f"threads must be at least 1, not {threads}")
    return threads


# --- input layouts --------------------------------------------------------------------------

class _Segment:
    """Messages for output rows row0 + i: ``values[starts[i]:starts[i]+lengths[i]]`` (the rows
    form of ``hash_rows``), or, when ``width`` is set, ``values[i*width:(i+1)*width]`` (the grid
    form: no index arrays)."""
    __slots__ = ("row0", "values", "starts", "lengths", "width", "n")

    def __init__(self, row0, values, starts, lengths, width=None, n=None):
        self.row0, self.values, self.starts, self.lengths = row0, values, starts, lengths
        self.width = width
        self.n = starts.shape[0] if n is None else n

    @classmethod
    def grid(cls, row0, values, width, n):
        return cls(row0, values, None, None, width, n)

    def nbytes(self):
        if self.width is not None:
            return self.width * self.n
        return int(self.lengths.sum())


def _is_buffer(obj):
    try:
        memoryview(obj)
    except TypeError:
        return False
    return True


def _rows_2d(arr):
    if arr.dtype != np.uint8:
        raise TypeError(f"a 2-D messages array must have dtype uint8, not {arr.dtype} "
                        "(use .view(np.uint8) for raw bytes)")
    if not arr.flags.c_contiguous:
        raise ValueError("a 2-D messages array must be C-contiguous "
                         "(use np.ascontiguousarray)")
    n, width = arr.shape
    return _Segment.grid(0, arr.reshape(-1), width, n)


def _as_values(values):
    """``values`` as a 1-D C-contiguous uint8 array (no copy)."""
    if isinstance(values, np.ndarray):
        if values.ndim != 1:
            raise ValueError(f"values must be 1-D, not {values.ndim}-D")
        if values.dtype != np.uint8:
            raise TypeError(f"values must have dtype uint8, not {values.dtype} "
                            "(use .view(np.uint8) for raw bytes)")
        if not values.flags.c_contiguous:
            raise ValueError("values must be C-contiguous (use np.ascontiguousarray)")
        return values
    if isinstance(values, str):
        raise TypeError("Strings must be encoded before hashing")
    try:
        return np.frombuffer(values, np.uint8)
    except TypeError:
        raise TypeError("values must be a uint8 array or a bytes-like object, not "
                        f"{type(values).__name__}") from None


def _as_offsets(offsets):
    """Offsets as an int64 array, converted only where no value can change."""
    off = offsets if isinstance(offsets, np.ndarray) else np.asarray(offsets)
    if off.ndim != 1 or off.shape[0] == 0:
        raise ValueError("offsets must be 1-D with n + 1 entries "
                         f"(got shape {off.shape})")
    if off.dtype.kind not in "iu":
        raise TypeError(f"offsets must be integers, not {off.dtype}")
    if off.dtype != np.int64:
        if not np.can_cast(off.dtype, np.int64, "safe") and int(off.max()) > _INT64_MAX:
            raise ValueError("offsets do not fit in int64")
        off = off.astype(np.int64)
    return off


def _values_offsets(values, offsets, row0=0):
    values = _as_values(values)
    off = _as_offsets(offsets)
    lengths = np.diff(off)
    first, last = int(off[0]), int(off[-1])
    if first < 0:
        raise ValueError(f"offsets[0] = {first} is negative")
    if lengths.shape[0] and lengths.min() < 0:
        i = int(np.argmax(lengths < 0))
        raise ValueError(f"offsets must be non-decreasing: offsets[{i + 1}] = {int(off[i + 1])}"
                         f" < offsets[{i}] = {int(off[i])}")
    if last > values.shape[0]:
        raise ValueError(f"offsets[-1] = {last} is past the end of values "
                         f"({values.shape[0]} bytes)")
    starts = off[:-1]
    if not starts.flags.c_contiguous:
        starts = np.ascontiguousarray(starts)
    return _Segment(row0, values, starts, lengths)


def _bad_item(items):
    """The TypeError for the first item of a message list that is not bytes-like."""
    for i, item in enumerate(items):
        if isinstance(item, str):
            return TypeError(f"Strings must be encoded before hashing (message {i} is a str)")
        try:
            memoryview(item)
        except TypeError:
            return TypeError(f"message {i}: object supporting the buffer API required, "
                             f"not {type(item).__name__!r}")
    return None


def _join(items, sep=b""):
    """``sep`` + ``sep.join(items)`` as one buffer and each item's length in bytes."""
    n = len(items)
    try:
        joined = sep.join(items)
    except TypeError as exc:
        raise (_bad_item(items) or exc) from None
    lengths = None
    try:
        lengths = np.fromiter(map(len, items), np.int64, n)
    except TypeError:
        pass
    # len() is the byte count for bytes/bytearray/byte memoryviews and never more than it for
    # other buffers, so equal totals mean every length is right.
    if lengths is None or int(lengths.sum()) + len(sep) * max(n - 1, 0) != len(joined):
        lengths = np.fromiter((memoryview(m).nbytes for m in items), np.int64, n)
    return joined, lengths


def _exclusive_cumsum(lengths):
    """starts[i] = sum(lengths[:i])."""
    starts = np.empty(lengths.shape[0], np.int64)
    if starts.shape[0]:
        starts[0] = 0
        np.cumsum(lengths[:-1], out=starts[1:])
    return starts


def _sequence(items):
    if not isinstance(items, (list, tuple)):
        items = list(items)
    joined, lengths = _join(items)
    return _Segment(0, np.frombuffer(joined, np.uint8), _exclusive_cumsum(lengths), lengths)


def _is_arrow(obj):
    return type(obj).__module__.partition(".")[0] == "pyarrow"


def _arrow_segments(arr):
    import pyarrow as pa
    if isinstance(arr, pa.ChunkedArray):
        chunks = arr.chunks
    elif isinstance(arr, pa.Array):
        chunks = [arr]
    else:
        raise TypeError(f"unsupported pyarrow object {type(arr).__name__}: pass an Array or "
                        "ChunkedArray of binary or string type")
    nulls = arr.null_count
    if nulls:
        raise ValueError(f"messages has {nulls} null entr{'y' if nulls == 1 else 'ies'}: drop "
                         "them (arr.drop_null()) or fill them (pyarrow.compute.fill_null) first")
    segments = []
    row0 = 0
    for chunk in chunks:
        n = len(chunk)
        t = chunk.type
        if n == 0:
            continue
        if (getattr(pa.types, "is_binary_view", None) and pa.types.is_binary_view(t)) or (
                getattr(pa.types, "is_string_view", None) and pa.types.is_string_view(t)):
            chunk = chunk.cast(pa.large_binary())     # views: one copy into Arrow's offsets
            t = chunk.type
        buffers = chunk.buffers()
        data = buffers[-1]
        values = np.frombuffer(data, np.uint8) if data is not None else np.empty(0, np.uint8)
        if pa.types.is_fixed_size_binary(t):
            width = t.byte_width
            first, stop = chunk.offset * width, (chunk.offset + n) * width
            if stop > values.shape[0]:
                raise ValueError("fixed_size_binary array is shorter than its length says")
            segments.append(_Segment.grid(row0, values[first:stop], width, n))
        else:
            if pa.types.is_binary(t) or pa.types.is_string(t):
                odtype = np.int32
            elif pa.types.is_large_binary(t) or pa.types.is_large_string(t):
                odtype = np.int64
            else:
                raise TypeError(f"pyarrow arrays of type {t} cannot be hashed: use binary, "
                                "large_binary, string, large_string or fixed_size_binary")
            offsets = np.frombuffer(buffers[1], odtype)[chunk.offset:chunk.offset + n + 1]
            segments.append(_values_offsets(values, offsets, row0))
        row0 += n
    return segments, len(arr)


def _segments(messages, offsets):
    """(list of _Segment, number of messages) for any accepted layout."""
    if isinstance(messages, np.ndarray):
        if messages.ndim == 2:
            if offsets is not None:
                raise TypeError("offsets go with a 1-D values array, not a 2-D array of rows")
            return [_rows_2d(messages)], messages.shape[0]
        if messages.ndim == 1 and offsets is not None:
            seg = _values_offsets(messages, offsets)
            return [seg], seg.n
        if messages.ndim == 1 and messages.dtype == object:
            seg = _sequence(messages.tolist())
            return [seg], seg.n
        if messages.ndim == 1:
            raise TypeError("a 1-D array of message bytes needs offsets (n + 1 of them); "
                            "for n messages of equal length pass a 2-D (n, L) array")
        raise ValueError(f"messages must be a 2-D (n, L) or 1-D uint8 array, not "
                         f"{messages.ndim}-D")
    if isinstance(messages, str):
        raise TypeError("Strings must be encoded before hashing")
    if messages is None:
        raise TypeError("messages must be an array, a sequence of bytes-like objects or a "
                        "pyarrow binary array, not None")
    if _is_arrow(messages):
        if offsets is not None:
            raise TypeError("offsets go with a values buffer, not with a pyarrow array")
        return _arrow_segments(messages)
    if offsets is not None:
        seg = _values_offsets(messages, offsets)
        return [seg], seg.n
    if _is_buffer(messages):
        raise TypeError("messages is a single bytes-like object: pass offsets to split it into "
                        "messages, or a list of messages (to hash one message use jitdigest.new)")
    try:
        iter(messages)
    except TypeError:
        raise TypeError("messages must be an array, a sequence of bytes-like objects or a "
                        f"pyarrow binary array, not {type(messages).__name__}") from None
    seg = _sequence(messages)
    return [seg], seg.n


# --- the driver -----------------------------------------------------------------------------

_IVS = {}


def initial_state(spec):
    """The read-only initial state words an algorithm's ``hash_rows`` starts from (BLAKE2: its
    default parameters, asked of the blake2 class)."""
    iv = _IVS.get(spec.name)
    if iv is None:
        if spec.iv:
            iv = spec.initial_state
        else:
            import jitdigest
            iv = getattr(jitdigest, spec.name)()._iv
        _IVS[spec.name] = iv
    return iv


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


def _check_out(out, n, outlen):
    if out is None:
        return np.empty((n, outlen), np.uint8)
    if not isinstance(out, np.ndarray):
        raise TypeError(f"out must be a numpy array, not {type(out).__name__}")
    if out.dtype != np.uint8:
        raise TypeError(f"out must have dtype uint8, not {out.dtype}")
    if out.shape != (n, outlen):
        raise ValueError(f"out has shape {out.shape}, expected {(n, outlen)}")
    if not out.flags.c_contiguous:
        raise ValueError("out must be C-contiguous")
    if not out.flags.writeable:
        raise ValueError("out is read-only")
    return out


def _entry(ks, spec, entry):
    try:
        return getattr(ks, entry)    # compiled here, in the calling thread, on first use
    except AttributeError:
        raise NotImplementedError(f"no batch kernel (hash_rows) for {spec.name} in {ks!r}") \
            from None


def _bounds(cuts, n):
    """Chunk boundaries from cut points: on multiples of ALIGN rows, none empty."""
    cuts = (cuts + ALIGN // 2) // ALIGN * ALIGN
    return np.unique(np.concatenate(([0], np.clip(cuts, 0, n), [n]))).tolist()


def _run(kernels, spec, iv, seg, out, max_threads):
    """Hash one segment into ``out`` (its rows only), on up to ``max_threads`` threads."""
    n = seg.n
    bs = spec.block_size
    extra = spec.min_padding + bs - 1
    if seg.width is not None:                        # the grid form: rows of one width
        total = max(1, (seg.width + extra) // bs) * n
        k = max(1, min(max_threads, total // MIN_BLOCKS_PER_THREAD, -(-n // ALIGN)))
        bounds = [0, n] if k == 1 else _bounds(np.arange(1, k, dtype=np.int64) * n // k, n)
        _call_on_threads(_entry(kernels, spec, "hash_grid"),
                         [(seg.values, seg.width, seg.width, (a, b), iv, out)
                          for a, b in zip(bounds[:-1], bounds[1:])])
        return
    key = seg.lengths + extra
    key //= bs                                       # blocks per message (roughly, for BLAKE2)
    kmin, kmax = int(key.min()), int(key.max())
    total = int(key.sum()) + n
    k = max(1, min(max_threads, total // MIN_BLOCKS_PER_THREAD, -(-n // ALIGN)))
    if kmin == kmax:                                 # same block count: no reordering
        rows = np.arange(n, dtype=np.int64)
        bounds = [0, n] if k == 1 else _bounds(np.arange(1, k, dtype=np.int64) * n // k, n)
    else:
        rows = np.argsort(key.astype(np.uint16) if kmax < 65536 else key, kind="stable")
        if k == 1:
            bounds = [0, n]
        else:
            work = np.cumsum(key[rows] + 1)          # +1: the per-message cost
            bounds = _bounds(np.searchsorted(
                work, np.arange(1, k, dtype=np.int64) * int(work[-1]) // k), n)
    _call_on_threads(_entry(kernels, spec, "hash_rows"),
                     [(seg.values, seg.starts, seg.lengths, rows[a:b], iv, out)
                      for a, b in zip(bounds[:-1], bounds[1:])])


def _call_on_threads(entry, calls):
    """``entry(*args)`` for every argument tuple: the first on this thread, the others on the
    pool's, at once (the entries release the GIL)."""
    if len(calls) == 1:
        entry(*calls[0])
        return
    pool = _executor()
    futures = [pool.submit(entry, *args) for args in calls[1:]]
    try:
        entry(*calls[0])
    finally:
        for f in futures:            # never return while a worker may still write into out
            f.result()


def _hash_segments(spec, segments, n, outlen, out, threads, kernels=None):
    out = _check_out(out, n, outlen)
    if n == 0 or outlen == 0:
        return out
    iv = initial_state(spec)
    if kernels is None:
        mean = sum(seg.nbytes() for seg in segments) // n
        kernels = _dispatch.batch_kernels_for(spec, mean, n)
    for seg in segments:
        view = out if seg.n == n else out[seg.row0:seg.row0 + seg.n]
        _run(kernels, spec, iv, seg, view, threads)
    return out


def _hash_many(name, messages, offsets=None, length=None, out=None, threads=None, kernels=None):
    spec = _algorithms.lookup(name)
    outlen = _out_length(spec, length)
    threads = _thread_cap(threads)
    segments, n = _segments(messages, offsets)
    return _hash_segments(spec, segments, n, outlen, out, threads, kernels)


def hash_many(name, messages, offsets=None, *, length=None, out=None, threads=None):
    """Digests of many messages at once: a C-contiguous (n, digest_size) uint8 array whose row
    i is ``hashlib.new(name, message_i).digest()``.

    ``name``: any name ``jitdigest.new`` takes (BLAKE2 with its default parameters).
    ``messages``: a 2-D C-contiguous uint8 array (n messages of equal length), a 1-D uint8
    array or bytes-like ``values`` with ``offsets`` (n + 1 integers: message i is
    ``values[offsets[i]:offsets[i+1]]``), a sequence of bytes-like objects, or a pyarrow
    binary/string array (nulls raise ValueError).
    ``length``: for SHAKE, the output bytes per message (required, as for its digest()).
    ``out``: a C-contiguous writable (n, digest_size) uint8 array to write into (and return).
    ``threads``: the most threads to use (default: ``default_threads()``); small batches use one.
    """
    return _hash_many(name, messages, offsets, length, out, threads)


# --- hex and UUID strings -------------------------------------------------------------------

def _digest_array(digests, what="digests"):
    if not isinstance(digests, np.ndarray):
        raise TypeError(f"{what} must be a numpy uint8 array, not {type(digests).__name__}")
    if digests.dtype != np.uint8:
        raise TypeError(f"{what} must have dtype uint8, not {digests.dtype}")
    if digests.ndim != 2:
        raise ValueError(f"{what} must be 2-D (n, size), not {digests.ndim}-D")
    return digests


# Byte value -> its two hex digits as two UCS4 code points, i.e. numpy's ``<U2`` layout: a
# gather through this table gives the str array's memory directly (no S -> U conversion).
_HEX_PAIRS = np.array([[ord(c) for c in "%02x" % i] for i in range(256)], "<u4").view("<u8")[:, 0]
_DASH = ord("-")
# a UUID string's 36 code points as indices into the 32 hex digits + a dash at index 32
_UUID_LAYOUT = np.array([*range(0, 8), 32, *range(8, 12), 32, *range(12, 16), 32,
                         *range(16, 20), 32, *range(20, 32)])


def hexdigests(digests):
    """Row-wise lowercase hex of a (n, size) uint8 array (e.g. from ``hash_many``): a numpy
    array of n str, like ``[bytes(row).hex() for row in digests]`` but vectorised."""
    digests = _digest_array(digests)
    n, size = digests.shape
    if size == 0:
        return np.zeros(n, dtype="<U1")
    return _HEX_PAIRS[digests].view(f"<U{2 * size}").reshape(n)


def uuid_strings(uuids):
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


def _uuid_messages(namespace, names):
    """One segment of the messages ``namespace.bytes + name`` (str names UTF-8 encoded)."""
    if not isinstance(namespace, _uuid.UUID):
        raise TypeError(f"namespace must be a uuid.UUID, not {type(namespace).__name__}")
    if isinstance(names, (str, bytes, bytearray, memoryview)):
        raise TypeError("names must be a sequence of str or bytes, not a single "
                        f"{type(names).__name__}")
    if not isinstance(names, (list, tuple)):
        names = names.tolist() if isinstance(names, np.ndarray) else list(names)
    ns = namespace.bytes
    n = len(names)
    try:
        text = "".join(names)
    except TypeError:
        text = None
    if text is not None and text.isascii():
        # all str, all ASCII: UTF-8 is Latin-1 there, so one join does it, namespace included
        joined = ns.decode("latin-1").join(["", *names]).encode("latin-1")
        lengths = np.fromiter(map(len, names), np.int64, n)
    else:
        encoded = [m.encode("utf-8") if isinstance(m, str) else m for m in names]
        body, lengths = _join(encoded, ns)
        joined = ns + body
    lengths += 16
    starts = _exclusive_cumsum(lengths)
    return _Segment(0, np.frombuffer(joined, np.uint8), starts, lengths)


def _uuid_many(version, algorithm, namespace, names, as_strings, threads):
    threads = _thread_cap(threads)
    seg = _uuid_messages(namespace, names)
    spec = _algorithms.SPECS[algorithm]
    # hash_rows writes the first out.shape[1] bytes: 16 of SHA-1's 20
    out = _hash_segments(spec, [seg], seg.n, 16, None, threads)
    out[:, 6] &= 0x0F
    out[:, 6] |= version << 4
    out[:, 8] &= 0x3F
    out[:, 8] |= 0x80
    return uuid_strings(out) if as_strings else out


def uuid3_many(namespace, names, *, as_strings=False, threads=None):
    """``uuid.uuid3(namespace, name)`` for every name (str, UTF-8 encoded, or bytes), as a
    (n, 16) uint8 array of UUID bytes, or with ``as_strings=True`` a numpy array of their
    ``str()`` forms."""
    return _uuid_many(3, "md5", namespace, names, as_strings, threads)


def uuid5_many(namespace, names, *, as_strings=False, threads=None):
    """``uuid.uuid5(namespace, name)`` for every name (str, UTF-8 encoded, or bytes), as a
    (n, 16) uint8 array of UUID bytes, or with ``as_strings=True`` a numpy array of their
    ``str()`` forms."""
    return _uuid_many(5, "sha1", namespace, names, as_strings, threads)
