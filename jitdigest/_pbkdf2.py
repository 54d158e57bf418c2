"""``pbkdf2_hmac``: hashlib's PBKDF2-HMAC (RFC 8018), its signature, errors and limits.

Why a module of its own: PBKDF2 is where a compiled loop beats hashlib. OpenSSL's loop re-enters
HMAC for every iteration; here the whole derivation is one kernel call
(``jitdigest/kernels/_hmac.py``): the keyed inner and outer states are computed once, and each
iteration is two compressions of one prepared block (SHA-NI where dispatch chose it), the
digest written straight back into it. MD5, SHA-1, SHA-2 run that kernel; SHA-3, BLAKE2 and
names jitdigest does not know (no kernel) are hashlib's own pbkdf2_hmac, results and errors.

SHA-384/512 (and /224, /256) run the kernel where their ``avx2`` backend serves
(``kernels/sha512/avx2.py``: the schedule in vector registers beside scalar rounds, the
iterations on words), faster than hashlib there. Where only the portable kernel serves them (no
AVX2, ``JITDIGEST_DISABLE=avx2``, interpreted), hashlib does: the portable compression is only
even with OpenSSL's loop (``_HASHLIB_FASTER``: benchmarks/results/tunables.md; ``derive`` still
runs it, for tests).
"""
from __future__ import annotations

import operator

from .base import algorithms as _algorithms
from .engine import dispatch as _dispatch, keyed as _keyed
from .base.stdlib import hashlib
from ._typing import ReadableBuffer

_HASHLIB_FASTER = {("sha512", "portable")}    # (family, backend) pairs that lose to hashlib
_INT_MAX = 2 ** 31 - 1
_LONG_MIN, _LONG_MAX = -2 ** 63, 2 ** 63 - 1


def _c_long(value):
    """An argument as a C ``long`` (the C API's conversion and errors)."""
    value = operator.index(value)
    if not _LONG_MIN <= value <= _LONG_MAX:
        raise OverflowError("Python int too large to convert to C long")
    return value


def pbkdf2_hmac(hash_name: str, password: ReadableBuffer, salt: ReadableBuffer, iterations: int,
                dklen: int | None = None) -> bytes:
    """Password based key derivation function 2 (PKCS #5 v2.0) with HMAC as pseudorandom
    function, as ``hashlib.pbkdf2_hmac``."""
    if not isinstance(hash_name, str):
        raise TypeError("pbkdf2_hmac() argument 'hash_name' must be str, not "
                        f"{type(hash_name).__name__}")
    password_view = _keyed.bytes_view(password)
    salt_view = _keyed.bytes_view(salt)
    iterations = _c_long(iterations)
    try:
        spec = _algorithms.lookup(hash_name)
    except ValueError:
        spec = None
    if (spec is None or (spec.family, _dispatch.kernels_for(spec).name) in _HASHLIB_FASTER
            or _keyed.entry(spec, "pbkdf2") is None):
        return hashlib.pbkdf2_hmac(hash_name, password, salt, iterations, dklen)
    if len(password_view) > _INT_MAX:
        raise OverflowError("password is too long.")
    if len(salt_view) > _INT_MAX:
        raise OverflowError("salt is too long.")
    if iterations < 1:
        raise ValueError("iteration value must be greater than 0.")
    if iterations > _INT_MAX:
        raise OverflowError("iteration value is too great.")
    dklen = spec.digest_size if dklen is None else _c_long(dklen)
    if dklen < 1:
        raise ValueError("key length must be greater than 0.")
    if dklen > _INT_MAX:
        raise OverflowError("key length is too great.")
    return derive(spec, password_view, salt_view, iterations, dklen)


def derive(spec, password, salt, iterations, dklen):
    """PBKDF2-HMAC by the kernel for ``spec`` (arguments checked; password and salt uint8
    arrays)."""
    out = bytearray(dklen)
    _keyed.entry(spec, "pbkdf2")(spec.initial_state, password, salt, iterations,
                                 spec.digest_size, out)
    return bytes(out)
