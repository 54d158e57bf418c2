"""jitdigest: hashlib's message digests, written once as Numba kernels.

The same kernel source runs interpreted, JIT-compiled or on SHA instructions; hashlib's API::

    >>> import jitdigest
    >>> jitdigest.sha256(b"abc").hexdigest()[:16]
    'ba7816bf8f01cfea'
    >>> h = jitdigest.new("SHA-512")
    >>> h.update(b"a"); h.update(b"bc"); h.hexdigest()[:16]
    'ddaf35a193617aba'

Any C-contiguous buffer is hashed as its raw bytes; importing jitdigest imports neither Numba
nor numpy and compiles nothing; each kernel compiles on first use and is cached per user
(``jitdigest warmup`` compiles ahead of time; a cache that cannot be written costs a compile
and one ``CacheWarning``).
"""
from __future__ import annotations

import sys

from .base import stdlib as _stdlib  # first: the real hashlib and hmac, before anything can stand in for them
from .base import algorithms as _algorithms, config as _config
from .engine import dispatch as _dispatch
from .base.algorithms import algorithms_available, algorithms_guaranteed
from .base.cachedir import CacheWarning
from .engine.dispatch import backend

__version__ = _config.VERSION

TYPE_CHECKING = False           # (read as true by type checkers; no ``typing`` import)
if TYPE_CHECKING:               # what ``__getattr__`` imports on first use, for the checker
    from . import blake3, hmac as hmac  # (the first: exported by __all__)
    from ._constructors import (blake2b as blake2b, blake2s as blake2s, file_digest as file_digest,
                                md5 as md5, new as new, sha1 as sha1, sha224 as sha224,
                                sha256 as sha256, sha384 as sha384, sha512 as sha512,
                                sha3_224 as sha3_224, sha3_256 as sha3_256, sha3_384 as sha3_384,
                                sha3_512 as sha3_512, shake_128 as shake_128,
                                shake_256 as shake_256)
    from ._pbkdf2 import pbkdf2_hmac as pbkdf2_hmac
    from ._scrypt import scrypt as scrypt
    from .batch import (hash_many as hash_many, hexdigests as hexdigests,
                        uuid3_many as uuid3_many, uuid5_many as uuid5_many,
                        uuid_strings as uuid_strings)
    from .keyed_batch import hmac_many as hmac_many
    from .files import FileDigest as FileDigest, hash_files as hash_files
    hmac, scrypt                # (served as the others, though not in ``__all__``)

__all__ = [
    "new", "file_digest", "algorithms_guaranteed", "algorithms_available",
    "md5", "sha1", "sha224", "sha256", "sha384", "sha512",
    "sha3_224", "sha3_256", "sha3_384", "sha3_512", "shake_128", "shake_256",
    "blake2b", "blake2s", "blake3",
    "hash_many", "hexdigests", "uuid3_many", "uuid5_many", "uuid_strings",
    "pbkdf2_hmac", "hmac_many", "CacheWarning", "backend", "backends", "info",
    "hash_files", "FileDigest",
]

# Names whose modules need numpy (hash objects, batches, hmac, pbkdf2) or the packages of the
# rows hashlib lacks: imported on first use by ``__getattr__``, so that ``import jitdigest`` imports neither
# numpy nor Numba. Each module's loader (a plain ``import``: ``from . import`` would ask this
# module's ``__getattr__`` first), then name -> (loader, its attribute; None: the module).
def _load_constructors():
    import jitdigest._constructors
    return sys.modules[f"{__name__}._constructors"]


def _load_batch():
    import jitdigest.batch
    return sys.modules[f"{__name__}.batch"]


def _load_hmac():
    import jitdigest.hmac
    return sys.modules[f"{__name__}.hmac"]


def _load_pbkdf2():
    import jitdigest._pbkdf2
    return sys.modules[f"{__name__}._pbkdf2"]


def _load_scrypt():
    import jitdigest._scrypt
    return sys.modules[f"{__name__}._scrypt"]


def _load_keyed_batch():
    import jitdigest.keyed_batch
    return sys.modules[f"{__name__}.keyed_batch"]


def _load_files():
    import jitdigest.files
    return sys.modules[f"{__name__}.files"]


def _load_objects_package():
    """The package of the table's rows hashlib lacks (``_constructors.object_type``)."""
    import jitdigest.blake3 as package
    return package


_LAZY = {
    **{name: (_load_constructors, name) for name in _algorithms.SPECS},
    "new": (_load_constructors, "new"),
    "file_digest": (_load_constructors, "file_digest"),
    "_CONSTRUCTORS": (_load_constructors, "CONSTRUCTORS"),
    **{name: (_load_batch, name)
       for name in ("hash_many", "hexdigests", "uuid3_many", "uuid5_many", "uuid_strings")},
    "hmac": (_load_hmac, None),
    "pbkdf2_hmac": (_load_pbkdf2, "pbkdf2_hmac"),
    "scrypt": (_load_scrypt, "scrypt"),
    "hmac_many": (_load_keyed_batch, "hmac_many"),
    "hash_files": (_load_files, "hash_files"),
    "FileDigest": (_load_files, "FileDigest"),
    **{name: (_load_objects_package, None)
       for name, spec in _algorithms.TABLE.items() if not spec.hashlib},
}


if not TYPE_CHECKING:          # (the checker sees the imports above, and no other name)
    def __getattr__(name: str) -> object:
        """The names of ``_LAZY``, imported on first use (then module attributes as any other)."""
        try:
            load, attribute = _LAZY[name]
        except KeyError:
            raise AttributeError(f"module {__name__!r} has no attribute {name!r}") from None
        value = load()
        if attribute is not None:
            value = getattr(value, attribute)
        globals()[name] = value
        return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(_LAZY))


def backends(name: str) -> list[str]:
    """The names of the backends this process can run for the algorithm ``name`` (any name of
    the table), best first: the per-message ones (e.g. "sha_ni", "unrolled", "portable"), then
    the multi-buffer ones ``hash_many`` uses ("avx512_x16", "avx2_x8"; a family's chunk lanes and
    message lanes may share these names, listed once). The first of each kind serves
    unless ``with jitdigest.backend(...)`` picks another; CPU features the machine or Numba's
    target lacks, ``NUMBA_DISABLE_JIT=1`` and ``JITDIGEST_DISABLE`` leave backends out."""
    return _dispatch.available(_algorithms.lookup_any(name))


def info() -> dict[str, object]:
    """What this process runs: versions, JIT on/off, threading layer, CPU and target features,
    the switches in force, and the kernel serving each algorithm (``python -m jitdigest info``
    prints it, with HotSpot-style flag lines such as ``UseSHA256Intrinsics = true``)."""
    from ._info import collect
    return collect()
