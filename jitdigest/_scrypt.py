"""``scrypt``: hashlib's scrypt (RFC 7914), its signature, errors and limits.

Why a module of its own: scrypt is PBKDF2-HMAC-SHA256, then ROMix (N BlockMix steps writing
N * 128 * r bytes, then N reading them back in an order the data picks), then PBKDF2 again. Here
the PBKDF2 steps are ``pbkdf2_hmac``'s kernels and ROMix one kernel call, without the GIL
(``jitdigest/kernels/scrypt/portable.py``: the Salsa20/8 state in registers, V written in place).
Under ``NUMBA_DISABLE_JIT=1`` the interpreted ROMix would be far too slow for usual parameters,
so hashlib's scrypt serves there (``derive`` still runs the kernel, for tests).

The checks are CPython's (``_hashlib.scrypt``: its argument conversions, then its own range
checks) and then OpenSSL's ``EVP_PBE_scrypt`` parameter checks, in their order, with the memory
limit counted as OpenSSL counts it (B and V, 32 MiB when ``maxmem`` is 0). Where a call fails
one of them, the error is the standard library's own where it has scrypt: such calls fail there
before any work, so the same arguments are handed to it to raise (its messages carry OpenSSL's
wording, which differs between OpenSSL versions).
"""
from __future__ import annotations

import inspect

import numpy as np

from .engine import cpu as _cpu, keyed as _keyed
from . import _pbkdf2
from .base.stdlib import hashlib
from ._typing import TYPE_CHECKING, ReadableBuffer

_INT_MAX = _pbkdf2._INT_MAX           # C int
_UINT32_MAX = 2 ** 32 - 1
_UINT64_MAX = 2 ** 64 - 1
_ULONG_MAX = _UINT64_MAX                # C unsigned long, LP64
_PR_MAX = 2 ** 30 - 1                   # OpenSSL's SCRYPT_PR_MAX: p * r below it
_DEFAULT_MAXMEM = 32 * 1024 * 1024      # OpenSSL's SCRYPT_MAX_MEM, used when maxmem is 0
_KEYWORDS = ("password", "salt", "n", "r", "p", "maxmem", "dklen")
_MISSING = object()
_HEAPTYPE = 1 << 9                      # Py_TPFLAGS_HEAPTYPE
_LITTLE = np.dtype("<u4")               # RFC 7914's words


def _signature(password: ReadableBuffer, *, salt: ReadableBuffer, n: int, r: int, p: int,
               maxmem: int = 0, dklen: int = 64) -> bytes:
    """hashlib's signature of scrypt (typeshed's), which ``scrypt`` takes and shows."""
    raise NotImplementedError


if TYPE_CHECKING:
    scrypt = _signature
else:
    def scrypt(*args: object, **kwargs: object) -> bytes:
        """scrypt password-based key derivation function, as ``hashlib.scrypt(password, *, salt,
        n, r, p, maxmem=0, dklen=64)``."""
        if len(args) + ("password" in kwargs) != 1 or not set(kwargs) <= set(_KEYWORDS):
            _stdlib_error(args, kwargs, TypeError("scrypt() takes exactly 1 positional argument "
                                                  f"({len(args)} given)"))
        password = args[0] if args else kwargs["password"]
        salt = kwargs.get("salt", _MISSING)
        n, r, p = (kwargs.get(name, _MISSING) for name in "nrp")
        maxmem = kwargs.get("maxmem", 0)
        dklen = kwargs.get("dklen", 64)
        # the argument conversions, in the order of the signature
        password_view = _keyed.bytes_view(password)
        salt_view = None if salt is _MISSING else _keyed.bytes_view(salt)
        for name, value in (("n", n), ("r", r), ("p", p)):
            if value is not _MISSING and not isinstance(value, int):
                kind = "None" if value is None else _tp_name(type(value))
                raise TypeError(f"scrypt() argument '{name}' must be int, not {kind}")
        maxmem = _pbkdf2._c_long(maxmem)
        dklen = _pbkdf2._c_long(dklen)
        # _hashlib.scrypt's own checks
        if len(password_view) > _INT_MAX:
            raise OverflowError("password is too long.")
        if salt_view is None:
            raise TypeError("salt is required")
        if len(salt_view) > _INT_MAX:
            raise OverflowError("salt is too long.")
        for name, value in (("n", n), ("r", r), ("p", p)):
            if value is _MISSING or not 0 <= value <= _ULONG_MAX:
                raise TypeError(f"{name} is required and must be an unsigned int")
            if name == "n" and (value < 2 or value & (value - 1)):
                raise ValueError("n must be a power of 2.")
        n, r, p = int(n), int(r), int(p)
        if not 0 <= maxmem <= _INT_MAX:
            raise ValueError(f"maxmem must be positive and smaller than {_INT_MAX}")
        if not 1 <= dklen <= _INT_MAX:
            raise ValueError(f"dklen must be greater than 0 and smaller than {_INT_MAX}")
        problem = _openssl_problem(n, r, p, maxmem)
        if problem is not None:
            _stdlib_error((b"",), dict(salt=b"", n=n, r=r, p=p, maxmem=maxmem, dklen=dklen),
                          ValueError(problem))
        if not _cpu.jit_enabled() and hasattr(hashlib, "scrypt"):
            return hashlib.scrypt(password, salt=salt, n=n, r=r, p=p, maxmem=maxmem, dklen=dklen)
        return derive(password_view, salt_view, n, r, p, dklen)

    scrypt.__signature__ = inspect.signature(_signature)
    scrypt.__annotations__ = dict(_signature.__annotations__)


def _tp_name(cls):
    """A type's name as the C API prints it (``tp_name``): a static type's own dotted name
    (``numpy.int64``), a class's bare name."""
    if cls.__flags__ & _HEAPTYPE or cls.__module__ == "builtins":
        return cls.__name__
    return f"{cls.__module__}.{cls.__qualname__}"


def _openssl_problem(n, r, p, maxmem):
    """What OpenSSL's EVP_PBE_scrypt says of these parameters (n a power of 2, all in C
    range), as its error reads through CPython; None when it takes them."""
    if r > _UINT32_MAX or p > _UINT32_MAX:
        return "[digital envelope routines] parameter too large"
    if r == 0 or p == 0:
        return "Invalid parameter combination for n, r, p, maxmem."
    exceeded = "[digital envelope routines] memory limit exceeded"
    if p > _PR_MAX // r:
        return exceeded
    if 16 * r <= 63 and n >= 1 << (16 * r):
        return exceeded
    blen = p * 128 * r
    if blen > _INT_MAX or n + 2 > _UINT64_MAX // 128 // r:
        return exceeded
    vlen = 128 * r * (n + 2)
    if blen > _UINT64_MAX - vlen or blen + vlen > (maxmem or _DEFAULT_MAXMEM):
        return exceeded
    return None


def _stdlib_error(args, kwargs, fallback):
    """Raise what the standard library's scrypt raises for arguments it refuses before doing
    any work; ``fallback`` where it has no scrypt (or, unexpectedly, takes them)."""
    stdlib = getattr(hashlib, "scrypt", None)
    if stdlib is not None:
        stdlib(*args, **kwargs)
    raise fallback


def derive(password, salt, n, r, p, dklen):
    """scrypt by the kernels (arguments checked; password and salt uint8 arrays): B from
    PBKDF2-HMAC-SHA256, ROMix of its p blocks, the key from PBKDF2 over them."""
    from .kernels.scrypt.portable import romix
    b = _pbkdf2.pbkdf2_hmac("sha256", password, salt, 1, p * 128 * r)
    words = np.frombuffer(b, _LITTLE).astype(np.uint32)     # writable, in native order
    del b
    v = np.empty(32 * r * n, np.uint32)
    y = np.empty(32 * r, np.uint32)
    romix(words, n, r, v, y)
    del v
    # B as bytes again: the words themselves where the native order is little-endian
    return _pbkdf2.pbkdf2_hmac("sha256", password, words.astype(_LITTLE, copy=False), 1, dklen)
