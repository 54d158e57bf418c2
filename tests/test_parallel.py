"""hash_many's parallel path: a Numba prange loop (``kernels/_rows.over_chunks``, calling the
backend's kernel on each chunk) on whichever threading layer this machine has, safe from many
threads at once and across fork (``jitdigest/engine/parallel.py``). The scenarios run in child
processes (``parallel_child.py``): a layer is chosen once per process, and an abort or a hang
must fail a test, not the run."""
import hashlib
import json
import os
import subprocess
import sys

import numpy as np
import pytest

import jitdigest
from jitdigest.base import algorithms as _algorithms
from jitdigest.engine import dispatch as _dispatch

CHILD = os.path.join(os.path.dirname(__file__), "parallel_child.py")
LAYERS = ("tbb", "omp", "workqueue")


def _child(scenario, layer=None, timeout=600):
    env = dict(os.environ)
    env.pop("NUMBA_THREADING_LAYER", None)
    if layer is not None:
        env["NUMBA_THREADING_LAYER"] = layer
    env["NUMBA_NUM_THREADS"] = "2"
    proc = subprocess.run([sys.executable, CHILD, scenario], env=env, capture_output=True,
                          text=True, timeout=timeout)
    return proc


def _layer_loads(layer):
    """Can Numba load ``layer`` here (as jitdigest would: TBB from the tbb package)?"""
    code = ("import jitdigest.engine.parallel as p, numba; print(p.layer())")
    env = dict(os.environ, NUMBA_THREADING_LAYER=layer)
    proc = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True)
    return proc.returncode == 0 and proc.stdout.strip() == layer


@pytest.fixture(scope="module", params=LAYERS)
def layer(request):
    if not _layer_loads(request.param):
        pytest.skip(f"Numba cannot load the {request.param} threading layer on this machine")
    return request.param


def test_large_batch_runs_the_prange_entry():
    spec = _algorithms.lookup("md5")
    rows = np.random.default_rng(0).integers(0, 256, (100_000, 64), dtype=np.uint8)
    out = jitdigest.hash_many("md5", rows, threads=2)
    ks = _dispatch.batch_kernels_for(spec, len(rows))
    assert "grid_chunks" in ks.__dict__              # the parallel entry ran (compiled here)
    from jitdigest.kernels._rows import over_grid
    assert over_grid.targetoptions.get("parallel")     # a parallel=True function
    entry = ks.__dict__["grid_chunks"]               # driving this backend's kernel
    assert entry.args[0].kernel is ks.backend.module.hash_rows
    assert _dispatch.chunks_signature(_dispatch._signatures(spec.word)["hash_rows"]) \
        in over_grid.signatures
    import hashlib
    for i in range(0, len(rows), 997):
        assert bytes(out[i]) == hashlib.md5(rows[i].tobytes()).digest()


def test_one_prange_driver_serves_every_backend_by_address():
    """Two backends of a family, each through the same compiled ``over_chunks`` (its rows form
    compiled once), which calls the kernel it is given by address. Every row against hashlib,
    chunks of odd sizes, one empty."""
    import hashlib
    from jitdigest.kernels._rows import over_chunks
    for name in ("md5", "sha1", "sha256"):         # md5's lanes need AVX2; SHA-NI serves sha*
        spec = _algorithms.lookup(name)
        sets = [_dispatch.batch_kernels_for(spec, 1000)]
        sets += [ks for ks in _dispatch.batch_kernel_sets(spec)
                 if ks.backend.lanes == 1 and ks.name != sets[0].name][:1]
        if len(sets) == 2:
            break
    else:
        pytest.skip("no family has two usable batch kernels here")
    rng = np.random.default_rng(5)
    n = 300
    lengths = rng.integers(0, 300, n).astype(np.int64)
    starts = np.concatenate(([0], np.cumsum(lengths)[:-1])).astype(np.int64)
    values = rng.integers(0, 256, int(lengths.sum()), dtype=np.uint8)
    rows = rng.permutation(n).astype(np.int64)
    bounds = np.array([0, 7, 7, 150, n], np.int64)
    for a in (values, starts, lengths, rows, bounds):
        a.flags.writeable = False
    want = [hashlib.new(spec.name, values[s:s + k].tobytes()).digest()
            for s, k in zip(starts, lengths)]
    signature = _dispatch.chunks_signature(_dispatch._signatures(spec.word)["hash_rows"])
    compiled = []
    from jitdigest.batch import initial_state
    iv = initial_state(spec)
    for ks in sets:
        out = np.zeros((n, spec.digest_size), np.uint8)
        ks.hash_chunks(values, starts, lengths, rows, bounds, iv, out)
        assert [bytes(r) for r in out] == want, ks.name
        assert ks.hash_chunks.args[0].kernel is ks.backend.hash_rows
        compiled.append(len(over_chunks.overloads))
    # one compiled driver, the kernel its argument: right digests from both
    assert compiled[0] == compiled[1] and signature in over_chunks.overloads


def test_threads_maps_to_numba_and_is_restored():
    import numba
    before = numba.get_num_threads()
    rows = np.zeros((50_000, 64), np.uint8)
    jitdigest.hash_many("md5", rows, threads=1)
    jitdigest.hash_many("md5", rows, threads=2)
    assert numba.get_num_threads() == before
    numba.set_num_threads(1)
    try:
        assert jitdigest.batch.default_threads() == 1      # the user's setting is honoured
    finally:
        numba.set_num_threads(before)


def test_info_names_the_layer():
    """info() names the layer Numba itself says ran this process's parallel regions."""
    import numba
    rows = np.zeros((100_000, 64), np.uint8)
    assert bytes(jitdigest.hash_many("md5", rows, threads=2)[-1]) == \
        hashlib.md5(bytes(64)).digest()
    line = jitdigest.info()["parallel"]
    assert numba.threading_layer() in line
    assert "concurrent calls" in line


def test_eight_threads_and_a_single_message_thread(layer):
    proc = _child("threads", layer)
    assert proc.returncode == 0, proc.stderr[-2000:]
    got = json.loads(proc.stdout.strip().splitlines()[-1])
    assert got["layer"] == layer
    assert got["errors"] == []
    assert got["calls"] == 8 * 50
    assert got["wrong"] == 0
    assert got["singles"] > 0 and got["singles_wrong"] == 0
    assert layer in got["info"]


def test_fork_after_a_parallel_call(layer):
    proc = _child("fork-after", layer)
    assert proc.returncode == 0, proc.stderr[-2000:]
    got = json.loads(proc.stdout.strip().splitlines()[-1])
    assert got["layer"] == layer
    assert got["results"] == ["ok"] * 20


def test_fork_while_another_thread_compiles():
    proc = _child("fork-load")
    assert proc.returncode == 0, proc.stderr[-2000:]
    got = json.loads(proc.stdout.strip().splitlines()[-1])
    assert got["results"] == ["ok"] * 20
    assert got["forked_while_compiling"] >= 5, got    # the race was really run
