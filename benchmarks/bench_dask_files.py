#!/usr/bin/env python3
"""``jitdigest sum --dask`` against the same run without it, and the costs behind it: the
figures the cost model in benchmarks/README.md ("Files on a Dask cluster") is fitted to.

1. Wall time of ``jitdigest sum -r`` on an empty file (start-up), on a tree of many small
   files and on one large file
   (sha256; BLAKE3 too, split into subtrees over the workers), without --dask, with
   ``--dask local:1`` and ``--dask local:2`` (each starting its own cluster), and with
   ``--dask ADDRESS`` of a cluster started once (two workers): start-up is the difference.
   Fresh processes taking turns, medians; every output checked equal first, and the large
   file's BLAKE3 line against b3sum's.
2. Per-task cost on a warm cluster: empty tasks (``hash_task`` with no files) submitted
   together and gathered, and one at a time (a round trip each).
3. Peak RSS (ru_maxrss) of ``jitdigest.hash_files`` over a stream of N paths (1,000 real files
   repeated), in a child process, against the same at N/10.

    python benchmarks/bench_dask_files.py [--small-files 20000] [--big-mib 2048]
        [--repeat 3] [--tasks 200] [--rss-paths 2000000] [--skip-rss]

The large file is written under a temporary directory (``--big-mib`` MiB: 2 GiB by default;
give less on a machine short of disk or time).
"""
import argparse
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from _timing import machine  # noqa: E402
from bench_cli import ENV, ROOT, make_big_tree, make_small_tree, wall  # noqa: E402
from bench_cli import sum_cmd as command  # noqa: E402


def compare(label, target, algo, address, repeat, size):
    rows = {"no --dask": [], "--dask local:1": ["--dask", "local:1"],
            "--dask local:2": ["--dask", "local:2"], "--dask ADDRESS (2 warm)": ["--dask", address]}
    outputs = {name: subprocess.run(command(target, "-a", algo, *extra), env=ENV,
                                    capture_output=True, check=True).stdout
               for name, extra in rows.items()}
    if len(set(outputs.values())) != 1:
        raise RuntimeError(f"{label}: the outputs differ")
    if algo == "blake3" and os.path.isfile(target):
        b3 = subprocess.run(["b3sum", target], capture_output=True, check=True).stdout
        if b3 != outputs["no --dask"]:
            raise RuntimeError(f"{label}: b3sum says otherwise")
        print(f"  (b3sum's line equal: {b3.split()[0].decode()})")
    times = {name: [] for name in rows}
    for _ in range(repeat):
        for name, extra in rows.items():
            times[name].append(wall(command(target, "-a", algo, *extra)))
    base = statistics.median(times["no --dask"])
    print(f"\n{label} (-a {algo})")
    print(f"  {'jitdigest sum -r ...':<28} {'median s':>9} {'speed vs local':>15} {'MB/s':>8}")
    result = {}
    for name in rows:
        med = statistics.median(times[name])
        result[name] = med
        rate = f"{size / med / 1e6:8.1f}" if size else f"{'':>8}"
        print(f"  {name:<28} {med:9.3f} {base / med:14.3f}x {rate}")
    return result


def per_task(client, tasks):
    from jitdigest.sum.dask_hasher import hash_task
    empty = ([[]] * tasks, [b""] * tasks, [b""] * tasks)
    client.gather(client.map(hash_task, *[column[:4] for column in empty], pure=False))
    start = time.perf_counter()
    client.gather(client.map(hash_task, *empty, pure=False))
    together = (time.perf_counter() - start) / tasks
    rounds = max(tasks // 4, 10)
    start = time.perf_counter()
    for _ in range(rounds):
        client.submit(hash_task, [], b"", b"", pure=False).result()
    alone = (time.perf_counter() - start) / rounds
    print(f"\nper task, warm cluster of 2 workers: {together * 1e3:.2f} ms each of {tasks} "
          f"submitted together, {alone * 1e3:.2f} ms round trip one at a time")
    return together, alone


RSS_CHILD = r"""
import itertools, os, resource, sys, time
import jitdigest
folder, n = sys.argv[1], int(sys.argv[2])
files = [os.path.join(folder, name) for name in sorted(os.listdir(folder))]
paths = itertools.islice(itertools.cycle(files), n)
start = time.perf_counter()
count = sum(1 for _ in jitdigest.hash_files(paths))
seconds = time.perf_counter() - start
rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024
print(count, rss, seconds)
"""


def rss(folder, n):
    out = subprocess.run([sys.executable, "-c", RSS_CHILD, folder, str(n)], env=ENV,
                         capture_output=True, text=True, check=True).stdout.split()
    return int(out[0]), int(out[1]), float(out[2])


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--small-files", type=int, default=20000)
    parser.add_argument("--big-mib", type=int, default=2048)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--tasks", type=int, default=200)
    parser.add_argument("--rss-paths", type=int, default=2_000_000)
    parser.add_argument("--skip-rss", action="store_true")
    args = parser.parse_args(argv)
    print(machine())
    print(f"load average at start: {os.getloadavg()[0]:.1f}")
    sys.path.insert(0, ROOT)
    from distributed import Client, LocalCluster
    tmp = tempfile.mkdtemp(prefix="bench-dask-files-")
    try:
        small = os.path.join(tmp, "small")
        make_small_tree(small, args.small_files)
        small_bytes = sum(e.stat().st_size for d in os.scandir(small) for e in os.scandir(d))
        big = os.path.join(tmp, "big")
        make_big_tree(big, 1, args.big_mib)
        big_file = os.path.join(big, "big0.bin")
        with LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                          dashboard_address=":0") as cluster, Client(cluster) as client:
            address = cluster.scheduler_address
            empty = os.path.join(tmp, "empty")
            open(empty, "wb").close()
            compare("an empty file (start-up)", empty, "sha256", address, args.repeat, 0)
            compare(f"{args.small_files} small files ({small_bytes / 1e6:.1f} MB)", small,
                    "sha256", address, args.repeat, small_bytes)
            for algo in ("sha256", "blake3"):
                compare(f"one file of {args.big_mib} MiB", big_file, algo, address,
                        args.repeat, args.big_mib << 20)
            per_task(client, args.tasks)
        if not args.skip_rss:
            few = os.path.join(tmp, "thousand")
            os.makedirs(few)
            for i in range(1000):
                with open(os.path.join(few, f"f{i:04d}"), "wb") as f:
                    f.write(os.urandom(1 + (i * 37) % 4096))
            print("\njitdigest.hash_files over a stream of paths (1,000 files repeated):")
            for n in (args.rss_paths // 10, args.rss_paths):
                count, peak, seconds = rss(few, n)
                print(f"  {count:>9} paths: peak RSS {peak / 2**20:7.1f} MiB, "
                      f"{seconds:7.1f} s, {count / seconds:9.0f} files/s")
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    print(f"load average at end: {os.getloadavg()[0]:.1f}; ru_maxrss of this process "
          f"{resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024:.0f} MiB")


if __name__ == "__main__":
    main()
