#!/usr/bin/env python3
"""Dask speed: ``jitdigest.dask`` on a LocalCluster of 1 and 2 worker processes (one thread
each) against the usual user code on the same cluster and data,
``ddf["col"].map(lambda b: hashlib.sha256(b).digest(), meta=("col", object))``, and against one
process's ``jitdigest.hash_many`` on every core (no Dask).

Data: --rows messages of --size random bytes (default 4,000,000 x 64 B) in --partitions
partitions, made on the workers and persisted there before anything is timed, as a column of
``bytes`` objects (object dtype; Dask's ``dataframe.convert-string`` off, else Dask would try to
decode them as UTF-8), as a ``binary[pyarrow]`` column, and as a 2-D uint8 dask array for
``hash_array``. A figure is the wall time of ``persist()`` + ``wait()`` of the digests (they stay
on the workers: nothing is gathered), the median of --rounds rounds in which every contender
takes a turn (each result released before the next run; a no-op ``map_partitions`` shows what
Dask itself costs a run). A turn is an untimed run, then the timed one, so that no contender is
timed in the state the one before it left the workers in: the first ``hash_column`` after
``map(hashlib)`` (4M ``bytes`` objects made and freed) ran 15-30% slower than the next one
(AMD EPYC, 2 workers: 0.48-0.54 s against 0.39-0.44 s). Kernels are loaded on every worker
first (``WarmKernels``, timed and reported), as on a cluster that has hashed before; one
untimed run of each contender checks its first partition's digests against hashlib. The batch
kernel that serves the rows is printed (this CPU's calibration table's choice, where ``jitdigest
tune`` or ``warmup`` made one).

    python benchmarks/bench_dask.py [--rows 4000000] [--size 64] [--partitions 16]
                                    [--workers 1 2] [--algorithm sha256] [--rounds 3]
                                    [--json FILE]
"""
import argparse
import hashlib
import json
import os
import statistics
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from _timing import ROOT, machine  # noqa: E402

sys.path.insert(0, ROOT)
import numpy as np  # noqa: E402

import jitdigest  # noqa: E402
from _backends import serving_batch  # noqa: E402

GOAL = 10          # jitdigest.dask on 2 workers over the usual map(hashlib) code


def make_rows(i, rows, size):
    return np.random.default_rng(i).integers(0, 256, (rows, size), dtype=np.uint8)


def arrow_binary(rows):
    """A (n, size) uint8 array as a pyarrow binary array over the same bytes."""
    import pyarrow as pa
    n, size = rows.shape
    offsets = np.arange(n + 1, dtype=np.int32) * np.int32(size)
    return pa.Array.from_buffers(pa.binary(), n, [None, pa.py_buffer(offsets),
                                                  pa.py_buffer(rows)])


def make_part(i, rows, size, kind):
    import pandas as pd
    block = make_rows(i, rows, size)
    if kind == "object":
        col = block.view(f"V{size}").reshape(rows).astype(object)       # bytes objects
    else:
        col = pd.arrays.ArrowExtensionArray(arrow_binary(block))
    return pd.DataFrame({"col": col}, index=pd.RangeIndex(i * rows, (i + 1) * rows))


def datasets(args):
    import dask.array as da
    import dask.dataframe as dd
    from dask import delayed
    per = args.rows // args.partitions
    frames = {kind: dd.from_map(make_part, range(args.partitions), rows=per, size=args.size,
                                kind=kind, meta=make_part(0, 0, args.size, kind),
                                divisions=[i * per for i in range(args.partitions)]
                                + [args.partitions * per - 1])
              for kind in ("object", "arrow")}
    array = da.concatenate([da.from_delayed(delayed(make_rows)(i, per, args.size),
                                            (per, args.size), np.uint8)
                            for i in range(args.partitions)])
    return frames, array, per


def contenders(name, frames, array):
    from jitdigest import dask as jd
    ctor = getattr(hashlib, name)
    usual = {kind: (lambda f=f: f["col"].map(lambda b: ctor(b).digest(), meta=("col", object)))
             for kind, f in frames.items()}
    return {
        "map(hashlib), bytes column": usual["object"],
        "hash_column, bytes column": lambda: jd.hash_column(frames["object"]["col"], name),
        "map(hashlib), binary[pyarrow]": usual["arrow"],
        "hash_column, binary[pyarrow]": lambda: jd.hash_column(frames["arrow"]["col"], name),
        "hash_array, 2-D uint8": lambda: jd.hash_array(array, name),
    }


def check(label, result, name, per, size):
    import dask.array as da
    if isinstance(result, da.Array):                      # an (n, size) uint8 array
        got = [bytes(d) for d in result.blocks[0].compute()]
    else:                                                 # a Series of bytes
        got = result.partitions[0].compute().tolist()
    rows = make_rows(0, per, size)
    want = [hashlib.new(name, r.tobytes()).digest() for r in rows]
    assert got == want and len(got) == per, label


def settler(client):
    """A function that waits until the scheduler holds no more tasks than now: a result is
    released before the next run, which would otherwise find the same keys still in memory
    and compute nothing."""
    def count():
        return client.run_on_scheduler(lambda dask_scheduler: len(dask_scheduler.tasks))
    base = count()

    def settled():
        deadline = time.perf_counter() + 60
        while count() > base and time.perf_counter() < deadline:
            time.sleep(0.005)
    return settled


def run_cluster(workers, args):
    from distributed import Client, LocalCluster, get_task_stream, wait
    from jitdigest import dask as jd
    env = {"JITDIGEST_QUIET": "1"}
    with LocalCluster(n_workers=workers, threads_per_worker=1, processes=True,
                      dashboard_address=None, env=env) as cluster, Client(cluster) as client:
        t0 = time.perf_counter()
        client.register_plugin(jd.WarmKernels([args.algorithm]))
        warm = time.perf_counter() - t0
        frames, array, per = datasets(args)
        frames = {k: client.persist(f) for k, f in frames.items()}
        array = client.persist(array)
        wait([frames["object"], frames["arrow"], array])
        fns = contenders(args.algorithm, frames, array)
        for label, fn in fns.items():
            check(label, fn(), args.algorithm, per, args.size)
        fns["no-op map_partitions (Dask's cost)"] = \
            lambda: frames["arrow"]["col"].map_partitions(lambda p: p.iloc[:1])
        settled = settler(client)

        def run(fn):
            """Seconds to persist and wait for ``fn()``'s result, which is then released."""
            t0 = time.perf_counter()
            result = client.persist(fn())
            wait(result)
            seconds = time.perf_counter() - t0
            del result
            settled()
            return seconds
        samples = {label: [] for label in fns}
        busy = {label: [] for label in fns}
        for _ in range(args.rounds):
            for label, fn in fns.items():
                run(fn)                                 # the untimed run of the turn
                with get_task_stream(client) as stream:
                    samples[label].append(run(fn))
                busy[label].append(sum(s["stop"] - s["start"] for task in stream.data
                                       for s in task["startstops"] if s["action"] == "compute"))
        return {"workers": workers, "warm": warm,
                "seconds": {k: statistics.median(v) for k, v in samples.items()},
                "task_seconds": {k: statistics.median(v) for k, v in busy.items()}}


def run_single(args):
    """One process, every core: hash_many on the rows as a binary Arrow array and as 2-D."""
    per = args.rows // args.partitions
    rows = np.concatenate([make_rows(i, per, args.size) for i in range(args.partitions)])
    arr = arrow_binary(rows)
    fns = {"hash_many, binary Arrow array": lambda: jitdigest.hash_many(args.algorithm, arr),
           "hash_many, 2-D uint8": lambda: jitdigest.hash_many(args.algorithm, rows)}
    for fn in fns.values():
        got = fn()
        assert bytes(got[-1]) == hashlib.new(args.algorithm, rows[-1].tobytes()).digest()
    samples = {label: [] for label in fns}
    for _ in range(args.rounds):
        for label, fn in fns.items():
            t0 = time.perf_counter()
            fn()
            samples[label].append(time.perf_counter() - t0)
    return {k: statistics.median(v) for k, v in samples.items()}


def report(args, clusters, single):
    n = args.rows // args.partitions * args.partitions
    print(f"{n:,} messages of {args.size} B, {args.algorithm}, {args.partitions} partitions; "
          f"median of {args.rounds} rounds; persist + wait, digests left on the workers; "
          f"batch kernel {serving_batch(args.algorithm, args.size)}")
    print("seconds: wall time of a run; task s: the run's tasks' compute time summed over the "
          "workers (Dask's own cost left out); x map: over map(hashlib) on the same column")
    head = (f"{'contender':<36} {'workers':>7} {'seconds':>8} {'M rows/s':>9} {'x map':>7} "
            f"{'task s':>7} {'x map':>7}")
    print(head)
    print("-" * len(head))
    for c in clusters:
        s, t = c["seconds"], c["task_seconds"]
        for label, sec in s.items():
            kind = label.partition(", ")[2]
            if f"map(hashlib), {kind}" not in s:
                kind = "binary[pyarrow]"
            base, tbase = s[f"map(hashlib), {kind}"], t[f"map(hashlib), {kind}"]
            x, tx = ("-", "-") if label.startswith("no-op") else \
                (f"{base / sec:.2f}", f"{tbase / t[label]:.2f}")
            print(f"{label:<36} {c['workers']:>7} {sec:8.3f} {n / sec / 1e6:9.2f} "
                  f"{x:>7} {t[label]:7.3f} {tx:>7}")
        print(f"{'(WarmKernels at start-up)':<36} {c['workers']:>7} {c['warm']:8.3f}")
    base = clusters[0]["seconds"]["map(hashlib), bytes column"]
    for label, sec in single.items():
        print(f"{label:<36} {'none':>7} {sec:8.3f} {n / sec / 1e6:9.2f} {base / sec:7.2f}"
              "  (x: over map, bytes column, on the first cluster)")
    two = [c for c in clusters if c["workers"] == 2]
    if two:
        s = two[0]["seconds"]
        for kind in ("bytes column", "binary[pyarrow]"):
            x = s[f"map(hashlib), {kind}"] / s[f"hash_column, {kind}"]
            print(f"goal: hash_column on 2 workers >= {GOAL}x map(hashlib), {kind}: "
                  f"{x:.1f}x {'ok' if x >= GOAL else 'below'}")


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--rows", type=int, default=4_000_000)
    ap.add_argument("--size", type=int, default=64)
    ap.add_argument("--partitions", type=int, default=16)
    ap.add_argument("--workers", type=int, nargs="+", default=[1, 2])
    ap.add_argument("--algorithm", default="sha256")
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--json", help="also write the raw timings here")
    args = ap.parse_args(argv)
    import dask
    dask.config.set({"dataframe.convert-string": False})     # bytes stay bytes
    print(machine())
    clusters = []
    for workers in args.workers:
        clusters.append(run_cluster(workers, args))
        print(f"  timed {workers} worker(s)", file=sys.stderr)
    single = run_single(args)
    report(args, clusters, single)
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"machine": machine(), "args": vars(args), "clusters": clusters,
                       "single": single}, f, indent=1)


if __name__ == "__main__":
    main()
