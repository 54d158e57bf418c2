"""hashlib's named constructors (``jitdigest.sha256``, ...), ``new`` and ``file_digest``.

They live here, not in the package's ``__init__``: the package imports this module on first
use of one of these names (its ``__getattr__``), so that ``import jitdigest`` costs nothing of
what hash objects use. numpy comes with the first object that needs an array (a view of a
buffer, a streaming state); a script's first one-shot digests of ``bytes`` through stored
kernels need none (``_native.FirstDigests``).
"""
from __future__ import annotations

from .base import algorithms as _algorithms, config as _config, stdlib as _stdlib
from . import _hashobj
from ._blake2 import CONSTRUCTORS as BLAKE2, blake2b, blake2s
from collections.abc import Callable
from ._hashobj import Hash, ShakeHash
from ._typing import TYPE_CHECKING, BinaryReader, ReadableBuffer

if TYPE_CHECKING:
    from typing import Protocol

    class HashConstructor(Protocol):
        """``sha256`` and the other named constructors of hashlib's algorithms (the data
        keyword is the running Python's: ``string`` up to 3.12, ``data`` after)."""

        def __call__(self, data: ReadableBuffer = b"", /, *, usedforsecurity: bool = True,
                     **data_keyword: ReadableBuffer) -> Hash: ...

    class ShakeConstructor(Protocol):
        """``shake_128`` and ``shake_256``."""

        def __call__(self, data: ReadableBuffer = b"", /, *, usedforsecurity: bool = True,
                     **data_keyword: ReadableBuffer) -> ShakeHash: ...


def _accepted_data_keywords():
    """The keyword names the running Python's hashlib takes for the data ("string", "data")."""
    accepted = []
    for keyword in ("data", "string"):
        try:
            _stdlib.hashlib.sha256(**{keyword: b""})
        except TypeError:
            continue
        accepted.append(keyword)
    return tuple(accepted)


__all__ = ["new", "file_digest", "md5", "sha1", "sha224", "sha256", "sha384", "sha512",
           "sha3_224", "sha3_256", "sha3_384", "sha3_512", "shake_128", "shake_256",
           "blake2b", "blake2s"]

_DATA_KEYWORDS = _accepted_data_keywords()


def _data_from_keywords(func_name, no_data, data, kwargs):
    """Resolve the data argument given by keyword, with hashlib's TypeErrors."""
    for key in kwargs:
        if key not in _DATA_KEYWORDS:
            raise _hashobj.unknown_keyword_error(func_name, key)
    for key in _DATA_KEYWORDS:
        if key in kwargs:
            if data is not no_data:
                raise TypeError(f"argument for {func_name}() given by name ({key!r}) and position (1)")
            data = kwargs[key]
    return data


def _constructor(name):
    spec = _algorithms.SPECS[name]
    cls = _hashobj.ShakeHash if spec.digest_size == 0 else _hashobj.Hash
    return cls._constructor(spec, _data_from_keywords)


CONSTRUCTORS = {name: _constructor(name) for name, spec in _algorithms.SPECS.items()
                if not spec.family.startswith("blake2")}
CONSTRUCTORS.update(BLAKE2)
_OTHERS = frozenset(name for name, spec in _algorithms.TABLE.items() if not spec.hashlib)

md5: HashConstructor = CONSTRUCTORS["md5"]
sha1: HashConstructor = CONSTRUCTORS["sha1"]
sha224: HashConstructor = CONSTRUCTORS["sha224"]
sha256: HashConstructor = CONSTRUCTORS["sha256"]
sha384: HashConstructor = CONSTRUCTORS["sha384"]
sha512: HashConstructor = CONSTRUCTORS["sha512"]
sha3_224: HashConstructor = CONSTRUCTORS["sha3_224"]
sha3_256: HashConstructor = CONSTRUCTORS["sha3_256"]
sha3_384: HashConstructor = CONSTRUCTORS["sha3_384"]
sha3_512: HashConstructor = CONSTRUCTORS["sha3_512"]
shake_128: ShakeConstructor = CONSTRUCTORS["shake_128"]
shake_256: ShakeConstructor = CONSTRUCTORS["shake_256"]


def object_type(spec):
    """The hash-object class of a row of the table hashlib lacks (``spec.hashlib`` false): its
    own package's type, with that package's interface and keyword arguments; it chooses its
    kernels itself (``backend_name()``, ``ENTRIES``, ``compile_entries``), gives batches
    their parameters (``params``, ``output_length``) and, as ``_tree``, the pieces of one input
    hashed apart and merged (``jitdigest sum --dask``)."""
    from .blake3 import blake3 as objects         # the one such row so far
    return objects


def new(name: str, data: ReadableBuffer = b"", **kwargs: object) -> Hash:
    """Return a new hash object for the named algorithm, as ``hashlib.new``: names are hashlib's
    (and OpenSSL's, e.g. "SHA-256"); a name jitdigest has no kernels for but hashlib takes (an
    OpenSSL algorithm such as "ripemd160" or "sm3", an OID) gives hashlib's own object, and one
    neither knows raises hashlib's ValueError. The exact name of a row hashlib lacks gives its
    package's object (``object_type``: ``kwargs`` are that package's); such names are not in
    ``algorithms_available``, which lists the names jitdigest serves, all of them hashlib's."""
    other = _algorithms.TABLE[name] if isinstance(name, str) and name in _OTHERS else None
    if other is not None:
        return object_type(other)(data, **kwargs)
    try:
        spec = _algorithms.lookup(name)
    except ValueError:
        return _stdlib.hashlib.new(name, data, **kwargs)
    if spec.name in BLAKE2:             # hashlib calls its blake2 classes: their errors as is
        return BLAKE2[spec.name](data, **kwargs)
    try:
        return CONSTRUCTORS[spec.name](data, **kwargs)
    except TypeError as exc:
        raise TypeError(str(exc).replace(f"{spec.name}()", "new()")) from None


def file_digest(fileobj: BinaryReader, digest: str | Callable[[], Hash], /, *,
                _bufsize: int = _config.FILE_BUFFER) -> Hash:
    """Hash the contents of a file-like object opened for binary reading, as
    ``hashlib.file_digest``: ``digest`` is a name or a constructor. Reads with ``readinto`` into
    one reused buffer."""
    digestobj = new(digest) if isinstance(digest, str) else digest()
    if hasattr(fileobj, "getbuffer"):
        data = fileobj.getbuffer()
        # (an object on the first digests takes a small file's bytes as one message)
        digestobj.update(bytes(data) if _hashobj.joins_bytes(digestobj, len(data)) else data)
        return digestobj
    if not (hasattr(fileobj, "readinto") and hasattr(fileobj, "readable")
            and fileobj.readable()):
        raise ValueError(f"'{fileobj!r}' is not a file-like object in binary reading mode.")
    buf = bytearray(_bufsize)
    view = memoryview(buf)
    while True:
        size = fileobj.readinto(buf)
        if size is None:
            raise BlockingIOError("I/O operation would block.")
        if size == 0:
            break
        chunk = view[:size]
        # (as bytes while they join into one message: no numpy or Numba for a small file)
        digestobj.update(bytes(chunk) if _hashobj.joins_bytes(digestobj, size) else chunk)
    return digestobj
