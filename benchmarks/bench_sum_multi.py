#!/usr/bin/env python3
"""Wall time of ``jitdigest sum -r -a sha256,md5,sha1 DIR`` (three digests from one read of
each file) against ``find DIR -type f -print0 | xargs -0 sha256sum`` and against
``jitdigest sum -r DIR`` (sha256 alone). The commands run in turn, ``--repeat`` rounds, each a
fresh process (start-up included); medians and ratios to the xargs run are printed. The tree
is DIR if given, else one made under /tmp as bench_cli.py makes its small-file tree (removed
at the end). Extra jitdigest options (e.g. -j 2) go after ``--``.

    python benchmarks/bench_sum_multi.py [--tree /tmp/t20k] [--repeat 5] [-- -j 2]
"""
import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from bench_cli import ENV, make_small_tree  # noqa: E402

ALGOS = "sha256,md5,sha1"


def commands(tree, extra):
    jd = [sys.executable, "-m", "jitdigest", "sum", "--no-progress", "-r", *extra]
    return {
        "xargs sha256sum": ["bash", "-c", 'find "$1" -type f -print0 | xargs -0 sha256sum',
                            "bench", tree],
        "jitdigest sha256": [*jd, tree],
        f"jitdigest {ALGOS}": [*jd, "-a", ALGOS, tree],
    }


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--tree", help="an existing tree (default: make 20,000 files)")
    parser.add_argument("--files", type=int, default=20000, help="files in a made tree")
    parser.add_argument("--repeat", type=int, default=5, help="timed rounds")
    parser.add_argument("extra", nargs="*", help="jitdigest options, after --")
    args = parser.parse_args(argv)
    tmp = None
    tree = args.tree
    if tree is None:
        tmp = tempfile.mkdtemp(prefix="bench_sum_multi.")
        tree = os.path.join(tmp, "small")
        make_small_tree(tree, args.files)
    try:
        cmds = commands(tree, args.extra)
        for cmd in cmds.values():               # warm the page cache and the kernel cache
            subprocess.run(cmd, env=ENV, stdout=subprocess.DEVNULL, check=True)
        times = {label: [] for label in cmds}
        for _ in range(args.repeat):
            for label, cmd in cmds.items():
                start = time.perf_counter()
                subprocess.run(cmd, env=ENV, stdout=subprocess.DEVNULL, check=True)
                times[label].append(time.perf_counter() - start)
        base = statistics.median(times["xargs sha256sum"])
        for label, values in times.items():
            med = statistics.median(values)
            print(f"{label:32s} median {med:6.3f} s  best {min(values):6.3f} s  "
                  f"{med / base:5.2f}x xargs sha256sum")
    finally:
        if tmp is not None:
            shutil.rmtree(tmp)


if __name__ == "__main__":
    main()
