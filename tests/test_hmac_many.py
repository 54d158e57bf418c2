"""hmac_many against a loop of the standard library's hmac.new, for every layout hash_many
takes, every algorithm HMAC allows, lane and per-message kernels."""
import hashlib
import hmac
import os

import numpy as np
import pytest

import jitdigest
from jitdigest.engine import cpu as _cpu

ALGORITHMS = sorted(n for n in jitdigest.algorithms_available if not n.startswith("shake"))
KEYS = {"empty": b"", "short": b"key", "block": b"k" * 64, "long": bytes(range(200))}


def _expected(name, key, messages):
    return [hmac.new(key, bytes(m), name).digest() for m in messages]


def _check(got, expected):
    assert got.shape == (len(expected), len(expected[0]) if expected else got.shape[1])
    assert [bytes(row) for row in got] == expected


def _messages(count, seed=0, max_len=300):
    rng = np.random.default_rng(seed)
    lengths = rng.integers(0, max_len, count)
    lengths[:4] = [0, 55, 64, 128]                 # empty, one-block edges
    return [rng.bytes(int(n)) for n in lengths]


@pytest.mark.parametrize("name", sorted(hashlib.algorithms_guaranteed))
def test_every_algorithm_as_stdlib(name):
    """Every algorithm hashlib guarantees: hmac_many gives the standard library's HMAC where
    that takes it (and the tests here run it), and an error of its type where it refuses it."""
    messages = [b"", b"abc", bytes(range(256)) * 3]
    try:
        expected = _expected(name, b"key", messages)
    except Exception as exc:
        with pytest.raises(type(exc)):
            jitdigest.hmac_many(name, b"key", messages)
        assert name not in ALGORITHMS
    else:
        _check(jitdigest.hmac_many(name, b"key", messages), expected)
        assert name in ALGORITHMS


@pytest.mark.parametrize("name", ALGORITHMS)
@pytest.mark.parametrize("key", list(KEYS.values()), ids=list(KEYS))
def test_list_and_grid(name, key):
    messages = _messages(300, seed=len(key))
    _check(jitdigest.hmac_many(name, key, messages, threads=1), _expected(name, key, messages))
    grid = np.frombuffer(os.urandom(200 * 64), np.uint8).reshape(200, 64)
    _check(jitdigest.hmac_many(name, key, grid), _expected(name, key, grid))
    few = messages[:3]                              # fewer rows than lanes: per-message kernels
    _check(jitdigest.hmac_many(name, key, few), _expected(name, key, few))


@pytest.mark.parametrize("name", ["md5", "sha1", "sha256", "sha384", "sha3_256"])
def test_without_lanes(name):
    messages = _messages(200, seed=3)
    with _cpu.disabled("avx512", "avx2"):
        got = jitdigest.hmac_many(name, b"secret", messages)
    _check(got, _expected(name, b"secret", messages))


def _batch_backends(names):
    """(algorithm, backend) for every backend hash_many can run for ``names`` on this CPU
    (``jitdigest.backends``: per-message ones, lane kernels, interleaved SHA-NI); a
    calibration table may pick any of them, so HMAC is checked through each."""
    return [pytest.param(name, be, id=f"{name}-{be}")
            for name in names for be in jitdigest.backends(name)]


@pytest.mark.parametrize("name, backend", _batch_backends(
    ["md5", "sha1", "sha224", "sha256", "sha512", "sha3_256"]))
def test_every_batch_backend(name, backend):
    """Each backend's kernels continue from the keyed state: they must count the key block in
    the length the padding ends with (the interleaved SHA-NI kernels did not, and every row came
    out wrong once a calibration table picked them)."""
    messages = _messages(200, seed=5)
    # rows of one width: a whole block, a short last block, one leaving no room for the length
    grids = [np.frombuffer(os.urandom(130 * w), np.uint8).reshape(130, w) for w in (64, 20, 120)]
    with jitdigest.backend(backend):
        for key in (b"", b"key", bytes(range(200))):
            _check(jitdigest.hmac_many(name, key, messages, threads=1),
                   _expected(name, key, messages))
            for grid in grids:
                _check(jitdigest.hmac_many(name, key, grid), _expected(name, key, grid))


def test_every_batch_backend_is_checked():
    names = {p.values[1] for p in _batch_backends(["sha1", "sha256"])}
    assert "portable" in names
    if _cpu.usable("sha", "sha_ni"):
        assert {"sha_ni", "sha_ni_x2", "sha_ni_x4"} <= names


@pytest.mark.parametrize("name", ["sha256", "md5", "sha512"])
def test_layouts(name):
    key = b"pseudonymise"
    messages = _messages(150, seed=7)
    expected = _expected(name, key, messages)
    values = np.frombuffer(b"".join(messages), np.uint8)
    offsets = np.concatenate([[0], np.cumsum([len(m) for m in messages])])
    cases = {
        "values+offsets": jitdigest.hmac_many(name, key, values, offsets),
        "bytes+int32 offsets": jitdigest.hmac_many(name, key, values.tobytes(),
                                                   offsets.astype(np.int32)),
        "tuple": jitdigest.hmac_many(name, key, tuple(messages)),
        "generator": jitdigest.hmac_many(name, key, (m for m in messages)),
        "object array": jitdigest.hmac_many(name, key, np.array(messages, dtype=object)),
        "bytearrays": jitdigest.hmac_many(name, bytearray(key), [bytearray(m) for m in messages]),
    }
    out = np.zeros((150, len(expected[0])), np.uint8)
    assert jitdigest.hmac_many(name, key, messages, out=out, threads=2) is out
    cases["out"] = out
    for got in cases.values():
        _check(got, expected)


def test_arrow_layouts():
    pa = pytest.importorskip("pyarrow")
    key = b"k" * 10
    messages = _messages(120, seed=11)
    expected = _expected("sha256", key, messages)
    arrays = [pa.array(messages, pa.binary()), pa.array(messages, pa.large_binary()),
              pa.chunked_array([messages[:50], messages[50:]], pa.binary()),
              pa.array(messages, pa.binary())[10:]]
    for arr in arrays:
        _check(jitdigest.hmac_many("sha256", key, arr), expected[-len(arr):])
    fixed = [m[:16].ljust(16, b"x") for m in messages]
    _check(jitdigest.hmac_many("sha256", key, pa.array(fixed, pa.binary(16))),
           _expected("sha256", key, fixed))
    text = ["ümlaut", "", "plain"] * 10
    _check(jitdigest.hmac_many("sha256", key, pa.array(text, pa.string())),
           _expected("sha256", key, [t.encode() for t in text]))


def test_many_rows_threads():
    key = os.urandom(32)
    rows = np.frombuffer(os.urandom(20000 * 64), np.uint8).reshape(20000, 64)
    got = jitdigest.hmac_many("sha256", key, rows, threads=2)
    _check(got, _expected("sha256", key, rows))


def test_empty_and_errors():
    assert jitdigest.hmac_many("sha256", b"k", []).shape == (0, 32)
    with pytest.raises(TypeError, match="key: expected bytes or bytearray, but got 'str'"):
        jitdigest.hmac_many("sha256", "k", [b"x"])
    with pytest.raises(ValueError, match="unsupported hash type"):
        jitdigest.hmac_many("nope", b"k", [b"x"])
    with pytest.raises(type(_error(lambda: hmac.new(b"k", b"x", "shake_128")))):
        jitdigest.hmac_many("shake_128", b"k", [b"x"])


def _error(fn):
    try:
        fn()
    except Exception as exc:
        return exc
    raise AssertionError("no error")
