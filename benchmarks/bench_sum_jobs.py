#!/usr/bin/env python3
"""``jitdigest sum -r`` with ``-j`` and no number against ``-j 1`` and ``-j N`` (one per CPU),
on (a) many small files and (b) a few large ones, as speed ratios from one run: the commands
take turns, each repeated, and the median wall time of each is compared (a ratio over 1: the
row is faster than ``-j 1``). Fresh processes, page cache warm, output checked equal first.

    python benchmarks/bench_sum_jobs.py [--small-files 20000] [--big-files 4] [--big-mib 128]
                                        [--repeat 7]
"""
import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from _timing import machine  # noqa: E402
from bench_cli import ENV, make_big_tree, make_small_tree, wall  # noqa: E402
from bench_cli import sum_cmd as command  # noqa: E402


def compare(label, tree, repeat):
    cpus = os.cpu_count() or 1
    rows = {"-j 1": ["-j", "1"], "-j (no number)": ["-j"], f"-j {cpus}": ["-j", str(cpus)]}
    outputs = {subprocess.run(command(tree, *jobs), env=ENV, capture_output=True,
                              check=True).stdout for jobs in rows.values()}
    if len(outputs) != 1:
        raise RuntimeError("the rows' outputs differ")
    times = {name: [] for name in rows}
    for _ in range(repeat):                 # in turns: a change of load meets every row
        for name, jobs in rows.items():
            times[name].append(wall(command(tree, *jobs)))
    base = statistics.median(times["-j 1"])
    print(f"\n{label}")
    print(f"  {'command':<32} {'median s':>9} {'speed vs -j 1':>14}")
    for name in rows:
        med = statistics.median(times[name])
        print(f"  {'jitdigest sum -r ' + name:<32} {med:9.3f} {base / med:13.3f}x")


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--small-files", type=int, default=20000)
    parser.add_argument("--big-files", type=int, default=4)
    parser.add_argument("--big-mib", type=int, default=128)
    parser.add_argument("--repeat", type=int, default=7)
    args = parser.parse_args(argv)
    print(machine())
    subprocess.run([sys.executable, "-m", "jitdigest", "warmup", "sha256"], env=ENV,
                   stdout=subprocess.DEVNULL, check=True)
    tmp = tempfile.mkdtemp(prefix="jitdigest-bench-jobs-", dir="/tmp")
    try:
        if args.small_files:
            tree = os.path.join(tmp, "small")
            make_small_tree(tree, args.small_files)
            compare(f"(a) {args.small_files} files of 1-16 KiB", tree, args.repeat)
            shutil.rmtree(tree)
        if args.big_files and args.big_mib:
            tree = os.path.join(tmp, "big")
            make_big_tree(tree, args.big_files, args.big_mib)
            compare(f"(b) {args.big_files} files of {args.big_mib} MiB", tree, args.repeat)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
