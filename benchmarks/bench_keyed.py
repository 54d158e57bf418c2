#!/usr/bin/env python3
"""Keyed hashing against the standard library, as ratios within one run (contenders timed in
turns, medians):

* HMAC one-shot: ``jitdigest.hmac.digest(key, msg, name)`` against ``hmac.digest`` (OpenSSL),
  and ``jitdigest.hmac.new(key, msg, name).digest()`` against ``hmac.new(...)``, 64-byte
  messages, 32-byte key;
* PBKDF2: ``jitdigest.pbkdf2_hmac(name, b"password", b"salt", N)`` against
  ``hashlib.pbkdf2_hmac`` (same bytes checked), sha1, sha256, sha384, sha512;
* scrypt: ``jitdigest.scrypt(b"password", salt=b"NaCl", n=N, r=R, p=P)`` against
  ``hashlib.scrypt`` (same bytes checked) for RFC 7914's parameter sets and two more;
* ``hmac_many(name, key, rows, threads=1)`` on 100k rows of 64 B (a 2-D array, one core)
  against a loop of ``hmac.new(key, row, name).digest()`` over the rows as ``bytes``, and
  against ``hash_many`` on the same rows.

Ratios are speed-ups: the standard library's time over jitdigest's. The first lines name the
backend serving each algorithm (``jitdigest.info()``): per message for HMAC and PBKDF2, the
lane kernel for ``hmac_many``.

    python benchmarks/bench_keyed.py [--iterations 100000] [--rows 100000] [--rounds 3]
"""
import argparse
import hashlib
import hmac
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from _timing import ROOT, machine, take_turns  # noqa: E402

sys.path.insert(0, ROOT)
import numpy as np  # noqa: E402

import jitdigest  # noqa: E402
from jitdigest import hmac as jhmac  # noqa: E402
from _backends import serving, serving_batch  # noqa: E402

HMAC_ALGORITHMS = ["md5", "sha1", "sha256", "sha512"]
PBKDF2_ALGORITHMS = ["sha1", "sha256", "sha384", "sha512"]
# (n, r, p): RFC 7914 section 12's first three, a short r, and 64 MiB (maxmem raised)
SCRYPT_PARAMETERS = [(16, 1, 1), (1024, 8, 16), (16384, 8, 1), (16384, 1, 1), (65536, 8, 1)]


def row(label, ours, theirs, what="speed-up"):
    print(f"  {label:<44} jitdigest {ours * 1e6:>10.2f} us  stdlib {theirs * 1e6:>10.2f} us"
          f"  {what} {theirs / ours:5.2f}x")


def bench_hmac(rounds):
    print("HMAC one-shot, 64-byte message, 32-byte key")
    key, msg = os.urandom(32), os.urandom(64)
    for name in HMAC_ALGORITHMS:
        assert jhmac.digest(key, msg, name) == hmac.digest(key, msg, name)
        t = take_turns({"jd": lambda: jhmac.digest(key, msg, name),
                        "std": lambda: hmac.digest(key, msg, name),
                        "jd_new": lambda: jhmac.new(key, msg, name).digest(),
                        "std_new": lambda: hmac.new(key, msg, name).digest()}, rounds)
        row(f"{name}: hmac.digest(key, msg, name)", t["jd"], t["std"])
        row(f"{name}: hmac.new(key, msg, name).digest()", t["jd_new"], t["std_new"])


def bench_pbkdf2(iterations, rounds):
    print(f"pbkdf2_hmac, {iterations} iterations")
    for name in PBKDF2_ALGORITHMS:
        args = (name, b"password", b"salt", iterations)
        assert jitdigest.pbkdf2_hmac(*args) == hashlib.pbkdf2_hmac(*args)
        t = take_turns({"jd": lambda: jitdigest.pbkdf2_hmac(*args),
                        "std": lambda: hashlib.pbkdf2_hmac(*args)}, rounds, min_time=0.2,
                       repeat=3)
        row(f"{name}", t["jd"], t["std"])


def bench_scrypt(rounds):
    print("scrypt, 64-byte key")
    if not hasattr(hashlib, "scrypt"):
        print("  (this Python's hashlib has no scrypt)")
        return
    for n, r, p in SCRYPT_PARAMETERS:
        kw = dict(salt=b"NaCl", n=n, r=r, p=p, maxmem=2 ** 30)
        assert jitdigest.scrypt(b"password", **kw) == hashlib.scrypt(b"password", **kw)
        t = take_turns({"jd": lambda: jitdigest.scrypt(b"password", **kw),
                        "std": lambda: hashlib.scrypt(b"password", **kw)}, rounds,
                       min_time=0.2, repeat=3)
        row(f"n={n}, r={r}, p={p}", t["jd"], t["std"])


def bench_hmac_many(count, rounds):
    print(f"hmac_many, {count} rows of 64 B, one core")
    rng = np.random.default_rng(64)
    rows = rng.integers(0, 256, (count, 64), dtype=np.uint8)
    msgs = [bytes(r) for r in rows]
    key = os.urandom(32)
    for name in ("sha256", "md5", "sha1"):
        got = jitdigest.hmac_many(name, key, rows, threads=1)
        assert [bytes(g) for g in got[:1000]] == [hmac.new(key, m, name).digest()
                                                  for m in msgs[:1000]]
        out = np.empty_like(got)
        t = take_turns({
            "jd": lambda: jitdigest.hmac_many(name, key, rows, out=out, threads=1),
            "std": lambda: [hmac.new(key, m, name).digest() for m in msgs],
            "hash_many": lambda: jitdigest.hash_many(name, rows, out=out, threads=1),
        }, rounds, min_time=0.2, repeat=3)
        row(f"{name}: hmac_many vs hmac.new loop", t["jd"], t["std"])
        print(f"  {name}: hmac_many speed / hash_many speed on the same rows: "
              f"{t['hash_many'] / t['jd']:.2f} (hash_many {t['hash_many'] * 1e3:.1f} ms, "
              f"hmac_many {t['jd'] * 1e3:.1f} ms)")


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--iterations", type=int, default=100_000)
    parser.add_argument("--rows", type=int, default=100_000)
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args(argv)
    print(machine())
    for name in sorted(set(HMAC_ALGORITHMS + PBKDF2_ALGORITHMS)):
        print(f"  {name}: backend {serving(name)}, hmac_many {serving_batch(name)}")
    bench_hmac(args.rounds)
    bench_pbkdf2(args.iterations, args.rounds)
    bench_scrypt(args.rounds)
    bench_hmac_many(args.rows, args.rounds)


if __name__ == "__main__":
    main()
