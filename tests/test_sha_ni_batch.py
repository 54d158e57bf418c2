"""The interleaved SHA-NI batch kernels (``sha256/sha_ni_x2.py``, ``sha1/sha_ni_x4.py``, made by
tools/gen_sha_ni_batch.py) against NIST's answers and hashlib, through all four batch entries.

They hash rows two or four at a time and split a group whose rows differ in length (whole
blocks interleaved while every row has one, the rest one by one, tails interleaved again), so
the cases here are unsorted ragged rows of 0..3000 bytes, groups cut short at the end of a
chunk, and rows of one width a window at a time. The generic batch tests (test_batch_kernels.py, test_lanes.py) run
these backends too, as every registered one."""
import hashlib

import numpy as np
import pytest

from jitdigest.base import algorithms as _algorithms
from jitdigest.engine import dispatch as _dispatch, layout as _layout
from jitdigest import batch

from vectors import messages, source_of, vector_path

NAMES = ["sha1", "sha224", "sha256"]


def _params():
    params = []
    for name in NAMES:
        spec = _algorithms.SPECS[name]
        for backend in _dispatch.batch_backends(spec.family):
            if not backend.name.startswith("sha_ni_x"):
                continue
            marks = () if _dispatch.usable(backend) else (
                pytest.mark.skip(reason=f"{backend.name} not usable on this CPU/target"),)
            ks = _dispatch._kernel_set(backend, spec.word)
            params.append(pytest.param(name, ks, id=f"{name}-{backend.name}", marks=marks))
    return params


def test_each_sha_family_has_one():
    assert [p.id for p in _params()] == ["sha1-sha_ni_x4", "sha224-sha_ni_x2",
                                         "sha256-sha_ni_x2"]


def _pack(msgs, gap=3):
    """values, starts, lengths for ``msgs`` laid out with ``gap`` bytes between them."""
    lengths = np.array([len(m) for m in msgs], np.int64)
    starts = np.zeros(len(msgs), np.int64)
    buf = bytearray(b"\x5a")
    for i, m in enumerate(msgs):
        starts[i] = len(buf)
        buf += m + b"\xc3" * gap
    values = np.frombuffer(bytes(buf), np.uint8)
    return values, starts, lengths


def _check(name, msgs, out, rows):
    bad = [int(r) for r in rows if out[r].tobytes() != hashlib.new(name, msgs[r]).digest()]
    assert not bad, f"{len(bad)} wrong digests, rows {bad[:8]}"
    return len(rows)


@pytest.mark.parametrize("name, kernels", _params())
def test_nist_messages_in_one_shuffled_batch(name, kernels):
    cases = messages(name, "ShortMsg") + messages(name, "LongMsg")
    values, starts, lengths = _pack([m for m, _, _ in cases])
    rows = np.random.default_rng(1).permutation(len(cases)).astype(np.int64)
    out = np.zeros((len(cases), _algorithms.SPECS[name].digest_size), np.uint8)
    kernels.hash_rows(values, starts, lengths, rows, batch.initial_state(_algorithms.SPECS[name]),
                      out)
    bad = [i for i, (_, want, _) in enumerate(cases) if out[i].tobytes() != want]
    full = all(source_of(vector_path(name, k)) == "full" for k in ("ShortMsg", "LongMsg"))
    least = 100 if full else 10                     # NIST's files, or the subset in tests/data
    assert not bad and len(cases) > least, f"{len(bad)} of {len(cases)} wrong: {bad[:8]}"


@pytest.mark.parametrize("name, kernels", _params())
def test_ragged_rows_and_chunks(name, kernels):
    rng = np.random.default_rng(7)
    n = 203                                     # not a multiple of 2 or 4
    lens = rng.integers(0, 3001, n)
    lens[:12] = [0, 55, 56, 63, 64, 119, 120, 128, 3000, 1, 2999, 0]
    msgs = [rng.integers(0, 256, k, dtype=np.uint8).tobytes() for k in lens]
    values, starts, lengths = _pack(msgs)
    iv = batch.initial_state(_algorithms.SPECS[name])
    width = _algorithms.SPECS[name].digest_size
    rows = rng.permutation(n).astype(np.int64)  # unsorted: each group mixes lengths
    checked = 0
    out = np.zeros((n, width), np.uint8)
    kernels.hash_rows(values, starts, lengths, rows, iv, out)
    checked += _check(name, msgs, out, rows)
    bounds = np.array([0, 3, 3, 70, 131, n], np.int64)     # odd chunks, one empty
    out = np.zeros((n, width), np.uint8)
    kernels.hash_chunks(values, starts, lengths, rows, bounds, iv, out)
    checked += _check(name, msgs, out, rows)
    assert checked == 2 * n


@pytest.mark.parametrize("name, kernels", _params())
def test_padding_block_reused_only_for_its_length(name, kernels):
    """A message whose length is a multiple of 64 ends in a block of padding only, which a slot
    keeps for the next message of the same length: runs of equal lengths, lengths that change
    (by 64, to a partial block, back), and an empty message, in the order given."""
    lens = ([0] * 5 + [64] * 9 + [128] * 6 + [64, 100, 64, 64, 192, 0, 0, 64, 119, 120, 64]
            + [1024] * 7 + [960, 1024, 1024, 56, 0, 64])
    rng = np.random.default_rng(11)
    msgs = [rng.integers(0, 256, k, dtype=np.uint8).tobytes() for k in lens]
    values, starts, lengths = _pack(msgs)
    iv = batch.initial_state(_algorithms.SPECS[name])
    width = _algorithms.SPECS[name].digest_size
    checked = 0
    for rows in (np.arange(len(msgs)), np.arange(len(msgs))[::-1].copy(),
                 np.arange(1, len(msgs))):      # each slot sees another sequence
        out = np.zeros((len(msgs), width), np.uint8)
        kernels.hash_rows(values, starts, lengths, rows.astype(np.int64), iv, out)
        checked += _check(name, msgs, out, rows)
    assert checked == 3 * len(msgs) - 1


@pytest.mark.parametrize("name, kernels", _params())
def test_rows_of_one_length_ending_in_padding_only(name, kernels):
    """Both kernels run the last block of four rows of one length four at a time where that
    block is padding only (a length that is a multiple of 64, or 56-63 past one), from a
    schedule made once per length; SHA-256's runs 64-byte rows through ``rows64_x4`` (their
    data blocks four at a time too, the next group's schedule made during this group's rounds):
    runs of such lengths, lengths that change and come back, a group of four with one row of
    another length, short groups at the end, and the same rows keyed (HMAC: a block hashed
    before each message, counted in its length)."""
    import hmac

    import jitdigest
    lens = ([64] * 8 + [128] * 8 + [64] * 4 + [0] * 4 + [56] * 4 + [63] * 4 + [120] * 4
            + [64, 64, 64, 65] + [1024] * 4 + [119] * 4 + [1080] * 4 + [64] * 3)
    rng = np.random.default_rng(13)
    msgs = [rng.integers(0, 256, k, dtype=np.uint8).tobytes() for k in lens]
    values, starts, lengths = _pack(msgs)
    iv = batch.initial_state(_algorithms.SPECS[name])
    out = np.zeros((len(msgs), _algorithms.SPECS[name].digest_size), np.uint8)
    rows = np.arange(len(msgs), dtype=np.int64)
    kernels.hash_rows(values, starts, lengths, rows, iv, out)
    checked = _check(name, msgs, out, rows)
    with jitdigest.backend(kernels.name):
        keyed = jitdigest.hmac_many(name, b"key", msgs, threads=1)
    bad = [i for i, m in enumerate(msgs)
           if keyed[i].tobytes() != hmac.new(b"key", m, name).digest()]
    assert not bad, f"HMAC: {len(bad)} wrong, rows {bad[:8]}"
    checked += len(msgs)
    assert checked == 2 * len(lens)


@pytest.mark.parametrize("name, kernels", _params())
def test_tails_read_up_to_the_end_of_the_buffer_only(name, kernels):
    """Each message length 0..199 alone in a buffer that ends where it ends, one row and a full
    group of rows on it: the padded tail is read 16 bytes at a time where the buffer has 16
    more bytes, byte by byte where it does not. (A fresh buffer of exactly that size: an ASan
    or valgrind run would see a read past it.)"""
    iv = batch.initial_state(_algorithms.SPECS[name])
    width = _algorithms.SPECS[name].digest_size
    ways = kernels.backend.lanes
    rng = np.random.default_rng(5)
    checked = 0
    for n in range(200):
        msg = rng.integers(0, 256, n, dtype=np.uint8).tobytes()
        values = np.frombuffer(bytearray(msg), np.uint8)
        want = hashlib.new(name, msg).digest()
        for count in (1, ways + 1):
            out = np.zeros((count, width), np.uint8)
            kernels.hash_rows(values, np.zeros(count, np.int64), np.full(count, n, np.int64),
                              np.arange(count, dtype=np.int64), iv, out)
            bad = [r for r in range(count) if out[r].tobytes() != want]
            assert not bad, (n, count, bad)
            checked += count
    assert checked == 200 * (ways + 2)


@pytest.mark.parametrize("name, kernels", _params())
def test_grid_chunks(name, kernels):
    iv = batch.initial_state(_algorithms.SPECS[name])
    width = _algorithms.SPECS[name].digest_size
    checked = 0
    for size, n in ((0, 9), (55, 9), (64, 10), (119, 11), (1000, 7), (1024, 6)):
        grid = np.random.default_rng(size).integers(0, 256, (n, size), dtype=np.uint8)
        msgs = [r.tobytes() for r in grid]
        out = np.zeros((n, width), np.uint8)
        starts, lengths, window = _layout.grid_window(size, 3)      # windows of 3 rows
        kernels.grid_chunks(grid.reshape(-1), starts, lengths, window,
                            np.array([1, 5, n], np.int64), iv, out)
        assert not out[0].any()                 # row 0 not asked for
        checked += _check(name, msgs, out, range(1, n))
    assert checked == 9 + 9 + 10 + 11 + 7 + 6 - 6


@pytest.mark.parametrize("name", NAMES)
@pytest.mark.parametrize("off", [(), ("avx512",), ("avx2", "avx512")])
def test_the_built_in_rule_never_picks_them_beside_avx512(name, off):
    """Interleaved SHA-NI wins on some CPUs at some lengths only: where Numba's target has
    AVX-512 the rule's choice stays the lane kernel or the per-message SHA-NI one, whichever
    SIMD is switched off (a switch does not change the target's features)."""
    from jitdigest.engine import cpu as _cpu
    spec = _algorithms.SPECS[name]
    if "avx512vl" not in _cpu.target_features():
        pytest.skip("Numba's target has no AVX-512: the next test's rule")
    with _cpu.disabled(*off):
        for rows in (None, 1, 3, 1000):
            ks = _dispatch.default_batch_kernels(spec, rows)
            assert ks.backend.by_default and not ks.name.startswith("sha_ni_x")
        names = [ks.name for ks in _dispatch.batch_kernel_sets(spec)]
        usable = [b.name for b in _dispatch.batch_backends(spec.family) if _dispatch.usable(b)]
    assert [n for n in names if n.startswith("sha_ni_x")] == \
        [n for n in usable if n.startswith("sha_ni_x")]


@pytest.mark.parametrize("name", NAMES)
def test_without_avx512_the_rule_takes_interleaved_sha_ni_for_sha256(name, monkeypatch):
    """A target without AVX-512 (Zen 3, or Intel's without it): SHA-256 and SHA-224 batches go
    to the interleaved SHA-NI kernel where it is usable (tune chose it on Zen 3 and Zen 4,
    benchmarks/results/bench_batch-znver3.txt), a few rows to the per-message SHA-NI kernel;
    SHA-1 keeps the AVX2 lanes."""
    from jitdigest.engine import cpu as _cpu
    spec = _algorithms.SPECS[name]
    features = frozenset(f for f in _cpu.target_features() if not f.startswith("avx512"))
    monkeypatch.setattr(_cpu, "target_features", lambda: features)
    monkeypatch.setattr(_dispatch, "_batch_rules", {})
    with _cpu.disabled("avx512"):
        usable = {b.name for b in _dispatch.batch_backends(spec.family) if _dispatch.usable(b)}
        if "avx2_x8" not in usable:
            pytest.skip("no AVX2 lanes on this CPU")
        many = _dispatch.default_batch_kernels(spec, None).name
        few = _dispatch.default_batch_kernels(spec, 1).name
    if spec.family == "sha256" and "sha_ni_x2" in usable:
        assert (many, few) == ("sha_ni_x2", "sha_ni")
    else:
        assert not many.startswith("sha_ni_x") and not few.startswith("sha_ni_x")
