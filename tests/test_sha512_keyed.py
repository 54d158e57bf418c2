"""The SHA-512 family's PBKDF2 kernel on each of its per-message backends (``portable``, which
``pbkdf2_hmac`` leaves to hashlib, and ``avx2`` where usable: the schedule in vector registers,
the iterations on words, the padded block rebuilt from the digest words with a per-digest-size
mask), against hashlib: every digest size (64, 48, 32 and the 28 bytes of SHA-512/224, which end
mid-word), derived keys shorter and longer than one digest, passwords around the block size.
(HMAC on the serving backend: tests/test_hmac.py.)"""
import hashlib

import numpy as np
import pytest

import jitdigest
from jitdigest.base import algorithms as _algorithms
from jitdigest.engine import dispatch as _dispatch, keyed as _keyed
from jitdigest import _pbkdf2

NAMES = ["sha512", "sha384", "sha512_256", "sha512_224"]
BACKENDS = [b.name for b in _dispatch.backends("sha512")]
PASSWORDS = [b"", b"pw", b"p" * 127, b"q" * 128, bytes(range(129)), b"r" * 300]
CASES = [  # salt, iterations, dklen (None: the digest size)
    (b"salt", 1, None), (b"", 2, 1), (b"NaCl" * 40, 3, 100), (b"s", 17, 200), (b"x" * 123, 5, 64),
    (b"y" * 124, 4, 63), (b"z" * 125, 2, 65),
]


def usable(name):
    backend = {b.name: b for b in _dispatch.backends("sha512")}[name]
    if not _dispatch.usable(backend):
        pytest.skip(f"{name} not usable on this CPU/target")


@pytest.mark.parametrize("backend", BACKENDS)
def test_pbkdf2_every_digest_size(backend):
    usable(backend)
    checked = 0
    with jitdigest.backend(backend):
        for name in NAMES:
            spec = _algorithms.lookup(name)
            assert _dispatch.kernels_for(spec).name == backend
            for password in PASSWORDS:
                for salt, iterations, dklen in CASES:
                    n = spec.digest_size if dklen is None else dklen
                    got = _pbkdf2.derive(spec, np.frombuffer(password, np.uint8),
                                         np.frombuffer(salt, np.uint8), iterations, n)
                    assert got == hashlib.pbkdf2_hmac(name, password, salt, iterations, dklen), \
                        (name, len(password), len(salt), iterations, dklen)
                    checked += 1
    assert checked == len(NAMES) * len(PASSWORDS) * len(CASES)


def test_pbkdf2_hands_off_only_where_the_portable_kernel_serves():
    spec = _algorithms.lookup("sha512")
    args = ("sha512", b"password", b"salt", 1000)
    served = []
    for backend in BACKENDS:
        if not _dispatch.usable({b.name: b for b in _dispatch.backends("sha512")}[backend]):
            continue
        with jitdigest.backend(backend):
            assert jitdigest.pbkdf2_hmac(*args) == hashlib.pbkdf2_hmac(*args)
            served.append((backend, (spec.family, backend) in _pbkdf2._HASHLIB_FASTER))
    assert ("portable", True) in served
    if "avx2" in jitdigest.backends("sha512"):
        assert ("avx2", False) in served
        assert _keyed.entry(spec, "pbkdf2") is not None
