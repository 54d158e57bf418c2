"""Fork at any instant of a first call: a child forked while another thread makes jitdigest's first
call of a kind (importing Numba, loading or compiling kernels, inside a ``prange`` region) must
hash correctly and promptly.

Each trial is a new process: a thread makes the first call of one kind, the main thread forks a
child (``multiprocessing``'s fork start method) after a delay, and the child hashes (the same
kind of call, and a batch of MD5) and sends its digests back; the parent checks them against
hashlib, hmac and the ``blake3`` package. A child still alive after ``--child-limit`` seconds is
a hang. Not part of the test suite (hundreds of processes); the suite runs a few of these
(tests/test_fork.py).

    python tools/fork_trials.py                         # every kind and delay, 20 trials each
    python tools/fork_trials.py --kinds blake3 --delays 0.05 --trials 5
"""
import argparse
import collections
import json
import os
import subprocess
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor

KINDS = ("hash_many", "blake3", "pbkdf2", "hmac", "sha3_256", "cold_hash_many")
DELAYS = (0.0, 0.01, 0.05, 0.2, 0.5)

# One trial, run as ``python -c TRIAL kind delay child_limit``; prints one JSON line.
TRIAL = r'''
import hashlib, hmac as std_hmac, json, multiprocessing as mp, sys, threading, time
import blake3                  # the oracle, imported here: an import cut by the fork is its own
import numpy as np
import jitdigest

kind, delay, limit = sys.argv[1], float(sys.argv[2]), float(sys.argv[3])
rows = np.arange(5000 * 64, dtype=np.uint32).astype(np.uint8).reshape(5000, 64)
big = bytes(range(256)) * (3 << 12)                       # 3 MiB

def call(kind):
    """(jitdigest's call of ``kind``, what the outside oracle says it must return): two
    functions, so that the first call's thread makes only jitdigest's (a fork that cuts
    OpenSSL's work in another thread can leave OpenSSL's locks held in the child)."""
    if kind in ("hash_many", "cold_hash_many"):
        return (lambda: jitdigest.hash_many("sha512", rows).tobytes(),
                lambda: b"".join(hashlib.sha512(r.tobytes()).digest() for r in rows))
    if kind == "blake3":
        return (lambda: __import__("jitdigest.blake3").blake3.blake3(big, max_threads=2).digest(),
                lambda: blake3.blake3(big).digest())
    if kind == "pbkdf2":
        return (lambda: jitdigest.pbkdf2_hmac("sha256", b"pw", b"salt", 2000),
                lambda: hashlib.pbkdf2_hmac("sha256", b"pw", b"salt", 2000))
    if kind == "hmac":
        return (lambda: jitdigest.hmac.new(b"key", b"msg", "sha256").digest(),
                lambda: std_hmac.new(b"key", b"msg", "sha256").digest())
    if kind == "sha3_256":
        return lambda: jitdigest.sha3_256(big).digest(), lambda: hashlib.sha3_256(big).digest()
    raise ValueError(kind)

def child(conn):
    import faulthandler
    faulthandler.dump_traceback_later(max(limit - 2, 1))     # a hang leaves its stack
    wrong = []
    # cold: MD5 alone (as a fresh process would, the child compiles whatever it uses)
    for k in ("md5",) if kind == "cold_hash_many" else (kind, "md5"):
        if k == "md5":
            got = jitdigest.hash_many("md5", rows[:100]).tobytes()
            want = b"".join(hashlib.md5(r.tobytes()).digest() for r in rows[:100])
        else:
            ours, oracle = call(k)
            got, want = ours(), oracle()
        if got != want:
            wrong.append(k)
    conn.send(wrong)
    conn.close()

if kind == "warm-up":               # fill the shared cache: every kind, and the child's MD5
    for k in ("hash_many", "blake3", "pbkdf2", "hmac", "sha3_256"):
        call(k)[0]()
    jitdigest.hash_many("md5", rows[:100])
    sys.exit()
first = threading.Thread(target=call(kind)[0])
first.start()
time.sleep(delay)
ctx = mp.get_context("fork")
receive, send = ctx.Pipe(duplex=False)
t0 = time.monotonic()
proc = ctx.Process(target=child, args=(send,))
proc.start()
fork_wait = time.monotonic() - t0
proc.join(limit)
result = {"hung": proc.is_alive(), "exitcode": proc.exitcode, "fork_wait": fork_wait,
          "child_s": time.monotonic() - t0 - fork_wait}
if proc.is_alive():
    proc.kill()
    proc.join()
result["wrong"] = receive.recv() if receive.poll(0) else None
first.join()
print(json.dumps(result))
'''


def trial(kind, delay, limit, cache):
    env = dict(os.environ)
    if kind == "cold_hash_many":
        cache = tempfile.mkdtemp(prefix="jitdigest-fork-cold-")
    if cache:
        env["JITDIGEST_CACHE_DIR"] = cache
    proc = subprocess.run([sys.executable, "-c", TRIAL, kind, str(delay), str(limit)],
                          env=env, capture_output=True, text=True, timeout=limit + 900)
    lines = proc.stdout.strip().splitlines()
    if "Timeout (" in proc.stderr:
        with open(os.path.join(tempfile.gettempdir(), "jitdigest-fork-hangs.log"), "a") as f:
            f.write(f"--- {kind} delay {delay}\n{proc.stderr}\n")
    if proc.returncode != 0 or not lines:
        return {"hung": False, "exitcode": None, "wrong": None,
                "error": (proc.stderr.strip().splitlines() or ["?"])[-1]}
    return json.loads(lines[-1])


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--kinds", nargs="+", default=KINDS, choices=KINDS)
    parser.add_argument("--delays", nargs="+", type=float, default=DELAYS)
    parser.add_argument("--trials", type=int, default=20)
    parser.add_argument("--child-limit", type=float, default=30.0)
    parser.add_argument("-j", "--jobs", type=int, default=2)
    args = parser.parse_args(argv)
    cache = tempfile.mkdtemp(prefix="jitdigest-fork-warm-")   # the warm kinds share one
    subprocess.run([sys.executable, "-c", TRIAL, "warm-up", "0", "0"], check=True,
                   env=dict(os.environ, JITDIGEST_CACHE_DIR=cache))
    totals = collections.Counter()
    bad = 0
    start = time.monotonic()
    for kind in args.kinds:
        for delay in args.delays:
            with ThreadPoolExecutor(args.jobs) as pool:
                results = list(pool.map(lambda _: trial(kind, delay, args.child_limit, cache),
                                        range(args.trials)))
            hung = sum(r["hung"] for r in results)
            wrong = sum(bool(r.get("wrong")) or (r["wrong"] is None and not r["hung"])
                        for r in results)
            errors = [r["error"] for r in results if "error" in r]
            waits = sorted(r.get("fork_wait", 0) for r in results)
            childs = sorted(r.get("child_s", 0) for r in results)
            totals.update(trials=len(results), hung=hung, wrong=wrong)
            bad += hung + wrong
            print(f"{kind:15} delay {delay:<5} {len(results)} trials: {hung} hung, "
                  f"{wrong} wrong or missing; fork waited median {waits[len(waits) // 2]:.2f} s "
                  f"(max {waits[-1]:.2f}), child median {childs[len(childs) // 2]:.2f} s "
                  f"(max {childs[-1]:.2f})" + (f"; errors: {errors[:2]}" if errors else ""),
                  flush=True)
    print(f"fork trials: {totals['trials']} trials, {totals['hung']} children hung, "
          f"{totals['wrong']} wrong or missing digests, {time.monotonic() - start:.0f} s")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
