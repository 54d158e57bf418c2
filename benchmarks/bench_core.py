#!/usr/bin/env python3
"""Single-message speed of jitdigest's kernels against hashlib, as ratios from one run.

For each algorithm and message length (16, 64, 1024, 16384 B and 1 MiB) it times
``jitdigest.<name>(data).digest()`` once per per-message backend this process can run
(``jitdigest.backends(name)``: e.g. ``sha_ni``, ``unrolled``, ``portable``), each forced with
``with jitdigest.backend(...)``, against hashlib (OpenSSL with every CPU extension it uses) and
OpenSSL's portable code (hashlib in a child process with ``OPENSSL_ia32cap`` masking all
extensions). Rows ``api`` time what a user writes, ``jitdigest.sha256(data).digest()`` with
dispatch's own choice, against ``hashlib.sha256(data).digest()`` taking turns in this process.
For MD5, SHA-1 and SHA-2 it also times many 64-byte messages hashed inside one compiled call
(what the batch path does): a Numba loop over the Merkle-Damgard one-shot driver with each
backend module's ``compress``.

    python benchmarks/bench_core.py [--algorithms md5 sha256 ...] [--sizes 64 1048576] [--quick]
"""
import argparse
import hashlib
import json
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from _timing import OPENSSL_PORTABLE, machine, run_child, seconds_per_call  # noqa: E402

SIZES = [16, 64, 1024, 16384, 1 << 20]
DEFAULT_ALGORITHMS = ["md5", "sha1", "sha224", "sha256", "sha384", "sha512", "sha3_256",
                      "blake2b", "blake2s"]

HASHLIB_CHILD = """
import hashlib, json, os, sys
sys.path.insert(0, os.path.join(os.environ["PYTHONPATH"].split(os.pathsep)[0], "benchmarks"))
from _timing import seconds_per_call
names, sizes = sys.argv[1].split(","), [int(s) for s in sys.argv[2].split(",")]
out = {}
for name in names:
    for size in sizes:
        data = os.urandom(size)
        ctor = getattr(hashlib, name, None) or (lambda d, n=name: hashlib.new(n, d))
        out[f"{name}:{size}"] = seconds_per_call(lambda: ctor(data).digest())
print(json.dumps(out))
"""


def time_jitdigest(name, sizes):
    """{(backend, size): seconds} of ``jitdigest.<name>(data).digest()`` under each
    per-message backend, forced with ``jitdigest.backend``."""
    import functools

    import jitdigest
    from _backends import per_message
    ctor = getattr(jitdigest, name, None) or functools.partial(jitdigest.new, name)
    rows = {}
    for backend in per_message(name):
        with jitdigest.backend(backend):
            for size in sizes:
                data = os.urandom(size)
                assert ctor(data).digest() == hashlib.new(name, data).digest()
                rows[(backend, size)] = seconds_per_call(lambda: ctor(data).digest())
    return rows


def time_public_api(name, sizes, rounds=5):
    """``jitdigest.<name>(data).digest()`` -- the constructor users call, dispatch's kernel,
    the bytes one-shot path -- against ``hashlib.<name>(data).digest()``, timed in turn in this
    process: {size: (jitdigest seconds, hashlib seconds)}."""
    import jitdigest
    from _timing import take_turns
    ours, theirs = getattr(jitdigest, name, None), getattr(hashlib, name, None)
    if ours is None or theirs is None:
        return {}
    rows = {}
    for size in sizes:
        data = os.urandom(size)
        assert ours(data).digest() == theirs(data).digest()
        t = take_turns({"jitdigest": lambda: ours(data).digest(),
                        "hashlib": lambda: theirs(data).digest()}, rounds=rounds)
        rows[size] = (t["jitdigest"], t["hashlib"])
    return rows


def time_batch_loop(name, count=20000):
    """Many 64-byte messages hashed by one compiled loop over the one-shot driver
    (``md_oneshot``) with the ``compress`` and padded last block (``FINISH``) of each backend
    module of the family that this process can run: {backend: seconds per message}. The block
    size comes from ``MERKLE_DAMGARD``; Keccak and BLAKE2 have no such driver and give {}."""
    import importlib

    import numba
    import numpy as np

    import jitdigest
    from jitdigest.base.algorithms import MERKLE_DAMGARD, SPECS
    from jitdigest.kernels._md import md_oneshot
    spec = SPECS[name]
    if spec.family not in MERKLE_DAMGARD:
        return {}
    bs = MERKLE_DAMGARD[spec.family][0]
    usable = set(jitdigest.backends(name))
    family = importlib.import_module("jitdigest.kernels." + spec.family)
    rows = {}
    msgs = np.frombuffer(os.urandom(64 * count), np.uint8).reshape(count, 64)
    for module in family.backends():            # the family's per-message modules, best first
        backend = getattr(module, "NAME", module.__name__.rpartition(".")[2])
        if backend not in usable:
            continue
        compress, finish = module.compress, module.FINISH

        @numba.njit(nogil=True)
        def loop(iv, msgs, out):
            for i in range(msgs.shape[0]):
                md_oneshot(compress, finish, bs, iv, msgs[i], out[i])

        out = np.empty((count, spec.digest_size), np.uint8)
        loop(spec.initial_state, msgs, out)
        assert out[5].tobytes() == hashlib.new(name, msgs[5].tobytes()).digest()
        rows[backend] = seconds_per_call(lambda: loop(spec.initial_state, msgs, out)) / count
    return rows


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--algorithms", nargs="+", default=DEFAULT_ALGORITHMS)
    parser.add_argument("--sizes", nargs="+", type=int, default=SIZES)
    parser.add_argument("--quick", action="store_true", help="64 B and 1 MiB only")
    parser.add_argument("--json", help="also write the results to this file")
    args = parser.parse_args()
    sizes = [64, 1 << 20] if args.quick else args.sizes

    ref = run_child(HASHLIB_CHILD, [",".join(args.algorithms), ",".join(map(str, sizes))])
    portable_ref = run_child(HASHLIB_CHILD, [",".join(args.algorithms), ",".join(map(str, sizes))],
                             env=OPENSSL_PORTABLE)
    print(f"# {machine()}")
    print("# MB/s = 10**6 bytes/s of new(data).digest(); ratios against hashlib (OpenSSL) and "
          "OpenSSL's portable code, same run")
    header = (f"{'algorithm':<11}{'bytes':>9}  {'kernel':<9}{'ops/ms':>9}{'MB/s':>9}"
              f"{'hashlib MB/s':>13}{'ossl-port MB/s':>15}{'vs hashlib':>11}{'vs ossl-port':>13}")
    print(header)
    results = []
    for name in args.algorithms:
        rows = time_jitdigest(name, sizes)
        for (kernel, size), sec in sorted(rows.items(), key=lambda kv: (kv[0][1], kv[0][0])):
            h_sec, p_sec = ref[f"{name}:{size}"], portable_ref[f"{name}:{size}"]
            results.append(dict(algorithm=name, size=size, kernel=kernel, seconds=sec,
                                hashlib_seconds=h_sec, openssl_portable_seconds=p_sec))
            print(f"{name:<11}{size:>9}  {kernel:<9}{1e-3 / sec:>9.1f}{size / sec / 1e6:>9.1f}"
                  f"{size / h_sec / 1e6:>13.1f}{size / p_sec / 1e6:>15.1f}"
                  f"{h_sec / sec:>11.2f}{p_sec / sec:>13.2f}")
        for size, (sec, h_sec) in time_public_api(name, sizes).items():
            print(f"{name:<11}{size:>9}  {'api':<9}{1e-3 / sec:>9.1f}{size / sec / 1e6:>9.1f}"
                  f"{size / h_sec / 1e6:>13.1f}{'in turn':>15}{h_sec / sec:>11.2f}")
            results.append(dict(algorithm=name, size=size, kernel="api", seconds=sec,
                                hashlib_seconds=h_sec))
        for kernel, sec in time_batch_loop(name).items():
            h_sec = ref.get(f"{name}:64")
            extra = f"{h_sec / sec:>11.2f}" if h_sec else ""
            print(f"{name:<11}{'64 xN':>9}  {kernel:<9}{1e-3 / sec:>9.1f}{64 / sec / 1e6:>9.1f}"
                  f"{'(loop in one compiled call)':>28}{extra}")
            results.append(dict(algorithm=name, size=64, kernel=kernel + "-loop", seconds=sec,
                                hashlib_seconds=h_sec))
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"machine": machine(), "results": results}, f, indent=1)


if __name__ == "__main__":
    main()
