"""The notebooks in notebooks/: each runs top to bottom without an error (nbclient, kernel
"python3", which the test extra's ipykernel provides) with ``JITDIGEST_NOTEBOOK_QUICK=1``
shrinking its measurements; each is committed with its outputs; no markdown cell states a
speed figure or ratio (a conclusion that depends on a measurement is printed by the cell that
measured); and the helper-call SHA-256 kernel the interpreted-vs-JIT notebook compares gives
hashlib's digests."""
import hashlib
import json
import os
import pathlib
import re
import sys
import time

import numpy as np
import pytest

REPO = pathlib.Path(__file__).resolve().parent.parent
NOTEBOOKS = sorted((REPO / "notebooks").glob("*.ipynb"))
EXPECTED = {"interpreted_vs_jit", "bulk_hashing", "file_fingerprinting"}

try:
    import nbclient
    import nbformat
except ImportError:                                   # pragma: no cover - depends on the extras
    nbclient = nbformat = None

needs_nbclient = pytest.mark.skipif(
    nbclient is None, reason="nbclient/nbformat not installed: pip install -e '.[test]'")

# A number with a unit of time or speed, or a ratio: what a markdown cell must not state, since
# the run beside it may disagree. Years, section numbers and sizes ("64 bytes") do not match.
FIGURE = re.compile(r"(?<![\w.])\d[\d.,]*\s?(?:x|×|%|ns|µs|us|ms|s|seconds|minutes|GB/s|MB/s"
                    r"|KiB/s|ops/ms)(?!\w)", re.IGNORECASE)


def stated_figures(cells):
    """(cell index, figure) for every match of FIGURE in the markdown cells of ``cells``."""
    return [(i, m.group(0)) for i, c in enumerate(cells) if c["cell_type"] == "markdown"
            for m in FIGURE.finditer("".join(c["source"]))]


def test_figure_pattern():
    for text in ("about 10x", "2-3x", "4-5x faster", "100 µs", "18.5 to 11.0 minutes", "3 ×",
                 "1.1-1.8x", "noise of 10%", "3.18 GB/s", "200 MB/s", "750 ops/ms", "42 s",
                 "2 seconds", "8 ms", "5 us", "40 ns", "12 KiB/s", "2.5X"):
        assert FIGURE.search(text), text
    for text in ("November 2020", "## 3. Keccak", "64 bytes", "16 KiB", "sha256sum", "x86_64",
                 "avx512_x16", "sha_ni_x2", "lanes16", "Python 3.11", "2 cores", "JDK 16",
                 "10^12 rows", "8 lanes of 32 bits", "Keccak-f[1600]", "2 sizes"):
        assert not FIGURE.search(text), text


def test_every_notebook_is_here():
    assert EXPECTED <= {p.stem for p in NOTEBOOKS}


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.stem)
def test_notebook_is_committed_with_outputs(path):
    """Browsing the repository shows results: every code cell ran, none failed, charts exist."""
    nb = json.loads(path.read_text(encoding="utf-8"))
    code = [c for c in nb["cells"] if c["cell_type"] == "code"]
    assert code and all(c.get("execution_count") for c in code), "not executed top to bottom"
    outputs = [o for c in code for o in c.get("outputs", [])]
    assert not [o for o in outputs if o["output_type"] == "error"]
    assert any("image/png" in o.get("data", {}) for o in outputs), "no chart in the outputs"
    counts = [c["execution_count"] for c in code]
    assert counts == list(range(1, len(code) + 1)), "cells were not run in order, once each"
    assert stated_figures(nb["cells"]) == []
    first = "".join("".join(o.get("text", "")) for o in code[0].get("outputs", []))
    assert re.search(r"quick: (True|False)", first), "the first cell does not say if QUICK was on"


@needs_nbclient
@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.stem)
def test_notebook_runs(path, monkeypatch):
    monkeypatch.setenv("JITDIGEST_NOTEBOOK_QUICK", "1")
    nb = nbformat.read(str(path), as_version=4)
    client = nbclient.NotebookClient(nb, timeout=300, kernel_name="python3",
                                     resources={"metadata": {"path": str(path.parent)}})
    t0 = time.perf_counter()
    client.execute()                       # raises CellExecutionError at the first failing cell
    elapsed = time.perf_counter() - t0
    errors = [o for c in nb.cells if c.cell_type == "code" for o in c.get("outputs", [])
              if o.output_type == "error"]
    assert not errors
    assert stated_figures(nb.cells) == [], "a markdown cell states a figure the run did not print"
    print(f"{path.name}: {elapsed:.1f} s")


@pytest.mark.parametrize("name", ["sha256", "sha224"])
def test_helpercall_kernel_matches_hashlib(name):
    """The notebooks' helper-call foil gives hashlib's digests through its entry points."""
    folder = str(REPO / "notebooks")
    sys.path.insert(0, folder)
    try:
        import sha256_helpercall as kernels
    finally:
        sys.path.remove(folder)
    from jitdigest.base import algorithms as _algorithms
    spec = _algorithms.SPECS[name]
    for n in (0, 1, 55, 56, 63, 64, 65, 119, 1000):
        data = os.urandom(n)
        want = hashlib.new(name, data).digest()
        out = bytearray(spec.digest_size)
        kernels.oneshot(spec.initial_state, data, out)
        assert bytes(out) == want
        state, buf = spec.initial_state.copy(), np.zeros(spec.block_size, np.uint8)
        buflen = kernels.update(state, buf, 0, np.frombuffer(data[:5], np.uint8))
        buflen = kernels.update(state, buf, buflen, np.frombuffer(data[5:], np.uint8))
        kernels.final(state, buf, buflen, n, out)
        assert bytes(out) == want
