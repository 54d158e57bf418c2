#!/usr/bin/env python3
"""The twin of OpenJDK's JMH benchmark ``MessageDigests`` (test/micro/.../security/
MessageDigests.java): ``digest`` and ``getAndDigest`` for every algorithm and message length,
in four modes, as JMH reports them (ops/ms, Score +- 99.9% error, B/op).

Benchmarks (``data`` is a random ``bytes`` of the given length, made once per cell):

* ``digest`` -- Java: ``digester.digest(data)`` on one MessageDigest made in setup: update,
  finish, reset, with no object lookup or construction per op. hashlib objects cannot be reset,
  so the reusable engine here is a *prototype* made once with no data, and each op is
  ``p = proto.copy(); p.update(data); p.digest()`` -- the idiom hashlib itself recommends (and
  ``hmac`` uses) for hashing many messages from one starting state. ``copy()`` stands in for
  Java's ``reset()``: it costs one small object and a copy of the state, no name lookup and no
  dispatch. The streaming path is measured: ``update`` then ``final`` kernels.
* ``getAndDigest`` -- Java: ``MessageDigest.getInstance(name).digest(data)``. Here
  ``jitdigest.new(name, data).digest()`` (``hashlib.new`` in mode hashlib): name lookup,
  dispatch and a new object per op. For ``bytes`` data jitdigest takes its one-shot path (one
  kernel call from the initial state).

SHAKE128/SHAKE256 squeeze 32 and 64 bytes (their 256- and 512-bit defaults in ``sum``).

Modes (the ``kernel`` column says which kernel served each cell):

* ``interpreted`` -- a child process with ``NUMBA_DISABLE_JIT=1``: the kernel dispatch picks
  there (the same source as ``jit``) run by the Python interpreter; fewer iterations, and by
  default lengths up to 16384 only (``--interpreted-max-length``).
* ``jit`` -- the compiled software kernels: the best per-message backend that uses no CPU hash
  instruction, forced with ``with jitdigest.backend(...)`` (SHA-1/SHA-2 and MD5 ``portable``,
  SHA-3 and BLAKE2 ``unrolled``).
* ``intrinsic`` -- the hardware kernels where the CPU has them (``sha_ni``: sha1, sha224,
  sha256), forced the same way; other algorithms, and CPUs without them, have no cell in this
  mode.
* ``hashlib`` -- the standard library (OpenSSL / HACL* / _blake2), same patterns.

Each cell runs ``--warmup`` iterations, then ``--iterations`` measured ones of ``--time``
seconds each (JMH's throughput mode); Score is the mean of the iterations' ops/ms and Error
the half-width of its 99.9% confidence interval (Student's t, as JMH). Iterations are timed in
the hashing thread's CPU time by default (``--clock wall`` for wall time): the machine this was
written on is a shared 2-core VM. B/op is tracemalloc's high-water mark per op (Python
objects and numpy buffers; OpenSSL's own mallocs are invisible to it), measured separately
from the timing: see ``_timing.bytes_per_op``.

Outputs, in ``--out`` (default benchmarks/results/): a JMH-like text table (also printed),
JSON, CSV and a PNG chart of ops/ms by length per mode for ``--chart-algorithms``.

    python benchmarks/message_digests.py --quick               # about a minute
    python benchmarks/message_digests.py                       # everything, 10-15 minutes
    python benchmarks/message_digests.py --algorithms sha256 md5 --lengths 64 16384 \\
        --modes jit intrinsic hashlib --mib
"""
import argparse
import csv
import hashlib
import json
import os
import sys
import time

BENCH_DIR = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, BENCH_DIR)
from _timing import (ROOT, bytes_per_op, confidence_interval, machine, run_child,  # noqa: E402
                     throughput_iterations)

sys.path.insert(0, ROOT)

BENCHMARKS = ("digest", "getAndDigest")
MODES = ("interpreted", "jit", "intrinsic", "hashlib")
LENGTHS = [16, 64, 1024, 16384]
MIB = 1 << 20
QUICK_ALGORITHMS = ["md5", "sha1", "sha256"]
SHAKE_LENGTH = {"shake_128": 32, "shake_256": 64}
CHART_ALGORITHMS = ["sha256", "md5"]

# Per cell: warm-up iterations and their seconds, measured iterations and their seconds, ops
# measured for B/op; interp_*: the same for the interpreted mode (fewer, as its ops are slow).
PRESETS = {
    "default": {"warmup": 2, "warmup_time": 0.2, "iterations": 5, "time": 0.2, "alloc_ops": 100,
                "interp_warmup": 1, "interp_iterations": 3, "interp_time": 0.2,
                "interp_alloc_ops": 3},
    "quick": {"warmup": 1, "warmup_time": 0.05, "iterations": 5, "time": 0.05, "alloc_ops": 30,
              "interp_warmup": 1, "interp_iterations": 3, "interp_time": 0.05,
              "interp_alloc_ops": 1},
}

COLUMNS = ("benchmark", "algorithm", "length", "mode", "kernel", "cnt", "score", "error",
           "units", "bytes_per_op", "samples")


def all_algorithms():
    from jitdigest.base import algorithms as _algorithms
    return list(_algorithms.SPECS)


# --- the two benchmark bodies ---------------------------------------------------------------

def make_ops(new, name, data):
    """{"digest": fn, "getAndDigest": fn} for a constructor ``new(name, data=b"")``."""
    proto = new(name)
    n = SHAKE_LENGTH.get(name)
    if n is None:
        def digest():
            p = proto.copy()
            p.update(data)
            return p.digest()

        def get_and_digest():
            return new(name, data).digest()
    else:
        def digest():
            p = proto.copy()
            p.update(data)
            return p.digest(n)

        def get_and_digest():
            return new(name, data).digest(n)
    return {"digest": digest, "getAndDigest": get_and_digest}


def _reference(name, data):
    h = hashlib.new(name, data)
    return h.digest(SHAKE_LENGTH[name]) if name in SHAKE_LENGTH else h.digest()


def mode_backend(mode, name):
    """(can run, backend name) for one mode and algorithm in this process: the backend
    ``jit`` and ``intrinsic`` force with ``jitdigest.backend``; None for the modes that force
    none (``interpreted``: dispatch's choice; ``hashlib``)."""
    from _backends import hardware, jit_enabled, software
    if mode == "hashlib":
        return True, None
    if mode == "interpreted":
        return not jit_enabled(), None
    backend = software(name) if mode == "jit" else hardware(name)
    return backend is not None and jit_enabled(), backend


def kernel_label(mode, name, backend):
    """The ``kernel`` column: what served the cell."""
    if mode == "hashlib":
        return "openssl" if name not in ("blake2b", "blake2s") else "_blake2"
    if backend is None:
        from _backends import serving
        return serving(name)
    return backend


def serve(backend):
    """A context in which jitdigest uses ``backend`` (None: dispatch's own choice)."""
    import contextlib

    import jitdigest
    return contextlib.nullcontext() if backend is None else jitdigest.backend(backend)


def measure(cells, params, prefix="", log=None):
    """Time ``cells`` [(benchmark, algorithm, length, mode)] in this process, skipping those
    whose mode cannot run here (``interpreted`` runs only under NUMBA_DISABLE_JIT=1,
    ``intrinsic`` only where a hardware backend serves the algorithm). Returns result dicts
    (see COLUMNS). ``prefix`` "interp_" takes the iteration settings from the preset's interp_* keys."""
    p = {k: params.get(prefix + k, params[k])
         for k in ("warmup", "iterations", "time", "alloc_ops")}
    warmup_time = p["time"] if prefix else params["warmup_time"]
    results = []
    by_mode = {}
    for cell in cells:
        by_mode.setdefault(cell[3], []).append(cell)
    for mode, mode_cells in by_mode.items():
        if mode == "hashlib":
            new = hashlib.new
        else:
            import jitdigest
            new = jitdigest.new
        for bench, name, length, _ in mode_cells:
            runs, backend = mode_backend(mode, name)
            if not runs:
                continue
            data = os.urandom(length)
            with serve(backend):            # objects made and timed inside: they use it
                fn = make_ops(new, name, data)[bench]
                if fn() != _reference(name, data):           # also compiles / loads the cache
                    raise AssertionError(f"{mode} {name} {length}: wrong digest")
                samples = throughput_iterations(fn, p["iterations"], p["time"], p["warmup"],
                                                warmup_time, params["clock"])
                alloc = bytes_per_op(fn, p["alloc_ops"])
            samples = [s / 1e3 for s in samples]            # ops/s -> ops/ms
            score, error = confidence_interval(samples)
            row = dict(benchmark=bench, algorithm=name, length=length, mode=mode,
                       kernel=kernel_label(mode, name, backend), cnt=len(samples), score=score,
                       error=error, units="ops/ms", bytes_per_op=alloc, samples=samples)
            results.append(row)
            if log:
                log(row)
    return results


INTERPRETED_CHILD = """
import json, os, sys
sys.path.insert(0, os.path.join(os.environ["PYTHONPATH"].split(os.pathsep)[0], "benchmarks"))
import message_digests
job = json.loads(sys.argv[1])
cells = [tuple(c) for c in job["cells"]]
print(json.dumps(message_digests.measure(cells, job["params"], "interp_")))
"""


def progress(row):
    print(f"# {row['benchmark']:<12} {row['algorithm']:<10} {row['length']:>7} "
          f"{row['mode']:<11} {row['kernel']:<9} {row['score']:>12.3f} ± {row['error']:.3f} "
          f"ops/ms  {row['bytes_per_op']:.0f} B/op", file=sys.stderr, flush=True)


def run(algorithms=None, lengths=None, modes=MODES, benchmarks=BENCHMARKS, params=None,
        interpreted_max_length=16384, verbose=False):
    """Measure every (benchmark, algorithm, length, mode) cell; interpreted cells in one child
    process with NUMBA_DISABLE_JIT=1, the others here. Returns the result dicts, JMH's order
    (benchmark, algorithm, length, mode)."""
    params = dict(PRESETS["default"] if params is None else params)
    params.setdefault("clock", "cpu")
    algorithms = all_algorithms() if algorithms is None else list(algorithms)
    lengths = LENGTHS if lengths is None else list(lengths)
    log = progress if verbose else None
    cells = [(b, a, n, m) for m in modes for a in algorithms for n in lengths for b in benchmarks
             if m != "interpreted" or n <= interpreted_max_length]
    here = [c for c in cells if c[3] != "interpreted"]
    there = [c for c in cells if c[3] == "interpreted"]
    results = measure(here, params, "", log)
    if there:
        if verbose:
            print(f"# interpreted: {len(there)} cells in a child process with NUMBA_DISABLE_JIT=1",
                  file=sys.stderr, flush=True)
        results += run_child(INTERPRETED_CHILD,
                             [json.dumps({"cells": there, "params": params})],
                             env={"NUMBA_DISABLE_JIT": "1"}, timeout=3600)
    order = {m: i for i, m in enumerate(MODES)}
    alg_order = {a: i for i, a in enumerate(algorithms)}
    results.sort(key=lambda r: (BENCHMARKS.index(r["benchmark"]), alg_order[r["algorithm"]],
                                r["length"], order[r["mode"]]))
    return results


# --- output ---------------------------------------------------------------------------------

def _fmt(x):
    return "nan" if x != x else (f"{x:.3f}" if x < 1e5 else f"{x:.0f}")


def format_table(results):
    """JMH's text table, with the mode and kernel as parameters and B/op as a column."""
    header = ["Benchmark", "(algorithm)", "(length)", "(mode)", "(kernel)", "Mode", "Cnt",
              "Score", "", "Error", "Units", "B/op"]
    rows = [[f"MessageDigests.{r['benchmark']}", r["algorithm"], str(r["length"]), r["mode"],
             r["kernel"], "thrpt", str(r["cnt"]), _fmt(r["score"]), "±", _fmt(r["error"]),
             r["units"], f"{r['bytes_per_op']:.0f}"] for r in results]
    widths = [max(len(x) for x in col) for col in zip(header, *rows)]
    lines = []
    for row in [header] + rows:
        cells = [row[0].ljust(widths[0])] + [c.rjust(w) if i not in (3, 4) else c.ljust(w)
                                             for i, (c, w) in enumerate(zip(row[1:], widths[1:]),
                                                                        1)]
        lines.append("  ".join(cells).rstrip())
    return "\n".join(lines)


def plot(results, algorithms=None, benchmarks=BENCHMARKS, axes=None, title=None):
    """ops/ms by message length, one line per mode (error bars: the 99.9% interval), one panel
    per (benchmark, algorithm): ``algorithms`` that were measured, else the first two measured.
    Returns the matplotlib figure."""
    import matplotlib
    if axes is None and "matplotlib.pyplot" not in sys.modules:
        matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    present = list(dict.fromkeys(r["algorithm"] for r in results))
    algorithms = [a for a in (algorithms or present) if a in present] or present[:2]
    benchmarks = [b for b in benchmarks if any(r["benchmark"] == b for r in results)]
    if axes is None:
        fig, axes = plt.subplots(len(benchmarks), len(algorithms), squeeze=False,
                                 figsize=(4.2 * len(algorithms), 3.4 * len(benchmarks)))
    else:
        fig = axes.flat[0].figure
    styles = {"interpreted": ("o:", "C0"), "jit": ("s-", "C1"), "intrinsic": ("^-", "C2"),
              "hashlib": ("d--", "C3")}
    for i, bench in enumerate(benchmarks):
        for j, name in enumerate(algorithms):
            ax = axes[i][j]
            for mode in MODES:
                rows = [r for r in results if r["benchmark"] == bench
                        and r["algorithm"] == name and r["mode"] == mode]
                if not rows:
                    continue
                rows.sort(key=lambda r: r["length"])
                err = [0 if r["error"] != r["error"] else min(r["error"], 0.99 * r["score"])
                       for r in rows]
                ax.errorbar([r["length"] for r in rows], [r["score"] for r in rows], yerr=err,
                            fmt=styles[mode][0], color=styles[mode][1],
                            label=f"{mode} ({rows[0]['kernel']})",
                            capsize=2, markersize=4)
            ax.set_xscale("log", base=2)
            ax.set_yscale("log")
            ax.set_title(f"{bench}  {name}", fontsize=10)
            ax.set_xlabel("message length (bytes)")
            ax.set_ylabel("ops/ms")
            ax.grid(True, which="major", alpha=0.3)
            ax.legend(fontsize=7)
    if title:
        fig.suptitle(title, fontsize=9)
    fig.tight_layout()
    return fig


def write_outputs(results, outdir, stem, header, chart_algorithms=None):
    """Write STEM.txt (table), STEM.json, STEM.csv and STEM.png into ``outdir``; returns the
    paths."""
    os.makedirs(outdir, exist_ok=True)
    base = os.path.join(outdir, stem)
    table = format_table(results)
    with open(base + ".txt", "w") as f:
        f.write("\n".join(header) + "\n" + table + "\n")
    with open(base + ".json", "w") as f:
        json.dump({"header": header, "results": results}, f, indent=1)
    with open(base + ".csv", "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(COLUMNS)
        for r in results:
            w.writerow([r[c] if c != "samples" else " ".join(f"{s:.6g}" for s in r[c])
                        for c in COLUMNS])
    paths = [base + ext for ext in (".txt", ".json", ".csv")]
    try:
        fig = plot(results, chart_algorithms, title=header[0].lstrip("# "))
    except ImportError:
        print("# matplotlib is not installed: no chart", file=sys.stderr)
    else:
        fig.savefig(base + ".png", dpi=90)
        paths.append(base + ".png")
    return paths


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter,
                                 epilog="\n".join(__doc__.split("\n")[1:]))
    ap.add_argument("--algorithms", nargs="+", metavar="ALGO",
                    help="default: every algorithm (--quick: %s)" % " ".join(QUICK_ALGORITHMS))
    ap.add_argument("--lengths", nargs="+", type=int, metavar="BYTES",
                    help="default: %s" % " ".join(map(str, LENGTHS)))
    ap.add_argument("--mib", action="store_true", help="add 1 MiB messages")
    ap.add_argument("--modes", nargs="+", choices=MODES, default=list(MODES))
    ap.add_argument("--benchmarks", nargs="+", choices=BENCHMARKS, default=list(BENCHMARKS))
    ap.add_argument("--quick", action="store_true",
                    help="short iterations and %s only (about a minute)"
                    % ", ".join(QUICK_ALGORITHMS))
    ap.add_argument("--warmup", type=int, help="warm-up iterations per cell")
    ap.add_argument("--iterations", type=int, help="measured iterations per cell")
    ap.add_argument("--time", type=float,
                    help="seconds per iteration (warm-up and interpreted too)")
    ap.add_argument("--interpreted-iterations", type=int, help="measured iterations, interpreted")
    ap.add_argument("--interpreted-max-length", type=int, default=16384,
                    help="longest message timed interpreted (default 16384)")
    ap.add_argument("--clock", choices=("cpu", "wall"), default="cpu",
                    help="time iterations in thread CPU time (default) or wall time")
    ap.add_argument("--out", default=os.path.join(BENCH_DIR, "results"),
                    help="output folder (default benchmarks/results/)")
    ap.add_argument("--name", help="file name stem (default message_digests[-quick])")
    ap.add_argument("--chart-algorithms", nargs="+", default=CHART_ALGORITHMS, metavar="ALGO",
                    help="algorithms in the chart (default: sha256 md5, those measured)")
    ap.add_argument("-q", "--quiet", action="store_true", help="no progress lines")
    a = ap.parse_args(argv)

    params = dict(PRESETS["quick" if a.quick else "default"], clock=a.clock)
    for key, val in (("warmup", a.warmup), ("iterations", a.iterations), ("time", a.time),
                     ("interp_iterations", a.interpreted_iterations)):
        if val is not None:
            params[key] = val
    if a.time is not None:
        params["warmup_time"] = params["interp_time"] = a.time
    algorithms = a.algorithms or (QUICK_ALGORITHMS if a.quick else None)
    if algorithms:
        import jitdigest.base.algorithms as alg
        algorithms = [alg.lookup(n).name for n in algorithms]
    lengths = list(a.lengths or LENGTHS) + ([MIB] if a.mib else [])

    t0 = time.perf_counter()
    results = run(algorithms, lengths, a.modes, a.benchmarks, params,
                  a.interpreted_max_length, verbose=not a.quiet)
    took = time.perf_counter() - t0
    intrinsic = "intrinsic" in a.modes and not any(r["mode"] == "intrinsic" for r in results)
    header = [f"# {machine()}",
              f"# MessageDigests twin, {'--quick' if a.quick else 'full'} run in {took:.0f} s: "
              f"warm-up {params['warmup']} x {params['warmup_time']} s, "
              f"{params['iterations']} x {params['time']} s iterations "
              f"(interpreted: {params['interp_iterations']} x {params['interp_time']} s), "
              f"{a.clock} clock; Error = 99.9% CI half-width; B/op = tracemalloc high-water"]
    if intrinsic:
        header.append("# intrinsic: this CPU (or Numba's target) has no SHA extensions")
    stem = a.name or ("message_digests-quick" if a.quick else "message_digests")
    paths = write_outputs(results, a.out, stem, header, a.chart_algorithms)
    print("\n".join(header))
    print(format_table(results))
    print("# wrote " + ", ".join(os.path.relpath(p) for p in paths))


if __name__ == "__main__":
    main()
