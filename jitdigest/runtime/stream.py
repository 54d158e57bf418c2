"""Large files hashed without importing Numba: ``jitdigest sum`` streams a file through the
``update`` and ``final`` of the kernel set its hash objects use, stored as machine code beside
the batch kernels (``native``: the same trusted folder, digests, loaders and refusals;
``kernels/_internals/native.py``'s ``stream_entry`` makes the object). Served: the hashlib
Merkle-Damgard rows (MD5, SHA-1, SHA-2), and a tree hash whose kernel package describes its
objects' state (``stream_shape``).

Why: a process that hashes one large file otherwise imports Numba and loads the kernels through
it, about a third of a second before the first block (benchmarks/results/bench_b3sum-1gib.txt).
A loaded entry must give hashlib's digests (a tree hash: its package's known answer) before it
is used; anything missing, damaged or refused gives None, and the caller hashes through Numba.
"""
import ctypes
from array import array

from ..base import algorithms as _algorithms, cachedir as _cachedir, fork as _fork
from ..base.stdlib import hashlib
from . import native as _native

_P, _I64 = ctypes.c_void_p, ctypes.c_int64
# ``stream_entry``'s C type: (state, n_state, buf, n_buf, buflen, data, n_data, total, out,
# n_out) -> the new buflen (an update), or 0 (a digest)
PROTOTYPE = ctypes.CFUNCTYPE(_I64, _P, _I64, _P, _I64, _I64, _P, _I64, _I64, _P, _I64)
# md_finish counts the message in bits in 64 bits, with three more bits for SHA-512's 128
MAX_TOTAL = (1 << 61) - 1

_loaded = {}            # algorithm name -> (function, description) or None


class Stream:
    """A hash object of one algorithm on its stored entry: ``update`` with any contiguous
    buffer, ``digest``/``hexdigest`` (which leave it open, as hashlib's do; a tree hash's take
    an output length), ``name``, ``digest_size`` and ``block_size``. One thread at a time, as
    ``jitdigest sum`` uses it. ``state``: the initial state's words, ``words`` long in all
    (the rest zero); ``seek``: the entry is a tree hash's (its ``final`` takes a position)."""

    __slots__ = ("name", "digest_size", "block_size", "_function", "_state", "_buf",
                 "_buf_view", "_buflen", "_total", "_seek")

    def __init__(self, name, function, state, word, size, block, words=0, seek=False):
        self.name = name
        self.digest_size = size
        self.block_size = block
        self._function = function
        self._state = array(_native._TYPECODES[word], state)
        self._state.extend([0] * (words - len(state)))
        self._buf = bytearray(block)
        self._buf_view = (ctypes.c_char * block).from_buffer(self._buf)
        self._buflen = 0
        self._total = 0
        self._seek = seek

    def update(self, data):
        if type(data) is bytes:
            self._absorb(data, len(data))
            return
        with memoryview(data) as view, view.cast("B") as flat:
            n = len(flat)
            if not n:
                return
            if flat.readonly:
                self._absorb(flat.tobytes(), n)
                return
            pointer = (ctypes.c_char * n).from_buffer(flat)
            try:
                self._absorb(pointer, n)
            finally:
                del pointer

    def _absorb(self, pointer, n):
        if not n:
            return
        if self._total + n > MAX_TOTAL:
            raise OverflowError("message too long")
        state = self._state
        self._buflen = self._function(state.buffer_info()[0], len(state), self._buf_view,
                                      self.block_size, self._buflen, pointer, n, 0, None, 0)
        self._total += n

    def digest(self, length=None):
        if length is None:
            length = self.digest_size
        elif not (self._seek and length >= 0):
            raise ValueError("this hash has no output length to choose")
        if not length:
            return b""                      # (an entry given no output absorbs instead)
        out = bytearray(length)
        view = (ctypes.c_char * len(out)).from_buffer(out)
        state = self._state
        self._function(state.buffer_info()[0], len(state), self._buf_view, self.block_size,
                       self._buflen, None, 0, 0 if self._seek else self._total, view, len(out))
        del view
        return bytes(out)

    def hexdigest(self, length=None):
        return self.digest(length).hex()


def streams(spec):
    """Whether ``spec``'s hash objects have an entry this module stores: the Merkle-Damgard
    rows' (SHA-3's kernels allocate, which needs Numba's runtime) and a tree hash's."""
    return (spec.family in _algorithms.MERKLE_DAMGARD
            or _native.tree_shape(spec.family) is not None)


def base_name(spec):
    """The file name (without extension) of the stored entry serving ``spec``: one per family
    and word type (SHA-224 shares SHA-256's); the folder names the switches and the CPU."""
    return f"stream.{spec.family}-{spec.word_name}"


def new(name, key=None):
    """A fresh Stream of the algorithm ``name`` on its stored entry (a tree hash's keyed with
    the 32 bytes ``key``), or None where none is stored, or it is refused."""
    try:
        found = _loaded[name]
    except KeyError:
        with _fork.loading():           # no fork lands while the object code is linked
            if name not in _loaded:
                _loaded[name] = _load(name)
        found = _loaded[name]
    if found is None:
        return None
    return _made(_algorithms.lookup_any(name), *found, key)


def _made(spec, function, meta, key=None):
    shape = _native.tree_shape(spec.family)
    if shape is None:
        return Stream(spec.name, function, meta["iv"][spec.name], meta["word"],
                      spec.digest_size, spec.block_size)
    words, params, _ = shape
    return Stream(spec.name, function, params(key), meta["word"], spec.digest_size,
                  spec.block_size, words, True)


def _load(name):
    try:
        spec = _algorithms.lookup_any(name)
    except (KeyError, ValueError):
        return None
    if not streams(spec):
        return None
    found = _native.stored(lambda where: base_name(spec), name, PROTOTYPE)
    if found is None:
        return None
    if _native.tree_shape(spec.family) is None and len(found[1]["iv"][name]) != len(spec.iv):
        return None
    return found if _answers(spec, lambda: _made(spec, *found)) else None


def _answers(spec, fresh):
    """Whether a loaded entry (``fresh()``: a new Stream on it) gives the right digest of a
    message fed in uneven pieces that cross block boundaries (a partial block, whole blocks, a
    tail), and of its first bytes on the way: hashlib's, or for a tree hash the known answer
    of its package (the whole message only)."""
    shape = _native.tree_shape(spec.family)
    if shape is None:
        message = bytes(range(256)) * 3
        early = hashlib.new(spec.name, message[:3]).digest()
        want = hashlib.new(spec.name, message).digest()
    else:
        message, want = shape[2]
        early = None
    stream = fresh()
    stream.update(message[:3])
    if early is not None and stream.digest() != early:
        return False
    stream.update(bytearray(message[3:200]))
    stream.update(memoryview(message)[200:])
    return stream.digest() == want


# --- writing (a process that has Numba: ``jitdigest warmup``, a ``jitdigest sum`` that
# streamed through Numba) ---------------------------------------------------------------

def write(spec, kernel_set=None):
    """Store the entry serving ``spec``'s hash objects (``kernel_set``, default the one
    serving them now: its ``update`` and ``final`` linked into one object), for every
    algorithm of its family and word type that this module serves. Returns whether it is
    stored (False where the object would need Numba's runtime)."""
    from ..engine import dispatch as _dispatch
    from ..kernels._internals import native
    from . import native_write
    if kernel_set is None:
        kernel_set = _dispatch.kernels_for(spec)
    shape = _native.tree_shape(spec.family)
    final = "final" if shape is None else "xof_final"
    kernel_set.update, kernel_set.compiled(final)           # compiled (or loaded) first
    backend = kernel_set.backend
    entry = native.stream_entry(backend.update, backend.function(final), kernel_set._word,
                                seek=shape is not None)
    code, symbol = native.object_code(entry)
    functions, variables = native.declarations(entry)
    specs = [s for s in _algorithms.TABLE.values() if s.family == spec.family
             and s.word_name == spec.word_name and streams(s)]
    fields = {"backend": backend.name,
              "iv": {s.name: list(s.iv) if shape is None else list(shape[1]()) for s in specs},
              "sizes": {s.name: s.digest_size for s in specs}}
    if not native_write.write_entry(base_name(spec), [code], symbol, functions + variables,
                                    spec.word_name, fields):
        return False
    for s in specs:
        _loaded.pop(s.name, None)
    return True


def store(spec):
    """Store ``spec``'s entry here unless it is stored whole already (another algorithm of its
    family and word type stored it) or ``spec`` has none. Returns whether it is stored."""
    from ..engine import notice as _notice
    if not streams(spec):
        return False
    where = _native.folder()
    if not _cachedir.trusted(where):
        return False
    if _native._entry(where, base_name(spec), spec.name)[0] is not None:
        return True
    with _notice.compiling(spec.family, spec.name):
        return write(spec)
