#!/usr/bin/env python3
"""BLAKE3: ``jitdigest.blake3`` against the ``blake3`` package (Rust, its SIMD kernels, held to
one thread with ``max_threads=1``) and against hashlib's sha256 and blake2b, one-shot
``blake3(data).digest()`` on one core, turns taken in rotation (``take_turns``: medians of
self-calibrated repeats). Speeds in MB/s; ratio = jitdigest / the other, in the same run.
Then many messages: ``jitdigest.hash_many("blake3", ...)`` on one thread (``threads=1``), the
rows as a 2-D array and as a list of bytes, against a loop of ``blake3.blake3(m).digest()``
(the package), in turns.

    python benchmarks/bench_blake3.py [--sizes 64 1048576] [--rounds 5]
                                      [--rows 100000] [--row-sizes 64 1024]
                                      [--all-cores 1048576 67108864]
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
        "hashlib.blake2b": lambda: hashlib.blake2b(data).digest(),
    }


def all_core_contenders(data):
    """Each BLAKE3 with every core (``max_threads=AUTO``) and with one, on the same input: two
    sets, timed in separate rotations (the package's worker threads spin a while after a call,
    which would take a core from the call after it)."""
    import blake3 as package
    from jitdigest.blake3 import blake3
    expected = package.blake3(data).digest()
    assert blake3(data, max_threads=blake3.AUTO).digest() == expected
    return ({
        "jitdigest.blake3, all cores": lambda: blake3(data, max_threads=blake3.AUTO).digest(),
        "jitdigest.blake3, 1 thread": lambda: blake3(data).digest(),
    }, {
        "blake3 (package), all cores": lambda: package.blake3(
            data, max_threads=package.blake3.AUTO).digest(),
        "blake3 (package), 1 thread": lambda: package.blake3(data, max_threads=1).digest(),
    })


def many_contenders(rows):
    """hash_many on one thread, 2-D and list, and the package's loop, on the same rows."""
    import blake3 as package
    import numpy as np

    import jitdigest
    grid = np.frombuffer(os.urandom(rows[0] * rows[1]), np.uint8).reshape(rows)
    messages = [bytes(r) for r in grid]
    expected = [package.blake3(m).digest() for m in messages]
    for form in (grid, messages):
        assert [bytes(r) for r in jitdigest.hash_many("blake3", form, threads=1)] == expected
    return {
        "hash_many, 2-D array": lambda: jitdigest.hash_many("blake3", grid, threads=1),
        "hash_many, list of bytes": lambda: jitdigest.hash_many("blake3", messages, threads=1),
        "loop of blake3.blake3(m)": lambda: [package.blake3(m).digest() for m in messages],
    }


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sizes", type=int, nargs="*", default=[64, 1 << 20])
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--rows", type=int, default=100_000,
                        help="messages per hash_many call (0: skip that part)")
    parser.add_argument("--row-sizes", type=int, nargs="+", default=[64, 1024])
    parser.add_argument("--all-cores", type=int, nargs="*", default=[], metavar="BYTES",
                        help="also time these sizes with every core against one thread")
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
    for size in args.all_cores:
        times = {}
        for group in all_core_contenders(os.urandom(size)):
            times.update(take_turns(group, rounds=args.rounds))
        print(f"{size} B one-shot, all cores ({os.cpu_count()}) against one thread:")
        for name, t in times.items():
            base = times[name.split(",")[0] + ", 1 thread"]
            ratio = f"  1 thread / this = {base / t:.2f}x" if t != base else ""
            print(f"  {name:<28} {size / t / 1e6:10.1f} MB/s  {t * 1e3:10.2f} ms{ratio}")
    for size in args.row_sizes if args.rows else ():
        times = take_turns(many_contenders((args.rows, size)), rounds=args.rounds)
        loop = times["loop of blake3.blake3(m)"]
        print(f"{args.rows} rows of {size} B, one thread:")
        for name, t in times.items():
            ratio = f"  loop / this = {loop / t:.1f}x" if t != loop else ""
            print(f"  {name:<28} {args.rows * size / t / 1e6:10.1f} MB/s  {t * 1e3:10.2f} ms"
                  f"{ratio}")


if __name__ == "__main__":
    main()
