"""scrypt against RFC 7914's known answers and hashlib.scrypt (results and errors); the ROMix
kernel interpreted, in a child process."""
import hashlib
import os
import pathlib
import subprocess
import sys
import threading

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

import jitdigest
from conftest import outcome
from jitdigest import _scrypt

ROOT = pathlib.Path(__file__).resolve().parent.parent
needs_stdlib = pytest.mark.skipif(not hasattr(hashlib, "scrypt"),
                                  reason="this Python's hashlib has no scrypt")

# RFC 7914 section 12: password, salt, N, r, p, dkLen, derived key
RFC7914 = [
    (b"", b"", 16, 1, 1, 64,
     "77d6576238657b203b19ca42c18a0497f16b4844e3074ae8dfdffa3fede21442"
     "fcd0069ded0948f8326a753a0fc81f17e8d3e0fb2e0d3628cf35e20c38d18906"),
    (b"password", b"NaCl", 1024, 8, 16, 64,
     "fdbabe1c9d3472007856e7190d01e9fe7c6ad7cbc8237830e77376634b373162"
     "2eaf30d92e22a3886ff109279d9830dac727afb94a83ee6d8360cbdfa2cc0640"),
    (b"pleaseletmein", b"SodiumChloride", 16384, 8, 1, 64,
     "7023bdcb3afd7348461c06cd81fd38ebfda8fbba904f8e3ea9b543f6545da1f2"
     "d5432955613f0fcf62d49705242a9af9e61e85dc0d651e40dfcf017b45575887"),
    (b"pleaseletmein", b"SodiumChloride", 1048576, 8, 1, 64,
     "2101cb9b6a511aaeaddbbe09cf70f881ec568d574a2ffd4dabe5ee9820adaa47"
     "8e56fd8f4ba5d09ffa1c6d927c40f4c337304049e8a952fbcbf45c6fa77a41a4"),
]
# the last vector needs 1 GiB (maxmem raised) and a few seconds: run where asked
BIG = os.environ.get("JITDIGEST_TEST_BIG_SCRYPT") == "1"


@pytest.mark.parametrize("password,salt,n,r,p,dklen,expected", RFC7914)
def test_rfc7914(password, salt, n, r, p, dklen, expected, known_answers):
    maxmem = 128 * r * (n + 2) + 128 * r * p
    if maxmem > 2 ** 30 and not BIG:
        pytest.skip("1 GiB vector: JITDIGEST_TEST_BIG_SCRYPT=1 runs it")
    got = jitdigest.scrypt(password, salt=salt, n=n, r=r, p=p, maxmem=max(maxmem, 0),
                           dklen=dklen)
    assert got.hex() == expected
    assert _scrypt.derive(_view(password), _view(salt), n, r, p, dklen).hex() == expected
    known_answers(("scrypt", "RFC 7914", "RFC 7914 section 12"), 1)


def _view(b):
    return np.frombuffer(b, np.uint8)


@needs_stdlib
@settings(max_examples=150, deadline=None)
@given(st.data())
def test_against_hashlib(data):
    password = data.draw(st.binary(max_size=150))
    salt = data.draw(st.binary(max_size=150))
    n = 2 ** data.draw(st.integers(1, 10))
    r = data.draw(st.integers(1, 5))
    p = data.draw(st.integers(1, 4))
    dklen = data.draw(st.integers(1, 300))
    expected = hashlib.scrypt(password, salt=salt, n=n, r=r, p=p, dklen=dklen)
    assert jitdigest.scrypt(bytearray(password), salt=memoryview(salt), n=n, r=r, p=p,
                            dklen=dklen) == expected
    assert _scrypt.derive(_view(password), _view(salt), n, r, p, dklen) == expected


@needs_stdlib
def test_keywords_and_limits_as_hashlib():
    for kw in [dict(password=b"pw", salt=b"s", n=2, r=1, p=1),
               dict(password=b"pw", salt=b"s", n=2 ** 14, r=8, p=1),             # 16 MiB
               dict(password=b"pw", salt=b"s", n=2 ** 15, r=8, p=1, maxmem=2 ** 26),
               dict(password=b"pw", salt=b"s", n=2 ** 16, r=2, p=1, dklen=1),
               dict(password=b"pw", salt=b"s", n=4, r=True, p=3, maxmem=2 ** 31 - 1)]:
        assert jitdigest.scrypt(**kw) == hashlib.scrypt(**kw)


def test_threads():
    """Four threads at once (the kernel runs without the GIL, each call on its own memory)."""
    cases = [(b"t%d" % i, b"salt", 2 ** (6 + i), 2 + i % 2, 1 + i % 3) for i in range(4)]
    expected = [_reference(*case) for case in cases]
    results = [None] * 4

    def work(i):
        pw, salt, n, r, p = cases[i]
        results[i] = [jitdigest.scrypt(pw, salt=salt, n=n, r=r, p=p) for _ in range(5)]

    threads = [threading.Thread(target=work, args=(i,)) for i in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert results == [[e] * 5 for e in expected]


def _reference(password, salt, n, r, p):
    if hasattr(hashlib, "scrypt"):
        return hashlib.scrypt(password, salt=salt, n=n, r=r, p=p)
    return _scrypt.derive(_view(password), _view(salt), n, r, p, 64)


# Calls the standard library refuses, each before any work: type errors from the argument
# conversions, then _hashlib's range checks, then OpenSSL's parameter and memory checks.
BAD = [
    "('p', salt=b's', n=2, r=1, p=1)", "(b'p', salt='s', n=2, r=1, p=1)", "(b'p')",
    "(b'p', b's')", "(b'p', 2, 8, 1, salt=b's')", "(salt=b's', n=2, r=1, p=1)",
    "(b'p', password=b'p', salt=b's', n=2, r=1, p=1)", "(b'p', salt=b's', n=2, r=1, p=1, foo=1)",
    "(b'p', salt=b's', r=1, p=1)", "(b'p', salt=b's', n=2, p=1)", "(b'p', salt=b's', n=2, r=1)",
    "(b'p', n=2, r=1, p=1)", "(b'p', salt=None, n=2, r=1, p=1)",
    "(memoryview(b'abcd')[::2], salt=b's', n=2, r=1, p=1)",
    "(b'p', salt=np.zeros((2, 2), np.uint8)[:, :1], n=2, r=1, p=1)",
    "(b'p', salt=b's', n=-1, r=1, p=1)", "(b'p', salt=b's', n=0, r=1, p=1)",
    "(b'p', salt=b's', n=1, r=1, p=1)", "(b'p', salt=b's', n=3, r=1, p=1)",
    "(b'p', salt=b's', n=True, r=1, p=1)", "(b'p', salt=b's', n=None, r=1, p=1)",
    "(b'p', salt=b's', n=2.0, r=1, p=1)", "(b'p', salt=b's', n=np.int64(2), r=1, p=1)",
    "(b'p', salt=b's', n=2 ** 64, r=1, p=1)", "(b'p', salt=b's', n=2 ** 63, r=1, p=1)",
    "(b'p', salt=b's', n=2, r=-1, p=1)", "(b'p', salt=b's', n=2, r=0, p=1)",
    "(b'p', salt=b's', n=2, r=None, p=1)", "(b'p', salt=b's', n=2, r=2 ** 64, p=1)",
    "(b'p', salt=b's', n=2, r=2 ** 32, p=1)", "(b'p', salt=b's', n=2, r=1, p=-1)",
    "(b'p', salt=b's', n=2, r=1, p=0)", "(b'p', salt=b's', n=2, r=1, p=None)",
    "(b'p', salt=b's', n=2, r=1, p=2 ** 40)", "(b'p', salt=b's', n=2, r=1, p=1, maxmem=-1)",
    "(b'p', salt=b's', n=2, r=1, p=1, maxmem=None)", "(b'p', salt=b's', n=2, r=1, p=1, maxmem=2 ** 31)",
    "(b'p', salt=b's', n=2, r=1, p=1, maxmem=2 ** 64)", "(b'p', salt=b's', n=2, r=1, p=1, maxmem=1)",
    "(b'p', salt=b's', n=2, r=1, p=1, maxmem=2.5)", "(b'p', salt=b's', n=2, r=1, p=1, dklen=0)",
    "(b'p', salt=b's', n=2, r=1, p=1, dklen=-1)", "(b'p', salt=b's', n=2, r=1, p=1, dklen=None)",
    "(b'p', salt=b's', n=2, r=1, p=1, dklen=2 ** 31)", "(b'p', salt=b's', n=2, r=1, p=1, dklen=2 ** 70)",
    "(b'p', salt=b's', n=2 ** 20, r=8, p=1)", "(b'p', salt=b's', n=2 ** 15, r=8, p=1)",
    "(b'p', salt=b's', n=2 ** 16, r=1, p=1)", "(b'p', salt=b's', n=2 ** 40, r=1, p=1)",
    "(b'p', salt=b's', n=2 ** 16, r=1, p=2 ** 24)", "(b'p', salt=b's', n=2, r=2 ** 29, p=2)",
    "(b'p', salt=b's', n=4, r=2 ** 28, p=1)", "(b'p', salt=b's', n=4, r=1, p=2 ** 30)",
    "(b'p', salt=b's', n=2 ** 24, r=8, p=1, maxmem=2 ** 31 - 1)",
]


@needs_stdlib
@pytest.mark.parametrize("call", BAD)
def test_errors_as_hashlib(call):
    env = {"np": np}
    ours = outcome(lambda: eval("jitdigest.scrypt" + call, {"jitdigest": jitdigest, **env}))
    theirs = outcome(lambda: eval("hashlib.scrypt" + call, {"hashlib": hashlib, **env}))
    assert theirs[0] != "ok"
    assert ours == theirs


def test_errors_without_stdlib_scrypt(monkeypatch):
    """Where this Python's hashlib has no scrypt, the same errors in OpenSSL 3's words."""
    monkeypatch.delattr(_scrypt.hashlib, "scrypt", raising=False)
    assert outcome(lambda: jitdigest.scrypt(b"p", b"s")) == (
        "TypeError", "scrypt() takes exactly 1 positional argument (2 given)")
    assert outcome(lambda: jitdigest.scrypt(b"p", salt=b"s", n=2, r=0, p=1)) == (
        "ValueError", "Invalid parameter combination for n, r, p, maxmem.")
    assert outcome(lambda: jitdigest.scrypt(b"p", salt=b"s", n=2 ** 15, r=8, p=1)) == (
        "ValueError", "[digital envelope routines] memory limit exceeded")
    assert outcome(lambda: jitdigest.scrypt(b"p", salt=b"s", n=2, r=2 ** 32, p=1)) == (
        "ValueError", "[digital envelope routines] parameter too large")
    assert jitdigest.scrypt(b"", salt=b"", n=16, r=1, p=1).hex() == RFC7914[0][6]


INTERPRETED = """
import sys
import numpy as np
import jitdigest
from jitdigest import _scrypt
sys.path.insert(0, sys.argv[1])
from test_scrypt import RFC7914
password, salt, n, r, p, dklen, expected = RFC7914[0]
view = lambda b: np.frombuffer(b, np.uint8)
assert _scrypt.derive(view(password), view(salt), n, r, p, dklen).hex() == expected
assert _scrypt.derive(view(b"pw"), view(b"NaCl"), 4, 2, 3, 100) == bytes.fromhex(sys.argv[2])
assert jitdigest.scrypt(password, salt=salt, n=n, r=r, p=p).hex() == expected
print("checked 3")
"""


def test_interpreted_kernel():
    """The ROMix kernel run interpreted (NUMBA_DISABLE_JIT=1), warnings as errors."""
    other = _reference_small()
    env = dict(os.environ, NUMBA_DISABLE_JIT="1")
    result = subprocess.run([sys.executable, "-W", "error", "-c", INTERPRETED,
                             str(pathlib.Path(__file__).parent), other],
                            capture_output=True, text=True, env=env, cwd=ROOT, timeout=300)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "checked 3" in result.stdout


def _reference_small():
    if hasattr(hashlib, "scrypt"):
        return hashlib.scrypt(b"pw", salt=b"NaCl", n=4, r=2, p=3, dklen=100).hex()
    pytest.skip("no oracle for the second case")
