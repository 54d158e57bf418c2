"""What the notebooks share: paths, the quick switch, and measurements of kernel forms built on
the benchmarks' timing helper (``benchmarks/_timing.py``; nothing here times anything itself).

Importing this module puts the repository root and ``benchmarks/`` on ``sys.path``, so a
notebook runs from a checkout without installing jitdigest.

``JITDIGEST_NOTEBOOK_QUICK=1`` (read by each notebook's first cell through ``QUICK``) shrinks
every measurement so that ``tests/test_notebooks.py`` runs all notebooks quickly.

Re-execute notebooks in place, keeping their outputs (what is committed)::

    python notebooks/_helpers.py [--quick] notebooks/*.ipynb

(each notebook's first code cell prints whether the quick setting was on).
"""
import json
import os
import sys
import tempfile

NOTEBOOKS = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(NOTEBOOKS)
BENCHMARKS = os.path.join(ROOT, "benchmarks")
for _p in (BENCHMARKS, ROOT):
    if _p not in sys.path:
        sys.path.insert(0, _p)

from _timing import machine, run_child, take_turns  # noqa: E402

QUICK = os.environ.get("JITDIGEST_NOTEBOOK_QUICK", "").strip() not in ("", "0")

# Kernel forms the notebooks compare: label -> (algorithm, kernel module). Each module is a
# backend of jitdigest (``jitdigest/kernels/<family>/<backend>.py``) or, for the helper-call
# foil, ``notebooks/sha256_helpercall.py``; all export the same entry points.
FORMS = {
    "sha256 streamlined": ("sha256", "jitdigest.kernels.sha256.portable"),
    "sha256 helper-call": ("sha256", "sha256_helpercall"),
    "keccak loop": ("sha3_256", "jitdigest.kernels.keccak.portable"),
    "keccak unrolled": ("sha3_256", "jitdigest.kernels.keccak.unrolled"),
}


# Backends are named by tier and, for batch kernels, by messages side by side: ``avx512_x16``,
# ``avx2_x8``, ``sha_ni_x2`` (``jitdigest/kernels/_contract.py``). Charts key on the tier.
TIER_ORDER = ("avx512", "avx2", "sha_ni", "armv8", "unrolled", "portable")
TIER_COLOURS = {"avx512": "C0", "avx2": "C9", "sha_ni": "C3", "armv8": "C1", "unrolled": "C2",
                "portable": "C7"}


def tier(backend):
    """The tier prefix of a backend name: ``avx512_x16`` -> ``avx512``, ``sha_ni_x2`` ->
    ``sha_ni``, ``armv8_sha2`` -> ``armv8``, ``portable`` -> ``portable``."""
    import re
    base = re.sub(r"_x\d+$", "", backend)
    return next((t for t in TIER_ORDER if base == t or base.startswith(t + "_")), base)


def lanes(backend):
    """Messages a backend hashes side by side: N of a ``_x<N>`` name, else 1."""
    import re
    m = re.search(r"_x(\d+)$", backend)
    return int(m.group(1)) if m else 1


def tier_key(backend):
    """Sort key: tiers in TIER_ORDER, then the wider batch kernel first."""
    t = tier(backend)
    return (TIER_ORDER.index(t) if t in TIER_ORDER else len(TIER_ORDER), -lanes(backend), backend)


def word(ratio, band=0.1):
    """How a speed ratio (this over that) reads: "faster", "level with" (within ``band`` either
    way) or "slower than"; the notebooks' conclusions take their words from the measurement."""
    if ratio > 1 + band:
        return "faster than"
    if ratio < 1 / (1 + band):
        return "slower than"
    return "level with"


def kernels(label):
    """The entries (``update``/``final``/``oneshot``) of a form in FORMS: a jitdigest backend's
    record (``BACKEND``), or the foil module itself."""
    import importlib
    if NOTEBOOKS not in sys.path:
        sys.path.insert(0, NOTEBOOKS)
    module = importlib.import_module(FORMS[label][1])
    return getattr(module, "BACKEND", module)


def check_form(label, sizes=(0, 3, 64, 100, 1000)):
    """Assert that a form's entry points give hashlib's digests (one-shot and streaming)."""
    import hashlib

    import numpy as np

    from jitdigest.base import algorithms as _algorithms
    algorithm = FORMS[label][0]
    spec = _algorithms.SPECS[algorithm]
    module = kernels(label)
    for n in sizes:
        data = bytes(range(256)) * (n // 256) + bytes(range(n % 256))
        expected = hashlib.new(algorithm, data).digest()
        out = bytearray(spec.digest_size)
        module.oneshot(spec.initial_state, data, out)
        assert bytes(out) == expected
        state, buf = spec.initial_state.copy(), np.zeros(spec.block_size, np.uint8)
        buflen = module.update(state, buf, 0, np.frombuffer(data, np.uint8))
        module.final(state, buf, buflen, n, out)
        assert bytes(out) == expected


def update_speeds(labels, nbytes, rounds=3, min_time=0.05, repeat=3):
    """MB/s (10**6 bytes/s) of each form's ``update`` entry on ``nbytes`` bytes (whole blocks),
    in this process's mode, the forms taking turns (``_timing.take_turns``)."""
    import numpy as np

    from jitdigest.base import algorithms as _algorithms
    fns = {}
    for label in labels:
        check_form(label, sizes=(0, 100))           # correct, and compiled (or cache loaded)
        spec = _algorithms.SPECS[FORMS[label][0]]
        n = max(spec.block_size, nbytes // spec.block_size * spec.block_size)
        data = np.frombuffer(bytes(range(256)) * (n // 256 + 1), np.uint8)[:n].copy()
        data.setflags(write=False)
        state = spec.initial_state.copy()
        buf = np.zeros(spec.block_size, np.uint8)
        update = kernels(label).update
        fns[label] = (lambda update=update, state=state, buf=buf, data=data:
                      update(state, buf, 0, data))
        fns[label].nbytes = n
    seconds = take_turns(fns, rounds, min_time, repeat)
    return {label: fns[label].nbytes / seconds[label] / 1e6 for label in labels}


_SPEEDS_CHILD = """
import json, os, sys
sys.path.insert(0, os.path.join(os.environ["PYTHONPATH"].split(os.pathsep)[0], "notebooks"))
import _helpers
job = json.loads(sys.argv[1])
print(json.dumps(_helpers.update_speeds(job["labels"], job["nbytes"], job["rounds"],
                                        job["min_time"], job["repeat"])))
"""


def interpreted_update_speeds(labels, nbytes, rounds=3, min_time=0.05, repeat=3):
    """``update_speeds`` in a child process with ``NUMBA_DISABLE_JIT=1`` (interpreted)."""
    job = dict(labels=list(labels), nbytes=nbytes, rounds=rounds, min_time=min_time,
               repeat=repeat)
    return run_child(_SPEEDS_CHILD, [json.dumps(job)], env={"NUMBA_DISABLE_JIT": "1"})


_COMPILE_CHILD = """
import json, sys, time
t0 = time.perf_counter()
import numba
numba.njit(lambda x: x + 1)(1)          # Numba's own first-use cost, not the kernel's
t1 = time.perf_counter()
import jitdigest
algorithm, backend_name, entries = sys.argv[1], sys.argv[2], sys.argv[3].split(",")
t2 = time.perf_counter()
with jitdigest.backend(backend_name):         # each entry's first use compiles (or loads) it
    h = jitdigest.new(algorithm)
    if "update" in entries:
        h.update(bytearray(1000))
    if "final" in entries:
        h.digest()
    if "oneshot" in entries:
        jitdigest.new(algorithm, b"abc").digest()
t3 = time.perf_counter()
print(json.dumps({"numba_start_s": t1 - t0, "import_s": t2 - t1, "kernels_s": t3 - t2}))
"""


def compile_cost(algorithm="sha256", backend="portable", entries=("update", "final", "oneshot"),
                 warm_runs=2):
    """Cold compile against warm cache load of one backend's entry points, each in a fresh
    child process sharing one new, empty kernel cache folder: the first child compiles and
    writes the cache, the next ``warm_runs`` load it. Returns {"cold": {...}, "warm": [{...}]},
    each with numba_start_s (Numba's own first compile of a trivial function), import_s and
    kernels_s (compiling or loading the entries)."""
    with tempfile.TemporaryDirectory(prefix="jitdigest-notebook-cache-") as cache:
        env = {"JITDIGEST_CACHE_DIR": cache, "NUMBA_CACHE_DIR": cache, "NUMBA_DISABLE_JIT": "0"}
        args = [algorithm, backend, ",".join(entries)]
        cold = run_child(_COMPILE_CHILD, args, env=env)
        warm = [run_child(_COMPILE_CHILD, args, env=env) for _ in range(warm_runs)]
    return {"cold": cold, "warm": warm}


def execute(path, timeout=600, quick=False):
    """Run a notebook top to bottom with nbclient (kernel python3, working directory the
    notebook's folder) and write it back with its outputs."""
    import nbclient
    import nbformat
    nb = nbformat.read(path, as_version=4)
    old = os.environ.get("JITDIGEST_NOTEBOOK_QUICK")
    os.environ["JITDIGEST_NOTEBOOK_QUICK"] = "1" if quick else "0"
    try:
        nbclient.NotebookClient(nb, timeout=timeout, kernel_name="python3",
                                resources={"metadata": {"path": os.path.dirname(
                                    os.path.abspath(path))}}).execute()
    finally:
        if old is None:
            os.environ.pop("JITDIGEST_NOTEBOOK_QUICK")
        else:
            os.environ["JITDIGEST_NOTEBOOK_QUICK"] = old
    nbformat.write(nb, path)


if __name__ == "__main__":
    import time
    quick = "--quick" in sys.argv[1:]
    for notebook in [a for a in sys.argv[1:] if a != "--quick"]:
        t0 = time.perf_counter()
        execute(notebook, quick=quick)
        print(f"{notebook}: {time.perf_counter() - t0:.0f} s")
