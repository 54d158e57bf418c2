"""jitdigest: hashlib's message digests, written once as Numba kernels.

The same kernel source runs interpreted (``NUMBA_DISABLE_JIT=1``), JIT-compiled, or, where the
CPU has them, on hardware SHA instructions. The interface is hashlib's::

    >>> import jitdigest
    >>> jitdigest.sha256(b"abc").hexdigest()[:16]
    'ba7816bf8f01cfea'
    >>> h = jitdigest.new("SHA-512")
    >>> h.update(b"a"); h.update(b"bc"); h.hexdigest()[:16]
    'ddaf35a193617aba'

Any C-contiguous buffer is hashed as its raw bytes (bytes, bytearray, memoryview, numpy arrays
of any dtype). Importing jitdigest imports no Numba and compiles nothing: each kernel compiles
on first use and is cached per user, outside the package (``jitdigest cache info``;
``jitdigest warmup`` compiles ahead of time). A cache that cannot be written or holds a damaged
entry never stops hashing: it costs a compile and one ``CacheWarning``.
"""
from . import _stdlib  # first: the real hashlib and hmac, before anything can stand in for them
from . import _algorithms, _config, _dispatch, _hashobj
from ._algorithms import algorithms_available, algorithms_guaranteed
from ._cachedir import CacheWarning
from ._dispatch import backend

__version__ = "0.1.0"

__all__ = [
    "new", "file_digest", "algorithms_guaranteed", "algorithms_available",
    "md5", "sha1", "sha224", "sha256", "sha384", "sha512",
    "sha3_224", "sha3_256", "sha3_384", "sha3_512", "shake_128", "shake_256",
    "blake2b", "blake2s", "blake3",
    "hash_many", "hexdigests", "uuid3_many", "uuid5_many", "uuid_strings",
    "pbkdf2_hmac", "hmac_many", "CacheWarning", "backend", "backends", "info",
]


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
    return cls.constructor(spec, _data_from_keywords)


_CONSTRUCTORS = {name: _constructor(name) for name, spec in _algorithms.SPECS.items()
                 if not spec.family.startswith("blake2")}

md5 = _CONSTRUCTORS["md5"]
sha1 = _CONSTRUCTORS["sha1"]
sha224 = _CONSTRUCTORS["sha224"]
sha256 = _CONSTRUCTORS["sha256"]
sha384 = _CONSTRUCTORS["sha384"]
sha512 = _CONSTRUCTORS["sha512"]
sha3_224 = _CONSTRUCTORS["sha3_224"]
sha3_256 = _CONSTRUCTORS["sha3_256"]
sha3_384 = _CONSTRUCTORS["sha3_384"]
sha3_512 = _CONSTRUCTORS["sha3_512"]
shake_128 = _CONSTRUCTORS["shake_128"]
shake_256 = _CONSTRUCTORS["shake_256"]
from ._blake2 import CONSTRUCTORS as _BLAKE2, blake2b, blake2s  # noqa: E402
_CONSTRUCTORS.update(_BLAKE2)
from .batch import hash_many, hexdigests, uuid3_many, uuid5_many, uuid_strings  # noqa: E402
from . import hmac  # noqa: E402
from ._pbkdf2 import pbkdf2_hmac  # noqa: E402
from .keyed_batch import hmac_many  # noqa: E402


def __getattr__(name):
    """``jitdigest.blake3``, the ``blake3`` package's API, imported on first use."""
    if name == "blake3":
        import importlib
        return importlib.import_module(".blake3", __name__)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def new(name, data=b"", **kwargs):
    """Return a new hash object for the named algorithm, as ``hashlib.new``: names are hashlib's
    (and OpenSSL's, e.g. "SHA-256"); an unknown name raises ValueError. "blake3" gives a
    ``jitdigest.blake3.blake3`` (the blake3 package's interface: ``kwargs`` key=,
    derive_key_context=, max_threads=, usedforsecurity=); it is not in
    ``algorithms_available``, which lists hashlib's names only."""
    if name == "blake3":
        from .blake3 import blake3 as _blake3
        return _blake3(data, **kwargs)
    spec = _algorithms.lookup(name)
    if spec.name in _BLAKE2:            # hashlib calls its blake2 classes: their errors as is
        return _BLAKE2[spec.name](data, **kwargs)
    try:
        return _CONSTRUCTORS[spec.name](data, **kwargs)
    except TypeError as exc:
        raise TypeError(str(exc).replace(f"{spec.name}()", "new()")) from None


def file_digest(fileobj, digest, /, *, _bufsize=_config.FILE_BUFFER):
    """Hash the contents of a file-like object opened for binary reading, as
    ``hashlib.file_digest``: ``digest`` is a name or a constructor. Reads with ``readinto`` into
    one reused buffer."""
    digestobj = new(digest) if isinstance(digest, str) else digest()
    if hasattr(fileobj, "getbuffer"):
        digestobj.update(fileobj.getbuffer())
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
        digestobj.update(view[:size])
    return digestobj

def backends(name):
    """The names of the backends this process can run for the algorithm ``name`` (hashlib's
    names, or "blake3"), best first: the per-message ones (e.g. "sha_ni", "unrolled",
    "portable"), then the multi-buffer ones ``hash_many`` uses ("lanes16", "lanes8"; BLAKE3's
    chunk lanes and message lanes share these names, listed once). The first of each kind serves
    unless ``with jitdigest.backend(...)`` picks another; CPU features the machine or Numba's
    target lacks, ``NUMBA_DISABLE_JIT=1`` and ``JITDIGEST_DISABLE`` leave backends out."""
    return _dispatch.available(_algorithms.lookup_any(name))


def info():
    """What this process runs: versions, JIT on/off, threading layer, CPU and target features,
    the switches in force, and the kernel serving each algorithm (``python -m jitdigest info``
    prints it, with HotSpot-style flag lines such as ``UseSHA256Intrinsics = true``)."""
    from ._info import collect
    return collect()
