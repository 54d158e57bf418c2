"""Lane kernels (jitdigest/kernels/<family>/lanes<N>.py, made by tools/gen_lanes.py): every
registered lane kernel this CPU can run agrees with hashlib through its
``hash_rows`` entry -- every length up to 3 blocks and the padding edges, batches from one row
to more than two lane groups (the last one partial), ragged random lengths, rows in shuffled
order and as a subset (rows not asked for stay untouched), messages at odd offsets, digests
shorter than the state (SHA-224, SHA-384, SHA-512/224).

Each kernel set is compiled once per process (cold: several seconds each); kernels the CPU,
Numba's target or ``JITDIGEST_DISABLE`` rule out, and all of them under ``NUMBA_DISABLE_JIT=1``,
appear as skips."""
import hashlib
import importlib.util
import pathlib

import numpy as np
import pytest

import jitdigest
from jitdigest.base import algorithms as _algorithms
from jitdigest.engine import cpu as _cpu, dispatch as _dispatch
from jitdigest.kernels._contract import VECTOR_TIERS

REPO = pathlib.Path(__file__).resolve().parent.parent
GENERATORS = [REPO / "tools" / "gen_lanes.py", REPO / "tools" / "gen_sha_ni_batch.py"]
SHAKE_LENGTH = 200          # > the SHAKE128 rate: the squeeze permutes again


def _load_generator(path):
    spec = importlib.util.spec_from_file_location(path.stem, path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


BATCH_BACKENDS = [b for family in _dispatch.FAMILIES for b in _dispatch.batch_backends(family)]


def test_every_generated_module_is_registered():
    """Batch lane kernels as batch backends; BLAKE3's (chunks of one input, not messages) as
    backends of ``jitdigest.blake3``."""
    from jitdigest.kernels.blake3 import backends as blake3_backends
    registered = {pathlib.Path(b.module.__file__).resolve() for b in BATCH_BACKENDS}
    registered |= {pathlib.Path(m.__file__).resolve() for m in blake3_backends()
                   if m.BACKEND.tier.name in VECTOR_TIERS}
    generated = {(REPO / rel).resolve() for g in GENERATORS for rel in _load_generator(g).render()}
    assert generated
    assert registered == generated


# --- kernels against hashlib ----------------------------------------------------------------

def _names(family):
    return sorted(name for name, spec in _algorithms.SPECS.items() if spec.family == family)


def _params():
    # Last backend first: test_batch_kernels.py takes the same kernels first to last, so when
    # the two files run at once on two pytest-xdist workers each compiles about half of them
    # and loads the rest from the shared cache instead of both compiling each in step.
    params = []
    for backend in reversed(BATCH_BACKENDS):
        marks = () if _dispatch.usable(backend) else (
            pytest.mark.skip(reason=f"{backend.name} not usable on this CPU/target"),)
        for name in _names(backend.family):
            params.append(pytest.param(name, backend, id=f"{name}-{backend.name}", marks=marks))
    return params


def _lanes(backend):
    return backend.in_flight


def _hash_rows(name, backend):
    spec = _algorithms.SPECS[name]
    return _dispatch._kernel_set(backend, spec.word).hash_rows


def _outlen(name):
    return _algorithms.SPECS[name].digest_size or SHAKE_LENGTH


def _expected(name, msg):
    h = hashlib.new(name, msg)
    return h.digest(SHAKE_LENGTH) if name.startswith("shake") else h.digest()


def _iv(name):
    from jitdigest import batch
    return batch.initial_state(_algorithms.SPECS[name])


def run(name, backend, lengths, rows=None, gap=0, seed=0):
    """Hash random messages of ``lengths`` (``gap`` spare bytes between them, so they start at
    odd offsets) for ``rows`` (default: all, in order); return (out, messages)."""
    rng = np.random.default_rng(seed)
    lengths = np.asarray(lengths, dtype=np.int64)
    n = lengths.shape[0]
    starts = np.zeros(n, np.int64)
    pos = 1                                     # message 0 starts at an odd offset too
    for i in range(n):
        starts[i] = pos
        pos += int(lengths[i]) + gap
    values = rng.integers(0, 256, pos + 1, dtype=np.uint8)
    values.setflags(write=False)
    for a in (starts, lengths):
        a.setflags(write=False)
    if rows is None:
        rows = np.arange(n, dtype=np.int64)
    rows = np.ascontiguousarray(rows, dtype=np.int64)
    rows.setflags(write=False)
    out = np.full((n, _outlen(name)), 0xA5, np.uint8)
    _hash_rows(name, backend)(values, starts, lengths, rows, _iv(name), out)
    msgs = [values[s:s + k].tobytes() for s, k in zip(starts, lengths)]
    return out, msgs


def check(name, out, msgs, rows=None):
    rows = range(len(msgs)) if rows is None else rows
    bad = [(int(r), len(msgs[r])) for r in rows if out[r].tobytes() != _expected(name, msgs[r])]
    assert not bad, f"{name}: {len(bad)} wrong digests (row, length): {bad[:8]}"


@pytest.mark.parametrize("name,backend", _params())
def test_every_length_to_three_blocks(name, backend):
    bs = _algorithms.SPECS[name].block_size
    edges = [bs - 9, bs - 8, bs - 1, bs, bs + 1, 2 * bs - 17, 2 * bs - 16, 2 * bs - 9,
             2 * bs - 1, 2 * bs, 2 * bs + 1, 3 * bs + 1, 55, 56, 63, 64, 65, 111, 112, 119,
             127, 128, 129]
    lengths = list(range(3 * bs + 2)) + [k for k in edges if k >= 0]
    out, msgs = run(name, backend, lengths, gap=3)
    check(name, out, msgs)


@pytest.mark.parametrize("name,backend", _params())
def test_batch_sizes_and_partial_groups(name, backend):
    lanes = _lanes(backend)
    bs = _algorithms.SPECS[name].block_size
    for n in sorted({1, 2, 3, lanes - 1, lanes, lanes + 1, 2 * lanes + 3}):
        lengths = [(7 * i + bs - 3) % (2 * bs + 5) for i in range(n)]
        out, msgs = run(name, backend, lengths, seed=n)
        check(name, out, msgs)
        out, msgs = run(name, backend, [bs] * n, seed=n)        # equal lengths
        check(name, out, msgs)


@pytest.mark.parametrize("name,backend", _params())
def test_equal_lengths_and_shared_pad_blocks(name, backend):
    """Rows of one length step in phase, so every lane may reach the same pad-only block at
    once (a kernel may then share one message schedule); also the near misses: pad-only
    blocks of different lengths side by side, and one odd row among equal ones."""
    lanes = _lanes(backend)
    bs = _algorithms.SPECS[name].block_size
    n = 2 * lanes + 3
    for k in (0, bs - 9, bs - 8, bs - 1, bs, 2 * bs - 1, 2 * bs, 16 * bs):
        out, msgs = run(name, backend, [k] * n, seed=k)
        check(name, out, msgs)
    out, msgs = run(name, backend, [bs, 2 * bs] * lanes, seed=1)
    check(name, out, msgs)
    out, msgs = run(name, backend, [bs] * (lanes - 1) + [bs + 1] + [bs] * lanes, seed=2)
    check(name, out, msgs)
    out, msgs = run(name, backend, [bs - 1] * lanes + [bs] * lanes, seed=3)
    check(name, out, msgs)


@pytest.mark.parametrize("name,backend", _params())
def test_whole_groups_of_one_length(name, backend):
    """Where every row of a full group has one length, MD5's, SHA-1's and BLAKE2s's kernels hash
    the group in phase (``IN_PHASE``): each length up to two blocks and past, as two whole groups
    and a partial one left to the lanes on their own; a group in phase, then mixed rows; rows
    of one length in shuffled order; a buffer over 1 MiB (prefetching)."""
    lanes = _lanes(backend)
    bs = _algorithms.SPECS[name].block_size
    n = 2 * lanes + 3
    lengths = list(range(2 * bs + 2)) + [5 * bs + 7]
    checked = 0
    for k in lengths:
        out, msgs = run(name, backend, [k] * n, gap=k % 3, seed=k)
        check(name, out, msgs)
        checked += n
    rng = np.random.default_rng(11)
    mixed = [bs + 3] * lanes + [int(k) for k in rng.integers(0, 3 * bs, lanes + 1)]
    out, msgs = run(name, backend, mixed, seed=4)
    check(name, out, msgs)
    out, msgs = run(name, backend, [bs + 5] * n, rows=rng.permutation(n), seed=6)
    check(name, out, msgs)
    out, msgs = run(name, backend, [3 * bs + 5] * n, gap=(1 << 21) // n, seed=8)
    check(name, out, msgs)
    checked += len(mixed) + 2 * n
    assert checked == (len(lengths) + 2) * n + 2 * lanes + 1


@pytest.mark.skipif(not _cpu.jit_enabled(), reason="an intrinsic: compiled code only")
@pytest.mark.parametrize("n,dtype", [(8, np.uint32), (4, np.uint64), (8, np.uint64),
                                     (4, np.uint32)])
@pytest.mark.parametrize("swap", [False, True])
def test_load_transposed(n, dtype, swap):
    """``_lanes.load_transposed``: n words of n lanes (rows at odd offsets, past an offset)
    transposed into a buffer at a stride, in either byte order, nothing else written."""
    import numba

    from jitdigest.kernels._lanes import load_transposed

    @numba.njit
    def load(values, first, lane0, off, buf, dst, stride):
        load_transposed(values, first, lane0, off, buf, dst, stride, n, swap)

    rng = np.random.default_rng(n)
    values = rng.integers(0, 256, 5000, dtype=np.uint8)
    values.setflags(write=False)
    first = rng.integers(0, 4000, 2 * n).astype(np.int64)
    size = np.dtype(dtype).itemsize
    stride, dst, lane0, off = n + 5, 7, n, 3
    buf = np.zeros(dst + n * stride + 3, dtype)
    load(values, first, lane0, off, buf, dst, stride)
    expected = np.zeros_like(buf)
    for lane in range(n):
        for j in range(n):
            at = first[lane0 + lane] + off + size * j
            expected[dst + j * stride + lane] = int.from_bytes(
                values[at:at + size].tobytes(), "big" if swap else "little")
    assert (buf == expected).all()


@pytest.mark.parametrize("name,backend", _params())
def test_ragged_shuffled_and_subset(name, backend):
    lanes = _lanes(backend)
    bs = _algorithms.SPECS[name].block_size
    rng = np.random.default_rng(7)
    n = 3 * lanes + 5
    lengths = rng.integers(0, 6 * bs, n)
    lengths[::5] = 0
    lengths[1::7] = 9 * bs + 3                  # a few long rows among short ones
    order = rng.permutation(n)
    out, msgs = run(name, backend, lengths, rows=order, gap=1)
    check(name, out, msgs)
    subset = rng.permutation(n)[: n // 3]
    out, msgs = run(name, backend, lengths, rows=subset, gap=2)
    check(name, out, msgs, subset)
    untouched = np.setdiff1d(np.arange(n), subset)
    assert (out[untouched] == 0xA5).all(), "rows outside `rows` were written"
    # long ragged rows: most steps find a whole lane group at whole blocks (MD5's and SHA-1's
    # AVX2 kernels then load the group through the transpose), some a group with a lane at its tail
    long = rng.integers(4 * bs, 8 * bs, 4 * lanes + 3)
    out, msgs = run(name, backend, long, rows=rng.permutation(len(long)), gap=3)
    check(name, out, msgs)


@pytest.mark.parametrize("name,backend", _params())
def test_large_buffer_takes_the_prefetching_path(name, backend):
    """``values`` over 1 MiB: the kernels prefetch ahead of their loads (also past the end)."""
    lanes = _lanes(backend)
    bs = _algorithms.SPECS[name].block_size
    lengths = [0, 1, bs, 3 * bs + 5, 6 * bs, 9 * bs + 1] * (lanes // 2 + 1)
    out, msgs = run(name, backend, lengths, gap=(1 << 21) // len(lengths), seed=5)
    check(name, out, msgs)


@pytest.mark.parametrize("name,backend", _params())
def test_empty_rows_and_repeated_rows(name, backend):
    out, msgs = run(name, backend, [5, 70, 0], rows=np.zeros(0, np.int64))
    assert (out == 0xA5).all()
    out, msgs = run(name, backend, [5, 130, 0], rows=[1, 1, 0, 2, 1])
    check(name, out, msgs)


# --- block functions --------------------------------------------------------------------------

def test_block_functions_are_compiled_once_and_inlined():
    """Each generated file's block function is a kernel of its own (called by ``hash_rows``)
    that LLVM inlines into its callers: ``inline_in_callers``
    must leave no call to it in the machine code. Checked on a stand-in block function large
    enough that LLVM would not inline it unasked (also checked), compiled here without the
    cache (cached code has no assembly to inspect)."""
    import re

    import numba
    if not _cpu.jit_enabled():
        pytest.skip("NUMBA_DISABLE_JIT=1: nothing is compiled")
    from jitdigest.kernels._lanes import inline_in_callers
    rounds = 120
    body = "".join("        a = np.uint32(a * np.uint32(2654435761) + b)\n"
                   "        b = np.uint32(b ^ (a >> np.uint32(%d)))\n" % (1 + i % 13)
                   for i in range(rounds))

    def make(inline):
        source = ("def block(buf):\n" + ("    inline_in_callers()\n" if inline else "") +
                  "    for l in range(8):\n        a = buf[l]\n        b = buf[8 + l]\n" +
                  body + "        buf[l] = a\n        buf[8 + l] = b\n")
        space = {"np": np, "inline_in_callers": inline_in_callers}
        exec(source, space)
        block = numba.njit(space["block"])

        @numba.njit
        def driver(buf, n):
            for _ in range(n):
                block(buf)
        return block, driver

    want = list(range(16))
    for _ in range(2):
        for l in range(8):
            a, b = want[l], want[8 + l]
            for i in range(rounds):
                a = (a * 2654435761 + b) & 0xFFFFFFFF
                b = b ^ (a >> (1 + i % 13))
            want[l], want[8 + l] = a, b
    for inline in (False, True):
        block, driver = make(inline)
        buf = np.arange(16, dtype=np.uint32)
        driver(buf, 2)
        assert buf.tolist() == want
        symbol = next(iter(block.overloads.values())).fndesc.mangled_name
        asm = driver.inspect_asm(driver.signatures[0])
        called = re.search(r"(call|movabs)\S*\s+\$?%s\b" % re.escape(symbol), asm)
        assert bool(called) is not inline, (
            f"inline={inline}: numba {numba.__version__}: the block function is "
            f"{'still called' if inline else 'inlined unasked (the check would be blind)'}")
    for module in {b.module for b in BATCH_BACKENDS if b.tier.name in VECTOR_TIERS}:
        assert any(hasattr(module, name) for name in ("_block", "_permute", "_compress")), \
            module.__name__


# --- dispatch -------------------------------------------------------------------------------

def test_backends_name_entries_that_exist():
    for backend in BATCH_BACKENDS:
        module = backend.module
        assert callable(module.hash_rows), backend
        assert backend.in_flight % backend.lanes == 0
        # named by tier and messages side by side (SIMD lanes times interleaved groups), the
        # module as the backend; a vector tier's lanes: its width in the family's words
        # (BLAKE3's message lanes: ``many_`` and the name of the chunk lanes they share it with)
        assert module.__name__.rpartition(".")[2] in (backend.name, "many_" + backend.name)
        assert backend.name in (f"{backend.tier.name}_x{backend.in_flight}",
                                f"{backend.tier.name}_x{backend.lanes}"), backend
        if backend.tier.name in VECTOR_TIERS:
            word = {"md5": 32, "sha1": 32, "sha256": 32, "blake2s": 32, "blake3": 32}.get(
                backend.family, 64)
            assert backend.lanes == backend.tier.lanes(word), backend
            assert backend.name == f"{backend.tier.name}_x{backend.in_flight}", backend
        assert backend.switch in _cpu.SWITCHES and backend.feature, backend
        assert not hasattr(module, "NAME") and not hasattr(module, "LANES"), backend


@pytest.mark.parametrize("name", ["md5", "sha1", "sha256", "sha512", "sha3_256", "blake2b",
                                  "blake2s"])
def test_batch_kernels_for_prefers_usable_lanes_and_honours_switches(name):
    spec = _algorithms.SPECS[name]
    lanes = list(_dispatch.batch_backends(spec.family))
    for rows in (None, 64, 1 << 20):
        chosen = _dispatch.batch_kernels_for(spec, rows).backend
        usable = [b for b in lanes if _dispatch.usable(b) and b.by_default]   # not sha_ni_x2/x4
        sha_ni_wins = (spec.family == "sha256" and usable
                       and usable[0].name == "avx2_x8"
                       and "avx512vl" not in _cpu.target_features()
                       and any(b.name == "sha_ni" and _dispatch.usable(b)
                               for b in _dispatch.backends(spec.family)))
        if sha_ni_wins:
            assert chosen.name == "sha_ni"
        elif usable:
            assert chosen == usable[0]
        else:
            assert chosen not in lanes
    with _cpu.disabled("avx512", "avx2"):
        chosen = _dispatch.batch_kernels_for(spec).backend
        assert chosen.switch not in ("avx512", "avx2")     # at most the interleaved SHA-NI one
    with _cpu.disabled("avx512"):
        chosen = _dispatch.batch_kernels_for(spec).backend
        assert chosen.switch != "avx512"


@pytest.mark.parametrize("name", ["md5", "sha1", "sha256", "sha512", "sha3_256", "blake2b",
                                  "blake2s"])
def test_few_rows_go_to_the_per_message_kernel(name):
    """A batch far smaller than a lane group leaves most lanes idle: one row (and, where the
    per-message kernel is a hardware one, under half a group) goes to the per-message kernel;
    the answer is the same either way."""
    spec = _algorithms.SPECS[name]
    lanes = _dispatch.batch_kernels_for(spec)
    single = _dispatch.usable_kernel_sets(spec)[0]
    if lanes.backend.lanes == 1:
        pytest.skip("no lane kernel usable here")
    assert _dispatch.batch_kernels_for(spec, 1) is single
    limit = lanes.backend.lanes // 2 if single.backend.feature else 2
    assert _dispatch.batch_kernels_for(spec, limit - 1) is single
    assert _dispatch.batch_kernels_for(spec, limit) is lanes
    assert _dispatch.batch_kernels_for(spec, 1000) is lanes
    rows = np.random.default_rng(9).integers(0, 256, (1, 3000), dtype=np.uint8)
    assert bytes(jitdigest.hash_many(name, rows)[0]) == hashlib.new(name, rows.tobytes()).digest()


def _blake2_params():
    return [pytest.param(b, id=f"{b.family}-{b.name}", marks=() if _dispatch.usable(b) else (
        pytest.mark.skip(reason=f"{b.name} not usable on this CPU/target"),))
        for b in BATCH_BACKENDS if b.family.startswith("blake2")]


@pytest.mark.parametrize("backend", _blake2_params())
def test_blake2_parameters_through_iv(backend):
    """The parameter block reaches the lanes only through ``iv`` (h, counter, last-node flag):
    digest size, salt, personalisation, tree fields and the last-node flag all take effect."""
    import jitdigest
    name = backend.family
    spec = _algorithms.SPECS[name]
    params = dict(digest_size=spec.digest_size // 2 + 3, salt=b"salt", person=b"me",
                  fanout=2, depth=3, leaf_size=4096, node_offset=7, node_depth=1,
                  inner_size=spec.digest_size, last_node=True)
    iv = getattr(jitdigest, name)(**params)._iv
    kernel = _dispatch._kernel_set(backend, spec.word).hash_rows
    bs, group = spec.block_size, 2 * _lanes(backend) + 1
    checked = 0
    # mixed lengths (lanes on their own), then whole groups of one length (in phase)
    for lengths in ([0, 1, bs, bs + 1, 3 * bs], [20] * group, [2 * bs + 7] * group):
        lengths = np.array(lengths, np.int64)
        starts = np.concatenate([[0], np.cumsum(lengths)[:-1]]).astype(np.int64)
        values = np.random.default_rng(3).integers(0, 256, int(lengths.sum()) + 1,
                                                   dtype=np.uint8)
        out = np.zeros((len(lengths), params["digest_size"]), np.uint8)
        kernel(values, starts, lengths, np.arange(len(lengths), dtype=np.int64), iv, out)
        for i, (s, k) in enumerate(zip(starts, lengths)):
            want = getattr(hashlib, name)(values[s:s + k].tobytes(), **params).digest()
            assert out[i].tobytes() == want, (name, int(k))
            checked += 1
    assert checked == 5 + 2 * group
