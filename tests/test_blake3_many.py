"""BLAKE3 in the batch engine and the registry: ``hash_many("blake3", ...)`` against the
``blake3`` package (``blake3.blake3(m, key=..., derive_key_context=...).digest(length)``) on
mixed lengths around the block and chunk edges, in every input layout and mode, with extendable
output, ``out=`` and ``threads=2``, on the kernels this CPU picks (the other lane widths:
tests/test_blake3_many_widths.py, a file of its own so that a second worker compiles them); the
official vectors through ``hash_many``; the errors; ``jitdigest.new("blake3")``, ``backends``,
``info`` and ``warmup``'s plan."""
import hashlib
import random

import numpy as np
import pytest

import jitdigest
import vectors
from conftest import outcome
from jitdigest.base import algorithms as _algorithms
from jitdigest import _warmup

ref = pytest.importorskip("blake3")       # the package: in the test extras

KEY = bytes(range(100, 132))
CONTEXT = "jitdigest tests 2026-12-04 hash_many"
MODES = ({}, {"key": KEY}, {"derive_key_context": CONTEXT})
EDGES = (0, 1, 63, 64, 65, 1023, 1024, 1025, 2048, 2049)


def _messages(count, seed, top=3000):
    """The edge lengths, then ``count`` random lengths in 0..``top`` (most of them a block or
    chunk edge plus or minus a little), of random bytes."""
    rnd = random.Random(seed)
    lengths = list(EDGES)
    for _ in range(count):
        lengths.append(rnd.choice((rnd.randrange(top + 1),
                                   rnd.choice((64, 1024)) * rnd.randrange(1, 3) + rnd.randrange(-2, 3))))
    return [rnd.randbytes(n) for n in lengths]


MESSAGES = _messages(150, 1)


def expected(messages, length=32, **mode):
    return [ref.blake3(m, **mode).digest(length) for m in messages]


def rows(out):
    return [bytes(r) for r in out]


def layouts(messages):
    """(name, args) of every layout ``hash_many`` takes, for the same messages."""
    lengths = np.array([len(m) for m in messages], np.int64)
    offsets = np.concatenate(([0], np.cumsum(lengths)))
    joined = b"".join(messages)
    out = [("list", (list(messages),)), ("tuple", (tuple(messages),)),
           ("bytearrays", ([bytearray(m) for m in messages],)),
           ("values+offsets", (np.frombuffer(joined, np.uint8), offsets)),
           ("bytes+int32 offsets", (joined, offsets.astype(np.int32)))]
    try:
        import pyarrow as pa
    except ImportError:
        return out
    return out + [("arrow binary", (pa.array(messages, pa.binary()),)),
                  ("arrow large_binary chunked",
                   (pa.chunked_array([messages[:40], messages[40:]], pa.large_binary()),))]


def test_every_layout_and_mode():
    checked = 0
    for mode in MODES:
        want = expected(MESSAGES, **mode)
        for name, args in layouts(MESSAGES):
            assert rows(jitdigest.hash_many("blake3", *args, **mode)) == want, (name, mode)
            checked += len(want)
    assert checked == 3 * len(layouts(MESSAGES)) * len(MESSAGES)


@pytest.mark.parametrize("width", [0, 1, 63, 64, 65, 1023, 1024, 1025, 2049])
def test_grid_of_equal_rows(width):
    rnd = random.Random(width)
    grid = np.frombuffer(rnd.randbytes(40 * width), np.uint8).reshape(40, width)
    messages = [bytes(r) for r in grid]
    checked = 0
    for mode in MODES:
        assert rows(jitdigest.hash_many("blake3", grid, **mode)) == expected(messages, **mode)
        checked += len(messages)
    assert checked == 120


def test_extendable_output_lengths():
    checked = 0
    for length in (0, 1, 31, 32, 33, 63, 64, 65, 131, 300):
        for mode in MODES[:2]:
            out = jitdigest.hash_many("blake3", MESSAGES, length=length, **mode)
            assert out.shape == (len(MESSAGES), length)
            assert rows(out) == expected(MESSAGES, length, **mode), (length, mode)
            checked += len(MESSAGES)
        grid = np.arange(33 * 96, dtype=np.uint32).astype(np.uint8).reshape(33, 96)
        assert rows(jitdigest.hash_many("blake3", grid, length=length)) == \
            expected([bytes(r) for r in grid], length)
        checked += 33
    assert checked == 10 * (2 * len(MESSAGES) + 33)


def test_out_and_threads():
    """``out=`` is written and returned (also when it overlaps the input); two threads (enough
    blocks for a parallel region) give the same rows."""
    out = np.zeros((len(MESSAGES), 40), np.uint8)
    assert jitdigest.hash_many("blake3", MESSAGES, key=KEY, length=40, out=out) is out
    assert rows(out) == expected(MESSAGES, 40, key=KEY)
    grid = np.frombuffer(random.Random(5).randbytes(64 * 200), np.uint8).reshape(200, 64).copy()
    want = expected([bytes(r) for r in grid])
    over = grid.reshape(-1)[:200 * 32].reshape(200, 32)       # the input's first half
    assert jitdigest.hash_many("blake3", grid, out=over) is over
    assert rows(over) == want
    many = _messages(6000, 7, top=300)         # ~ 9000 blocks: two threads of chunks
    checked = 0
    for mode in MODES:
        assert rows(jitdigest.hash_many("blake3", many, threads=2, **mode)) == \
            expected(many, **mode)
        checked += len(many)
    assert checked == 3 * len(many)


def test_official_vectors(known_answers):
    """Every case of the official vectors, in the three modes, through one ``hash_many`` call
    each: the full extended output and the default 32 bytes."""
    key, context, cases = vectors.blake3_vectors()
    inputs = [vectors.blake3_input(length) for length, _ in cases]
    checked = 0
    for mode, args in (("hash", {}), ("keyed_hash", {"key": key}),
                       ("derive_key", {"derive_key_context": context})):
        wanted = [outputs[mode] for _, outputs in cases]
        size = len(wanted[0])
        assert all(len(w) == size for w in wanted)
        assert rows(jitdigest.hash_many("blake3", inputs, length=size, **args)) == wanted
        assert rows(jitdigest.hash_many("blake3", inputs, **args)) == [w[:32] for w in wanted]
        checked += len(cases)
    assert checked == 3 * len(cases) > 0
    known_answers(vectors.label("blake3", "hash_many"), checked)


MODE_ERRORS = [
    ("short key", {"key": b"x" * 31}),
    ("long key", {"key": b"x" * 33}),
    ("str key", {"key": "x" * 32}),
    ("int key", {"key": 5}),
    ("key and context", {"key": b"x" * 32, "derive_key_context": "c"}),
    ("bad key and context", {"key": b"x" * 31, "derive_key_context": "c"}),
    ("bytes context", {"derive_key_context": b"c"}),
    ("surrogate context", {"derive_key_context": "\ud800"}),
]


@pytest.mark.parametrize("label, mode", MODE_ERRORS, ids=[e[0] for e in MODE_ERRORS])
def test_mode_errors_match_the_package(label, mode):
    mine = outcome(lambda: jitdigest.hash_many("blake3", [b"abc"], **mode))
    theirs = outcome(lambda: ref.blake3(b"abc", **mode))
    assert theirs[0] != "ok" and mine == theirs


def test_other_errors():
    """Output lengths fail as the package's digest(length) does; key= and derive_key_context=
    are refused for the hashlib algorithms; the batch engine's checks hold for BLAKE3 too."""
    checked = 0
    for length in (-1, 1.0, 2 ** 64, 2 ** 63):
        mine = outcome(lambda: jitdigest.hash_many("blake3", [b"abc"], length=length))
        assert mine == outcome(lambda: ref.blake3(b"abc").digest(length)) and mine[0] != "ok"
        checked += 1
    for name in ("sha256", "blake2b"):
        for mode in MODES[1:]:
            with pytest.raises(TypeError, match="blake3"):
                jitdigest.hash_many(name, [b"abc"], **mode)
            checked += 1
    with pytest.raises(ValueError, match="past the end"):
        jitdigest.hash_many("blake3", np.zeros(10, np.uint8), [0, 5, 11])
    with pytest.raises(ValueError, match="non-decreasing"):
        jitdigest.hash_many("blake3", np.zeros(10, np.uint8), [0, 5, 4])
    with pytest.raises(ValueError, match="shape"):
        jitdigest.hash_many("blake3", [b"a", b"b"], out=np.zeros((2, 31), np.uint8))
    with pytest.raises(TypeError, match="Strings"):
        jitdigest.hash_many("blake3", ["abc"])
    with pytest.raises(ValueError, match="unsupported hash type"):
        jitdigest.hash_many("BLAKE3", [b"abc"])
    assert checked == 8


def test_new_gives_the_blake3_class():
    from jitdigest.blake3 import blake3
    h = jitdigest.new("blake3", b"abc", key=KEY, max_threads=2, usedforsecurity=False)
    assert type(h) is blake3
    assert h.digest(50) == ref.blake3(b"abc", key=KEY).digest(50)
    assert jitdigest.new("blake3").hexdigest() == ref.blake3().hexdigest()
    assert jitdigest.new("blake3", data=b"x", derive_key_context=CONTEXT).digest() == \
        ref.blake3(b"x", derive_key_context=CONTEXT).digest()
    with pytest.raises(TypeError):
        jitdigest.new("blake3", b"", bogus=1)
    with pytest.raises(ValueError):
        jitdigest.new("blake3", key=b"short")
    import io
    assert jitdigest.file_digest(io.BytesIO(b"abc" * 500), "blake3").digest() == \
        ref.blake3(b"abc" * 500).digest()


def test_not_a_hashlib_name():
    """hashlib has no "blake3": it stays out of algorithms_available (and _guaranteed), which
    hashlib-compatible callers go over, and out of the hashlib table."""
    assert "blake3" not in jitdigest.algorithms_available
    assert "blake3" not in jitdigest.algorithms_guaranteed
    assert "blake3" not in _algorithms.SPECS
    assert jitdigest.algorithms_guaranteed == hashlib.algorithms_guaranteed
    with pytest.raises(ValueError):
        hashlib.new("blake3")
    with pytest.raises(ValueError):
        _algorithms.lookup("blake3")


def test_backends_info_and_warmup_plan():
    names = jitdigest.backends("blake3")
    assert names[-1] == "portable" and len(names) == len(set(names))
    data = jitdigest.info()
    assert data["kernels"]["blake3"] == jitdigest.blake3.backend_name() == names[0]
    assert data["batch_kernels"]["blake3"] == names[0]
    tasks, chosen = _warmup.plan(["md5"], blake3=True)
    blake3_tasks = [t for t in tasks if t[0] == "blake3"]
    assert chosen["blake3"] == (names[0], names[0])
    entries = {entry for t in blake3_tasks for entry in t[3]}
    assert {"hash_rows", "hash_chunks", "grid_chunks", "update", "final", "oneshot"} <= entries
    assert not [t for t in _warmup.plan(["md5"])[0] if t[0] == "blake3"]
    assert _warmup.plan(["md5", "blake3"]) == (tasks, chosen)


def test_warmup_and_tune_take_the_name_blake3():
    """``jitdigest warmup blake3`` compiles BLAKE3's kernels (and tunes nothing for it); any
    other name is still checked up front."""
    import argparse
    from jitdigest import cli
    names = cli._names
    assert names(argparse.Namespace(algorithms=["blake3", "SHA256"])) == ["blake3", "sha256"]
    assert names(argparse.Namespace(algorithms=["md5"])) == ["md5"]
    assert names(argparse.Namespace(algorithms=[])) == sorted(_algorithms.TABLE)
    with pytest.raises(ValueError, match="unsupported hash type"):
        names(argparse.Namespace(algorithms=["blake3", "nosuch"]))
