#!/usr/bin/env python3
"""Wall time of ``jitdigest sum -a blake3`` against b3sum (``--num-threads 1`` and its
default, all cores), on (a) one large file (default 256 MiB) and (b) a tree of many small
files (default 20,000 of 1-8 KiB; b3sum gets them as ``find DIR -type f -print0 | xargs -0``,
jitdigest as ``-r DIR``). The commands run in turn, ``--repeat`` rounds, each a fresh process
(start-up included), after one untimed round that also checks that the outputs agree; medians,
bests and ratios to each b3sum run are printed, and first the same for an empty file (start-up
alone). The data is made under /tmp and removed.

    python benchmarks/bench_b3sum.py [--big-mib 256] [--files 20000] [--repeat 5] [-- -j 2]
"""
import argparse
import os
import random
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from bench_cli import ENV  # noqa: E402


def make_tree(root, count, seed=20261204):
    rng = random.Random(seed)
    for i in range(count):
        folder = os.path.join(root, f"d{i // 200:04d}")
        if i % 200 == 0:
            os.makedirs(folder)
        with open(os.path.join(folder, f"f{i:06d}.bin"), "wb") as f:
            f.write(rng.randbytes(rng.randint(1024, 8 * 1024)))


def make_big(path, mib):
    block = random.Random(1).randbytes(1 << 20)
    with open(path, "wb") as f:
        for i in range(mib):
            f.write(block[i % 251:] + block[:i % 251])


def commands(target, tree, extra):
    jd = [sys.executable, "-m", "jitdigest", "sum", "--no-progress", "-a", "blake3", *extra]
    if tree:
        b3 = 'find "$1" -type f -print0 | LC_ALL=C sort -z | xargs -0 b3sum '
        return {"jitdigest -a blake3 -r": [*jd, "-r", target],
                "b3sum --num-threads 1": ["bash", "-c", b3 + "--num-threads 1", "b", target],
                "b3sum": ["bash", "-c", b3, "b", target]}
    return {"jitdigest -a blake3": [*jd, target],
            "b3sum --num-threads 1": ["b3sum", "--num-threads", "1", target],
            "b3sum": ["b3sum", target]}


def measure(label, cmds, repeat):
    outs = {name: subprocess.run(cmd, env=ENV, capture_output=True, check=True).stdout
            for name, cmd in cmds.items()}          # warm the page and kernel caches
    first = next(iter(outs.values()))
    for name, out in outs.items():
        assert out == first, f"{name}'s output differs"
    times = {name: [] for name in cmds}
    for _ in range(repeat):
        for name, cmd in cmds.items():
            start = time.perf_counter()
            subprocess.run(cmd, env=ENV, stdout=subprocess.DEVNULL, check=True)
            times[name].append(time.perf_counter() - start)
    meds = {name: statistics.median(v) for name, v in times.items()}
    print(f"{label}:")
    for name, values in times.items():
        ratios = ", ".join(f"{meds[name] / meds[other]:5.2f}x {other}" for other in meds
                           if other.startswith("b3sum") and other != name)
        print(f"  {name:26s} median {meds[name]:6.3f} s  best {min(values):6.3f} s  {ratios}")


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--big-mib", type=int, default=256, help="size of the large file")
    parser.add_argument("--files", type=int, default=20000, help="files in the tree")
    parser.add_argument("--repeat", type=int, default=5, help="timed rounds")
    parser.add_argument("extra", nargs="*", help="jitdigest options, after --")
    args = parser.parse_args(argv)
    if shutil.which("b3sum") is None:
        sys.exit("b3sum is not installed")
    tmp = tempfile.mkdtemp(prefix="bench_b3sum.")
    try:
        empty = os.path.join(tmp, "empty")
        open(empty, "wb").close()
        measure("start-up (an empty file)", commands(empty, False, args.extra), args.repeat)
        big = os.path.join(tmp, "big.bin")
        make_big(big, args.big_mib)
        measure(f"one file of {args.big_mib} MiB", commands(big, False, args.extra),
                args.repeat)
        os.remove(big)
        tree = os.path.join(tmp, "small")
        make_tree(tree, args.files)
        measure(f"{args.files} files of 1-8 KiB", commands(tree, True, args.extra),
                args.repeat)
    finally:
        shutil.rmtree(tmp)


if __name__ == "__main__":
    main()
