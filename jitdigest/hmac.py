"""The standard library's ``hmac`` module (RFC 2104) on jitdigest's kernels.

Why: code that swaps ``hashlib`` for ``jitdigest`` also needs its HMAC, and a one-shot HMAC is
four compressions whose cost, driven from Python, is mostly the calls around them. So
``digest(key, msg, name)`` is one kernel call for MD5, SHA-1 and SHA-2 (key blocks, inner and
outer hash; ``jitdigest/kernels/_hmac.py``), and ``HMAC`` objects keep the keyed outer state
once per key: ``copy()`` shares it and copies only the inner hash. A process's first HMACs,
while its first digests go through the stored kernels (``_native.FirstDigests``: no Numba
imported yet), are two or three of those digests instead (``_first_hmac``): a script that signs
one message does not load Numba for it.

``digestmod`` / ``digest`` is a name (``jitdigest.new``'s names; a name only hashlib knows is
hashed by hashlib), a constructor of jitdigest or hashlib (hashlib's are served by jitdigest's
kernels), or any other constructor or PEP 247 module (used as given). Errors are the standard
library's, in its order and words. SHAKE, which the standard library refuses, is refused by it.
"""
from __future__ import annotations

import warnings as _warnings
from collections.abc import Callable as _Callable
from types import ModuleType as _ModuleType

from .base import algorithms as _algorithms, config as _config, fork as _fork
from .engine import cpu as _cpu, keyed as _keyed
from . import _hashobj
from .base.stdlib import hashlib as _hashlib, hmac as _std_hmac
from .engine.keyed import bytes_view as _bytes_view
from ._hashobj import _ZERO
from ._typing import ReadableBuffer

# ``digestmod``: a name, a constructor (of a hash object: hashlib's, jitdigest's or another's),
# or a PEP 247 module
_DigestMod = str | _Callable[..., object] | _ModuleType

__all__ = ["HMAC", "new", "digest", "compare_digest", "digest_size", "trans_5C", "trans_36"]

compare_digest = _std_hmac.compare_digest
trans_5C = bytes((x ^ 0x5C) for x in range(256))
trans_36 = bytes((x ^ 0x36) for x in range(256))
digest_size = None

_by_constructor = {}                 # jitdigest's and hashlib's constructors -> spec


def _constructor_spec(func):
    if not _by_constructor:
        import jitdigest
        for name, spec in _algorithms.SPECS.items():
            for module in (jitdigest, _hashlib):
                ctor = getattr(module, name, None)
                if ctor is not None:
                    _by_constructor[ctor] = spec
    try:
        return _by_constructor.get(func)
    except TypeError:                # unhashable
        return None


def _spec_of(digestmod):
    """The algorithm jitdigest serves for ``digestmod``, or None (a name it does not know, or
    another constructor or module)."""
    if isinstance(digestmod, str):
        try:
            return _algorithms.lookup(digestmod)
        except ValueError:
            return None
    return _constructor_spec(digestmod)


def _constructor(digestmod, spec):
    """``digest_cons`` of the standard library's ``hmac``: ``digest_cons(d=b'')`` -> hash object."""
    if spec is not None:
        from ._constructors import CONSTRUCTORS
        return CONSTRUCTORS[spec.name]
    if callable(digestmod):
        return digestmod
    if isinstance(digestmod, str):
        return lambda d=b'': _hashlib.new(digestmod, d)
    return lambda d=b'': digestmod.new(d)


# digestmod -> (switches, spec, hmac_states kernel, hmac_final kernel, hmac_bytes kernel, iv)
_keyed_start = {}
# A process's first HMACs, while its first digests go through the stored kernels (no Numba:
# ``_hashobj.first_digests``), are two or three of those digests (``_first_hmac``), for
# messages up to this size (they are joined behind the inner key block).
_FIRST_MESSAGE_MAX = _config.FIRST_DIGEST_JOIN


def _start_entries(digestmod):
    spec = _spec_of(digestmod)
    first = _first_digests(spec)
    if first is not None:
        # not kept: the next start looks again (the kernels once Numba is imported)
        return (None, spec, None, None, first, None)
    entries = _kernel_entries(spec)
    try:
        _keyed_start[digestmod] = entries
    except TypeError:
        pass
    return entries


def _first_digests(spec):
    """The ``FirstDigests`` an HMAC of ``spec`` may use now: only where the keyed kernels
    would serve it (MD5, SHA-1, SHA-2), as an object on it starts them when it streams."""
    if spec is None or spec.family not in _algorithms.MERKLE_DAMGARD:
        return None
    return _hashobj.first_digests(spec)


def _kernel_entries(spec):
    if spec is None or spec.digest_size == 0 or _keyed.entry(spec, "hmac_states") is None:
        return (_cpu.DISABLED, spec, None, None, None, None)
    return (_cpu.DISABLED, spec, _keyed.entry(spec, "hmac_states"),
            _keyed.entry(spec, "hmac_final"), _keyed.entry(spec, "hmac_bytes"),
            spec.initial_state)


def _first_hmac(spec, key, msg):
    """HMAC of ``msg`` under ``key`` (both bytes) while the first digests serve: the hash
    objects' HMAC, whose objects join their ``bytes`` updates into one message, so that each
    is one digest of the stored kernel (past their count, through the kernels as usual)."""
    return _by_objects(_constructor(None, spec), key, msg)


def _by_objects(digest_cons, key, msg):
    """HMAC (RFC 2104) of ``msg`` under ``key`` (bytes) on two hash objects of
    ``digest_cons``, as the standard library computes it without OpenSSL."""
    inner = digest_cons()
    outer = digest_cons()
    blocksize = getattr(inner, 'block_size', 64)
    if len(key) > blocksize:
        key = digest_cons(key).digest()
    key = key + b'\x00' * (blocksize - len(key))
    inner.update(key.translate(trans_36))
    outer.update(key.translate(trans_5C))
    inner.update(msg)
    outer.update(inner.digest())
    return outer.digest()


def _fast_start(digestmod):
    """``(switches, spec, hmac_states, hmac_final, hmac_bytes, iv)`` for ``digestmod``: the
    kernels are None where it has none (or ``spec`` too: a digestmod jitdigest does not serve).
    While the first digests serve, ``(None, spec, None, None, FirstDigests, None)``."""
    try:
        fast = _keyed_start.get(digestmod)
    except TypeError:                            # unhashable: a module, say
        return _start_entries(digestmod)
    if fast is None or fast[0] is not _cpu.DISABLED:
        fast = _start_entries(digestmod)
    return fast


def _missing_digestmod():
    """The standard library's TypeError for an HMAC made without ``digestmod``, in the running
    Python's words ("parameter" up to 3.12, "argument" from 3.13), asked of it when needed."""
    try:
        _std_hmac.HMAC(b"")
    except TypeError as exc:
        return TypeError(*exc.args)
    return TypeError("Missing required parameter 'digestmod'.")


# Taken while an object made with a bytes message (or none) starts its inner hash.
_STARTING = _fork.lock(globals(), "_STARTING")


class HMAC:
    """RFC 2104 HMAC class, as the standard library's ``hmac.HMAC``.

    On the keyed kernels (MD5, SHA-1, SHA-2), an object keeps the key and its first ``bytes``
    message (given to the constructor or to a first ``update()``) until something needs more:
    ``digest()`` of such an object is ``digest(key, msg, digestmod)``'s one kernel call, and
    only a second message starts the inner hash (``_started``). Keying two hash states first
    would make a one-shot ``hmac.new(key, msg, "sha256").digest()`` far slower than the
    standard library's (benchmarks/results/tunables.md)."""

    blocksize = 64  # 512-bit HMAC; can be changed in subclasses.

    __slots__ = ("_inner", "_outer", "_final", "block_size", "digest_size", "_key", "_msg",
                 "_fast")

    def __init__(self, key: bytes | bytearray, msg: ReadableBuffer | None = None,
                 digestmod: _DigestMod = '') -> None:
        if not isinstance(key, (bytes, bytearray)):
            raise TypeError("key: expected bytes or bytearray, but got %r" % type(key).__name__)
        if not digestmod:
            raise _missing_digestmod()
        fast = _fast_start(digestmod)
        if fast[4] is not None:                     # MD5, SHA-1, SHA-2: keyed in one call
            self._start_lazily(key, msg, fast)
            return
        self._start_objects(key, digestmod, fast[1])
        if msg is not None:
            self.update(msg)

    def __reduce__(self):
        # the standard library's: its HMAC holds an OpenSSL object that cannot be pickled
        raise TypeError(f"cannot pickle {type(self).__name__!r} object")

    def __copy__(self):
        # copy.copy, as of the standard library's: a shallow copy (its state shared), with a
        # subclass's own slots and attributes
        cls = type(self)
        other = object.__new__(cls)
        for klass in cls.__mro__:
            slots = getattr(klass, "__slots__", ())
            for name in (slots,) if isinstance(slots, str) else slots:
                if name not in ("__dict__", "__weakref__") and hasattr(self, name):
                    setattr(other, name, getattr(self, name))
        if hasattr(self, "__dict__"):
            other.__dict__.update(self.__dict__)
        return other

    def _start_lazily(self, key, msg, fast):
        spec = fast[1]
        self._final = fast[3]
        self._fast = fast
        self.digest_size = spec.digest_size
        self.block_size = spec.block_size
        self._key = bytes(key)                      # as given now, whatever becomes of it
        self._inner = self._outer = None
        if msg is None or type(msg) is bytes:
            self._msg = b"" if msg is None else msg
            return
        self._msg = b""
        self._started().update(msg)

    def _started(self):
        """The inner hash object (the keyed states made, the message given at the start fed),
        made once; published last, so a concurrent ``digest()`` sees either it or the key and
        message, never half of it."""
        inner = self._inner
        if inner is None:
            with _STARTING:
                inner = self._inner
                if inner is None:
                    if self._fast[0] is None:       # made on the first digests: the kernels
                        self._fast = _kernel_entries(self._fast[1])
                        self._final = self._fast[3]
                    inner = self._start_keyed(self._key, self._fast)
                    if self._msg:
                        inner.update(self._msg)
                    self._inner = inner
        return inner

    # The standard library's HMAC starts in one of two methods of these names (its test suite
    # calls each): on OpenSSL's HMAC where OpenSSL has the digest, else on two hash objects.
    # Here the first is the keyed kernels' start, the second the hash objects' (any digestmod).

    def _init_hmac(self, key, msg, digestmod):
        """Start on the keyed kernels (MD5, SHA-1, SHA-2); ValueError for other digestmods."""
        fast = _fast_start(digestmod)
        if fast[4] is None:
            raise ValueError(f"unsupported hash type {digestmod!r}")
        self._start_lazily(key, msg, fast)

    def _init_old(self, key, msg, digestmod):
        """Start on two hash objects made by ``digestmod`` (jitdigest's own for its names and
        hashlib's constructors), as the standard library's ``hmac`` without OpenSSL."""
        self._start_objects(key, digestmod, _spec_of(digestmod))
        if msg is not None:
            self.update(msg)

    def _start_keyed(self, key, fast):
        """The keyed inner and outer states in one kernel call: sets the outer one, returns the
        inner hash object."""
        import numpy as np
        spec = fast[1]
        ns = len(spec.initial_state)
        states = np.empty(2 * ns, spec.word)
        fast[2](spec.initial_state, np.frombuffer(key, np.uint8), spec.digest_size, states)
        self._outer = states[ns:]               # the keyed outer state (never written)
        return _hashobj.resumed(spec, states[:ns], spec.block_size)

    def _start_objects(self, key, digestmod, spec):
        """The standard library's start: key blocks fed to two hash objects."""
        self._final = None
        if spec is not None and spec.digest_size == 0:
            # SHAKE: the standard library's error for hashlib's constructor (given jitdigest's,
            # which it does not know, it would start and fail only at digest())
            _std_hmac.new(key, None, getattr(_hashlib, spec.name))
        elif spec is None and isinstance(digestmod, str):
            # a name jitdigest does not serve: the standard library's error where it has none
            # (its wording differs between versions: 3.10 passes on OpenSSL's)
            _std_hmac.new(key, None, digestmod)
        digest_cons = _constructor(digestmod, spec)
        outer = digest_cons()
        inner = digest_cons()
        self.digest_size = inner.digest_size
        if hasattr(inner, 'block_size'):
            blocksize = inner.block_size
            if blocksize < 16:
                _warnings.warn('block_size of %d seems too small; using our '
                               'default of %d.' % (blocksize, self.blocksize),
                               RuntimeWarning, 2)
                blocksize = self.blocksize
        else:
            _warnings.warn('No block_size attribute on given digest object; '
                           'Assuming %d.' % (self.blocksize),
                           RuntimeWarning, 2)
            blocksize = self.blocksize
        if len(key) > blocksize:
            key = digest_cons(key).digest()
        self.block_size = blocksize
        key = key.ljust(blocksize, b'\0')
        # (memoryviews: a jitdigest object compresses the key block now, not at each digest)
        outer.update(memoryview(key.translate(trans_5C)))
        inner.update(memoryview(key.translate(trans_36)))
        self._outer = outer              # the keyed outer state: never updated, only copied
        self._inner = inner

    @property
    def name(self) -> str:
        inner = self._inner
        return f"hmac-{self._fast[1].name if inner is None else inner.name}"

    def update(self, msg: ReadableBuffer) -> None:
        """Feed data from msg into this hashing object."""
        inner = self._inner
        if inner is None:                       # (only an object on the keyed kernels)
            if type(msg) is bytes:
                with _STARTING:                 # the first bytes: kept, as a message given
                    if self._inner is None and not self._msg:   # at the start would be
                        self._msg = msg
                        return
            inner = self._started()
        inner.update(msg)

    def copy(self) -> HMAC:
        """Return a separate copy of this hashing object (sharing the keyed outer state)."""
        other = object.__new__(type(self))
        other.digest_size = self.digest_size
        other.block_size = self.block_size
        other._final = self._final
        inner = self._inner
        if inner is None:                       # not started: nor is the copy
            other._fast, other._key, other._msg = self._fast, self._key, self._msg
            other._inner = other._outer = None
            return other
        other._outer = self._outer
        other._inner = inner.copy()
        return other

    def _current(self):
        h = self._outer.copy()
        h.update(self._inner.digest())
        return h

    def digest(self) -> bytes:
        """Return the hash value of this hashing object, as bytes; the object stays usable."""
        inner = self._inner
        if inner is None:                # not started: HMAC of the key and message in one call
            fast = self._fast
            if fast[0] is None:          # made on the first digests
                if len(self._msg) <= _FIRST_MESSAGE_MAX:
                    return _first_hmac(fast[1], self._key, self._msg)
                self._started()          # (the kernels, started: as a second message would)
                return self.digest()
            out = _ZERO * self.digest_size       # filled by the kernel: see ``digest()`` below
            fast[4](fast[5], self._key, self._msg, out)
            return out
        final = self._final
        if final is None:
            return self._current().digest()
        out = bytearray(self.digest_size)     # inner: a streaming jitdigest object (locked)
        with inner._lock:
            inner._flush()
            final(inner._state, inner._buf, inner._buflen, inner._total, self._outer, out)
        return bytes(out)

    def hexdigest(self) -> str:
        """Like digest(), but returns a string of hexadecimal digits instead (on the hash
        objects' path: the outer hash's ``hexdigest()``, as the standard library's)."""
        if self._final is None and self._inner is not None:
            return self._current().hexdigest()
        return self.digest().hex()


def new(key: bytes | bytearray, msg: ReadableBuffer | None = None,
        digestmod: _DigestMod = '') -> HMAC:
    """Create a new HMAC object (see ``HMAC``)."""
    return HMAC(key, msg, digestmod)


_one_call = {}       # digest -> (switches, spec, kernel for bytes, kernel for other buffers)


def digest(key: ReadableBuffer, msg: ReadableBuffer, digest: _DigestMod) -> bytes:
    """HMAC of ``msg`` under ``key``: one kernel call for MD5, SHA-1 and SHA-2."""
    try:
        known = _one_call.get(digest)
    except TypeError:
        known = None
    if known is not None and known[0] is _cpu.DISABLED:
        spec = known[1]
        if type(key) is bytes and type(msg) is bytes:
            # the kernel writes straight into the bytes object returned, made here and seen by
            # no one else (MD5, SHA-1, SHA-2 digests: 16 bytes or more, never a shared bytes)
            out = _ZERO * spec.digest_size
            known[2](spec.initial_state, key, msg, out)
            return out
        out = bytearray(spec.digest_size)
        known[3](spec.initial_state, _bytes_view(key), _bytes_view(msg), out)
        return bytes(out)
    spec = _spec_of(digest)
    if spec is not None:
        if type(key) is bytes and type(msg) is bytes and len(msg) <= _FIRST_MESSAGE_MAX:
            first = _first_digests(spec)
            if first is not None:
                return _first_hmac(spec, key, msg)
        key_view = _bytes_view(key)
        msg_view = _bytes_view(msg)
        if spec.digest_size == 0:         # SHAKE: the standard library's error (see above)
            return _std_hmac.digest(key, msg, getattr(_hashlib, spec.name))
        kernel = _keyed.entry(spec, "hmac")
        if kernel is not None:
            out = bytearray(spec.digest_size)
            kernel(spec.initial_state, key_view, msg_view, out)
            _one_call[digest] = (_cpu.DISABLED, spec, _keyed.entry(spec, "hmac_bytes"), kernel)
            return bytes(out)
        # SHA-3, BLAKE2: the key may be any buffer, as OpenSSL's HMAC takes for them
        key = key_view.tobytes()
    elif isinstance(digest, str):
        return _std_hmac.digest(key, msg, digest)       # a name only hashlib knows: its HMAC
    return _by_objects(_constructor(digest, spec), key, msg)
