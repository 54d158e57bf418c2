"""hash_many's parallel path: a Numba prange loop (each backend's ``hash_chunks`` entry) on
whichever threading layer this machine has, safe from many threads at once and across fork
(``jitdigest/_parallel.py``). The scenarios run in child processes (``parallel_child.py``):
a layer is chosen once per process, and an abort or a hang must fail a test, not the run."""
import json
import os
import subprocess
import sys

import numpy as np
import pytest

import jitdigest
from jitdigest import _algorithms, _dispatch, _parallel

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
    code = ("import jitdigest._parallel as p, numba; print(p.layer())")
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
    dispatcher = ks.backend.module.hash_chunks
    assert dispatcher.targetoptions.get("parallel")  # and it is a parallel=True function
    import hashlib
    for i in range(0, len(rows), 997):
        assert bytes(out[i]) == hashlib.md5(rows[i].tobytes()).digest()


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
    line = jitdigest.info()["parallel"]
    assert _parallel.layer() in line
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
