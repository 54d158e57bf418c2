"""BLAKE3 (``jitdigest.blake3``): every official test vector in the three modes with its full
extended output, differential tests against the ``blake3`` package (hypothesis: lengths,
update splits, keys, contexts, output lengths and positions, copies; lengths at chunk and
subtree edges), the package's errors, and the interpreted mode in a child process."""
import inspect
import os
import pathlib
import pickle
import random
import subprocess
import sys
import threading

import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

import jitdigest
import vectors
from conftest import outcome
from jitdigest.blake3 import blake3

ref = pytest.importorskip("blake3")       # the package: in the test extras

ROOT = pathlib.Path(__file__).resolve().parent.parent
MODES = ("hash", "keyed_hash", "derive_key")


def mode_args(mode, key, context):
    return {"hash": {}, "keyed_hash": {"key": key},
            "derive_key": {"derive_key_context": context}}[mode]


# --- known answers ---------------------------------------------------------------------------

def test_official_vectors(known_answers):
    """Every case, each mode: the full extended output, its first 32 bytes as the default
    digest, the same streamed in three pieces, and the tail read from a seek position."""
    key, context, cases = vectors.blake3_vectors()
    checked = 0
    for length, outputs in cases:
        data = vectors.blake3_input(length)
        for mode in MODES:
            expected = outputs[mode]
            args = mode_args(mode, key, context)
            h = blake3(data, **args)
            assert h.digest(len(expected)) == expected, (length, mode)
            assert h.digest() == expected[:32] and h.hexdigest() == expected[:32].hex()
            streamed = blake3(**args)
            a, b = length // 3, 2 * length // 3
            streamed.update(data[:a]).update(bytearray(data[a:b])).update(memoryview(data[b:]))
            assert streamed.hexdigest(len(expected)) == expected.hex(), (length, mode)
            for seek in (1, 31, 64, 65, len(expected) - 1):
                assert h.digest(len(expected) - seek, seek=seek) == expected[seek:]
            checked += 1
    assert checked == 3 * len(cases)
    known_answers(vectors.label("blake3", ""), checked)


# --- against the package ---------------------------------------------------------------------

KEY = bytes(range(100, 132))
BIG = random.Random(3).randbytes(300 * 1024 + 77)


def tiered(draw, tiers):
    """An int from one of ``tiers`` ((low, high) ranges) chosen evenly: hypothesis alone draws
    mostly small ints, and the long inputs and far positions are the point here."""
    low, high = draw(st.sampled_from(tiers))
    return draw(st.integers(low, high))


@st.composite
def examples(draw):
    """(data, cut points, mode arguments, output length, seek, copy index)."""
    n = tiered(draw, [(0, 2100), (2100, 40_000)])
    if draw(st.booleans()):              # a long input: some chunks of 1 KiB, and a bit more
        n = 1024 * draw(st.sampled_from([40, 63, 64, 100, 128, 129, 200, 255, 256, 298])) + n % 2048
    start = draw(st.integers(0, 64))
    data = BIG[start:start + n]
    cuts = sorted(draw(st.lists(st.integers(0, len(data)), max_size=6)))
    mode = draw(st.sampled_from(MODES))
    args = mode_args(mode, draw(st.binary(min_size=32, max_size=32)),
                     draw(st.text(max_size=40)))
    length = tiered(draw, [(32, 32), (0, 300), (300, 5000)])
    seek = tiered(draw, [(0, 0), (0, 5000), (2 ** 32, 2 ** 64 - 1)])
    copy_at = draw(st.integers(0, len(cuts)))
    return data, cuts, args, length, seek, copy_at


@settings(max_examples=150, deadline=None,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(example=examples())
def test_differential(example):
    data, cuts, args, length, seek, copy_at = example
    expected = ref.blake3(data, **args).digest(length, seek=seek)
    assert blake3(data, **args).digest(length, seek=seek) == expected       # one-shot path
    pieces = [data[a:b] for a, b in zip([0] + cuts, cuts + [len(data)])]
    ours, theirs = blake3(**args), ref.blake3(**args)
    twin = twin_ref = None
    for i, piece in enumerate(pieces):
        if i == copy_at:
            twin, twin_ref = ours.copy(), theirs.copy()
        ours.update(bytearray(piece) if i % 2 else piece)
        theirs.update(piece)
    assert ours.digest(length, seek=seek) == expected
    assert ours.digest() == theirs.digest()                          # digest() does not finalise
    if twin is not None:
        tail = b"tail" * copy_at
        assert twin.update(tail).digest(length, seek=seek) == \
            twin_ref.update(tail).digest(length, seek=seek)
    assert ours.digest(length, seek=seek) == expected                # the copy was independent


SWEEP_CASES = 10_000


def test_random_sweep_against_the_package():
    """Ten thousand seeded random cases (hypothesis above shrinks failures, this one counts):
    lengths from empty to 3 MiB, start offsets, update splits, all three modes with random
    keys and contexts, output lengths, seeks and thread counts, each against the package."""
    rng = random.Random(0xB1A4E3)
    big = rng.randbytes(3 * 1024 * 1024 + 64)
    tiers = ((0, 4100, 60), (4100, 70_000, 30), (70_000, 600_000, 9), (600_000, 3 << 20, 1))
    weights = [t[2] for t in tiers]
    checked = 0
    for case in range(SWEEP_CASES):
        low, high, _ = rng.choices(tiers, weights)[0]
        n = rng.randrange(low, high + 1)
        start = rng.randrange(65)
        data = big[start:start + n]
        mode = rng.choice(MODES)
        args = mode_args(mode, rng.randbytes(32),
                         "".join(chr(rng.randrange(32, 0x2FF)) for _ in range(rng.randrange(30))))
        length = rng.choice((32, 32, rng.randrange(200), rng.randrange(200, 3000)))
        seek = rng.choice((0, 0, rng.randrange(5000), rng.randrange(2 ** 64 - length)))
        threads = rng.choice((1, 1, 1, 2, blake3.AUTO))
        expected = ref.blake3(data, **args).digest(length, seek=seek)
        cuts = sorted(rng.randrange(n + 1) for _ in range(rng.randrange(5)))
        ours = blake3(**args, max_threads=threads)
        for a, b in zip([0] + cuts, cuts + [n]):
            ours.update(memoryview(data)[a:b])
        got = (ours.digest(length, seek=seek),
               blake3(data, **args, max_threads=threads).digest(length, seek=seek))
        assert got == (expected, expected), (case, n, start, mode, length, seek, threads, cuts)
        checked += 1
    assert checked == SWEEP_CASES
    print(f"blake3: {checked} random cases against the package")


def edge_lengths():
    """Lengths around chunk edges and whole subtrees of 2**k chunks (and one over)."""
    lengths = set()
    for chunks in (1, 2, 3, 4, 5, 7, 8, 9, 15, 16, 17, 31, 32, 33, 64, 65, 128, 129, 256):
        for delta in (-65, -64, -63, -1, 0, 1, 63, 64, 65):
            lengths.add(chunks * 1024 + delta)
    return sorted(lengths)


def test_edges_of_chunks_and_subtrees():
    checked = 0
    key = KEY
    for n in edge_lengths():
        data = BIG[:n]
        for args in ({}, {"key": key}):
            expected = ref.blake3(data, **args).digest(80)
            assert blake3(data, **args).digest(80) == expected, n
            for step in (64, 1024, 1000):
                h = blake3(**args)
                for i in range(0, n, step):
                    h.update(bytearray(data[i:i + step]))
                assert h.digest(80) == expected, (n, step)
            checked += 1
    assert checked == 2 * len(edge_lengths()) == 2 * 171


def test_long_output_and_far_seeks():
    h, r = blake3(b"abc", key=KEY), ref.blake3(b"abc", key=KEY)
    assert h.digest(100_003) == r.digest(100_003)
    checked = 0
    for seek in (2 ** 32 * 64 - 1, 2 ** 38 + 5, 2 ** 63, 2 ** 64 - 64, 2 ** 64 - 1):
        assert h.digest(130, seek=seek) == r.digest(130, seek=seek), seek
        checked += 1
    assert checked == 5
    assert h.digest(0) == b"" and h.digest(0, seek=2 ** 64 - 1) == b""


# --- the API and its errors ------------------------------------------------------------------

def test_attributes_and_methods():
    assert jitdigest.blake3.blake3 is blake3                     # lazily on the package
    h = blake3()
    assert (h.name, h.digest_size, h.block_size, h.key_size, h.AUTO) == ("blake3", 32, 64, 32, -1)
    for cls in (blake3, ref.blake3):
        assert (cls.name, cls.digest_size, cls.block_size, cls.key_size, cls.AUTO) == \
            ("blake3", 32, 64, 32, -1)
    assert h.update(b"a") is h and h.update(bytearray(b"b")) is h
    assert h.digest() == ref.blake3(b"ab").digest()
    assert h.reset() is None and h.digest() == ref.blake3().digest()
    g = blake3(b"abc", max_threads=blake3.AUTO, usedforsecurity=False)
    assert g.reset() is None and g.update(b"x").digest() == ref.blake3(b"x").digest()
    c = g.copy()
    c.update(b"y")
    assert g.digest() == ref.blake3(b"x").digest() and c.digest() == ref.blake3(b"xy").digest()
    assert str(inspect.signature(blake3)) == str(inspect.signature(ref.blake3))
    for name in ("update", "digest", "hexdigest", "copy", "reset", "update_mmap"):
        assert hasattr(h, name) and hasattr(ref.blake3(), name)


def test_update_mmap(tmp_path):
    path = tmp_path / "f"
    path.write_bytes(BIG[:5000])
    (tmp_path / "empty").write_bytes(b"")
    assert blake3(b"x").update_mmap(path).digest() == ref.blake3(b"x" + BIG[:5000]).digest()
    assert blake3().update_mmap(str(tmp_path / "empty")).digest() == ref.blake3().digest()
    with pytest.raises(FileNotFoundError):
        blake3().update_mmap(tmp_path / "missing")
    # an int is not taken as a file descriptor (which the mapping would then close)
    fd = os.open(path, os.O_RDONLY)
    try:
        for bad in (fd, True):
            with pytest.raises(TypeError):
                blake3().update_mmap(bad)
        os.fstat(fd)                                    # still open
    finally:
        os.close(fd)


def test_argument_forms_the_package_takes():
    """A str subclass as the context, numpy's bool as usedforsecurity: taken, as the package
    takes them, for the class and hash_many."""
    import numpy as np

    import jitdigest

    class Text(str):
        pass
    want = ref.blake3(b"m", derive_key_context="ctx").digest()
    assert blake3(b"m", derive_key_context=Text("ctx")).digest() == want
    assert bytes(jitdigest.hash_many("blake3", [b"m"], derive_key_context=Text("ctx"))[0]) == want
    for flag in (np.bool_(True), np.bool_(False)):
        assert blake3(b"m", usedforsecurity=flag).digest() == \
            ref.blake3(b"m", usedforsecurity=flag).digest()


def errors():
    """Calls that fail, as (label, function of the class)."""
    import numpy as np
    return [
        ("str data", lambda B: B("abc")),
        ("str update", lambda B: B().update("abc")),
        ("int data", lambda B: B(5)),
        ("None update", lambda B: B().update(None)),
        ("short key", lambda B: B(key=b"x" * 31)),
        ("long key", lambda B: B(key=b"x" * 33)),
        ("str key", lambda B: B(key="x" * 32)),
        ("key and context", lambda B: B(key=b"x" * 32, derive_key_context="c")),
        ("bad key and context", lambda B: B(key=b"x" * 31, derive_key_context="c")),
        ("bytes context", lambda B: B(derive_key_context=b"c")),
        ("int context with key", lambda B: B(key=b"x" * 32, derive_key_context=5)),
        ("surrogate context", lambda B: B(derive_key_context="\ud800")),
        ("zero threads", lambda B: B(max_threads=0)),
        ("-2 threads", lambda B: B(max_threads=-2)),
        ("float threads", lambda B: B(max_threads=2.0)),
        ("None threads", lambda B: B(max_threads=None)),
        ("huge threads", lambda B: B(max_threads=2 ** 70)),
        ("key before threads", lambda B: B(key=b"x" * 31, max_threads=0)),
        ("usedforsecurity None", lambda B: B(usedforsecurity=None)),
        ("usedforsecurity 1", lambda B: B(usedforsecurity=1)),
        ("negative length", lambda B: B().digest(-1)),
        ("negative seek", lambda B: B().digest(seek=-1)),
        ("float length", lambda B: B().digest(1.0)),
        ("None length", lambda B: B().digest(length=None)),
        ("length over u64", lambda B: B().digest(2 ** 64)),
        ("length over isize", lambda B: B().digest(2 ** 63)),
        ("seek over u64", lambda B: B().digest(1, seek=2 ** 64)),
        ("positional seek", lambda B: B().digest(1, 5)),
        ("negative hex length", lambda B: B().hexdigest(-1)),
        ("non-contiguous", lambda B: B(memoryview(b"abcd")[::2])),
        ("non-contiguous update", lambda B: B().update(np.arange(8, dtype=np.uint8)[::2])),
        ("two data", lambda B: B(b"", b"")),
        ("bytes path", lambda B: B().update_mmap(b"/nonexistent")),
        ("int path", lambda B: B().update_mmap(10 ** 6)),
        ("surrogate context with key", lambda B: B(key=b"x" * 32, derive_key_context="\udc00")),
        ("surrogate context, float threads",
         lambda B: B(derive_key_context="\ud800", max_threads=2.0)),
        ("surrogate context, None usedforsecurity",
         lambda B: B(derive_key_context="\ud800", usedforsecurity=None)),
    ]


@pytest.mark.parametrize("label, call", errors(), ids=[e[0] for e in errors()])
def test_errors_match_the_package(label, call):
    mine, theirs = outcome(lambda: call(blake3)), outcome(lambda: call(ref.blake3))
    assert theirs[0] != "ok", theirs
    if label in ("two data", "positional seek"):     # Python's own wording for the signature
        assert mine[0] == theirs[0] == "TypeError"
    else:
        assert mine == theirs


def test_pickling_and_immutable_type():
    with pytest.raises(TypeError, match="cannot pickle 'jitdigest.blake3.blake3' object"):
        pickle.dumps(blake3())
    with pytest.raises(TypeError):
        blake3.name = "x"
    with pytest.raises(AttributeError):
        blake3().name = "x"


def test_any_contiguous_buffer_is_its_raw_bytes():
    import numpy as np
    words = np.arange(100, dtype=np.uint32)
    assert blake3(words).digest() == ref.blake3(words.tobytes()).digest()
    grid = np.arange(64, dtype=np.uint8).reshape(8, 8)
    assert blake3().update(grid).digest() == ref.blake3(grid.tobytes()).digest()


def test_threads_share_an_object():
    """Updates from several threads are each atomic (3000 bytes each: the kernel releases
    the GIL)."""
    h = blake3()
    chunk = memoryview(BIG[:3000])

    def feed():
        for _ in range(20):
            h.update(chunk)

    threads = [threading.Thread(target=feed) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert h.digest() == ref.blake3(bytes(chunk) * 80).digest()


def test_importing_the_module_compiles_nothing():
    code = ("import sys, jitdigest, jitdigest.blake3\n"
            "print(sorted(m for m in sys.modules if m.split('.')[0] in ('numba', 'llvmlite')))\n"
            "h = jitdigest.blake3.blake3(b'x', key=bytes(32))\n"
            "print(sorted(m for m in sys.modules if m.split('.')[0] in ('numba', 'llvmlite')))\n")
    env = {k: v for k, v in os.environ.items() if k != "NUMBA_DISABLE_JIT"}
    proc = subprocess.run([sys.executable, "-c", code], env=env, cwd=ROOT, capture_output=True,
                          text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.splitlines() == ["[]", "[]"]


def test_nothing_allocated_or_compiled_after_warm_up():
    """update() allocates nothing per call, and varied inputs, lengths and positions compile
    nothing new: the object calls each entry's one compiled form."""
    import numpy as np
    from test_allocation import JIT_ENABLED, allocated_per_update, compiles_seen
    data = np.frombuffer(bytes(range(256)) * 16, np.uint8)
    h = blake3(key=KEY)
    per_update, peak = allocated_per_update(h, data)
    assert per_update == 0 and peak < len(data) // 2
    blake3(b"abc").digest()
    h.digest()
    if not JIT_ENABLED:
        return
    with compiles_seen() as seen:
        for piece in (np.arange(77, dtype=np.int16), memoryview(b"abc"), b"z" * 5000,
                      bytearray(1), b""):
            h.update(piece)
            g = blake3(bytes(piece), derive_key_context="c")
            g.copy().digest(3, seek=2 ** 64 - 5)
            g.hexdigest(1000)
        for length in (0, 1, 64, 1000):
            h.digest(length, seek=length)
    assert seen == [], f"compiled after warm-up: {seen}"


# --- interpreted ---------------------------------------------------------------------------

INTERPRETED = r"""
import sys, warnings
warnings.simplefilter("error")
sys.path.insert(0, sys.argv[1])
from jitdigest.engine import cpu as _cpu
from jitdigest.blake3 import blake3
import vectors
assert not _cpu.jit_enabled()
key, context, cases = vectors.blake3_vectors()
checked = 0
for length, outputs in cases:
    if length > 2049:
        continue
    data = vectors.blake3_input(length)
    for mode, args in (("hash", {}), ("keyed_hash", {"key": key}),
                       ("derive_key", {"derive_key_context": context})):
        expected = outputs[mode]
        h = blake3(**args)
        h.update(data[:length // 2]).update(bytearray(data[length // 2:]))
        assert blake3(data, **args).digest(len(expected)) == expected, (length, mode)
        assert h.digest(len(expected)) == expected, (length, mode)
        assert h.digest(7, seek=70) == expected[70:77]
        checked += 1
print("checked", checked)
"""


def test_interpreted_mode():
    """Short inputs (up to 2049 bytes: three chunks, a parent of parents) through the kernels
    run interpreted, with warnings as errors."""
    key, context, cases = vectors.blake3_vectors()
    expected = 3 * sum(1 for length, _ in cases if length <= 2049)
    env = dict(os.environ, NUMBA_DISABLE_JIT="1")
    proc = subprocess.run([sys.executable, "-c", INTERPRETED, str(ROOT / "tests")], env=env,
                          cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert f"checked {expected}" in proc.stdout and expected >= 18
