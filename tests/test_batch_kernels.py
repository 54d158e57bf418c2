"""The batch kernels (jitdigest.batch): hash_many over every input layout and every batch kernel
set against hashlib, the hash_rows and grid contracts themselves, SHAKE output past the
rate, and every backend's batch in interpreted mode in a child process."""
import os
import pathlib
import subprocess
import sys

import numpy as np
import pytest

import jitdigest
from jitdigest.base import algorithms as _algorithms
from jitdigest.engine import layout as _layout
from jitdigest import batch

from batch_cases import (ALL, LAYOUTS, SHAKE_LENGTH, batch_params, check_batch, expected,
                         layout, length_kw, ragged_messages, registered_batch_backends,
                         rows_widths)

TESTS = pathlib.Path(__file__).resolve().parent


@pytest.mark.parametrize("name", ALL)
def test_every_registered_backend_has_hash_rows(name):
    """Each backend the registry names (usable here or not) has its hash_rows entry, and every
    algorithm has a batch kernel: imports the modules, compiles nothing."""
    spec = _algorithms.SPECS[name]
    backends = registered_batch_backends(spec)
    assert backends
    for backend in backends:
        assert callable(backend.hash_rows), f"{backend} has no hash_rows"


# --- every algorithm x layout x batch kernel set ---------------------------------------------

@pytest.mark.parametrize("kind", LAYOUTS)
@pytest.mark.parametrize("name, kernels", batch_params(ALL))
def test_layouts_and_kernels_match_hashlib(name, kernels, kind):
    spec = _algorithms.SPECS[name]
    if kind == "rows":
        batches = [[bytes([(7 * i + w) & 0xFF]) * w for i in range(37)]
                   for w in rows_widths(spec)]
        batches.append([bytes(range(i, i + spec.block_size)) for i in range(2 * 16 + 5)])
    else:
        batches = [ragged_messages(spec)]
    for n in (1, 2, 17):
        batches.append(ragged_messages(spec, n=n, seed=n))
    for msgs in batches:
        if kind == "rows" and len({len(m) for m in msgs}) > 1:
            continue
        messages, offsets = layout(kind, msgs)
        with jitdigest.backend(kernels.name):
            got = jitdigest.hash_many(name, messages, offsets,
                                      length=length_kw(name).get("length"))
        check_batch(name, msgs, got)


@pytest.mark.parametrize("name, kernels", batch_params(ALL))
def test_hash_rows_contract(name, kernels):
    """hash_rows itself: only the listed rows, in any order, are written; each gets the first
    out.shape[1] bytes of its digest (or that many SHAKE bytes); nothing else is touched."""
    spec = _algorithms.SPECS[name]
    msgs = ragged_messages(spec, n=3 * 16 + 5, seed=3)
    lengths = np.array([len(m) for m in msgs], np.int64)
    starts = np.concatenate(([0], np.cumsum(lengths)[:-1])).astype(np.int64)
    values = np.frombuffer(b"".join(msgs), np.uint8)
    iv = batch.initial_state(spec)
    rng = np.random.default_rng(5)
    rows = rng.permutation(len(msgs))[:40].astype(np.int64)
    for a in (starts, lengths, rows):
        a.setflags(write=False)     # read-only, as hash_many passes them: the same compiled kernel
    if spec.digest_size:
        widths = [spec.digest_size, 16]
    else:
        widths = [SHAKE_LENGTH, 3 * spec.block_size + 7]
    for width in widths:
        guard = np.full((len(msgs) + 2, width), 0xA5, np.uint8)
        out = guard[1:-1]
        kernels.hash_rows(values, starts, lengths, rows, iv, out)
        for r in range(len(msgs)):
            want = expected(name, msgs[r], width)[:width] if r in set(rows.tolist()) \
                else b"\xa5" * width
            assert out[r].tobytes() == want, f"row {r} width {width}"
        assert (guard[0] == 0xA5).all() and (guard[-1] == 0xA5).all()


@pytest.mark.parametrize("name, kernels", batch_params(ALL))
def test_grid_chunks_contract(name, kernels):
    """The grid entry (rows of one width, hashed a window at a time: one window's index
    arrays, ``values`` and ``out`` sliced at each window's first row): only the rows its
    chunks cover, first..stop-1, are written, each with its digest; nothing else is touched."""
    spec = _algorithms.SPECS[name]
    width = spec.block_size + 3                    # one block plus a tail
    n, first, stop = 3 * 16 + 5, 7, 3 * 16 + 2
    grid = np.random.default_rng(6).integers(0, 256, (n, width), dtype=np.uint8)
    outlen = spec.digest_size or SHAKE_LENGTH
    guard = np.full((n + 2, outlen), 0xA5, np.uint8)
    out = guard[1:-1]
    starts, lengths, window = _layout.grid_window(width, 5)      # windows of 5 rows
    bounds = np.array([first, 20, 20, stop], np.int64)         # odd chunks, one empty
    kernels.grid_chunks(grid.reshape(-1), starts, lengths, window, bounds,
                        batch.initial_state(spec), out)
    for r in range(n):
        want = expected(name, grid[r].tobytes(), outlen) if first <= r < stop \
            else b"\xa5" * outlen
        assert out[r].tobytes() == want, f"row {r}"
    assert (guard[0] == 0xA5).all() and (guard[-1] == 0xA5).all()


@pytest.mark.parametrize("name, kernels", batch_params(["shake_128", "shake_256"]))
def test_shake_output_longer_than_the_rate(name, kernels):
    spec = _algorithms.SPECS[name]
    msgs = ragged_messages(spec, n=20)
    length = 3 * spec.block_size + 7
    with jitdigest.backend(kernels.name):
        got = jitdigest.hash_many(name, msgs, length=length)
    check_batch(name, msgs, got, length)


# --- interpreted mode -----------------------------------------------------------------------

INTERPRETED = r"""
import hashlib, uuid, numpy as np, jitdigest
from jitdigest.base import algorithms as _algorithms; from jitdigest.engine import dispatch as _dispatch; from jitdigest import batch
from jitdigest.kernels._jit import JIT_ENABLED
assert not JIT_ENABLED
failures, done = [], []
for name, spec in sorted(_algorithms.SPECS.items()):
    bs = spec.block_size
    lengths = [0, 1, bs - 9, bs - 1, bs, bs + 1, 2 * bs + 3, 5, 0, 2]
    msgs = [bytes((i * 7 + k) & 0xFF for k in range(n)) for i, n in enumerate(lengths)]
    kw = {"length": 50} if name.startswith("shake") else {}
    want = [hashlib.new(name, m).digest(*kw.values()) for m in msgs]
    for backend in jitdigest.backends(name):
        with jitdigest.backend(backend):
            got = jitdigest.hash_many(name, msgs, threads=2, **kw)
        if [bytes(r) for r in got] != want:
            failures.append(f"{name}/{backend}")
        done.append(f"{name}/{backend}")
    rows = np.frombuffer(bytes(range(256)) * 4, np.uint8)[:5 * (bs + 1)].reshape(5, bs + 1)
    got = jitdigest.hash_many(name, rows, **kw)
    if [bytes(r) for r in got] != [hashlib.new(name, r.tobytes()).digest(*kw.values())
                                   for r in rows]:
        failures.append(f"{name}/rows")
names = ["a", "\u00e9t\u00e9", "www.example.org"]
if [str(u) for u in jitdigest.uuid3_many(uuid.NAMESPACE_DNS, names, as_strings=True)] != \
        [str(uuid.uuid3(uuid.NAMESPACE_DNS, n)) for n in names]:
    failures.append("uuid3")
if [str(u) for u in jitdigest.uuid5_many(uuid.NAMESPACE_DNS, names, as_strings=True)] != \
        [str(uuid.uuid5(uuid.NAMESPACE_DNS, n)) for n in names]:
    failures.append("uuid5")
print("checked:", " ".join(done))
print("failures:", len(failures), failures)
"""


def test_interpreted_mode_small_batch():
    env = dict(os.environ, NUMBA_DISABLE_JIT="1")
    proc = subprocess.run([sys.executable, "-c", INTERPRETED], env=env, cwd=TESTS,
                          capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "failures: 0" in proc.stdout, proc.stdout
    for name in ALL:                               # every algorithm had a batch kernel
        assert f" {name}/" in proc.stdout, proc.stdout
