#!/usr/bin/env python3
"""Batch speed: ``jitdigest.hash_many`` against a Python loop of hashlib, and ``uuid3_many`` /
``uuid5_many`` against a loop over the uuid module.

For every algorithm and two shapes (64 B x 100k and 1 KiB x 10k messages) it times

* ``[hashlib.md5(m).digest() for m in msgs]`` over a list of ``bytes`` (the baseline),
* ``hash_many(name, rows, threads=1)`` on a 2-D (n, L) uint8 array (one core),
* ``hash_many(name, rows)`` on the same array (every core ``default_threads()`` gives),
* ``hash_many(name, msgs, threads=1)`` on the list of ``bytes`` (joining it included),

and prints messages per second and speed-ups over the loop, with the backend that served the
batch (this CPU's calibration table's choice for the length, ``jitdigest.info()["tuned"]``,
else ``info()["batch_kernels"]``, or the one ``--backend`` forces with
``with jitdigest.backend(...)``) and the acceptance target for the one-core 2-D case. Then
uuid3_many/uuid5_many against ``[uuid.uuid3(ns, n) for n in names]`` for 100k names, as UUID
bytes and as strings, and, when installed, DuckDB's md5/sha256 and polars-hash (hex output,
every core) beside ``hash_many`` + ``hexdigests``.

``--engines`` instead compares the parallel engine itself: the prange loops against the thread
pool they replaced (``_pool_driver.py``; same chunks), in one run, at 1 and 2 threads, on 64 B,
1 KiB, 16 KiB and ragged (0-2 KiB) rows.

    python benchmarks/bench_batch.py [--algorithms md5 sha256 ...] [--backend avx2_x8] [--quick]
                                     [--json FILE] [--engines]
"""
import argparse
import contextlib
import functools
import hashlib
import json
import os
import sys
import uuid

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from _timing import ROOT, machine, seconds_per_call  # noqa: E402

sys.path.insert(0, ROOT)
import numpy as np  # noqa: E402

import jitdigest  # noqa: E402
from jitdigest import batch  # noqa: E402
from _backends import serving_batch  # noqa: E402
from _pool_driver import previous_pool  # noqa: E402
from _timing import take_turns  # noqa: E402

# --engines: (label, rows, width) for 2-D rows, width None: ragged 0-2 KiB in values+offsets
ENGINE_SHAPES = [("64 B", 200_000, 64), ("1 KiB", 20_000, 1024), ("16 KiB", 2_000, 16384),
                 ("ragged", 20_000, None)]

ALGORITHMS = ["md5", "sha1", "sha224", "sha256", "sha384", "sha512", "sha512_224", "sha512_256",
              "sha3_224", "sha3_256", "sha3_384", "sha3_512", "shake_128", "shake_256",
              "blake2b", "blake2s"]
SHAPES = [(64, 100_000), (1024, 10_000)]
SHAKE_LENGTH = 32
UUID_NAMES = 100_000

# One core, 2-D rows, against the hashlib loop: the batch engine's goals (interleaved SHA-NI and
# per-CPU calibration included).
TARGETS = {(64, "md5"): 20, (64, "sha1"): 14, (64, "sha256"): 10,
           (1024, "md5"): 8, (1024, "sha1"): 4, (1024, "sha256"): 3}
DEFAULT_TARGET = {64: 7}


def hashlib_loop(name, msgs):
    ctor = getattr(hashlib, name, None) or functools.partial(hashlib.new, name)
    if name.startswith("shake"):
        return lambda: [ctor(m).digest(SHAKE_LENGTH) for m in msgs]
    return lambda: [ctor(m).digest() for m in msgs]


def bench_algorithm(name, size, count, timer, kernel=None):
    """Time one algorithm and shape; ``kernel`` names the backend forced around the call."""
    rng = np.random.default_rng(size)
    rows = rng.integers(0, 256, (count, size), dtype=np.uint8)
    msgs = [bytes(r) for r in rows]
    kw = {"length": SHAKE_LENGTH} if name.startswith("shake") else {}
    ref = hashlib_loop(name, msgs)
    got = jitdigest.hash_many(name, rows, threads=1, **kw)
    want = ref()
    assert bytes(got[0]) == want[0] and bytes(got[-1]) == want[-1], name
    result = {
        "algorithm": name, "size": size, "count": count,
        "kernel": kernel or serving_batch(name, size),
        "hashlib": timer(ref),
        "rows_1": timer(lambda: jitdigest.hash_many(name, rows, threads=1, **kw)),
        "rows_all": timer(lambda: jitdigest.hash_many(name, rows, **kw)),
        "list_1": timer(lambda: jitdigest.hash_many(name, msgs, threads=1, **kw)),
    }
    return result


def bench_uuid(timer):
    names = [f"user-{i}.example.org" for i in range(UUID_NAMES)]
    rows = []
    for version, many, std in ((3, jitdigest.uuid3_many, uuid.uuid3),
                               (5, jitdigest.uuid5_many, uuid.uuid5)):
        ns = uuid.NAMESPACE_DNS
        assert many(ns, names[:100], as_strings=True).tolist() == \
            [str(std(ns, n)) for n in names[:100]]
        rows.append({
            "version": version, "count": len(names),
            "loop": timer(lambda: [std(ns, n) for n in names]),
            "many_1": timer(lambda: many(ns, names, threads=1)),
            "many_all": timer(lambda: many(ns, names)),
            "loop_str": timer(lambda: [str(std(ns, n)) for n in names]),
            "many_str_1": timer(lambda: many(ns, names, as_strings=True, threads=1)),
        })
    return rows


def bench_others(timer, names):
    """DuckDB and polars-hash, hex digests on every core, beside hash_many + hexdigests."""
    results = []
    try:
        import pyarrow as pa
    except ImportError:
        return results, ["pyarrow not installed: DuckDB and polars-hash skipped"]
    notes = []
    for size, count in SHAPES:
        rows = np.random.default_rng(size).integers(0, 256, (count, size), dtype=np.uint8)
        arr = pa.array([bytes(r) for r in rows], pa.binary())
        for name in names:
            entry = {"algorithm": name, "size": size, "count": count,
                     "jitdigest_hex": timer(lambda: jitdigest.hexdigests(
                         jitdigest.hash_many(name, arr)))}
            try:
                if name not in ("md5", "sha256"):
                    raise LookupError
                import duckdb
                con = duckdb.connect()
                con.register("t", pa.table({"m": arr}))
                query = f"SELECT {name}(m) FROM t"

                def fetch():                  # a relation's Arrow output: no extra row copy
                    rel = con.sql(query)
                    return rel.to_arrow_table() if hasattr(rel, "to_arrow_table") else rel.arrow()

                first = fetch().column(0)[0].as_py()
                assert first == hashlib.new(name, rows[0].tobytes()).hexdigest()
                entry["duckdb"] = timer(fetch)
            except LookupError:
                pass
            except ImportError:
                if "duckdb not installed" not in notes:
                    notes.append("duckdb not installed")
            try:
                import polars as pl
                import polars_hash as plh
                col = plh.col("m")
                expr = {"md5": lambda: col.nchash.md5(), "sha1": lambda: col.nchash.sha1(),
                        "sha256": lambda: col.chash.sha2_256()}[name]()
                df = pl.DataFrame({"m": pl.Series(arr)})
                first = df.select(expr).to_series()[0]
                assert first == hashlib.new(name, rows[0].tobytes()).hexdigest()
                entry["polars_hash"] = timer(lambda: df.select(expr))
            except ImportError:
                if "polars-hash not installed" not in notes:
                    notes.append("polars-hash not installed")
            results.append(entry)
    return results, notes


def rate(count, seconds):
    return count / seconds


def fmt_rate(count, seconds):
    r = rate(count, seconds)
    return f"{r / 1e6:7.2f}M" if r >= 1e6 else f"{r / 1e3:7.0f}k"


def print_hash_table(results):
    print("hash_many vs [hashlib.<name>(m).digest() for m in msgs]: messages per second, "
          "speed-up over the loop")
    head = (f"{'algorithm':<11} {'size':>5} {'kernel':<9} {'hashlib':>9} {'1 core':>9} {'x':>6} "
            f"{'all':>9} {'x':>6} {'list 1c':>9} {'x':>6}  target (1 core)")
    print(head)
    print("-" * len(head))
    for r in results:
        n = r["count"]
        x1 = r["hashlib"] / r["rows_1"]
        target = TARGETS.get((r["size"], r["algorithm"]), DEFAULT_TARGET.get(r["size"]))
        verdict = "" if target is None else f">= {target:g}x {'ok' if x1 >= target else 'below'}"
        print(f"{r['algorithm']:<11} {r['size']:>5} {r['kernel']:<9} "
              f"{fmt_rate(n, r['hashlib']):>9} {fmt_rate(n, r['rows_1']):>9} {x1:6.2f} "
              f"{fmt_rate(n, r['rows_all']):>9} {r['hashlib'] / r['rows_all']:6.2f} "
              f"{fmt_rate(n, r['list_1']):>9} {r['hashlib'] / r['list_1']:6.2f}  {verdict}")


def print_uuid_table(rows):
    print(f"\nuuid{{3,5}}_many vs [uuid.uuid{{3,5}}(ns, n) for n in names], {UUID_NAMES} names "
          "(target >= 10x)")
    head = (f"{'uuid':<6} {'loop':>9} {'1 core':>9} {'x':>6} {'all':>9} {'x':>6} "
            f"{'str loop':>9} {'str 1c':>9} {'x':>6}")
    print(head)
    print("-" * len(head))
    for r in rows:
        n = r["count"]
        print(f"uuid{r['version']:<2} {fmt_rate(n, r['loop']):>9} {fmt_rate(n, r['many_1']):>9} "
              f"{r['loop'] / r['many_1']:6.2f} {fmt_rate(n, r['many_all']):>9} "
              f"{r['loop'] / r['many_all']:6.2f} {fmt_rate(n, r['loop_str']):>9} "
              f"{fmt_rate(n, r['many_str_1']):>9} {r['loop_str'] / r['many_str_1']:6.2f}")


def print_others(results, notes):
    print("\nhex digests from a pyarrow binary array, every core: messages per second")
    for note in notes:
        print(f"  ({note})")
    if not results:
        return
    head = f"{'algorithm':<9} {'size':>5} {'jitdigest':>10} {'duckdb':>10} {'polars-hash':>12}"
    print(head)
    print("-" * len(head))
    for r in results:
        n = r["count"]
        cells = [fmt_rate(n, r[k]) if k in r else "-" for k in ("duckdb", "polars_hash")]
        print(f"{r['algorithm']:<9} {r['size']:>5} {fmt_rate(n, r['jitdigest_hex']):>10} "
              f"{cells[0]:>10} {cells[1]:>12}")


def bench_engines(names, quick):
    """prange vs the previous thread pool, alternating turns, per algorithm, shape, threads."""
    rng = np.random.default_rng(0)
    rows = []
    print(f"{'algorithm':<10} {'shape':<7} {'threads':>7} {'prange':>10} {'pool':>10} "
          f"{'ratio':>6}")
    for name in names:
        for label, n, width in ENGINE_SHAPES:
            if width is None:
                lengths = rng.integers(0, 2048, n)
                offsets = np.concatenate(([0], np.cumsum(lengths)))
                args = (rng.integers(0, 256, int(offsets[-1]), dtype=np.uint8), offsets)
            else:
                args = (rng.integers(0, 256, (n, width), dtype=np.uint8),)
            kw = {"length": SHAKE_LENGTH} if name.startswith("shake") else {}
            for threads in (1, 2):
                def prange_run():
                    jitdigest.hash_many(name, *args, threads=threads, **kw)

                def pool_run():
                    with previous_pool():
                        jitdigest.hash_many(name, *args, threads=threads, **kw)
                prange_run(), pool_run()                      # compile / load first
                t = take_turns({"prange": prange_run, "pool": pool_run},
                               rounds=3 if quick else 5, min_time=0.05, repeat=3)
                ratio = t["pool"] / t["prange"]
                rows.append({"algorithm": name, "shape": label, "threads": threads, **t,
                             "ratio": ratio})
                print(f"{name:<10} {label:<7} {threads:>7} {fmt_rate(n, t['prange']):>10} "
                      f"{fmt_rate(n, t['pool']):>10} {ratio:>6.2f}")
    print("\nratio: the pool's time over prange's (>= 1: prange as fast or faster)")
    return rows


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--algorithms", nargs="+", default=ALGORITHMS)
    ap.add_argument("--quick", action="store_true", help="fewer, shorter repeats")
    ap.add_argument("--no-uuid", action="store_true")
    ap.add_argument("--no-others", action="store_true", help="skip DuckDB and polars-hash")
    ap.add_argument("--json", help="also write the raw timings (seconds per call) here")
    ap.add_argument("--engines", action="store_true",
                    help="compare the prange engine with the previous thread pool only")
    ap.add_argument("--backend", help="force this backend (see jitdigest.backends(name)); "
                    "algorithms without it are skipped")
    args = ap.parse_args(argv)
    timer = functools.partial(seconds_per_call, min_time=0.02 if args.quick else 0.05,
                              repeat=3 if args.quick else 7)
    print(machine())
    print(f"default_threads() = {batch.default_threads()}; JIT "
          f"{'on' if jitdigest.info()['jit'] else 'off'}")
    from jitdigest.engine import calibration as _calibration
    print(f"batch kernels by length: {_calibration.source()}\n")
    algorithms = args.algorithms
    if args.engines:
        engines = bench_engines([n for n in algorithms if n in ("md5", "sha256", "sha3_256",
                                                                  "blake2b")]
                                if algorithms is ALGORITHMS else algorithms, args.quick)
        if args.json:
            with open(args.json, "w") as f:
                json.dump({"machine": machine(), "engines": engines}, f, indent=1)
        return
    if args.backend:
        skipped = [n for n in algorithms if args.backend not in jitdigest.backends(n)]
        algorithms = [n for n in algorithms if n not in skipped]
        note = f"; skipped, no such backend here: {' '.join(skipped)}" if skipped else ""
        print(f"backend {args.backend} forced{note}\n")
    forced = (jitdigest.backend(args.backend) if args.backend else contextlib.nullcontext())
    results = []
    with forced:
        for size, count in SHAPES:
            for name in algorithms:
                results.append(bench_algorithm(name, size, count, timer, args.backend))
                print(f"  timed {name} {size} B", file=sys.stderr)
    print_hash_table(results)
    uuid_rows = [] if args.no_uuid else bench_uuid(timer)
    if uuid_rows:
        print_uuid_table(uuid_rows)
    others, notes = ([], []) if args.no_others else bench_others(
        timer, [n for n in ("md5", "sha1", "sha256") if n in args.algorithms])
    if not args.no_others:
        print_others(others, notes)
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"machine": machine(), "hash_many": results, "uuid": uuid_rows,
                       "others": others}, f, indent=1)


if __name__ == "__main__":
    main()
