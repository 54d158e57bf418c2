"""The hash objects: hashlib's interface over a state array and a one-block buffer, one class
(``Hash``) for every algorithm of the table, parameters and keyed modes as subclasses.

``update()`` hands the caller's buffer to the kernel as a uint8 view (no copy), ``bytes`` as
they are (``update_bytes``); short ``bytes`` are gathered first (``_config.GATHER_UPDATES``:
a kernel call costs far more than a gathered copy; benchmarks/results/tunables.md). An object
whose whole input is one immutable ``bytes`` object is digested by one kernel call from the
initial state (``oneshot_bytes``): the path behind ``sha256(data).digest()``.

Threads, as hashlib's: each ``update()`` is atomic with respect to the object; ``digest()`` and
``copy()`` see a state between whole updates. A streaming object owns a lock taken around every
step on its state (the kernels release the GIL from 2048 bytes); the one-shot path needs none:
its data is one immutable ``bytes``, read before the object is seen to stream.
"""
from __future__ import annotations

import operator
import sys
import threading

from .base import algorithms as _algorithms, config as _config, stdlib as _stdlib
from .engine import cpu as _cpu, dispatch as _dispatch
from .engine.dispatch import fresh_bytes_storage
from .base.lazy_numpy import on_first_use
from ._typing import TYPE_CHECKING, EmptyDefault, ReadableBuffer

np = on_first_use(globals())        # numpy once an object views a buffer or streams

_CHOSEN = _dispatch._chosen         # spec name -> (switches it was chosen under, kernel set)
_ZERO = b"\0"                       # _ZERO * n: a new zeroed bytes object, for n >= 2


def as_bytes_view(data):
    """A C-contiguous uint8 view of any buffer, with hashlib's errors for everything else."""
    if isinstance(data, str):
        raise TypeError("Strings must be encoded before hashing")
    try:
        return np.frombuffer(data, np.uint8)
    except TypeError:
        raise TypeError("object supporting the buffer API required") from None


_GATHER = _config.GATHER_UPDATES
_FIRST_JOIN = _config.FIRST_DIGEST_JOIN
_first_class = [None]               # _native.FirstDigests, once one was made (no import before)
_LOCK_MAKING = threading.Lock()     # makes objects' locks one at a time (never two per object)

_KEYWORD_ERROR = []                 # the running Python's wording, found on first use


def unknown_keyword_error(func_name, key):
    """hashlib's TypeError for an unexpected keyword argument, in the running Python's words
    ("'k' is an invalid keyword argument for f()" up to 3.12, "f() got an unexpected keyword
    argument 'k'" from 3.13), found once by asking hashlib itself."""
    if not _KEYWORD_ERROR:
        try:
            _stdlib.hashlib.blake2b(jitdigest_probe=None)
        except TypeError as exc:
            _KEYWORD_ERROR.append(str(exc))
        else:                           # a hashlib that takes any keyword: the 3.12 wording
            _KEYWORD_ERROR.append("'jitdigest_probe' is an invalid keyword argument for blake2b()")
    message = _KEYWORD_ERROR[0].replace("blake2b()", f"{func_name}()")
    return TypeError(message.replace("'jitdigest_probe'", repr(key)))


class HashType(type):
    """The type of hash types, as hashlib's are: immutable (no attribute set or deleted after
    the class statement) and, for the types behind the module's constructors, not callable:
    ``type(md5())()`` raises ``TypeError: cannot create '...' instances``. Objects are made by
    the constructors; ``Hash(spec, data, ...)`` with an algorithm spec from ``_algorithms``
    first stays open to the package and its tests (e.g. to pick the kernel set)."""

    def __call__(cls, *args, **kwargs):
        if args and isinstance(args[0], _algorithms.AlgoSpec):
            return type.__call__(cls, *args, **kwargs)
        raise TypeError(f"cannot create '{cls.__module__}.{cls.__qualname__}' instances")

    def __setattr__(cls, name, value):
        raise TypeError(f"cannot set {name!r} attribute of immutable type "
                        f"'{cls.__module__}.{cls.__qualname__}'")

    def __delattr__(cls, name):
        HashType.__setattr__(cls, name, None)    # the same error


make_instance = type.__call__             # cls(...) without HashType's check


class Hash(metaclass=HashType):
    """A hash object with hashlib's interface (``update``, ``digest``, ``hexdigest``, ``copy``,
    ``name``, ``digest_size``, ``block_size``)."""

    __slots__ = ("_spec", "_kernels", "_iv", "_state", "_buf", "_buflen", "_total", "_pending",
                 "_lock", "_gathered")

    @classmethod
    def _constructor(cls, spec, data_from_keywords):
        """hashlib's module-level constructor for ``spec``: ``ctor(data=b"", /, *,
        usedforsecurity=True, **data_keyword)``. ``bytes`` take a fast path that builds the
        object without ``__init__`` (its call and branches are a third of a 64-byte
        ``sha256(data).digest()``); the data is then hashed in one call by ``digest()``."""
        name, new = spec.name, object.__new__
        no_data = EmptyDefault()    # b"" left out, not given (see _constructors)
        iv = None                   # spec.initial_state once an object needs it (numpy then)

        def constructor(data: ReadableBuffer = no_data, /, *, usedforsecurity: bool = True,
                        **kwargs: ReadableBuffer) -> Hash:
            nonlocal iv
            if usedforsecurity is not True:
                bool(usedforsecurity)           # hashlib takes its truth value (which may raise)
            if kwargs:
                data = data_from_keywords(name, no_data, data, kwargs)
            if data is no_data:
                data = b""
            if type(data) is not bytes:
                return make_instance(cls, spec, data)
            obj = new(cls)                       # = cls(spec, data), inlined
            obj._spec = spec
            obj._state = None
            obj._lock = None
            obj._pending = data
            chosen = _CHOSEN.get(name)
            if chosen and chosen[0] is _cpu.DISABLED and _dispatch.forced() is None:
                obj._kernels = chosen[1]
                if iv is None:
                    iv = spec.initial_state
                obj._iv = iv
            else:
                obj._kernels, obj._iv = _first_kernels_and_iv(spec)
            return obj

        constructor.__name__ = constructor.__qualname__ = name
        constructor.__doc__ = (f"Return a new {name} hash object; optionally initialized with a "
                               "bytes-like object.")
        return constructor

    def __init__(self, spec, data=b"", iv=None):
        self._spec = spec
        chosen = _CHOSEN.get(spec.name)           # _dispatch.kernels_for, inlined
        self._kernels = chosen[1] if chosen and chosen[0] is _cpu.DISABLED \
            and _dispatch.forced() is None else _dispatch.kernels_for(spec)
        self._iv = spec.initial_state if iv is None else iv
        self._state = None            # state, buf, buflen, total: made on first update()/copy()
        self._lock = None             # made with the state (see the module's docstring)
        if type(data) is bytes:
            self._pending = data      # immutable bytes not yet hashed (the one-shot path)
        else:
            self._pending = None
            self.update(data)

    @property
    def name(self) -> str:
        return self._spec.name

    @property
    def digest_size(self) -> int:
        return self._spec.digest_size

    @property
    def block_size(self) -> int:
        return self._spec.block_size

    def _streaming_lock(self):
        """The object's lock, made (once) if it has none; the caller then takes it and calls
        ``_materialise`` if ``_state`` is still None."""
        lock = self._lock
        if lock is None:
            with _LOCK_MAKING:
                lock = self._lock
                if lock is None:
                    lock = self._lock = threading.Lock()
        return lock

    def _materialise(self):
        """Start streaming: the state, from the pending bytes. Called holding ``_lock``."""
        kernels = self._kernels
        if getattr(type(kernels), "_kernel_set", None) is not None:
            # made before Numba was imported (``_first_kernels``): streaming goes through the
            # kernel set itself, which the stand-in would look up on every call
            self._kernels = kernels._kernel_set()
        iv = self._iv
        state = (self._spec.initial_state if iv is None else iv).copy()
        self._buf = np.zeros(self._spec.block_size, np.uint8)
        self._buflen = 0
        self._total = 0
        self._gathered = bytearray()
        pending = self._pending
        if pending:
            self._buflen = self._kernels.update_bytes(state, self._buf, 0, pending)
            self._total = len(pending)
        self._state = state           # published last: seen set, the others are too
        self._pending = None

    def _absorb(self, view):
        self._buflen = self._kernels.update(self._state, self._buf, self._buflen, view)
        self._total += view.shape[0]

    def _flush(self):
        """Hand the gathered short updates to the kernel. Called holding ``_lock``."""
        gathered = self._gathered
        if gathered:
            self._gathered = bytearray()      # (the old one's buffer may still be exported)
            self._absorb(np.frombuffer(gathered, np.uint8))

    def update(self, data: ReadableBuffer, /) -> None:
        """Update the hash object with the bytes of ``data`` (any C-contiguous buffer)."""
        # Still one immutable message: the one-shot path. Nothing between the test of _lock
        # and the store calls out, so no other thread runs in between (the GIL).
        if type(data) is bytes:
            lock = self._lock
            if lock is None:
                pending = self._pending
                if not pending:
                    self._pending = data
                    return
                if joins_bytes(self, len(data)):
                    # on the first digests: joined, still one message (no Numba to load);
                    # under the lock that makes objects' locks, so never beside a start of
                    # streaming (which makes this object's lock first)
                    with _LOCK_MAKING:
                        if self._lock is None:
                            self._pending = self._pending + data
                            return
                lock = self._streaming_lock()
            if len(data) < _GATHER:
                lock.acquire()              # (not a with statement: the cheaper form on this hot path)
                try:
                    if self._state is None:
                        self._materialise()
                    gathered = self._gathered
                    gathered += data
                    if len(gathered) >= _GATHER:
                        self._flush()
                finally:
                    lock.release()
                return
            view = None                     # bytes go to the kernel's builtin as they are
        else:
            view = as_bytes_view(data)
            lock = self._lock or self._streaming_lock()
        lock.acquire()
        try:
            if self._state is None:
                self._materialise()
            self._flush()
            if view is None:
                self._buflen = self._kernels.update_bytes(self._state, self._buf, self._buflen,
                                                          data)
                self._total += len(data)
            else:
                self._absorb(view)
        finally:
            lock.release()

    def _output(self, size):
        """``size`` bytes of output for the data so far (``digest`` of a chosen size)."""
        pending = self._pending               # read before _lock: see the module's docstring
        lock = self._lock
        if lock is None and size > 1:         # as in ``digest``: never a shared short bytes
            out = _ZERO * size
            self._kernels.oneshot_bytes(self._iv, pending, out)
            return out
        out = bytearray(size)
        if lock is None:
            self._kernels.oneshot(self._iv, pending, out)
        else:
            with lock:
                self._digest_streaming(out)
        return bytes(out)

    def _digest_streaming(self, out):
        if self._state is None:               # a lock, but not streaming yet
            self._materialise()
        self._flush()
        self._kernels.final(self._state, self._buf, self._buflen, self._total, out)

    def digest(self) -> bytes:
        """The digest of the data passed so far, as bytes; the object stays usable."""
        pending = self._pending               # (the body of _output, inlined: hot path)
        lock = self._lock
        if lock is None:
            # The one-shot kernel writes straight into the bytes object returned, made here
            # and seen by no one else (what C code does with PyBytes_FromStringAndSize(NULL,
            # n)): a bytearray and then bytes() were a sixth of ``sha256(data).digest()``.
            # Digests here are 16 bytes or more (BLAKE2 and SHAKE, whose sizes are chosen,
            # go through ``_output``), so never CPython's shared empty or one-byte bytes.
            out = _ZERO * self._spec.digest_size
            self._kernels.oneshot_bytes(self._iv, pending, out)
            return out
        return self._output(self._spec.digest_size)

    def hexdigest(self) -> str:
        """Like digest(), as a string of hexadecimal digits."""
        return self.digest().hex()

    def copy(self) -> Hash:
        """An independent copy of this hash object."""
        other = object.__new__(type(self))
        other._spec = self._spec
        other._kernels = self._kernels
        other._iv = self._iv
        pending = self._pending               # immutable bytes, or None
        lock = self._lock
        if lock is None:
            other._pending = pending
            other._state = None
            other._lock = None
        else:
            with lock:
                if self._state is None:
                    self._materialise()
                other._pending = None
                other._state = self._state.copy()
                other._buf = self._buf.copy()
                other._buflen = self._buflen
                other._total = self._total
                other._gathered = bytearray(self._gathered)
            other._lock = threading.Lock()
        self._copy_extra(other)
        return other

    def _copy_extra(self, other):
        """Subclasses with more slots copy them here."""

    def __reduce__(self):
        raise TypeError(f"cannot pickle {type(self).__name__!r} object")

    def __repr__(self) -> str:
        return f"<{self.name} jitdigest.{type(self).__name__} object @ {id(self):#x}>"


class ShakeHash(Hash):
    """SHAKE128/SHAKE256: ``digest(length)`` and ``hexdigest(length)`` squeeze any length."""

    __slots__ = ()

    def digest(self, length: int) -> bytes:  # type: ignore[override]
        """``length`` bytes of output for the data passed so far."""
        length = _output_length(length)
        if length < _config.DIRECT_OUTPUT_MIN:
            return self._output(length)
        # Long output is squeezed straight into the bytes object returned (one allocation of
        # ``length`` bytes, where a bytearray then bytes() would need two).
        result = bytes(length)               # zero pages from calloc: untouched until written
        # The kernel set's ``final`` dispatcher, which compiles (and caches) a form for an
        # ndarray output; the set's own entry is compiled for a bytearray only.
        final = self._kernels.backend.final
        with self._lock or self._streaming_lock():
            if self._state is None:
                self._materialise()
            self._flush()
            final(self._state, self._buf, self._buflen, self._total, fresh_bytes_storage(result))
        return result

    def hexdigest(self, length: int) -> str:  # type: ignore[override]
        """Like digest(length), as a string of hexadecimal digits."""
        return self.digest(length).hex()

    if TYPE_CHECKING:
        def copy(self) -> ShakeHash: ...


def resumed(spec, state, total):
    """A streaming object (not ShakeHash, not BLAKE2) whose ``total`` bytes so far, whole
    blocks, left ``state`` (a writable array it takes over): e.g. HMAC's inner hash after
    its key block."""
    obj = object.__new__(Hash)
    obj._spec = spec
    obj._kernels = _dispatch.kernels_for(spec)
    obj._iv = spec.initial_state
    obj._pending = None
    obj._lock = threading.Lock()
    obj._buf = np.zeros(spec.block_size, np.uint8)
    obj._buflen = 0
    obj._total = total
    obj._gathered = bytearray()
    obj._state = state
    return obj


def _first_kernels(spec):
    """``_dispatch.kernels_for(spec)``; while Numba is not imported (and no backend is forced),
    the stand-in that serves a process's first one-shot digests through the algorithm's stored
    kernel (``_native.FirstDigests``: no Numba to import for a script that prints a digest)."""
    return _first_kernels_and_iv(spec)[0]


def _first_kernels_and_iv(spec):
    """``_first_kernels(spec)`` and the ``_iv`` of an object on them from the initial state:
    None with ``FirstDigests`` (it knows the initial state; the array, and numpy, are made
    only when the object streams or the stand-in hands over), else ``spec.initial_state``."""
    first = first_digests(spec)
    if first is not None:
        return first, None
    return _dispatch.kernels_for(spec), spec.initial_state


def first_digests(spec):
    """``_native.FirstDigests`` of ``spec`` while it serves (Numba not imported, no backend
    forced, a stored kernel, digests left), else None."""
    if _dispatch.forced() is None and "numba" not in sys.modules:
        from .runtime import native as _native
        _first_class[0] = _native.FirstDigests
        return _native.first_digests(spec)
    return None


def joins_bytes(obj, size):
    """Whether ``size`` more bytes given to ``obj`` as ``bytes`` would be joined to its data
    into one message: a jitdigest hash object still on the first digests, and the whole within
    ``_config.FIRST_DIGEST_JOIN``."""
    return (isinstance(obj, Hash) and obj._lock is None
            and obj._kernels.__class__ is _first_class[0]
            and len(obj._pending or b"") + size <= _FIRST_JOIN)


def _output_length(length):
    """A SHAKE output length as hashlib takes it: any ``__index__``, in its words otherwise."""
    length = operator.index(length)       # "'float' object cannot be interpreted as ..."
    if length < 0:
        raise ValueError("value must be positive")
    if length > sys.maxsize:
        raise OverflowError("Python int too large to convert to C ssize_t")
    return length
