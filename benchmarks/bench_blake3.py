#!/usr/bin/env python3
"""BLAKE3: ``jitdigest.blake3`` against the ``blake3`` package (Rust, its SIMD kernels) and
against hashlib's sha256 and blake2b, one-shot ``blake3(data).digest()``, turns taken in rotation
(``paired_turns``: every contender timed in each round, self-calibrated repeats; times are
medians over rounds, ratios medians of the ratios within each round).

One thread: ``blake3(data)`` (one thread by default) against ``blake3.blake3(data,
max_threads=1)``. All threads: both with ``max_threads=AUTO``, in a rotation of their own, with
a pause before each turn (the package's worker threads spin a while after a call, which would
take a core from the call after it). Speeds in GB/s; ratio = jitdigest's speed / the
package's, in the same run. The
header names the CPU, Numba's compile target and the backend serving (force the AVX2 one
with ``JITDIGEST_DISABLE=avx512``).

Then many messages: ``jitdigest.hash_many("blake3", ...)`` on one thread (``threads=1``), the
rows as a 2-D array and as a list of bytes, against a loop of ``blake3.blake3(m).digest()``.

    python benchmarks/bench_blake3.py [--sizes 64 1024 ...] [--all-threads 67108864 ...]
                                      [--rounds 5] [--rows 100000] [--row-sizes 64 1024]
"""
import argparse
import hashlib
import os
import statistics
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from _timing import machine, seconds_per_call  # noqa: E402

KIB, MIB = 1 << 10, 1 << 20
SIZES = [64, KIB, 16 * KIB, 256 * KIB, MIB, 64 * MIB]
ONE = ("jitdigest", "package", "hashlib.sha256", "hashlib.blake2b")


def label(size):
    for unit, name in ((MIB, "MiB"), (KIB, "KiB")):
        if size >= unit and size % unit == 0:
            return f"{size // unit} {name}"
    return f"{size} B"


def header():
    """The machine line, Numba's target and the backend that serves BLAKE3 here."""
    from jitdigest.blake3 import backend_name
    from jitdigest.engine import cpu
    return (f"{machine()}\nNumba target: {cpu.describe()['target_cpu']}; jitdigest.blake3 backend: "
            f"{backend_name()}; JITDIGEST_DISABLE={os.environ.get('JITDIGEST_DISABLE', '')!r}")


def one_thread(data):
    import blake3 as package
    from jitdigest.blake3 import blake3
    expected = package.blake3(data).digest()
    assert blake3(data).digest() == expected
    return {
        "jitdigest": lambda: blake3(data).digest(),
        "package": lambda: package.blake3(data, max_threads=1).digest(),
        "hashlib.sha256": lambda: hashlib.sha256(data).digest(),
        "hashlib.blake2b": lambda: hashlib.blake2b(data).digest(),
    }


def all_threads(data):
    import blake3 as package
    from jitdigest.blake3 import blake3
    expected = package.blake3(data).digest()
    assert blake3(data, max_threads=blake3.AUTO).digest() == expected
    return ({"jitdigest": lambda: blake3(data, max_threads=blake3.AUTO).digest()},
            {"package": lambda: package.blake3(data, max_threads=package.blake3.AUTO).digest()})


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


def paired_turns(fns, rounds):
    """({name: median seconds per call}, {name: median over rounds of the first contender's
    speed / this one's}): every round times each contender in turn (``seconds_per_call``), and
    a ratio is taken within a round, so that a slow spell on a shared machine, which moves
    the absolute times, moves both sides of a ratio."""
    samples = {name: [] for name in fns}
    for _ in range(rounds):
        for name, fn in fns.items():
            time.sleep(0.005)
            samples[name].append(seconds_per_call(fn, min_time=0.02, repeat=3))
    first = next(iter(fns))
    ratios = {name: statistics.median(other / ours for ours, other in
                                      zip(samples[first], samples[name]))
              for name in fns}
    return {name: statistics.median(s) for name, s in samples.items()}, ratios


def gbps(size, seconds):
    return f"{size / seconds / 1e9:.2f}"


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sizes", type=int, nargs="*", default=SIZES)
    parser.add_argument("--all-threads", type=int, nargs="*", default=SIZES, metavar="BYTES")
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--rows", type=int, default=100_000,
                        help="messages per hash_many call (0: skip that part)")
    parser.add_argument("--row-sizes", type=int, nargs="+", default=[64, 1024])
    args = parser.parse_args(argv)
    print(header())
    if args.sizes:
        print("\nOne thread, one-shot digest, GB/s (ratio: jitdigest / the package)\n")
        print("| size | jitdigest.blake3 | package | ratio | hashlib sha256 | hashlib blake2b "
              "| time, jitdigest | time, package |")
        print("|---|---|---|---|---|---|---|---|")
        for size in args.sizes:
            t, ratio = paired_turns(one_thread(os.urandom(size)), args.rounds)
            print(f"| {label(size)} | {gbps(size, t['jitdigest'])} | {gbps(size, t['package'])} "
                  f"| {ratio['package']:.2f}x | {gbps(size, t['hashlib.sha256'])} "
                  f"| {gbps(size, t['hashlib.blake2b'])} | {t['jitdigest'] * 1e6:.2f} us "
                  f"| {t['package'] * 1e6:.2f} us |", flush=True)
    if args.all_threads:
        print(f"\nAll threads (max_threads=AUTO, {os.cpu_count()} cores), GB/s\n")
        print("| size | jitdigest.blake3 | package | ratio |")
        print("|---|---|---|---|")
        for size in args.all_threads:
            ours, theirs = all_threads(os.urandom(size))
            t, ratio = paired_turns({**ours, **theirs}, args.rounds)
            print(f"| {label(size)} | {gbps(size, t['jitdigest'])} | {gbps(size, t['package'])} "
                  f"| {ratio['package']:.2f}x |", flush=True)
    for size in args.row_sizes if args.rows else ():
        times, _ = paired_turns(many_contenders((args.rows, size)), args.rounds)
        loop = times["loop of blake3.blake3(m)"]
        print(f"\n{args.rows} rows of {size} B, one thread:")
        for name, t in times.items():
            ratio = f"  loop / this = {loop / t:.1f}x" if t != loop else ""
            print(f"  {name:<28} {args.rows * size / t / 1e6:10.1f} MB/s  {t * 1e3:10.2f} ms"
                  f"{ratio}")


if __name__ == "__main__":
    main()
