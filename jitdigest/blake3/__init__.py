"""The ``blake3`` package's API (``from jitdigest.blake3 import blake3``) over the BLAKE3
kernels: hashing, keyed hashing and key derivation, with extendable output.

Arguments and errors follow the package (blake3-py 1.0): a 32-byte ``key``, a ``str``
``derive_key_context``, the two not together, ``max_threads`` a positive int or ``AUTO``,
``usedforsecurity`` a bool; ``digest(length, *, seek)`` takes any unsigned 64-bit ``length``
and ``seek``. Unlike the package, any C-contiguous buffer is hashed as its raw bytes (the
package refuses buffers whose items are not bytes), as everywhere in jitdigest.

Objects are ``jitdigest``'s hash objects (``_hashobj.Hash``) with BLAKE3's parameters and
output: one whose whole input is one ``bytes`` object keeps it and is digested by one kernel
call; once it streams it owns a uint32 state array (``kernels/blake3/layout.py``), a 64-byte
buffer and a lock taken around every step that reads or writes them. Importing this package
imports no Numba; ``b3sum`` holds b3sum's formats for ``jitdigest sum``.
"""
from __future__ import annotations

import mmap
import operator
import os
from functools import lru_cache

import numpy as np

from ..base import algorithms as _algorithms, config as _config
from ..engine import cpu as _cpu, parallel as _parallel
from . import _backend, subtree
from ._backend import (_U64_MAX, ENTRIES, _Kernels, _kernels, _signatures,  # noqa: F401
                       backend_name, compile_entries)
from .._hashobj import _ZERO, Hash, HashType
from .._typing import TYPE_CHECKING, ReadableBuffer, public_signature
from ..kernels.blake3 import layout
from ..kernels.blake3.layout import (BLOCK_LEN, BLOCKS, CHUNK_LEN, COUNTER, DERIVE_KEY_CONTEXT,
                                    DERIVE_KEY_MATERIAL, KEY_LEN, KEYED_HASH, PARAMS,
                                    STATE_WORDS)

__all__ = ["blake3"]

_ISIZE_MAX = 2 ** 63 - 1
_DEFAULT_LENGTH = KEY_LEN           # digest()'s defaults
_NO_SEEK = 0
_C_LONG = 2 ** 63


# --- parameters ------------------------------------------------------------------------------

_IV_PARAMS = np.array(layout.params(), np.uint32)       # BLAKE3's IV, no flag
_IV_PARAMS.setflags(write=False)


def _params(key_bytes, flags):
    params = np.array(layout.params(key_bytes, flags), np.uint32)
    params.setflags(write=False)
    return params


@lru_cache(maxsize=256)
def _keyed_params(key):
    return _params(key, KEYED_HASH)


@lru_cache(maxsize=256)
def _derive_key_params(context):
    """The parameters of key derivation under ``context`` (the context string's UTF-8 bytes):
    the context hashed in the DERIVE_KEY_CONTEXT mode gives the key of the
    DERIVE_KEY_MATERIAL mode."""
    context_params = _IV_PARAMS.copy()
    context_params[PARAMS - 1] = DERIVE_KEY_CONTEXT
    out = bytearray(KEY_LEN)
    _kernels().oneshot(context_params, context, 0, 0, out)
    return _params(bytes(out), DERIVE_KEY_MATERIAL)


def _type_name(value):
    return type(value).__name__


def _bytes_view(data):
    """A uint8 view of a C-contiguous buffer, with the package's errors for the rest."""
    try:
        view = memoryview(data)
    except TypeError:
        raise TypeError(f"a bytes-like object is required, not '{_type_name(data)}'") from None
    if not view.c_contiguous:
        raise BufferError("buffer is not contiguous")
    return np.frombuffer(view, np.uint8)


def _key_bytes(key):
    if type(key) is not bytes:
        key = _bytes_view(key).tobytes()
    if len(key) != KEY_LEN:
        raise ValueError(f"expected a {KEY_LEN}-byte key, found {len(key)}")
    return key


def _unsigned(value):
    """An output length or position as the package takes them: an unsigned 64-bit int."""
    value = operator.index(value)
    if value < 0:
        raise OverflowError("can't convert negative int to unsigned")
    if value > _U64_MAX:
        raise OverflowError("int too big to convert")
    return value


def _checked_params(key, derive_key_context, max_threads, usedforsecurity):
    """The parameters (key words and flags) the arguments ask for, checked as the package
    checks them: conversions first, in its order, then the checks across arguments."""
    if derive_key_context is not None:
        if not isinstance(derive_key_context, str):
            raise TypeError(f"'{_type_name(derive_key_context)}' object is not an instance of "
                            "'str'")
        # a subclass: its text; encoded here, where the package encodes it (its error first)
        derive_key_context = str(derive_key_context).encode("utf-8")
    max_threads = operator.index(max_threads)
    if not -_C_LONG <= max_threads < _C_LONG:
        raise OverflowError("Python int too large to convert to C long")
    if type(usedforsecurity) is not bool and not isinstance(usedforsecurity, np.bool_):
        what = "'None'" if usedforsecurity is None else f"'{_type_name(usedforsecurity)}' object"
        raise TypeError(f"{what} is not an instance of 'bool'")
    if key is not None and derive_key_context is not None:
        raise ValueError("cannot use key and derive_key_context at the same time")
    if key is not None:
        params = _keyed_params(_key_bytes(key))
    elif derive_key_context is not None:
        params = _derive_key_params(derive_key_context)
    else:
        params = _IV_PARAMS
    if max_threads < 1 and max_threads != blake3.AUTO:
        raise ValueError("not a valid number of threads")
    return params


def params(key: ReadableBuffer | None = None,
           derive_key_context: str | None = None) -> np.ndarray:
    """The parameter words of the mode the arguments ask for (key words, then the mode's flag:
    a read-only uint32 array), checked with the package's errors: what every message of
    ``jitdigest.hash_many("blake3", ...)`` starts from."""
    if key is None and derive_key_context is None:
        return _IV_PARAMS
    return _checked_params(key, derive_key_context, 1, True)


def output_length(length: int | None) -> int:
    """An output length as ``digest(length)`` takes it (None: 32), with its errors."""
    if length is None:
        return KEY_LEN
    length = _unsigned(length)
    if length > _ISIZE_MAX:
        raise OverflowError("length overflows isize")
    return length


def _update(threads, state, buf, buflen, view):
    """The chosen backend's ``update``, on ``threads`` threads if not 1."""
    kernels = _kernels()
    if threads == 1:
        return kernels.update(state, buf, buflen, view)
    return _update_threads(kernels, state, buf, buflen, view, threads)


def _update_threads(kernels, state, buf, buflen, view, threads):
    """``kernels.update`` on ``threads`` threads (``max_threads`` above 1, or AUTO: -1): the
    whole subtrees of chunks that follow the next boundary of such subtrees are hashed by the
    lanes' ``prange`` entry, a subtree a task, and their chaining values pushed in order; the
    rest, and everything when there is too little for every thread, no lanes or no parallel
    regions, as usual. Subtrees are the largest power-of-two number of lane groups, up to
    ``_config.TREE_SUBTREE_BYTES``, that gives every thread ``TREE_TASKS_PER_THREAD``
    tasks (down to one task of two groups). Returns the new ``buflen``."""
    group = kernels.group_len
    if threads == blake3.AUTO:
        threads = _parallel.max_threads()
    if group == 0 or threads < 2 or not _parallel.usable():
        return kernels.update(state, buf, buflen, view)
    chunks = int(state[COUNTER + 1]) << 32 | int(state[COUNTER])
    done = chunks * CHUNK_LEN + int(state[BLOCKS]) * BLOCK_LEN + buflen
    per = 2
    while 2 * per * group <= _config.TREE_SUBTREE_BYTES:
        per *= 2
    while True:
        size = per * group
        head = -done % size
        nsub = (len(view) - head - 1) // size if len(view) > head else 0
        if nsub >= (_config.TREE_TASKS_PER_THREAD if per > 2 else 1) * threads:
            break
        if per == 2:
            return kernels.update(state, buf, buflen, view)
        per //= 2
    if head:
        buflen = kernels.update(state, buf, buflen, view[:head])
    kernels.flush(state, buf, buflen)         # the state now at the subtrees' boundary
    ngroups = nsub * per
    out = np.empty(8 * ngroups, np.uint32)
    with _parallel.region(threads):
        kernels.parallel_cvs(state, view, head, ngroups, per, out)
    kernels.push_cvs(state, out, ngroups, per)
    return kernels.update(state, buf, 0, view[head + ngroups * group:])


_SPEC = _algorithms.TABLE["blake3"]
_new_object = object.__new__


def _published(array):
    """After a one-shot digest through ``oneshot`` (``array`` false) or ``oneshot_array``: that
    entry's builtin, for the usual call's path in ``blake3.digest``."""
    made_under, small, _, large, _ = _backend.ONESHOT
    if made_under is not _cpu.DISABLED or (large if array else small) is None:
        _backend.publish_oneshot(array)


class _Blake3Type(HashType):
    """Immutable as every hash type, but callable: the class is the constructor."""

    def __call__(cls, data=None, /, **kwargs):
        if type(data) is bytes and cls is blake3:
            # ``blake3(data)`` and ``blake3(data, max_threads=n)``, the usual calls: the object
            # ``__init__`` would make, without its call and checks (as hashlib-style
            # constructors' ``bytes`` path in _hashobj)
            if not kwargs:
                threads = 1
            else:
                threads = kwargs.get("max_threads")
                if not (len(kwargs) == 1 and type(threads) is int
                        and (1 <= threads < _C_LONG or threads == blake3.AUTO)):
                    return type.__call__(cls, data, **kwargs)
            obj = _new_object(cls)
            obj._iv = _IV_PARAMS
            obj._threads = threads
            obj._spec = _SPEC
            obj._kernels = None
            obj._state = None
            obj._lock = None
            obj._pending = data
            return obj
        return type.__call__(cls, data, **kwargs)

    __signature__ = property(public_signature)    # the package's (no annotations)


class blake3(Hash, metaclass=_Blake3Type):
    """An incremental BLAKE3 hasher, with the interface of the ``blake3`` package (and so,
    mostly, of hashlib's objects).

    - ``data``: input to hash first (as ``update``); None is no input.
    - ``key``: a 32-byte key (any buffer): the keyed hashing mode.
    - ``derive_key_context``: a ``str``, hard-coded, globally unique and application-specific:
      the key derivation mode, ``data`` being the key material. Not together with ``key``.
    - ``max_threads``: a positive int, or ``blake3.AUTO`` (Numba's thread count). Above 1, long
      inputs are hashed on up to that many threads where lane kernels serve (subtrees of up to
      256 KiB, a task each, by their ``prange`` entry); else on one.
    - ``usedforsecurity``: a bool, ignored (as hashlib's and the package's).

    ``update`` returns the object; ``digest(length=32, *, seek=0)`` returns ``length`` bytes of
    the extendable output starting at byte ``seek`` (shorter outputs are prefixes of longer
    ones) and does not finalise. Thread-safe as hashlib's objects. A ``_hashobj.Hash`` whose
    initial state ``_iv`` is the mode's parameters and whose kernels are chosen per call
    (``_kernels``): it shares the base class's lock, ``copy`` and streaming checks.
    """

    __slots__ = ("_threads", "__weakref__")

    name = "blake3"
    digest_size = KEY_LEN
    block_size = 64
    key_size = KEY_LEN
    AUTO = -1

    # what generic code asks of the type through ``_constructors.object_type``: a batch's
    # parameters and output length, the backend its objects use and how to compile it, and
    # the pieces of one input hashed apart then merged (``subtree``: jitdigest sum --dask)
    _tree = subtree
    _batch_params = staticmethod(params)
    _output_length = staticmethod(output_length)
    _backend_name = staticmethod(backend_name)
    _compile_entries = staticmethod(compile_entries)
    _ENTRIES = ENTRIES

    def __init__(self, data: ReadableBuffer | None = None, /, *,
                 key: ReadableBuffer | None = None, derive_key_context: str | None = None,
                 max_threads: int = 1,
                 usedforsecurity: bool = True) -> None:
        if (key is None and derive_key_context is None and type(max_threads) is int
                and max_threads == 1 and usedforsecurity is True):
            self._iv = _IV_PARAMS         # the defaults (the usual call): nothing to check
            self._threads = 1
        else:
            self._iv = _checked_params(key, derive_key_context, max_threads, usedforsecurity)
            self._threads = operator.index(max_threads)
        self._spec = _SPEC
        self._kernels = None              # chosen on every call (``_kernels()``)
        self._state = None                # state, buf, buflen: made when the object streams
        self._lock = None                 # made with them (see _hashobj's docstring)
        if type(data) is bytes:
            self._pending = data          # immutable bytes not yet hashed (the one-shot path)
        else:
            self._pending = b""
            if data is not None:
                self.update(data)

    # --- streaming ---------------------------------------------------------------------------

    def _materialise(self):
        """Start streaming: the state, from the pending bytes. Called holding ``_lock``."""
        state = np.zeros(STATE_WORDS, np.uint32)
        state[:PARAMS] = self._iv
        self._buf = np.zeros(64, np.uint8)
        self._buflen = 0
        self._total = 0                   # (the base class's; BLAKE3 counts in its state)
        self._gathered = bytearray()
        pending = self._pending
        if pending:
            self._buflen = _update(self._threads, state, self._buf, 0,
                                   np.frombuffer(pending, np.uint8))
        self._state = state               # published last: seen set, the others are too
        self._pending = None

    def update(self, data: ReadableBuffer, /) -> blake3:  # type: ignore[override]
        """Add input bytes (any C-contiguous buffer); returns the object."""
        if type(data) is bytes and self._lock is None and not self._pending:
            self._pending = data
            return self
        view = _bytes_view(data)
        with self._lock or self._streaming_lock():
            if self._state is None:
                self._materialise()
            self._buflen = _update(self._threads, self._state, self._buf, self._buflen, view)
        return self

    def update_mmap(self, path: str | os.PathLike[str]) -> blake3:
        """Add the bytes of the file at ``path`` (a str or os.PathLike), read through a memory
        map; returns the object."""
        path = os.fspath(path)          # an int is no file descriptor here: TypeError
        if isinstance(path, bytes):
            raise TypeError("'bytes' object is not an instance of 'str'")
        with open(path, "rb") as f:
            if os.fstat(f.fileno()).st_size == 0:
                return self
            with mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ) as mapped:
                view = memoryview(mapped)
                try:
                    self.update(view)
                finally:
                    view.release()
        return self

    def digest(self, length: int = 32, *, seek: int = 0) -> bytes:
        """``length`` bytes of output (default 32) from byte ``seek`` of the output stream, for
        the input so far; the object stays usable."""
        pending = self._pending           # read before _lock: see _hashobj's docstring
        # The usual call, ``blake3(data).digest()``: one compiled call writing into the bytes
        # object returned, made here and seen by no one else (as ``Hash.digest``). ``is``: the
        # ints themselves (CPython keeps one object per small int; elsewhere the usual path).
        if length is _DEFAULT_LENGTH and seek is _NO_SEEK and self._lock is None:
            made_under, small, array_from, large, one_thread = _backend.ONESHOT
            if made_under is _cpu.DISABLED and (self._threads == 1
                                                or len(pending) <= one_thread):
                entry = small if len(pending) < array_from else large
                if entry is not None:
                    return entry(self._iv, pending, 0, 0, _ZERO * KEY_LEN)
        if not (type(length) is int and type(seek) is int and 0 <= length <= _ISIZE_MAX
                and 0 <= seek <= _U64_MAX):
            length = _unsigned(length)
            seek = _unsigned(seek)
            if length > _ISIZE_MAX:
                raise OverflowError("length overflows isize")
        out = bytearray(length)
        if length:
            lock = self._lock
            if lock is None:
                kernels = _kernels()
                if self._threads != 1 and kernels.group_len and len(pending) > kernels.split_from:
                    state = np.zeros(STATE_WORDS, np.uint32)
                    state[:PARAMS] = self._iv
                    buf = np.zeros(BLOCK_LEN, np.uint8)
                    buflen = _update_threads(kernels, state, buf, 0,
                                             np.frombuffer(pending, np.uint8), self._threads)
                    kernels.final(state, buf, buflen, seek >> 6, seek & 63, out)
                elif len(pending) < kernels.array_from:
                    kernels.oneshot(self._iv, pending, seek >> 6, seek & 63, out)
                    _published(False)
                else:
                    kernels.oneshot_array(self._iv, np.frombuffer(pending, np.uint8),
                                          seek >> 6, seek & 63, out)
                    _published(True)
            else:
                with lock:
                    if self._state is None:
                        self._materialise()
                    _kernels().final(self._state, self._buf, self._buflen, seek >> 6, seek & 63,
                                     out)
        return bytes(out)

    def hexdigest(self, length: int = 32, *, seek: int = 0) -> str:
        """Like digest(), as a string of hexadecimal digits (``length`` counts bytes)."""
        return self.digest(length, seek=seek).hex()

    def _copy_extra(self, other):
        other._threads = self._threads

    if TYPE_CHECKING:
        def copy(self) -> blake3: ...

    def reset(self) -> None:
        """Back to the state before any input (input given to the constructor included)."""
        lock = self._lock
        if lock is None:
            self._pending = b""
            return
        with lock:
            if self._state is None:
                self._pending = b""
                return
            self._state[:] = 0
            self._state[:PARAMS] = self._iv
            self._buflen = 0

    def __reduce__(self):
        raise TypeError(f"cannot pickle '{type(self).__module__}.{type(self).__qualname__}' "
                        "object")

    __repr__ = object.__repr__
