"""pbkdf2_hmac against RFC 6070 and RFC 7914 known answers and hashlib.pbkdf2_hmac (results and
errors)."""
import hashlib

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

import jitdigest
from conftest import outcome
from jitdigest.base import algorithms as _algorithms
from jitdigest import _pbkdf2

# RFC 6070 (PBKDF2-HMAC-SHA1): password, salt, iterations, dkLen, derived key
RFC6070 = [
    (b"password", b"salt", 1, 20, "0c60c80f961f0e71f3a9b524af6012062fe037a6"),
    (b"password", b"salt", 2, 20, "ea6c014dc72d6f8ccd1ed92ace1d41f0d8de8957"),
    (b"password", b"salt", 4096, 20, "4b007901b765489abead49d926f721d065a429c1"),
    (b"password", b"salt", 16777216, 20, "eefe3d61cd4da4e4e9945b3d6ba2158c2634e984"),
    (b"passwordPASSWORDpassword", b"saltSALTsaltSALTsaltSALTsaltSALTsalt", 4096, 25,
     "3d2eec4fe41c849b80c8d83662c0e44a8b291a964cf2f07038"),
    (b"pass\0word", b"sa\0lt", 4096, 16, "56fa6aa75548099dcc37d7f03425e0c3"),
]
# RFC 7914 section 11 (PBKDF2-HMAC-SHA256): password, salt, iterations, dkLen, derived key
RFC7914 = [
    (b"passwd", b"salt", 1, 64,
     "55ac046e56e3089fec1691c22544b605f94185216dde0465e68b9d57c20dacbc"
     "49ca9cccf179b645991664b39d77ef317c71b845b1e30bd509112041d3a19783"),
    (b"Password", b"NaCl", 80000, 64,
     "4ddcd8f60b98be21830cee5ef22701f9641a4418d04c0414aeff08876b34ab56"
     "a1d425a1225833549adb841b51c9b3176a272bdebba1d078478f62b397f33c8d"),
]
# the kernel families; SHA-384/512 are served by hashlib in pbkdf2_hmac, their kernel via derive
KERNEL_ALGORITHMS = ["md5", "sha1", "sha224", "sha256", "sha384", "sha512", "sha512_224",
                     "sha512_256"]
ALL = sorted(n for n in jitdigest.algorithms_available if not n.startswith("shake"))


def test_every_algorithm_hashlib_derives_with_is_tested():
    """test_every_algorithm runs every algorithm hashlib guarantees except SHAKE (which
    pbkdf2_hmac refuses, as BAD checks)."""
    assert set(ALL) >= {n for n in hashlib.algorithms_guaranteed if not n.startswith("shake")}


@pytest.mark.parametrize("password,salt,iterations,dklen,expected", RFC6070)
def test_rfc6070(password, salt, iterations, dklen, expected):
    assert jitdigest.pbkdf2_hmac("sha1", password, salt, iterations, dklen).hex() == expected


@pytest.mark.parametrize("password,salt,iterations,dklen,expected", RFC7914)
def test_rfc7914(password, salt, iterations, dklen, expected):
    assert jitdigest.pbkdf2_hmac("sha256", password, salt, iterations, dklen).hex() == expected
    spec = _algorithms.lookup("sha256")
    assert _pbkdf2.derive(spec, _view(password), _view(salt), iterations, dklen).hex() == expected


def _view(b):
    return np.frombuffer(b, np.uint8)


@settings(max_examples=200, deadline=None)
@given(st.data())
def test_kernel_against_hashlib(data):
    name = data.draw(st.sampled_from(KERNEL_ALGORITHMS))
    bs = hashlib.new(name).block_size
    plen = data.draw(st.one_of(st.just(0), st.sampled_from([bs - 1, bs, bs + 1]),
                               st.integers(0, 3 * bs)))
    password = data.draw(st.binary(min_size=plen, max_size=plen))
    salt = data.draw(st.binary(max_size=2 * bs + 10))
    iterations = data.draw(st.integers(1, 40))
    dklen = data.draw(st.integers(1, 200))
    expected = hashlib.pbkdf2_hmac(name, password, salt, iterations, dklen)
    spec = _algorithms.lookup(name)
    assert _pbkdf2.derive(spec, _view(password), _view(salt), iterations, dklen) == expected
    assert jitdigest.pbkdf2_hmac(name, bytearray(password), memoryview(salt), iterations,
                                 dklen) == expected


@pytest.mark.parametrize("name", ALL)
def test_every_algorithm(name):
    for args in [(b"password", b"salt", 1), (b"pw", b"", 3, 100), (b"k" * 300, b"s" * 70, 2, None)]:
        assert jitdigest.pbkdf2_hmac(name, *args) == hashlib.pbkdf2_hmac(name, *args)
    kw = dict(hash_name=name, password=b"p", salt=b"s", iterations=2, dklen=5)
    assert jitdigest.pbkdf2_hmac(**kw) == hashlib.pbkdf2_hmac(**kw)


def test_100k_iterations():
    for name in ("sha1", "sha256", "sha512"):
        args = (name, b"password", b"NaCl", 100_000)
        assert jitdigest.pbkdf2_hmac(*args) == hashlib.pbkdf2_hmac(*args)


BAD = [
    ("sha256", "p", b"s", 1), ("sha256", b"p", "s", 1), ("sha256", b"p", b"s", 0),
    ("sha256", b"p", b"s", -5), ("sha256", b"p", b"s", 2 ** 31), ("sha256", b"p", b"s", 2 ** 64),
    ("sha256", b"p", b"s", 1.0), ("sha256", b"p", b"s", 1, 0), ("sha256", b"p", b"s", 1, -1),
    ("sha256", b"p", b"s", 1, 2 ** 31), ("sha256", b"p", b"s", 1, 2 ** 64),
    ("sha256", b"p", b"s", 1, 3.0), ("foo", b"p", b"s", 1), (5, b"p", b"s", 1),
    ("shake_128", b"p", b"s", 1), ("sha256", None, b"s", 1), ("md5", b"p", 5, 1),
    ("sha512", b"p", b"s", 0), ("sha3_256", b"p", b"s", 0),
]


@pytest.mark.parametrize("args", BAD)
def test_errors_as_hashlib(args):
    ours = outcome(lambda: jitdigest.pbkdf2_hmac(*args))
    theirs = outcome(lambda: hashlib.pbkdf2_hmac(*args))
    assert ours[0] != "ok"
    assert ours == theirs
