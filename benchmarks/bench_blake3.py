#!/usr/bin/env python3
"""BLAKE3: ``jitdigest.blake3`` against the ``blake3`` package (Rust, its SIMD kernels, held to
one thread with ``max_threads=1``) and against hashlib's sha256, one-shot
``blake3(data).digest()`` on one core, turns taken in rotation (``take_turns``: medians of
self-calibrated repeats). Speeds in MB/s; ratio = jitdigest / the other, in the same run.

    python benchmarks/bench_blake3.py [--sizes 64 1048576] [--rounds 5]
"""
import argparse
import hashlib
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from _timing import machine, take_turns  # noqa: E402


def contenders(data):
    import blake3 as package
    from jitdigest.blake3 import blake3
    expected = package.blake3(data).digest()
    assert blake3(data).digest() == expected
    return {
        "jitdigest.blake3": lambda: blake3(data).digest(),
        "blake3 (package, 1 thread)": lambda: package.blake3(data, max_threads=1).digest(),
        "hashlib.sha256": lambda: hashlib.sha256(data).digest(),
    }


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[64, 1 << 20])
    parser.add_argument("--rounds", type=int, default=5)
    args = parser.parse_args(argv)
    print(machine())
    for size in args.sizes:
        data = os.urandom(size)
        times = take_turns(contenders(data), rounds=args.rounds)
        ours = times["jitdigest.blake3"]
        print(f"{size} B one-shot:")
        for name, t in times.items():
            ratio = "" if name == "jitdigest.blake3" else f"  jitdigest / this = {t / ours:.2f}x"
            print(f"  {name:<28} {size / t / 1e6:10.1f} MB/s  {t * 1e6:10.2f} us{ratio}")


if __name__ == "__main__":
    main()
