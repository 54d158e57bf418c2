"""jitdigest standing in for the standard library: CPython's own ``test_hmac`` and
``test_hashlib`` pass with ``sys.modules["hashlib"] = jitdigest`` and ``sys.modules["hmac"] =
jitdigest.hmac`` (``tests/stdlib_runner.py`` runs them in a child process), but for the tests
listed below as about CPython's internals; and the swap itself keeps jitdigest working."""
import collections
import hashlib
import hmac
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
ENV = {**os.environ, "PYTHONPATH": os.pathsep.join(
    [str(ROOT)] + [p for p in os.environ.get("PYTHONPATH", "").split(os.pathsep) if p])}

# In a fresh process (Numba not imported yet), the swap first, then everything that imports
# lazily: Numba and the kernel cache (first digests, from several threads), hashlib's keyword
# wording (an unknown keyword), hash_many's message errors, HMAC and PBKDF2 kernels, info().
STAND_IN = r"""
import json, sys
import jitdigest, jitdigest.hmac
sys.modules["hashlib"] = jitdigest
sys.modules["hmac"] = jitdigest.hmac
assert "numba" not in sys.modules
import hashlib, hmac, threading
# first digests from four threads at once (Numba imported by one, the swap left in place)
threads = [threading.Thread(target=lambda: hashlib.sha256(b"abc").hexdigest()) for _ in range(4)]
for t in threads:
    t.start()
for t in threads:
    t.join()
assert sys.modules["hashlib"] is jitdigest and sys.modules["hmac"] is jitdigest.hmac
out = {"sha256": hashlib.sha256(b"abc").hexdigest(),
       "sha3_256": hashlib.new("sha3_256", b"abc").hexdigest(),
       "hmac": hmac.new(b"key", b"msg", "sha256").hexdigest(),
       "hmac_digest": hmac.digest(b"key", b"msg", "md5").hex(),
       "pbkdf2": hashlib.pbkdf2_hmac("sha1", b"pw", b"salt", 3).hex()}
try:
    hashlib.sha256(b"", bogus=1)
except TypeError as exc:
    out["keyword_error"] = str(exc)
try:
    jitdigest.hash_many("md5", [b"a", memoryview(b"abcd")[::2]])
except (BufferError, ValueError) as exc:
    out["strided_error"] = type(exc).__name__
out["info"] = sorted(jitdigest.info()["kernels"]) == sorted(jitdigest.algorithms_available
                                                          | {"blake3"})
print(json.dumps(out))
"""


def test_jitdigest_works_as_sys_modules_hashlib():
    proc = subprocess.run([sys.executable, "-c", STAND_IN], capture_output=True, text=True,
                          env=ENV, cwd=ROOT, timeout=300)
    assert proc.returncode == 0, proc.stderr[-3000:]
    out = json.loads(proc.stdout)
    assert "'bogus'" in out.pop("keyword_error")
    assert out == {
        "sha256": hashlib.sha256(b"abc").hexdigest(),
        "sha3_256": hashlib.sha3_256(b"abc").hexdigest(),
        "hmac": hmac.new(b"key", b"msg", "sha256").hexdigest(),
        "hmac_digest": hmac.digest(b"key", b"msg", "md5").hex(),
        "pbkdf2": hashlib.pbkdf2_hmac("sha1", b"pw", b"salt", 3).hex(),
        "strided_error": "BufferError",
        "info": True,
    }
    assert "CacheWarning" not in proc.stderr, proc.stderr[-3000:]


# --- CPython's suites ---------------------------------------------------------------------

SUITES = ("test.test_hmac", "test.test_hashlib")

# Tests that do not apply: each is about CPython's private modules or names, or tests one of
# CPython's C modules without going through hashlib/hmac. They are not run.
EXCLUDED = {
    # hashlib's private constructor cache (a test that hmac falls back on it).
    "test.test_hmac.TestVectorsTestCase.test_with_fallback":
        "hashlib.__builtin_constructor_cache is CPython's private cache",
    # _hashlib.HMAC, OpenSSL's HMAC type, cannot be instantiated: a C type of CPython's.
    "test.test_hmac.ConstructorTestCase.test_internal_types":
        "tests the _hashlib.HMAC C type itself",
    # CPython's HMAC keeps OpenSSL's HMAC object in _hmac; a copy must hold another one.
    "test.test_hmac.CopyTestCase.test_realcopy_hmac":
        "_hmac is CPython's slot for OpenSSL's HMAC object",
    # ... and on the two-object path, _hmac is None and a copy holds a copy of the private
    # _outer hash. jitdigest's copies share the keyed outer hash, which is never updated, only
    # copied when a digest is taken (README: "copy() shares them"); that copies are independent
    # is what test_equality, test_equality_new and every vector test's copy check assert.
    "test.test_hmac.CopyTestCase.test_realcopy_old":
        "identity of the private _outer/_hmac attributes (jitdigest shares the keyed outer "
        "state by design)",
    # _operator._compare_digest and _hashlib.compare_digest called directly (hmac.compare_digest
    # itself is test_hmac_compare_digest, run).
    "test.test_hmac.CompareDigestTestCase.test_operator_compare_digest":
        "tests _operator._compare_digest itself",
    "test.test_hmac.CompareDigestTestCase.test_openssl_compare_digest":
        "tests _hashlib.compare_digest itself",
    # hashlib's private __get_builtin_constructor and its cache, with the _md5 module.
    "test.test_hashlib.HashLibTestCase.test_get_builtin_constructor":
        "hashlib.__get_builtin_constructor is CPython's private function",
    # _capacity_bits, _rate_bits, _suffix: private attributes of the built-in _sha3 module's
    # objects (the test itself passes over OpenSSL's, hashlib's own in this build).
    "test.test_hashlib.HashLibTestCase.test_extra_sha3":
        "private attributes of the _sha3 module's objects",
    # SHAKE output lengths from 2**29 bytes must raise: the limit of the built-in _sha3 module
    # ("length is too large"). The test passes over hashlib's own SHAKE objects (OpenSSL's
    # HASHXOF: "_hashopenssl's take a size_t"), which return such outputs, and jitdigest does
    # as they do: digest(2**29) returns 512 MiB, 2**61 raises MemoryError and 2**64 - 10
    # OverflowError, as hashlib.shake_128() here (a negative length: ValueError, where OpenSSL's
    # raise SystemError or MemoryError).
    "test.test_hashlib.HashLibTestCase.test_digest_length_overflow":
        "the _sha3 module's output limit; jitdigest follows hashlib's OpenSSL SHAKE objects",
    # _hashlib.HASH and HASHXOF, OpenSSL's C types (jitdigest's types: test_disallow_instantiation
    # and test_readonly_types, run).
    "test.test_hashlib.HashLibTestCase.test_hash_disallow_instantiation":
        "tests the _hashlib.HASH/HASHXOF C types themselves",
    "test.test_hashlib.HashLibTestCase.test_get_fips_mode":
        "tests _hashlib.get_fips_mode itself",
}

# Tests the suites skip themselves, as regrtest does without -u: the runner enables no
# resources. The vector files are fetched from www.pythontest.net ("urlfetch"); the two
# 4 GiB MD5 tests need bigmem's memory limit set (-M); from 3.12 the two 4 GiB update tests
# need the "cpu" resource, and test_with_sha256_module the _sha256 module (3.12 has _sha2).
# SHA-3, SHAKE and BLAKE2 known answers are checked in tests/test_nist.py and test_blake2.py.
_HASHLIB = "test.test_hashlib.HashLibTestCase."
EXPECTED_SKIPS = {
    _HASHLIB + name: reason
    for names, reason in [
        (["test_blake2b_vectors", "test_blake2s_vectors", "test_case_sha3_224_vector",
          "test_case_sha3_256_vector", "test_case_sha3_384_vector", "test_case_sha3_512_vector",
          "test_case_shake128_vector", "test_case_shake256_vector"],
         "Use of the 'urlfetch' resource not enabled"),
        (["test_case_md5_huge", "test_case_md5_uintmax"], "not enough memory"),
    ]
    for name in names
}
if sys.version_info >= (3, 12):
    EXPECTED_SKIPS.update({
        _HASHLIB + "test_sha256_update_over_4gb": "resource 'cpu' is not enabled",
        _HASHLIB + "test_sha3_256_update_over_4gb": "resource 'cpu' is not enabled",
        "test.test_hmac.ConstructorTestCase.test_with_sha256_module": "need _sha256",
    })

# Tests passed, measured on CPython 3.11.7 (the suites' size there: 27 in test_hmac, 77 in
# test_hashlib), 3.12.1 and 3.13.0: a run passing fewer has lost tests.
MEASURED_PASSED = {
    (3, 11): {"test.test_hmac": 21, "test.test_hashlib": 62},
    (3, 12): {"test.test_hmac": 20, "test.test_hashlib": 61},
    (3, 13): {"test.test_hmac": 21, "test.test_hashlib": 61},
}


@pytest.fixture(scope="module")
def suites():
    try:
        import test.support  # noqa: F401
        import test.test_hashlib  # noqa: F401  (imported here only to see that it exists)
        import test.test_hmac  # noqa: F401
    except ImportError as exc:
        pytest.skip(f"CPython's test package is not installed ({exc})")
    if sys.version_info[:2] not in MEASURED_PASSED:
        pytest.skip("the exclusions and counts were measured on CPython 3.11 to 3.13; review "
                    f"them for {sys.version.split()[0]}")
    args = [sys.executable, str(ROOT / "tests" / "stdlib_runner.py"), *SUITES]
    for test_id in EXCLUDED:
        args += ["--skip", test_id]
    proc = subprocess.run(args, capture_output=True, text=True, env=ENV, cwd=ROOT, timeout=600)
    assert proc.returncode == 0, proc.stderr[-3000:]
    return json.loads(proc.stdout)


def test_suites_see_the_stand_ins(suites):
    # every hashlib/hmac the suites hold is jitdigest's, the "fresh" copies of hashlib that
    # test_hashlib makes for its PBKDF2 tests included (so they test jitdigest.pbkdf2_hmac;
    # builtin_hashlib up to 3.11)
    modules = suites["modules"]
    assert sorted(modules) == ["test.support.hashlib_helper", "test.test_hashlib",
                               "test.test_hmac"]
    assert modules["test.test_hmac"] == {"hashlib": "stand-in hashlib", "hmac": "stand-in hmac"}
    assert modules["test.support.hashlib_helper"] == {"hashlib": "stand-in hashlib"}
    fresh = ["builtin_hashlib"] if sys.version_info < (3, 12) else []
    assert modules["test.test_hashlib"] == {
        name: "stand-in hashlib" for name in ["hashlib", "openssl_hashlib", *fresh]}
    assert suites["unknown_skips"] == []


@pytest.mark.parametrize("suite", SUITES)
def test_stdlib_suite_passes(suites, suite):
    tests = {k: v for k, v in suites["tests"].items() if k.startswith(suite + ".")}
    by_outcome = collections.defaultdict(list)
    for test_id, record in tests.items():
        by_outcome[record["outcome"]].append(test_id)
    broken = {k: v["detail"] for k, v in tests.items()
              if v["outcome"] not in ("passed", "skipped", "excluded")}
    assert not broken, "\n\n".join(f"{k}: {v}" for k, v in broken.items())
    assert sorted(by_outcome["excluded"]) == sorted(k for k in EXCLUDED if k.startswith(suite))
    skipped = {k: tests[k]["detail"] for k in by_outcome["skipped"]}
    expected = {k: v for k, v in EXPECTED_SKIPS.items() if k.startswith(suite)}
    assert sorted(skipped) == sorted(expected)
    for test_id, reason in skipped.items():
        assert expected[test_id] in reason, (test_id, reason)
    assert len(by_outcome["passed"]) >= MEASURED_PASSED[sys.version_info[:2]][suite]
