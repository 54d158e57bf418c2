"""BLAKE2b / BLAKE2s: RFC 7693 vectors and selftest, hypothesis differential tests against
hashlib over every parameter (both kernel forms), hashlib's errors, the kernels' contract, and
the interpreted (NUMBA_DISABLE_JIT=1) mode in a child process."""
import hashlib
import inspect
import os
import pathlib
import struct
import subprocess
import sys

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

import jitdigest
from jitdigest.base import algorithms as _algorithms
from jitdigest.engine import dispatch as _dispatch
from jitdigest._blake2 import CONSTRUCTORS, blake2b, blake2s
from jitdigest.kernels._blake2 import SIGMA

from vectors import blake2_examples, label

ROOT = pathlib.Path(__file__).resolve().parent.parent

# 4 (algorithm, form) pairs x 1,250 examples + 500 through the public constructors >= 5,000.
FORM_EXAMPLES = 1250
PUBLIC_EXAMPLES = 500

CLASSES = {"blake2b": blake2b, "blake2s": blake2s}
ORACLES = {"blake2b": hashlib.blake2b, "blake2s": hashlib.blake2s}


def form_params():
    """(name, kernel set) for every registered BLAKE2 backend: loop ("portable") and unrolled."""
    params = []
    for name in CLASSES:
        spec = _algorithms.SPECS[name]
        for backend in _dispatch.backends(spec.family):
            ks = _dispatch._kernel_set(backend, spec.word)
            params.append(pytest.param(name, ks, id=f"{name}-{backend.name}"))
    return params


FORMS = form_params()


def made_by(kernels, cls, data=b"", **params):
    """A ``cls`` object (hashlib's parameters) served by the backend of ``kernels``."""
    with jitdigest.backend(kernels.name):
        return cls(data, **params)


def test_both_forms_registered():
    for name in CLASSES:
        spec = _algorithms.SPECS[name]
        assert {b.name for b in _dispatch.backends(spec.family)} >= {"portable", "unrolled"}


# --- RFC 7693 -----------------------------------------------------------------------------
# The RFC's examples, read from tests/data/blake2/rfc-7693.txt (see tests/vectors.py).

def _rfc7693(name):
    cases, (md_lens, in_lens, grand) = blake2_examples(name)
    abc = dict(cases)[b"abc"]
    return abc.hex(), (grand.hex(), md_lens, in_lens)


_RFC7693 = {name: _rfc7693(name) for name in CLASSES}
# Appendix A: BLAKE2b-512("abc"); Appendix B: BLAKE2s-256("abc")
ABC = {name: abc for name, (abc, _) in _RFC7693.items()}
# Appendix E: the self-test's "grand hash of hash results" and its parameter sets.
SELFTEST = {name: selftest for name, (_, selftest) in _RFC7693.items()}


def selftest_seq(length, seed):
    """RFC 7693 Appendix E's deterministic byte sequence (a Fibonacci generator)."""
    a, b = (0xDEAD4BAD * seed) & 0xFFFFFFFF, 1
    out = bytearray()
    for _ in range(length):
        a, b = b, (a + b) & 0xFFFFFFFF
        out.append(b >> 24)
    return bytes(out)


def selftest(make, name):
    _, md_lens, in_lens = SELFTEST[name]
    ctx = make(digest_size=32)
    for outlen in md_lens:
        for inlen in in_lens:
            data = selftest_seq(inlen, inlen)
            ctx.update(make(data, digest_size=outlen).digest())
            key = selftest_seq(outlen, outlen)
            ctx.update(make(data, digest_size=outlen, key=key).digest())
    return ctx.hexdigest()


@pytest.mark.parametrize("name", CLASSES)
def test_selftest_values_match_hashlib(name):
    assert selftest(ORACLES[name], name) == SELFTEST[name][0]


@pytest.mark.parametrize("name, kernels", FORMS)
def test_rfc_abc(name, kernels, known_answers):
    cls = CLASSES[name]
    cases, _ = blake2_examples(name)
    for msg, expected in cases:
        assert made_by(kernels, cls, msg).digest() == expected
        h = made_by(kernels, cls)
        h.update(msg[:1])
        h.update(bytearray(msg[1:]))
        assert h.digest() == expected
    known_answers(label(name, "", "examples"), len(cases))


@pytest.mark.parametrize("name, kernels", FORMS)
def test_rfc_selftest(name, kernels, known_answers):
    cls = CLASSES[name]

    def make(data=b"", **params):
        return made_by(kernels, cls, data, **params)
    assert selftest(make, name) == SELFTEST[name][0]
    known_answers(label(name, "", "self-test"), 1)


@pytest.mark.parametrize("name", CLASSES)
def test_public_class(name):
    cls, ref = CLASSES[name], ORACLES[name]
    assert selftest(cls, name) == SELFTEST[name][0]
    for const in ("SALT_SIZE", "PERSON_SIZE", "MAX_KEY_SIZE", "MAX_DIGEST_SIZE"):
        assert getattr(cls, const) == getattr(ref, const)
    assert str(inspect.signature(cls)) == str(inspect.signature(ref))
    h, r = cls(digest_size=7), ref(digest_size=7)
    assert (h.name, h.digest_size, h.block_size) == (r.name, r.digest_size, r.block_size)
    assert len(h.digest()) == 7
    assert isinstance(h.copy(), cls)


@pytest.mark.parametrize("name", CLASSES)
def test_one_shot_only_without_key(name):
    cls = CLASSES[name]
    assert cls(b"data")._state is None                 # immutable bytes: one-shot path
    assert cls(b"data", key=b"k")._state is not None   # keyed: the key block is absorbed first
    assert cls(b"data", key=b"k").digest() == ORACLES[name](b"data", key=b"k").digest()


# --- differential tests against hashlib ---------------------------------------------------

BUFFER_TYPES = [bytes, bytearray, memoryview, lambda b: np.frombuffer(b, np.uint8).copy()]


def param_strategy(cls):
    """hashlib's parameters: each either left out (the default) or drawn over its whole range."""
    node_offset_max = 2 ** 64 - 1 if cls is blake2b else 2 ** 48 - 1
    fields = {
        "digest_size": st.integers(1, cls.MAX_DIGEST_SIZE),
        "key": st.binary(max_size=cls.MAX_KEY_SIZE),
        "salt": st.binary(max_size=cls.SALT_SIZE),
        "person": st.binary(max_size=cls.PERSON_SIZE),
        "fanout": st.integers(0, 255),
        "depth": st.integers(1, 255),
        "leaf_size": st.integers(0, 2 ** 32 - 1),
        "node_offset": st.integers(0, node_offset_max),
        "node_depth": st.integers(0, 255),
        "inner_size": st.integers(0, cls.MAX_DIGEST_SIZE),
        "last_node": st.booleans(),
    }
    return st.fixed_dictionaries({}, optional=fields)


@st.composite
def split_messages(draw, block_size):
    """A message (often a whole number of blocks: BLAKE2's edge), cut into pieces, each passed
    as some buffer type, and where to take a copy()."""
    size = draw(st.one_of(st.integers(0, 5 * block_size),
                          st.integers(0, 4).map(lambda k: k * block_size)))
    data = draw(st.binary(min_size=size, max_size=size))
    cuts = sorted(draw(st.lists(st.one_of(st.integers(0, size),
                                          st.integers(0, size // block_size).map(
                                              lambda k: k * block_size)),
                                max_size=5)))
    pieces = [data[a:b] for a, b in zip([0] + cuts, cuts + [size])]
    wrappers = draw(st.lists(st.integers(0, len(BUFFER_TYPES) - 1),
                             min_size=len(pieces), max_size=len(pieces)))
    copy_at = draw(st.integers(0, len(pieces)))
    return data, pieces, wrappers, copy_at


def run_differential(make, ref_cls, params, example):
    data, pieces, wrappers, copy_at = example
    ours, ref = make(b"", params), ref_cls(**params)
    twin = twin_ref = None
    for i, (piece, w) in enumerate(zip(pieces, wrappers)):
        if i == copy_at:
            twin, twin_ref = ours.copy(), ref.copy()
        ours.update(BUFFER_TYPES[w](piece))
        ref.update(piece)
        if i % 2:
            assert ours.digest() == ref.digest()
    if twin is None:
        twin, twin_ref = ours.copy(), ref.copy()
    expected = ref.digest()
    assert ours.digest() == expected
    assert ours.hexdigest() == expected.hex()                    # digest() does not finalise
    assert ours.digest_size == ref.digest_size
    assert make(data, params).digest() == expected              # one-shot path (or keyed init)
    assert make(bytearray(data), params).digest() == expected   # data through update()
    for piece in pieces[copy_at:]:                               # the copy is independent
        twin.update(piece)
        twin_ref.update(piece)
    assert twin.digest() == twin_ref.digest() == expected


def differential_test(name, kernels, examples):
    cls, ref_cls = CLASSES[name], ORACLES[name]
    if kernels is None:
        def make(data, params):
            return cls(data, **params)
    else:
        def make(data, params):
            return made_by(kernels, cls, data, **params)

    @settings(max_examples=examples, deadline=None,
              suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
    @given(params=param_strategy(cls), example=split_messages(_algorithms.SPECS[name].block_size))
    def check(params, example):
        run_differential(make, ref_cls, params, example)
    check()


@pytest.mark.parametrize("name, kernels", FORMS)
def test_differential_forms(name, kernels):
    differential_test(name, kernels, FORM_EXAMPLES)


@pytest.mark.parametrize("name", CLASSES)
def test_differential_public(name):
    differential_test(name, None, PUBLIC_EXAMPLES // 2)


# --- hashlib's errors -----------------------------------------------------------------------

class _Index:
    def __index__(self):
        return 5


class _Truthy:
    def __bool__(self):
        raise RuntimeError("no truth value")


BAD_PARAMS = [
    dict(digest_size=0), dict(digest_size=-1), dict(digest_size=33), dict(digest_size=65),
    dict(digest_size=2 ** 31), dict(digest_size=-2 ** 40), dict(digest_size=1.5),
    dict(digest_size="a"), dict(digest_size=None),
    dict(key=b"x" * 33), dict(key=b"x" * 65), dict(key="abc"), dict(key=123), dict(key=None),
    dict(key=memoryview(b"abcdef")[::2]), dict(key=np.arange(6, dtype=np.uint8)[::2]),
    dict(salt=b"x" * 9), dict(salt=b"x" * 17), dict(salt="s"),
    dict(person=b"x" * 9), dict(person=b"x" * 17), dict(person=1),
    dict(fanout=-1), dict(fanout=256), dict(fanout=2 ** 70), dict(fanout=1.0),
    dict(depth=0), dict(depth=256), dict(depth=-1), dict(depth=2 ** 40),
    dict(leaf_size=-1), dict(leaf_size=-2 ** 70), dict(leaf_size=2 ** 32), dict(leaf_size=2 ** 64),
    dict(leaf_size=1.0), dict(leaf_size="x"), dict(leaf_size=_Index()), dict(leaf_size=np.int64(3)),
    dict(node_offset=-1), dict(node_offset=2 ** 48), dict(node_offset=2 ** 64),
    dict(node_offset=2 ** 70), dict(node_offset=1.0), dict(node_offset=_Index()),
    dict(node_depth=-1), dict(node_depth=256), dict(node_depth=2 ** 40),
    dict(inner_size=-1), dict(inner_size=33), dict(inner_size=65), dict(inner_size=2 ** 40),
    dict(last_node=_Truthy()), dict(usedforsecurity=_Truthy()),
    dict(foo=1), dict(data=b"x"), dict(string=b"x"),
    # several bad at once: conversion first (in signature order), then the range checks
    dict(key=b"x" * 100, digest_size=0), dict(key=b"x" * 100, salt=b"x" * 20),
    dict(salt=b"x" * 20, person=b"x" * 20), dict(person=b"x" * 20, fanout=300),
    dict(fanout=300, depth=0), dict(depth=0, leaf_size=2 ** 32),
    dict(leaf_size=2 ** 32, node_offset=2 ** 64 - 1), dict(node_offset=2 ** 64 - 1, node_depth=300),
    dict(node_depth=300, inner_size=100), dict(inner_size=100, key=b"x" * 100),
    dict(digest_size=0, key="abc"), dict(leaf_size=-1, digest_size="a"),
    dict(last_node=_Truthy(), digest_size=0),
]

GOOD_PARAMS = [
    dict(digest_size=True), dict(digest_size=np.int64(5)), dict(digest_size=_Index()),
    dict(fanout=_Index()), dict(fanout=0), dict(leaf_size=True), dict(leaf_size=2 ** 32 - 1),
    dict(node_offset=2 ** 48 - 1), dict(inner_size=32), dict(key=b""), dict(key=bytearray(b"k")),
    dict(key=memoryview(b"key")), dict(key=np.arange(3, dtype=np.int32)), dict(salt=b""),
    dict(last_node=1), dict(last_node="x"), dict(last_node=None), dict(usedforsecurity=False),
]


def case_id(case):
    """A stable test id: reprs, but type names for objects whose repr holds an address."""
    def show(value):
        if isinstance(value, (bytes, int, float, str, type(None))):
            text = repr(value)
            return text if len(text) <= 24 else text[:20] + "..."
        return type(value).__name__
    if isinstance(case, dict):
        return ",".join(f"{k}={show(v)}" for k, v in case.items())
    return ",".join(show(v) for v in case)


def outcome(func, *args, **kwargs):
    try:
        return "ok", func(*args, **kwargs).hexdigest()
    except Exception as exc:                      # noqa: BLE001 - compared with hashlib's
        return type(exc), str(exc)


@pytest.mark.parametrize("name", CLASSES)
@pytest.mark.parametrize("params", BAD_PARAMS + GOOD_PARAMS, ids=case_id)
def test_errors_match_hashlib(name, params):
    expected = outcome(ORACLES[name], b"abc", **params)
    assert outcome(CLASSES[name], b"abc", **params) == expected


@pytest.mark.parametrize("name", CLASSES)
@pytest.mark.parametrize("args", [("abc",), (1,), (None,), (b"", b""), (b"", b"", b""),
                                  (memoryview(b"abcd")[::2],), (bytearray(b"x"),)], ids=case_id)
def test_positional_errors_match_hashlib(name, args):
    assert outcome(CLASSES[name], *args) == outcome(ORACLES[name], *args)
    # data errors come after the parameters' own
    assert (outcome(CLASSES[name], *args, digest_size=0)
            == outcome(ORACLES[name], *args, digest_size=0))


@pytest.mark.parametrize("name", CLASSES)
def test_update_errors_match_hashlib(name):
    for bad in ("abc", 1, None, np.arange(6, dtype=np.uint8)[::2]):
        got = outcome(lambda: CLASSES[name]().update(bad) or CLASSES[name]())
        want = outcome(lambda: ORACLES[name]().update(bad) or ORACLES[name]())
        assert got[0] is want[0]


# --- the kernels' contract ------------------------------------------------------------------

@pytest.mark.parametrize("name, kernels", FORMS)
def test_kernel_contract(name, kernels):
    """update keeps a full block when the data ends on a block boundary; final leaves the state
    and buffer alone and writes len(out) bytes; oneshot equals update + final."""
    cls = CLASSES[name]
    spec = _algorithms.SPECS[name]
    block = spec.block_size
    iv = cls._initial_state(cls.MAX_DIGEST_SIZE, 0, b"", b"", 1, 1, 0, 0, 0, 0, False)
    assert iv.dtype == spec.word and not iv.flags.writeable
    data = np.frombuffer(bytes(range(256)) * 3, np.uint8)
    for n in (0, 1, block - 1, block, block + 1, 2 * block, 3 * block, 700):
        state, buf = iv.copy(), np.zeros(block, np.uint8)
        buflen = kernels.update(state, buf, 0, data[:n])
        assert buflen == (0 if n == 0 else n - (n - 1) // block * block)
        assert int(state[8]) == n - buflen and int(state[9]) == 0
        before = (state.copy(), buf.copy())
        out = bytearray(cls.MAX_DIGEST_SIZE)
        kernels.final(state, buf, buflen, n, out)
        assert (state == before[0]).all() and (buf == before[1]).all()
        expected = ORACLES[name](data[:n].tobytes()).digest()
        assert bytes(out) == expected
        short = bytearray(5)
        kernels.final(state, buf, buflen, n, short)
        assert bytes(short) == expected[:5]
        one = bytearray(cls.MAX_DIGEST_SIZE)
        kernels.oneshot(iv, data[:n].tobytes(), one)
        assert bytes(one) == expected


def reference_compress(name, h, block, counter, last, last_node):
    """RFC 7693's F in plain Python ints: an independent check of the counter and flags."""
    cls = CLASSES[name]
    bits = 64 if cls is blake2b else 32
    mask = (1 << bits) - 1
    rounds, rot = (12, (32, 24, 16, 63)) if bits == 64 else (10, (16, 12, 8, 7))
    m = struct.unpack("<16Q" if bits == 64 else "<16I", block)
    v = list(h) + list(_algorithms.SPECS["sha512" if bits == 64 else "sha256"].iv)
    v[12] ^= counter & mask
    v[13] ^= counter >> bits
    v[14] ^= mask if last else 0
    v[15] ^= mask if (last and last_node) else 0

    def g(a, b, c, d, x, y):
        for x_or_y, (r1, r2) in ((x, rot[:2]), (y, rot[2:])):
            v[a] = (v[a] + v[b] + x_or_y) & mask
            v[d] = v[d] ^ v[a]
            v[d] = ((v[d] >> r1) | (v[d] << (bits - r1))) & mask
            v[c] = (v[c] + v[d]) & mask
            v[b] = v[b] ^ v[c]
            v[b] = ((v[b] >> r2) | (v[b] << (bits - r2))) & mask

    for r in range(rounds):
        s = [int(i) for i in SIGMA[16 * (r % 10):16 * (r % 10) + 16]]
        for k, (a, b, c, d) in enumerate([(0, 4, 8, 12), (1, 5, 9, 13), (2, 6, 10, 14),
                                          (3, 7, 11, 15), (0, 5, 10, 15), (1, 6, 11, 12),
                                          (2, 7, 8, 13), (3, 4, 9, 14)]):
            g(a, b, c, d, m[s[2 * k]], m[s[2 * k + 1]])
    return [h[i] ^ v[i] ^ v[i + 8] for i in range(8)]


@pytest.mark.parametrize("last_node", [False, True])
@pytest.mark.parametrize("name, kernels", FORMS)
def test_counter_carry(name, kernels, last_node):
    """The byte counter's low word wraps into the high word (after 4 GiB for BLAKE2s: too long
    to hash here, so the counter is set just below the wrap and checked against RFC 7693's F)."""
    cls = CLASSES[name]
    block = _algorithms.SPECS[name].block_size
    bits = 8 * block // 16
    iv = cls._initial_state(cls.MAX_DIGEST_SIZE, 0, b"", b"", 1, 1, 0, 0, 0, 0, last_node)
    data = bytes((7 * i + 3) & 0xFF for i in range(3 * block - 5))
    start = (1 << bits) - block - 1                 # wraps during the second block
    state, buf = iv.copy(), np.zeros(block, np.uint8)
    state[8] = start
    buflen = kernels.update(state, buf, 0, np.frombuffer(data, np.uint8))
    assert buflen == block - 5 and int(state[9]) == 1
    out = bytearray(cls.MAX_DIGEST_SIZE)
    kernels.final(state, buf, buflen, len(data), out)

    h, counter = [int(w) for w in iv[:8]], start
    for k in range(3):
        chunk = data[k * block:(k + 1) * block]
        counter += len(chunk)
        h = reference_compress(name, h, chunk.ljust(block, b"\0"), counter, k == 2, last_node)
    word = bits // 8
    assert bytes(out) == b"".join(w.to_bytes(word, "little") for w in h)


def test_generated_file_is_current():
    result = subprocess.run([sys.executable, str(ROOT / "tools" / "gen_blake2.py"), "--check"],
                            capture_output=True, text=True)
    assert result.returncode == 0, result.stderr


def test_constructors_export():
    assert CONSTRUCTORS == {"blake2b": blake2b, "blake2s": blake2s}
    import jitdigest
    if "blake2b" in jitdigest._CONSTRUCTORS:      # wired into the package
        assert jitdigest.blake2b is blake2b and jitdigest.blake2s is blake2s
        assert (jitdigest.new("blake2b", b"abc", digest_size=16, key=b"k").digest()
                == hashlib.new("blake2b", b"abc", digest_size=16, key=b"k").digest())
        assert jitdigest.new("BLAKE2s256", b"abc").hexdigest() == ABC["blake2s"]


# --- interpreted mode -----------------------------------------------------------------------

INTERPRETED = r"""
import hashlib, random, sys
import jitdigest
from jitdigest.base import algorithms as _algorithms; from jitdigest.engine import dispatch as _dispatch
from jitdigest._blake2 import blake2b, blake2s
from jitdigest.kernels._jit import JIT_ENABLED
assert not JIT_ENABLED
sys.path.insert(0, sys.argv[1])
from test_blake2 import ABC, SELFTEST, selftest
rng = random.Random(7)
checked = 0
for cls, ref in ((blake2b, hashlib.blake2b), (blake2s, hashlib.blake2s)):
    spec = _algorithms.SPECS[cls.name]
    block = spec.block_size
    for backend in _dispatch.backends(spec.family):
        ks = _dispatch._kernel_set(backend, spec.word)
        def make(data=b"", _name=backend.name, **p):
            with jitdigest.backend(_name):
                return cls(data, **p)
        assert make(b"abc").hexdigest() == ABC[cls.name]
        assert selftest(make, cls.name) == SELFTEST[cls.name][0]
        for n in (0, 1, block - 1, block, block + 1, 2 * block, 3 * block + 7):
            data = bytes(rng.randrange(256) for _ in range(n))
            params = dict(digest_size=rng.randint(1, cls.MAX_DIGEST_SIZE),
                          key=bytes(rng.randrange(256) for _ in range(rng.randint(0, 3))),
                          salt=b"salt", person=b"me", fanout=rng.randint(0, 255),
                          depth=rng.randint(1, 255), leaf_size=rng.randint(0, 2 ** 32 - 1),
                          node_offset=rng.randint(0, 2 ** 48 - 1), node_depth=rng.randint(0, 255),
                          inner_size=rng.randint(0, cls.MAX_DIGEST_SIZE),
                          last_node=rng.random() < 0.5)
            expected = ref(data, **params).digest()
            h = make(**params)
            cut = rng.randint(0, n)
            h.update(data[:cut])
            twin = h.copy()
            h.update(bytearray(data[cut:]))
            twin.update(memoryview(data[cut:]))
            assert h.digest() == twin.digest() == make(data, **params).digest() == expected
            checked += 1
print("checked", checked)
"""


def test_interpreted_mode_matches_hashlib():
    """Both forms run interpreted (NUMBA_DISABLE_JIT=1) with warnings as errors."""
    env = dict(os.environ, NUMBA_DISABLE_JIT="1")
    result = subprocess.run([sys.executable, "-W", "error", "-c", INTERPRETED,
                             str(pathlib.Path(__file__).parent)],
                            capture_output=True, text=True, env=env, cwd=ROOT, timeout=300)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "checked 28" in result.stdout
