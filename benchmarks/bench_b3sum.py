#!/usr/bin/env python3
"""Wall time of ``jitdigest sum -a blake3`` against b3sum (``--num-threads 1`` and its
default, all cores), on (a) one large file (default 1024 MiB, in /dev/shm where it fits, so in
memory as a file in the page cache) and (b) a tree of many small files (default 20,000 of 1-8
KiB; b3sum gets them as ``find DIR -type f -print0 | xargs -0``, jitdigest as ``-r DIR``).
With (a), also ``jitdigest sum FILE`` (SHA-256) against ``hashlib.file_digest`` in a Python
process and sha256sum, and the ceilings: ``jitdigest.blake3.blake3(max_threads=1 and AUTO)
.update_mmap(FILE)`` timed inside a process whose kernels are loaded (no start-up). The commands
run in turn, ``--repeat`` rounds, each a fresh process (start-up included), after one untimed
round that also checks that the outputs agree; medians, bests and the speed ratios the pairs
are judged by are printed, and first the same for an empty file (start-up alone), with the
load average before and after each part.

    python benchmarks/bench_b3sum.py [--big-mib 1024] [--files 20000] [--repeat 5] [-- -j 2]
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
from _timing import machine  # noqa: E402
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


_CEILING = ("import sys, time\n"
            "import jitdigest\n"
            "from jitdigest.blake3 import blake3\n"
            "def once():\n"
            "    if sys.argv[2] == 'sha256':\n"
            "        with open(sys.argv[1], 'rb') as f:\n"
            "            return jitdigest.file_digest(f, 'sha256').digest()\n"
            "    n = blake3.AUTO if sys.argv[2] == 'AUTO' else int(sys.argv[2])\n"
            "    return blake3(max_threads=n).update_mmap(sys.argv[1]).digest()\n"
            "once()\n"
            "start = time.perf_counter()\n"
            "once()\n"
            "print(time.perf_counter() - start, file=sys.stderr)\n")
_FILE_DIGEST = ("import hashlib, sys\n"
                "with open(sys.argv[1], 'rb') as f:\n"
                "    print(hashlib.file_digest(f, 'sha256').hexdigest() + '  ' + sys.argv[1])\n")
# (pairs judged: name, against)
PAIRS = [("jitdigest -a blake3", "b3sum"), ("jitdigest -a blake3 --num-threads 0", "b3sum"),
         ("jitdigest -a blake3 --num-threads 1", "b3sum --num-threads 1"),
         ("ceiling: blake3 AUTO", "b3sum"), ("ceiling: blake3 1", "b3sum --num-threads 1"),
         ("jitdigest sum (sha256)", "hashlib.file_digest"),
         ("ceiling: sha256 file_digest", "hashlib.file_digest"),
         ("jitdigest sum (sha256)", "sha256sum")]


def commands(target, tree, extra):
    jd = [sys.executable, "-m", "jitdigest", "sum", "--no-progress", "-a", "blake3", *extra]
    if tree:
        b3 = 'find "$1" -type f -print0 | LC_ALL=C sort -z | xargs -0 b3sum '
        return {"jitdigest -a blake3 -r": [*jd, "-r", target],
                "b3sum --num-threads 1": ["bash", "-c", b3 + "--num-threads 1", "b", target],
                "b3sum": ["bash", "-c", b3, "b", target]}
    return {"jitdigest -a blake3": [*jd, target],
            "jitdigest -a blake3 --num-threads 0": [*jd, "--num-threads", "0", target],
            "jitdigest -a blake3 --num-threads 1": [*jd, "--num-threads", "1", target],
            "b3sum --num-threads 1": ["b3sum", "--num-threads", "1", target],
            "b3sum": ["b3sum", target]}


def sha256_commands(target, extra):
    return {"jitdigest sum (sha256)": [sys.executable, "-m", "jitdigest", "sum",
                                       "--no-progress", *extra, target],
            "hashlib.file_digest": [sys.executable, "-c", _FILE_DIGEST, target],
            "sha256sum": ["sha256sum", target]}


def ceilings(target):
    """Commands whose own timing (on stderr) is the figure: the kernels without start-up
    (jitdigest.file_digest reads as hashlib's does)."""
    cmds = {f"ceiling: blake3 {n}": [sys.executable, "-c", _CEILING, target, n]
            for n in ("AUTO", "1")}
    cmds["ceiling: sha256 file_digest"] = [sys.executable, "-c", _CEILING, target, "sha256"]
    return cmds


def _run(cmd, inner):
    if not inner:
        start = time.perf_counter()
        subprocess.run(cmd, env=ENV, stdout=subprocess.DEVNULL, check=True)
        return time.perf_counter() - start
    proc = subprocess.run(cmd, env=ENV, capture_output=True, check=True)
    return float(proc.stderr.split()[-1])


def measure(label, groups, repeat):
    """``groups``: dicts of commands whose outputs must agree among themselves (by digest);
    a command named "ceiling: ..." reports its own time."""
    cmds = {}
    for group in groups:
        outs = {name: subprocess.run(cmd, env=ENV, capture_output=True, check=True).stdout
                for name, cmd in group.items() if not name.startswith("ceiling")}
        digests = {name: out.split()[:1] for name, out in outs.items()}
        first = next(iter(digests.values()), None)
        for name, digest in digests.items():     # (warms the page and kernel caches)
            assert digest == first, f"{name}'s output differs"
        cmds.update(group)
    times = {name: [] for name in cmds}
    print(f"{label}: load average {os.getloadavg()[0]:.2f} before", end="")
    for _ in range(repeat):
        for name, cmd in cmds.items():
            times[name].append(_run(cmd, name.startswith("ceiling")))
    print(f", {os.getloadavg()[0]:.2f} after")
    meds = {name: statistics.median(v) for name, v in times.items()}
    for name, values in times.items():
        print(f"  {name:38s} median {meds[name]:6.3f} s  best {min(values):6.3f} s")
    for name, other in PAIRS:
        if name in meds and other in meds:
            print(f"  speed of {name} / {other}: {meds[other] / meds[name]:5.2f}x")


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--big-mib", type=int, default=1024, help="size of the large file")
    parser.add_argument("--files", type=int, default=20000, help="files in the tree; 0: none")
    parser.add_argument("--repeat", type=int, default=5, help="timed rounds")
    parser.add_argument("extra", nargs="*", help="jitdigest options, after --")
    args = parser.parse_args(argv)
    if shutil.which("b3sum") is None:
        sys.exit("b3sum is not installed")
    version = subprocess.run(["b3sum", "--version"], capture_output=True, text=True).stdout
    print(f"{machine()}; {version.strip()}")
    shm = "/dev/shm"
    fits = os.path.isdir(shm) and shutil.disk_usage(shm).free > 2 * (args.big_mib << 20)
    tmp = tempfile.mkdtemp(prefix="bench_b3sum.", dir=shm if fits else None)
    try:
        empty = os.path.join(tmp, "empty")
        open(empty, "wb").close()
        measure("start-up (an empty file)", [commands(empty, False, args.extra),
                                             sha256_commands(empty, args.extra)], args.repeat)
        big = os.path.join(tmp, "big.bin")
        make_big(big, args.big_mib)
        measure(f"one file of {args.big_mib} MiB in {os.path.dirname(tmp)}",
                [commands(big, False, args.extra), sha256_commands(big, args.extra),
                 ceilings(big)], args.repeat)
        os.remove(big)
        if args.files:
            tree = os.path.join(tmp, "small")
            make_tree(tree, args.files)
            measure(f"{args.files} files of 1-8 KiB", [commands(tree, True, args.extra)],
                    args.repeat)
    finally:
        shutil.rmtree(tmp)


if __name__ == "__main__":
    main()
