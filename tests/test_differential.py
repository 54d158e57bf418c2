"""Random differential tests against hashlib: random data fed in random pieces through random
buffer types, copy() mid-stream, digest() repeated and taken between updates."""
import hashlib

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

import jitdigest
from conftest import CORE, FIXED, kernel_params, make, out_of

# 8 core algorithms x 1,300 examples >= 10,000; the SHA-3/SHAKE rows get their own budget.
CORE_EXAMPLES = 1300
OTHER_EXAMPLES = 400

BUFFER_TYPES = [bytes, bytearray, memoryview, lambda b: np.frombuffer(b, np.uint8).copy()]


@st.composite
def split_messages(draw, max_size=600):
    data = draw(st.binary(max_size=max_size))
    cuts = sorted(draw(st.lists(st.integers(0, len(data)), max_size=6)))
    pieces = [data[a:b] for a, b in zip([0] + cuts, cuts + [len(data)])]
    wrappers = draw(st.lists(st.sampled_from(range(len(BUFFER_TYPES))),
                             min_size=len(pieces), max_size=len(pieces)))
    copy_at = draw(st.integers(0, len(pieces)))
    return data, pieces, wrappers, copy_at


def run_differential(name, example, length=None):
    data, pieces, wrappers, copy_at = example
    ours, ref = jitdigest.new(name), hashlib.new(name)
    twin = None
    for i, (piece, w) in enumerate(zip(pieces, wrappers)):
        if i == copy_at:
            twin = ours.copy()
            assert out_of(twin, length) == out_of(ref, length)
            twin_ref = ref.copy()
        ours.update(BUFFER_TYPES[w](piece))
        ref.update(piece)
        if i % 2:
            assert out_of(ours, length) == out_of(ref, length)
    expected = out_of(ref, length)
    assert out_of(ours, length) == expected
    assert out_of(ours, length) == expected                    # digest() does not finalise
    assert out_of(jitdigest.new(name, data), length) == expected   # one-shot path
    if twin is not None:                                         # the copy is independent
        for piece in pieces[copy_at:]:
            twin.update(piece)
            twin_ref.update(piece)
        assert out_of(twin, length) == out_of(twin_ref, length)


@pytest.mark.parametrize("name", CORE)
@settings(max_examples=CORE_EXAMPLES, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(example=split_messages())
def test_core_against_hashlib(name, example):
    run_differential(name, example)


@pytest.mark.parametrize("name", [n for n in FIXED if n not in CORE])
@settings(max_examples=OTHER_EXAMPLES, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(example=split_messages(), length=st.integers(0, 400))
def test_sha3_shake_against_hashlib(name, example, length):
    run_differential(name, example, length if name.startswith("shake") else None)


@pytest.mark.parametrize("name,kernel", kernel_params(FIXED))
def test_every_kernel_at_block_edges(name, kernel):
    """Lengths 0-8, around one and two blocks, input i % 251 (BLAKE3's pattern), fed whole
    and in two parts."""
    block = make(name, kernel).block_size
    lengths = set(range(9)) | {55, 56, 57, 111, 112, 113}
    lengths |= {block + d for d in (-1, 0, 1)} | {2 * block + d for d in (-1, 0, 1)}
    for n in sorted(lengths):
        data = bytes(i % 251 for i in range(n))
        expected = out_of(hashlib.new(name, data), 32)
        assert out_of(make(name, kernel, data), 32) == expected, n
        h = make(name, kernel, np.frombuffer(data[: n // 3], np.uint8))
        h.update(memoryview(data)[n // 3:])
        assert out_of(h, 32) == expected, n


@pytest.mark.parametrize("name,kernel", kernel_params(FIXED))
@settings(max_examples=60, deadline=None)
@given(data=st.binary(max_size=3000), cut=st.integers(0, 3000))
def test_every_kernel_random(name, kernel, data, cut):
    expected = out_of(hashlib.new(name, data), 40)
    h = make(name, kernel, data[:cut])
    h.update(data[cut:])
    assert out_of(h, 40) == expected
    assert out_of(make(name, kernel, data), 40) == expected
