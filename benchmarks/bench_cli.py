#!/usr/bin/env python3
"""Wall time of ``jitdigest sum -r DIR`` against coreutils (``find DIR -type f -print0 |
xargs -0 sha256sum``, and md5sum), as ratios from one run, with the page cache warm; and of
``--cache``: a first run against one over the unchanged tree.

Two trees are made under /tmp and removed at the end: (a) many small files (default 20,000 of
1-16 KiB, 200 to a directory) and (b) a few large ones (default 4 of 256 MiB). Each command
runs once untimed (which also warms the page cache), then ``--repeat`` times; the median is
reported. jitdigest runs as a fresh process each time (``python -m jitdigest``), so its
start-up (Python, Numba, loading the cached kernels) is in every figure, as coreutils' is in
theirs. Before timing, jitdigest's output is checked against coreutils' (as sorted lines).

    python benchmarks/bench_cli.py [--small-files 20000] [--big-files 4] [--big-mib 256]
                                   [--repeat 3] [--algorithms sha256 md5] [--jobs 0]
    python benchmarks/bench_cli.py --small-files 2000 --big-mib 16 --repeat 1   # quick
"""
import argparse
import os
import random
import shutil
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from _timing import ROOT, machine, seconds_per_call  # noqa: E402

# The commands start as an installed package does: with its modules' compiled forms (pip writes
# them when it installs), which PYTHONDONTWRITEBYTECODE would keep from being written here.
ENV = dict({k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"},
           PYTHONPATH=os.pathsep.join([ROOT, os.environ.get("PYTHONPATH", "")]))
TOOLS = {"sha256": "sha256sum", "md5": "md5sum", "sha1": "sha1sum", "sha512": "sha512sum",
         "blake2b": "b2sum"}


def make_small_tree(root, count, seed=20240601):
    rng = random.Random(seed)
    for i in range(count):
        folder = os.path.join(root, f"d{i // 200:04d}")
        if i % 200 == 0:
            os.makedirs(folder)
        with open(os.path.join(folder, f"f{i:06d}.bin"), "wb") as f:
            f.write(rng.randbytes(rng.randint(1024, 16 * 1024)))


def make_big_tree(root, count, mib):
    os.makedirs(root)
    block = random.Random(7).randbytes(1 << 20)
    for i in range(count):
        with open(os.path.join(root, f"big{i}.bin"), "wb") as f:
            for j in range(mib):
                f.write(block[j % 251:] + block[:j % 251])


def sum_cmd(tree, *extra):
    """``jitdigest sum -r`` of ``tree`` with ``extra`` options, no progress line."""
    return [sys.executable, "-m", "jitdigest", "sum", "--no-progress", "-r", *extra, tree]


def jitdigest_cmd(algo, tree, *extra):
    return sum_cmd(tree, "-a", algo, *extra)


def wall(cmd):
    """Seconds of one run of ``cmd`` (its output thrown away; a failure raises)."""
    start = time.perf_counter()
    subprocess.run(cmd, env=ENV, stdout=subprocess.DEVNULL, check=True)
    return time.perf_counter() - start


def coreutils_cmd(algo, tree):
    return ["bash", "-c", f"find \"$1\" -type f -print0 | xargs -0 {TOOLS[algo]}", "bench",
            tree]


def run(cmd, capture=False):
    proc = subprocess.run(cmd, env=ENV, stdout=subprocess.PIPE if capture else
                          subprocess.DEVNULL, stderr=subprocess.PIPE)
    if proc.returncode != 0:
        raise RuntimeError(f"{cmd} failed:\n{proc.stderr.decode(errors='replace')}")
    return proc.stdout


def timed(cmd, repeat):
    return seconds_per_call(lambda: run(cmd), min_time=0, repeat=repeat)


def bench_tree(label, tree, algos, repeat, jobs):
    print(f"\n{label}")
    print(f"  {'command':<44} {'seconds':>9} {'vs coreutils':>13}")
    for algo in algos:
        tool = TOOLS[algo]
        if shutil.which(tool) is None:
            print(f"  ({tool} not installed: {algo} skipped)")
            continue
        ours = sorted(run(jitdigest_cmd(algo, tree), capture=True).splitlines())
        theirs = sorted(run(coreutils_cmd(algo, tree), capture=True).splitlines())
        if ours != theirs:
            raise RuntimeError(f"jitdigest and {tool} disagree on {tree}")
        base = timed(coreutils_cmd(algo, tree), repeat)
        rows = [(f"find | xargs -0 {tool}", base)]
        for extra in ([], ["--no-batch"], ["-j", str(jobs)]):
            name = " ".join(["jitdigest sum -r", *(["-a", algo] if algo != "sha256" else []),
                             *extra])
            rows.append((name, timed(jitdigest_cmd(algo, tree, *extra), repeat)))
        for name, seconds in rows:
            print(f"  {name:<44} {seconds:9.3f} {seconds / base:12.2f}x")


def bench_cache(tree, tmp, repeat):
    """``--cache DB``: a first run (a new database each time) and a run over the unchanged tree
    (the database filled); both check their output against a run without the cache. The tree
    is older than the racy margin by then (the rows above took longer)."""
    plain = sorted(run(jitdigest_cmd("sha256", tree), capture=True).splitlines())
    count = iter(range(1 << 30))

    def first():
        db = os.path.join(tmp, f"first-{next(count)}.db")
        out = run(jitdigest_cmd("sha256", tree, "--cache", db), capture=True)
        for suffix in ("", "-wal", "-shm"):
            if os.path.exists(db + suffix):
                os.remove(db + suffix)
        return out
    db = os.path.join(tmp, "again.db")
    again = jitdigest_cmd("sha256", tree, "--cache", db)
    for out in (first(), run(again, capture=True), run(again, capture=True)):
        if sorted(out.splitlines()) != plain:
            raise RuntimeError("--cache changed the output")
    first_s = seconds_per_call(first, min_time=0, repeat=repeat)
    again_s = timed(again, repeat)
    print(f"  {'jitdigest sum -r --cache DB (a new DB)':<44} {first_s:9.3f}")
    print(f"  {'the same, the tree unchanged':<44} {again_s:9.3f} {first_s / again_s:12.2f}x "
          "faster")


def bench_startup(tmp, repeat):
    path = os.path.join(tmp, "one-small-file.txt")
    with open(path, "wb") as f:
        f.write(b"hello\n")
    ours = timed([sys.executable, "-m", "jitdigest", "sum", path], max(repeat, 5))
    theirs = timed(["sha256sum", path], max(repeat, 5))
    print("\nstart-up: one small file (warm Numba cache)")
    print(f"  {'jitdigest sum FILE':<44} {ours:9.3f}")
    print(f"  {'sha256sum FILE':<44} {theirs:9.3f}")


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--small-files", type=int, default=20000,
                        help="number of 1-16 KiB files in tree (a); 0 skips it")
    parser.add_argument("--big-files", type=int, default=4, help="number of large files")
    parser.add_argument("--big-mib", type=int, default=256,
                        help="size of each large file in MiB; 0 skips tree (b)")
    parser.add_argument("--repeat", type=int, default=3, help="timed runs per command")
    parser.add_argument("--algorithms", nargs="+", default=["sha256", "md5"],
                        choices=sorted(TOOLS))
    parser.add_argument("--jobs", type=int, default=0,
                        help="-j for the parallel jitdigest row (0: one thread per CPU)")
    args = parser.parse_args(argv)

    print(machine())
    run([sys.executable, "-m", "jitdigest", "warmup", *args.algorithms])
    tmp = tempfile.mkdtemp(prefix="jitdigest-bench-cli-", dir="/tmp")
    try:
        bench_startup(tmp, args.repeat)
        if args.small_files:
            tree = os.path.join(tmp, "small")
            make_small_tree(tree, args.small_files)
            bench_tree(f"(a) {args.small_files} files of 1-16 KiB", tree, args.algorithms,
                       args.repeat, args.jobs)
            bench_cache(tree, tmp, args.repeat)
            shutil.rmtree(tree)
        if args.big_files and args.big_mib:
            tree = os.path.join(tmp, "big")
            make_big_tree(tree, args.big_files, args.big_mib)
            bench_tree(f"(b) {args.big_files} files of {args.big_mib} MiB", tree,
                       args.algorithms, args.repeat, args.jobs)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
