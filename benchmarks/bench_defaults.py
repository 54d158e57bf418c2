#!/usr/bin/env python3
"""Batch speed without ``jitdigest tune`` against after it, in one run.

Kernel caches in a temporary folder: ``fresh`` starts empty (no calibration table: what a
user who never ran ``tune`` gets, the automatic measurement included, ``engine/autocal.py``);
``tuned`` is a copy of it after its first use, then ``jitdigest tune`` on the algorithms;
``auto`` is a copy of ``tuned`` without its table (every kernel a tune compiled is cached, so
the automatic measurement compares them all: its most expensive case). One process uses
``fresh``, then one ``auto``, as a first script would (each algorithm's first batch of 2-D
rows, 100k of 64 B and 8k of 1 KiB: compiles, the seconds spent measuring automatically,
and the kernel dispatch chose), and one ``tuned``. Then one process times the kernels the
three chose, forced by name, ``hash_many(name, rows, out=out, threads=1)`` in alternating
turns (on a shared machine, separate processes timed one after another differed by more than
the kernels do): the speed ratios fresh/tuned and auto/tuned (>= 0.9 is the goal; the median
of the ratios of neighbouring turns), with the kernel each cache chose and the CPU named.

``--cost`` instead times what the automatic measurement adds to a cold run such as the test
suite's: in a fresh cache, every hashlib algorithm's one-row batch (its per-message kernel's
``hash_rows``) then a 1000 x 64 B batch (its lane kernel, then two kernels to compare), the
seconds measuring (wall and this thread's CPU) per algorithm and in all.

    python benchmarks/bench_defaults.py [--algorithms sha256 md5 ...] [--cost] [--out FILE]
"""
import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from _timing import ROOT, cpu_model  # noqa: E402

ALGORITHMS = ("sha256", "sha1", "md5", "sha512", "sha3_256", "blake2b", "blake2s")
SHAPES = ((64, 100_000), (1024, 8192))

# a process on one cache: first use (compiles, automatic measuring; which kernel each shape
# gets), or timing given kernels of each shape in turns, forced by name
CHILD = r"""
import json, statistics, sys, time
import numpy as np
import jitdigest
from jitdigest.base import algorithms as A
from jitdigest.engine import autocal, calibration, dispatch
mode, names, shapes = sys.argv[1], sys.argv[2].split(","), json.loads(sys.argv[3])
kernels = json.loads(sys.argv[4]) if mode == "time" else {}
turns, turn_seconds = 101, 0.005
measured = []
inner = autocal.measure
def measure(spec, sets):
    t = time.perf_counter()
    try:
        return inner(spec, sets)
    finally:
        measured.append([spec.name, [ks.name for ks in sets], time.perf_counter() - t])
autocal.measure = measure
def per_call(func, calls):
    t = time.perf_counter()
    for _ in range(calls):
        func()
    return (time.perf_counter() - t) / calls
rng = np.random.default_rng(1)
result = {}
for name in names:
    spec = A.lookup(name)
    for length, n in shapes:
        key = f"{name}@{length}"
        rows = rng.integers(0, 256, (n, length), dtype=np.uint8)
        out = np.empty((n, spec.digest_size), np.uint8)
        if mode == "first":
            jitdigest.hash_many(name, rows, out=out, threads=1)
            result[key] = {"kernel": dispatch.batch_kernels_for(spec, n, length).name,
                           "source": calibration.sources().get(name, "built-in rule")}
            continue
        runs, calls = {}, {}
        for kernel in kernels[key]:
            def run(kernel=kernel):
                with jitdigest.backend(kernel):
                    jitdigest.hash_many(name, rows, out=out, threads=1)
            run()
            calls[kernel] = max(1, int(turn_seconds / per_call(run, 1)) + 1)
            runs[kernel] = (run, [])
        for _ in range(turns):
            for kernel, (run, times) in runs.items():
                times.append(per_call(run, calls[kernel]))
        result[key] = {k: [1e9 / n * x for x in t] for k, (_, t) in runs.items()}
from jitdigest.engine import cpu
features = cpu.target_features()
have = [f for f in ("sha", "avx2", "avx512f", "avx512vl") if f in features]
print(json.dumps({"cells": result, "measured": measured,
                  "cpu": f"{cpu.host_cpu_name()}: {', '.join(have)}"}))
"""


# the --cost process
COST = r"""
import hashlib, json, time
import numpy as np
import jitdigest
from jitdigest.base import algorithms as A
from jitdigest.engine import autocal
spent = []
inner = autocal.measure
def measure(spec, sets):
    wall, cpu = time.perf_counter(), time.thread_time()
    try:
        return inner(spec, sets)
    finally:
        spent.append([spec.name, [ks.name for ks in sets], time.perf_counter() - wall,
                      time.thread_time() - cpu])
autocal.measure = measure
names = sorted(n for n, s in A.TABLE.items() if s.hashlib)
grid = np.arange(1000 * 64, dtype=np.uint64).astype(np.uint8).reshape(1000, 64)
start = time.perf_counter()
for name in names:
    extra = {"length": 16} if not A.lookup(name).digest_size else {}
    jitdigest.hash_many(name, [b"x"], threads=1, **extra)
    jitdigest.hash_many(name, grid, threads=1, **extra)
print(json.dumps({"spent": spent, "names": names, "wall": time.perf_counter() - start}))
"""


def cost(say):
    top = tempfile.mkdtemp(prefix="jitdigest-defaults-")
    try:
        env = dict(os.environ, JITDIGEST_CACHE_DIR=top,
                   PYTHONPATH=os.pathsep.join([ROOT, os.environ.get("PYTHONPATH", "")]))
        env.pop("JITDIGEST_AUTO_CALIBRATE", None)
        proc = subprocess.run([sys.executable, "-c", COST], env=env, capture_output=True,
                              text=True, timeout=3600)
        if proc.returncode != 0:
            raise RuntimeError(proc.stderr)
        data = json.loads(proc.stdout.strip().splitlines()[-1])
    finally:
        shutil.rmtree(top, ignore_errors=True)
    say(f"CPU: {cpu_model()}, {os.cpu_count()} cores; {time.strftime('%Y-%m-%d')}")
    say(f"automatic measurement in a cold cache: {len(data['names'])} algorithms, "
        f"{data['wall']:.1f} s in all (compiles included)")
    for name, kernels, wall, cpu in data["spent"]:
        say(f"  {name:<11} {'+'.join(kernels):<22} {wall:6.3f} s wall {cpu:6.3f} s CPU")
    say(f"  measuring in all: {sum(s[2] for s in data['spent']):.2f} s wall, "
        f"{sum(s[3] for s in data['spent']):.2f} s CPU, {len(data['spent'])} algorithms measured")


def child(cache, mode, names, kernels=None):
    env = dict(os.environ, JITDIGEST_CACHE_DIR=cache,
               PYTHONPATH=os.pathsep.join([ROOT, os.environ.get("PYTHONPATH", "")]))
    env.pop("JITDIGEST_AUTO_CALIBRATE", None)
    proc = subprocess.run([sys.executable, "-c", CHILD, mode, ",".join(names),
                           json.dumps(SHAPES), json.dumps(kernels or {})],
                          env=env, capture_output=True, text=True, timeout=3600)
    if proc.returncode != 0:
        raise RuntimeError(proc.stderr)
    return json.loads(proc.stdout.strip().splitlines()[-1])


def tune(cache, names):
    env = dict(os.environ, JITDIGEST_CACHE_DIR=cache,
               PYTHONPATH=os.pathsep.join([ROOT, os.environ.get("PYTHONPATH", "")]))
    start = time.perf_counter()
    proc = subprocess.run([sys.executable, "-m", "jitdigest", "tune", *names], env=env,
                          capture_output=True, text=True, timeout=7200)
    if proc.returncode != 0:
        raise RuntimeError(proc.stderr)
    return proc.stdout, time.perf_counter() - start


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--algorithms", nargs="+", default=list(ALGORITHMS))
    parser.add_argument("--cost", action="store_true",
                        help="time the automatic measurement in a cold cache instead")
    parser.add_argument("--out", help="also write the report to FILE")
    args = parser.parse_args(argv)
    names = args.algorithms
    lines = []

    def say(text=""):
        print(text, flush=True)
        lines.append(text)

    if args.cost:
        cost(say)
        if args.out:
            with open(args.out, "w") as f:
                f.write("\n".join(lines) + "\n")
        return

    top = tempfile.mkdtemp(prefix="jitdigest-defaults-")
    try:
        caches = {which: os.path.join(top, which) for which in ("fresh", "tuned", "auto")}
        os.mkdir(caches["fresh"], 0o700)
        start = time.perf_counter()
        first = {"fresh": child(caches["fresh"], "first", names)}
        first_s = time.perf_counter() - start
        shutil.copytree(caches["fresh"], caches["tuned"])
        tune_out, tune_s = tune(caches["tuned"], names)
        shutil.copytree(caches["tuned"], caches["auto"],
                        ignore=shutil.ignore_patterns("calibration-*"))
        first["auto"] = child(caches["auto"], "first", names)
        first["tuned"] = child(caches["tuned"], "first", names)
        chosen = {which: {key: cell["kernel"] for key, cell in data["cells"].items()}
                  for which, data in first.items()}
        kernels = {key: sorted({chosen[which][key] for which in chosen})
                   for key in chosen["tuned"]}
        timed = child(caches["tuned"], "time", names, kernels)["cells"]
    finally:
        shutil.rmtree(top, ignore_errors=True)

    say(f"CPU: {cpu_model()} ({first['fresh']['cpu']}), {os.cpu_count()} cores; "
        f"{time.strftime('%Y-%m-%d')}")
    say(f"first use of the fresh cache: {first_s:.1f} s for {len(names)} algorithms x "
        f"{len(SHAPES)} shapes (compiles included)")
    for which in ("fresh", "auto"):
        measured = first[which]["measured"]
        spent = sum(m[2] for m in measured)
        say(f"  automatic measuring on first use of {which}: {spent:.2f} s"
            + (": " + "; ".join(f"{n} over {'+'.join(k)} {s:.2f} s" for n, k, s in measured)
               if measured else ", nothing measured (fewer than two kernels loaded or cached)"))
    say(f"jitdigest tune {' '.join(names)}: {tune_s:.1f} s (compiles included)")
    say()
    say("hash_many(name, rows, threads=1), ns per row: the kernel each cache's dispatch chose,")
    say("timed in one process in 101 alternating turns (median); ratio = speed there / speed "
        "tuned, the median of the ratios of neighbouring turns")
    say(f"{'algorithm':<10} {'size':>5}  {'fresh: kernel':<14} {'ns':>7} {'ratio':>5}  "
        f"{'auto: kernel':<13} {'ns':>7} {'ratio':>5}  {'tuned: kernel':<14} {'ns':>7}")
    worst = {"fresh": None, "auto": None}
    for name in names:
        for length, _ in SHAPES:
            key = f"{name}@{length}"
            kernel = {which: chosen[which][key] for which in chosen}
            turns = {which: timed[key][kernel[which]] for which in chosen}
            ns = {which: statistics.median(turns[which]) for which in chosen}
            # the median of the ratios of neighbouring turns: a neighbour's load, which comes
            # and goes, slows both turns of a pair alike
            ratio = {which: statistics.median(t / f for t, f in zip(turns["tuned"], turns[which]))
                     for which in ("fresh", "auto")}
            for which, value in ratio.items():
                worst[which] = value if worst[which] is None else min(worst[which], value)
            say(f"{name:<10} {length:>5}  {kernel['fresh']:<14} {ns['fresh']:7.1f} "
                f"{ratio['fresh']:5.2f}  {kernel['auto']:<13} {ns['auto']:7.1f} "
                f"{ratio['auto']:5.2f}  {kernel['tuned']:<14} {ns['tuned']:7.1f}")
    say()
    for which in ("fresh", "auto"):
        say(f"lowest ratio {which}/tuned: {worst[which]:.2f} "
            f"({'>= 0.9: met' if worst[which] >= 0.9 else 'below 0.9'})")
    for which in ("fresh", "auto"):
        say(f"batch choice in {which} after first use: " + ", ".join(sorted(
            {f"{k.split('@')[0]} {c['source']}" for k, c in first[which]["cells"].items()})))
    say()
    say("jitdigest tune printed:")
    for line in tune_out.splitlines():
        say("  " + line)
    if args.out:
        with open(args.out, "w") as f:
            f.write("\n".join(lines) + "\n")


if __name__ == "__main__":
    main()
