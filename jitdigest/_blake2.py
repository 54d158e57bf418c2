"""hashlib's ``blake2b`` and ``blake2s`` classes over the BLAKE2 kernels.

The parameters (digest size, key length, salt, personalisation, tree parameters) form the
RFC 7693 / BLAKE2 parameter block, XORed into the IV here in Python: the kernels start from
that state (h[0..7], counter t0, t1, last-node flag f1). A key is absorbed as a first,
zero-padded block; so only an unkeyed object can take the one-shot kernel path.

Argument conversion and validation follow CPython's ``_blake2`` module, in its order and with
its exception types and messages (conversion of every argument first, then the range checks).
"""
from __future__ import annotations

import operator
from functools import lru_cache

from .base import algorithms as _algorithms
from .engine import cpu as _cpu
from ._hashobj import (_CHOSEN, Hash, HashType, _first_kernels,
                       unknown_keyword_error)
from .base.lazy_numpy import on_first_use
from ._typing import TYPE_CHECKING, EmptyDefault, ReadableBuffer, public_signature

np = on_first_use(globals())        # numpy with the first object that needs an array

_NO_DATA = EmptyDefault()           # b"" left out (a key's objects hash no data then)
_INT_MIN, _INT_MAX = -2 ** 31, 2 ** 31 - 1


def _c_int(value):
    """An argument converted as a C ``int`` (CPython's ``i`` converter)."""
    if type(value) is not int:
        value = operator.index(value)
    if not _INT_MIN <= value <= _INT_MAX:
        raise OverflowError("Python int too large to convert to C int")
    return value


def _c_unsigned(value, too_large):
    """An argument converted as a C 64-bit unsigned integer (CPython's ``unsigned long`` /
    ``unsigned long long`` converters, which differ only in the overflow message)."""
    if not isinstance(value, int):
        raise TypeError("an integer is required")
    if value < 0:
        raise ValueError("value must be positive")
    if value >> 64:
        raise OverflowError(too_large)
    return value


def _c_buffer(value):
    """The bytes of a C-contiguous buffer (CPython's ``y*`` converter; its errors)."""
    if type(value) is bytes:
        return value
    return np.frombuffer(value, np.uint8).tobytes()


_DEFAULT_STATE = {}    # blake2b, blake2s -> the initial state of hashlib's default parameters


class _Blake2Type(HashType):
    """Immutable as every hash type, but callable: the classes are hashlib's constructors.

    ``blake2b(data)`` and ``blake2s(data)`` with ``bytes`` (or nothing) and no other argument,
    the usual call, build the object here without ``__init__`` (as ``Hash``'s constructors
    do): its thirteen parameters and their checks were a third of a 64-byte
    ``blake2b(data).digest()`` (hashlib: 0.5; AMD EPYC). Subclasses (which may define
    ``__init__``) are made as usual."""

    def __call__(cls, data=_NO_DATA, /, *args, **kwargs):
        if args or kwargs or (cls is not blake2b and cls is not blake2s):
            return type.__call__(cls, data, *args, **kwargs)
        if data is _NO_DATA:
            data = b""
        elif type(data) is not bytes:
            return type.__call__(cls, data)
        obj = object.__new__(cls)
        state = _DEFAULT_STATE.get(cls)
        if state is None:
            state = _DEFAULT_STATE[cls] = cls._initial_state(
                cls.MAX_DIGEST_SIZE, 0, b"", b"", 1, 1, 0, 0, 0, 0, False)
        obj._digest_size = cls.MAX_DIGEST_SIZE
        spec = _algorithms.SPECS[cls.name]
        obj._spec = spec
        obj._iv = state
        obj._state = None
        obj._lock = None
        obj._pending = data
        chosen = _CHOSEN.get(cls.name)
        obj._kernels = chosen[1] if chosen and chosen[0] is _cpu.DISABLED else \
            _first_kernels(spec)
        return obj

    @property
    def __signature__(cls):
        """hashlib's signature (``inspect.signature(blake2b)``), made when first asked for:
        ``inspect`` is no import of a script that only hashes."""
        return _public_signature(cls)


class _Blake2(Hash, metaclass=_Blake2Type):
    """Shared construction for blake2b and blake2s; subclasses set the size constants."""

    __slots__ = ("_digest_size",)

    _NODE_OFFSET_BITS = None  # width of the node_offset field

    if TYPE_CHECKING:         # hashlib's signature (the classes take more, for hashlib's errors)
        def __init__(self, data: ReadableBuffer = b"", /, *, digest_size: int = ...,
                     key: ReadableBuffer = b"", salt: ReadableBuffer = b"",
                     person: ReadableBuffer = b"", fanout: int = 1, depth: int = 1,
                     leaf_size: int = 0, node_offset: int = 0, node_depth: int = 0,
                     inner_size: int = 0, last_node: bool = False,
                     usedforsecurity: bool = True) -> None: ...

    def _setup(self, data, digest_size, key, salt, person, fanout, depth, leaf_size,
               node_offset, node_depth, inner_size, last_node, usedforsecurity):
        cls = type(self)
        if (type(digest_size) is int and digest_size == cls.MAX_DIGEST_SIZE
                and type(key) is bytes and not key and type(salt) is bytes and not salt
                and type(person) is bytes and not person
                and type(fanout) is int and fanout == 1 and type(depth) is int and depth == 1
                and type(leaf_size) is int and leaf_size == 0
                and type(node_offset) is int and node_offset == 0
                and type(node_depth) is int and node_depth == 0
                and type(inner_size) is int and inner_size == 0
                and last_node is False and usedforsecurity is True):
            # hashlib's defaults (the usual call): nothing to convert or check
            self._digest_size = digest_size
            Hash.__init__(self, _algorithms.SPECS[cls.name], b"" if data is _NO_DATA else data,
                          cls._initial_state(digest_size, 0, b"", b"", 1, 1, 0, 0, 0, 0, False))
            return
        # Conversion, in signature order.
        digest_size = _c_int(digest_size)
        key = _c_buffer(key)
        salt = _c_buffer(salt)
        person = _c_buffer(person)
        fanout = _c_int(fanout)
        depth = _c_int(depth)
        leaf_size = _c_unsigned(leaf_size, "Python int too large to convert to C unsigned long")
        node_offset = _c_unsigned(node_offset, "int too big to convert")
        node_depth = _c_int(node_depth)
        inner_size = _c_int(inner_size)
        last_node = bool(last_node)
        bool(usedforsecurity)                 # converted (its truth value may raise), unused
        # Range checks, in _blake2's order (the key's last).
        max_digest = cls.MAX_DIGEST_SIZE
        if not 1 <= digest_size <= max_digest:
            raise ValueError(f"digest_size must be between 1 and {max_digest} bytes")
        if len(salt) > cls.SALT_SIZE:
            raise ValueError(f"maximum salt length is {cls.SALT_SIZE} bytes")
        if len(person) > cls.PERSON_SIZE:
            raise ValueError(f"maximum person length is {cls.PERSON_SIZE} bytes")
        if not 0 <= fanout <= 255:
            raise ValueError("fanout must be between 0 and 255")
        if not 1 <= depth <= 255:
            raise ValueError("depth must be between 1 and 255")
        if leaf_size > 0xFFFFFFFF:
            raise OverflowError("leaf_size is too large")
        if node_offset >> cls._NODE_OFFSET_BITS:
            raise OverflowError("node_offset is too large")
        if not 0 <= node_depth <= 255:
            raise ValueError("node_depth must be between 0 and 255")
        if not 0 <= inner_size <= max_digest:
            raise ValueError(f"inner_size must be between 0 and is {max_digest}")
        if len(key) > cls.MAX_KEY_SIZE:
            raise ValueError(f"maximum key length is {cls.MAX_KEY_SIZE} bytes")

        iv = cls._initial_state(digest_size, len(key), salt, person, fanout, depth, leaf_size,
                                node_offset, node_depth, inner_size, last_node)
        self._digest_size = digest_size
        spec = _algorithms.SPECS[cls.name]
        if not key:
            Hash.__init__(self, spec, b"" if data is _NO_DATA else data, iv)
            return
        Hash.__init__(self, spec, b"", iv)
        self._streaming_lock()                # a streaming object from the start
        self._materialise()
        block = np.zeros(spec.block_size, np.uint8)
        block[:len(key)] = np.frombuffer(key, np.uint8)
        self._buflen = self._kernels.update(self._state, self._buf, self._buflen, block)
        if data is not _NO_DATA:
            self.update(data)

    @classmethod
    @lru_cache(maxsize=256)
    def _initial_state(cls, digest_size, key_size, salt, person, fanout, depth, leaf_size,
                       node_offset, node_depth, inner_size, last_node):
        """The read-only initial state (``_algorithms.blake2_state``)."""
        return _algorithms.blake2_state(cls.name, digest_size, key_size, salt, person, fanout,
                                        depth, leaf_size, node_offset, node_depth, inner_size,
                                        last_node)

    @property
    def digest_size(self) -> int:
        return self._digest_size

    def digest(self) -> bytes:
        """The digest of the data passed so far, as bytes; the object stays usable."""
        return self._output(self._digest_size)

    if TYPE_CHECKING:
        def copy(self) -> _Blake2: ...

    def _copy_extra(self, other):
        other._digest_size = self._digest_size


def _check_extra(name, args, kwargs):
    """hashlib's TypeErrors for surplus positional or unknown keyword arguments."""
    if args:
        raise TypeError(f"{name}() takes at most 1 positional argument ({1 + len(args)} given)")
    if kwargs:
        raise unknown_keyword_error(name, next(iter(kwargs)))


class blake2b(_Blake2):
    """Return a new BLAKE2b hash object."""

    __slots__ = ()

    name = "blake2b"
    SALT_SIZE = 16
    PERSON_SIZE = 16
    MAX_KEY_SIZE = 64
    MAX_DIGEST_SIZE = 64
    _NODE_OFFSET_BITS = _algorithms.BLAKE2_PARAMETERS["blake2b"][1]

    if not TYPE_CHECKING:
        def __init__(self, data: ReadableBuffer = _NO_DATA, /, *args: object,
                     digest_size: int = 64, key: ReadableBuffer = b"", salt: ReadableBuffer = b"",
                     person: ReadableBuffer = b"", fanout: int = 1, depth: int = 1,
                     leaf_size: int = 0, node_offset: int = 0, node_depth: int = 0,
                     inner_size: int = 0, last_node: bool = False, usedforsecurity: bool = True,
                     **kwargs: object) -> None:
            if args or kwargs:
                _check_extra("blake2b", args, kwargs)
            self._setup(data, digest_size, key, salt, person, fanout, depth, leaf_size,
                        node_offset, node_depth, inner_size, last_node, usedforsecurity)


class blake2s(_Blake2):
    """Return a new BLAKE2s hash object."""

    __slots__ = ()

    name = "blake2s"
    SALT_SIZE = 8
    PERSON_SIZE = 8
    MAX_KEY_SIZE = 32
    MAX_DIGEST_SIZE = 32
    _NODE_OFFSET_BITS = _algorithms.BLAKE2_PARAMETERS["blake2s"][1]

    if not TYPE_CHECKING:
        def __init__(self, data: ReadableBuffer = _NO_DATA, /, *args: object,
                     digest_size: int = 32, key: ReadableBuffer = b"", salt: ReadableBuffer = b"",
                     person: ReadableBuffer = b"", fanout: int = 1, depth: int = 1,
                     leaf_size: int = 0, node_offset: int = 0, node_depth: int = 0,
                     inner_size: int = 0, last_node: bool = False, usedforsecurity: bool = True,
                     **kwargs: object) -> None:
            if args or kwargs:
                _check_extra("blake2s", args, kwargs)
            self._setup(data, digest_size, key, salt, person, fanout, depth, leaf_size,
                        node_offset, node_depth, inner_size, last_node, usedforsecurity)


# hashlib's signature: ``(data=b'', /, *, digest_size=..., ..., usedforsecurity=True)``
_public_signature = lru_cache(maxsize=None)(public_signature)

CONSTRUCTORS = {"blake2b": blake2b, "blake2s": blake2s}
