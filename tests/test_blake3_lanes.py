"""BLAKE3's chunk-parallel lane kernels (``kernels/blake3/avx512_x16.py``, ``avx2_x8.py``): each
lane width this CPU can run, forced with ``_cpu.disabled`` (and the portable kernel the same
way), against the official vectors and the ``blake3`` package at the edges of groups of 8, 16
and 32 chunks, in one call and in updates that split groups, in the three modes; the
JITDIGEST_DISABLE switches, in this process and in a new one; ``max_threads`` above 1."""
import os
import pathlib
import random
import subprocess
import sys

import pytest

import vectors
from jitdigest.engine import cpu as _cpu
from jitdigest.blake3 import backend_name, blake3

ref = pytest.importorskip("blake3")       # the package: in the test extras

KEY = bytes(range(7, 39))
CONTEXT = "jitdigest tests 2026-12-04 lanes"
MODES = ({}, {"key": KEY}, {"derive_key_context": CONTEXT})
BIG = bytes((i * 7 + (i >> 10)) & 0xFF for i in range(70 * 1024 + 100))
# name: the switches that leave it first
WIDTHS = {"avx512_x16": (), "avx2_x8": ("avx512",), "portable": ("avx512", "avx2")}


@pytest.fixture(params=sorted(WIDTHS))
def width(request):
    """Inside the test, BLAKE3 is served by the named backend (skipped where the CPU lacks
    it)."""
    with _cpu.disabled(*WIDTHS[request.param]) if WIDTHS[request.param] else _nothing():
        if backend_name() != request.param:
            pytest.skip(f"{request.param} is not usable here")
        yield request.param


class _nothing:
    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return False


def test_disable_switches_choose_the_backend():
    """JITDIGEST_DISABLE's switches turn the lanes off, widest first; each lane module's
    record says what it needs (and its FEATURE, SWITCH, which jitdigest.blake3 reads, are the
    record's)."""
    from jitdigest.kernels.blake3 import backends
    modules = {m.__name__.rsplit(".", 1)[1]: m for m in backends()}
    assert list(modules) == ["avx512_x16", "avx2_x8", "portable"]
    assert [modules[n].BACKEND.name for n in modules] == list(modules)
    assert [modules[n].BACKEND.lanes for n in ("avx512_x16", "avx2_x8")] == [16, 8]
    for n in ("avx512_x16", "avx2_x8"):
        record = modules[n].BACKEND
        assert (modules[n].FEATURE, modules[n].SWITCH) == (record.feature, record.switch)
    usable = [n for n in ("avx512_x16", "avx2_x8")
              if _cpu.usable(modules[n].FEATURE, modules[n].SWITCH)] + ["portable"]
    assert backend_name() == usable[0]
    with _cpu.disabled("avx512"):
        assert backend_name() == ("avx2_x8" if "avx2_x8" in usable else "portable")
    with _cpu.disabled("avx512", "avx2"):
        assert backend_name() == "portable"


def test_the_environment_switches_choose_the_backend_in_a_new_process():
    """JITDIGEST_DISABLE, read at import, does the same (choosing compiles nothing)."""
    repo = str(pathlib.Path(__file__).resolve().parent.parent)
    seen = {}
    for value in ("", "avx512", "avx512,avx2"):
        env = dict(os.environ, JITDIGEST_DISABLE=value, PYTHONPATH=repo)
        # the child's switches exactly (whatever JITDIGEST_DISABLE this process started with)
        previous = _cpu.set_disabled(value.split(",") if value else ())
        try:
            expected = backend_name()
        finally:
            _cpu.set_disabled(previous)
        proc = subprocess.run([sys.executable, "-c", "from jitdigest.blake3 import backend_name; "
                               "print(backend_name())"], env=env, capture_output=True, text=True,
                              timeout=120, cwd=repo)
        assert proc.returncode == 0, proc.stderr
        seen[value] = proc.stdout.strip()
        assert seen[value] == expected, (value, seen)
    assert seen["avx512,avx2"] == "portable" and len(seen) == 3


def group_lengths():
    """Lengths at and around the edges of 2 to 5 chunks (a one-shot input's last group, in
    lanes from two chunks and a byte), of 1, 2, 3, 4 and 8 groups of 8 chunks (so of 16 and
    32 chunks too), and the 70 KiB the largest case reaches."""
    lengths = set()
    for chunks in (2, 3, 4, 5, 7, 8, 9, 15, 16, 17, 24, 31, 32, 33, 48, 64):
        for delta in (-1025, -1, 0, 1, 63, 1024, 1025):
            lengths.add(chunks * 1024 + delta)
    lengths.add(len(BIG))
    return sorted(lengths)


def test_group_edges_one_call(width):
    checked = 0
    for n in group_lengths():
        data = BIG[:n]
        for args in MODES:
            assert blake3(data, **args).digest(72) == ref.blake3(data, **args).digest(72), (
                width, n, args)
            # the default length: the one-shot builtin's path
            assert blake3(data, **args).digest() == ref.blake3(data, **args).digest(), (
                width, n, args)
            checked += 1
    assert checked == 3 * len(group_lengths()) > 0


def test_updates_that_split_groups(width):
    """The input in pieces: the first piece ending inside a chunk, at a chunk edge, at and
    inside a group, then steps that cross group edges at every phase."""
    checked = 0
    for n in (33 * 1024 + 5, 64 * 1024, len(BIG)):
        data = BIG[:n]
        for args in MODES:
            expected = ref.blake3(data, **args).digest(40)
            for first, step in ((1, 16 * 1024), (1000, 9 * 1024 + 3), (5 * 1024 + 7, 17 * 1024),
                                (8 * 1024, 8 * 1024), (16 * 1024, 16 * 1024 + 1),
                                (17 * 1024 - 1, 40 * 1024)):
                h = blake3(data[:first], **args)
                for i in range(first, n, step):
                    h.update(memoryview(data)[i:i + step])
                assert h.digest(40) == expected, (width, n, args, first, step)
                checked += 1
            # a copy taken between groups goes on by itself
            h = blake3(**args).update(data[:20 * 1024])
            c = h.copy().update(data[20 * 1024:])
            assert c.digest(40) == expected and h.update(data[20 * 1024:]).digest(40) == expected
            checked += 1
    assert checked == 3 * 3 * 7


def test_official_vectors(width, known_answers):
    """Every official case (up to 100 chunks: groups, their parents and the stack above),
    each mode, one call and streamed in three pieces."""
    key, context, cases = vectors.blake3_vectors()
    checked = 0
    for length, outputs in cases:
        data = vectors.blake3_input(length)
        for mode, args in (("hash", {}), ("keyed_hash", {"key": key}),
                           ("derive_key", {"derive_key_context": context})):
            expected = outputs[mode]
            assert blake3(data, **args).digest(len(expected)) == expected, (width, length, mode)
            a, b = length // 3, 2 * length // 3
            h = blake3(**args).update(data[:a]).update(bytearray(data[a:b])).update(data[b:])
            assert h.digest(len(expected)) == expected, (width, length, mode)
            checked += 1
    assert checked == 3 * len(cases)
    known_answers(vectors.label("blake3", "", width), checked)


def test_threads(width):
    """``max_threads`` 2 and AUTO: long inputs' whole groups hashed on threads (at least two
    groups per thread), one-shot and streamed from any position, the rest as usual."""
    data = BIG + bytes(reversed(BIG))        # 140 KiB: 8 groups of 16 chunks, 17 of 8
    checked = 0
    for n in (len(data), 100 * 1024 + 1, 64 * 1024 + 1, 40 * 1024):
        for args in MODES:
            expected = ref.blake3(data[:n], **args).digest(40)
            for threads in (2, blake3.AUTO):
                assert blake3(data[:n], max_threads=threads, **args).digest(40) == expected
                for first in (1000, 16 * 1024, 16 * 1024 + 64, 33 * 1024):
                    h = blake3(data[:first], max_threads=threads, **args)
                    h.update(bytearray(data[first:n]))
                    assert h.copy().digest(40) == expected, (width, n, args, threads, first)
                    checked += 1
    assert checked == 4 * 3 * 2 * 4


def test_threads_cut_subtrees_anywhere(width, monkeypatch):
    """``max_threads`` above 1 hashes whole subtrees a task each (``_update_threads``), on
    each lane width: with subtree caps from 2 lane groups to 256 KiB, 1 or 4 tasks a thread,
    inputs that start anywhere in the tree (a first update of any length: the part before the
    next subtree boundary goes as usual) and every mode, each digest equals the package's, and
    the parallel entry ran with every subtree size asked for."""
    from jitdigest.base import config as _config
    from jitdigest import blake3 as b3mod
    kernels = b3mod._kernels()
    if not kernels.group_len or not b3mod._parallel.usable():
        pytest.skip(f"{width}: no lane groups or no parallel regions: max_threads hashes on "
                    "one thread")
    group = kernels.group_len
    pers = []
    entry = kernels.parallel_cvs

    def counted(state, data, pos, ngroups, per, out):
        pers.append(per)
        return entry(state, data, pos, ngroups, per, out)
    monkeypatch.setattr(kernels, "parallel_cvs", counted, raising=False)
    rng = random.Random(0x5B7 + kernels.group_len)
    big = rng.randbytes(3 * 1024 * 1024)
    checked = 0
    for cap, tasks in ((2 * group, 1), (4 * group, 4), (8 * group, 1), (256 * 1024, 4),
                       (256 * 1024, 1)):
        monkeypatch.setattr(_config, "TREE_SUBTREE_BYTES", cap)
        monkeypatch.setattr(_config, "TREE_TASKS_PER_THREAD", tasks)
        for n in (4 * group, 9 * group + 1, 40 * group - 1, 3 * 1024 * 1024):
            for mode in MODES:
                args = mode
                first = rng.choice((0, 1, 64, 1024, group - 1, rng.randrange(n)))
                for threads in (2, 3):
                    h = blake3(**args, max_threads=threads)
                    h.update(big[:first])
                    h.update(big[first:n])
                    expected = ref.blake3(big[:n], **args).digest(40)
                    assert h.digest(40) == expected, (cap, tasks, n, mode, first, threads)
                    checked += 1
    assert checked == 5 * 4 * 3 * 2
    sizes = set(pers)
    assert {2, 4, 8} <= sizes and 256 * 1024 // group in sizes, sizes


def test_shared_pieces_are_compiled_once_for_every_caller():
    """``b3_update``, ``b3_output`` and ``_root_bytes`` are called from the object entries
    (``update``, ``final``, ``oneshot``: int64 lengths, ``bytes`` in, a bytearray out) and from
    the batch path (a literal 0, an array row out): ``typed_kernel`` types every such call
    alike, so each has one compiled form (left to its callers' types, two or three each)."""
    if not _cpu.jit_enabled():
        pytest.skip("compiled forms only")
    import importlib
    from numba.core import types
    words, block = types.Array(types.uint32, 1, "C"), types.Array(types.uint8, 1, "C")
    message, i64, zero = types.Array(types.uint8, 1, "C", readonly=True), types.int64, \
        types.literal(0)
    as_bytes, as_bytearray = types.Bytes(types.uint8, 1, "C", readonly=True), \
        types.ByteArray(types.uint8, 1, "C")
    u32 = types.uint32
    calls = {
        "b3_update": [(words, block, zero, message), (words, block, i64, message),
                      (words, block, zero, as_bytes)],
        "b3_output": [(words, block, i64, zero, zero, block),
                      (words, block, i64, i64, i64, as_bytearray)],
        "_root_bytes": [(words, words, u32, u32, zero, types.literal(32), block),
                        (words, words, u32, u32, i64, i64, as_bytearray)],
    }
    portable = importlib.import_module("jitdigest.kernels.blake3.portable")
    modules = [portable]
    if backend_name() != "portable":
        modules.append(importlib.import_module(f"jitdigest.kernels.blake3.{backend_name()}"))
    checked = 0
    for module in modules:
        for name, arg_lists in calls.items():
            function = getattr(module, name, None)
            if function is None or (module is not portable and name != "b3_update"):
                continue
            for args in arg_lists:
                function.get_call_template(args, {})
            assert len(function.signatures) == 1, (module.__name__, name, function.signatures)
            checked += 1
    assert checked == len(modules) + 2
