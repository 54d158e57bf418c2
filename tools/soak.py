#!/usr/bin/env python3
"""Soak test: random mixed jitdigest calls for N minutes, each result checked against an outside
oracle (hashlib, hmac, uuid, the ``blake3`` package), never against jitdigest's own output.

The test suite checks each API alone, briefly, in a fresh process. This runs all of them at once
for a long time, as a busy service would: 4 threads calling concurrently, hash objects updated
from several threads, forks while the other threads hash, ``jitdigest sum`` children (some
interrupted by SIGINT), and the kernel cache folder removed under the running process. It finds
what only shows then: wrong digests under contention, deadlocks, crashes, leaks (RSS growth,
measured after a warm-up, so that first-use compiles don't count).

    python tools/soak.py --minutes 10 [--seed 1] [--cache DIR] [--max-rss-growth 50]
    python tools/soak.py --replay KIND:SEED     # rerun one reported call, single-threaded

Not part of the test suite; its kernel cache: ``setup_cache``; its output: ``soak``. Exit status
1 on any mismatch, error, hang or RSS growth over the limit (each failure with its KIND:SEED).
"""
import argparse
import collections
import faulthandler
import os
import random
import shutil
import sys
import tempfile
import threading
import time
import traceback
import warnings

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(1, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))),
                                "benchmarks"))
from _timing import cpu_model  # noqa: E402  (benchmarks/_timing.py: result headers' CPU name)

HANG_S = 120            # a call running longer than this is a hang
STOP = threading.Event()
SLOTS = {}              # thread ident -> [start (monotonic) or None, "KIND:SEED details", reported]


class Stats:
    def __init__(self):
        self.lock = threading.Lock()
        self.calls, self.events, self.warned, self.failed = (collections.Counter()
                                                             for _ in range(4))
        self.shown = set()

    def count(self, api, event=False):
        with self.lock:
            (self.events if event else self.calls)[api] += 1

    def fail(self, kind, what, detail, key=None):
        """Count a failure (mismatch, error, hang); print it (the first 20 of a kind, or once a
        key)."""
        with self.lock:
            self.failed[kind] += 1
            show = self.failed[kind] <= 20 if key is None else key not in self.shown
            self.shown.add(key)
            if show:
                print(f"{kind.upper()} in {what}: {detail}", file=sys.stderr, flush=True)

    def line(self):
        f = self.failed
        return (f"{sum(self.calls.values())} calls, {f['mismatch']} mismatches, {f['error']} "
                f"errors, {f['hang']} hangs")


S = Stats()


def current():
    slot = SLOTS.get(threading.get_ident())
    return slot[1] if slot else "?"


def note(text):
    """Record details of the running call (printed with a hang or a failure)."""
    slot = SLOTS.get(threading.get_ident())
    if slot is not None:
        slot[1] = slot[1].split(" ", 1)[0] + " " + text


def check(api, got, want, extra="", call=True):
    """Compare with the oracle's value; counts a call of api unless call=False."""
    if call:
        S.count(api)
    if got != want:
        S.fail("mismatch", current(), f"{api} {extra}: got {repr(got)[:160]}, "
               f"expected {repr(want)[:160]}")


def error(what, exc):
    """An exception (printed with its traceback once per type, message start and place)."""
    tb = traceback.extract_tb(exc.__traceback__)
    key = (type(exc).__name__, str(exc)[:60]) + ((tb[-1].filename, tb[-1].lineno) if tb else ())
    S.fail("error", what, "".join(traceback.format_exception(exc)), key)


def run_call(kind, seed):
    """One call of soak_calls.call_KIND, its randomness from seed; failures counted, not raised."""
    import soak_calls
    slot = SLOTS[threading.get_ident()] = [time.monotonic(), f"{kind}:{seed}", False]
    try:
        getattr(soak_calls, "call_" + kind)(random.Random(seed))
    except Exception as exc:
        error(slot[1], exc)
    finally:
        slot[0] = None


def vmrss_mb():
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    import resource
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def worker(seed, kinds, weights):
    rng = random.Random(seed)
    while not STOP.is_set():
        kind = rng.choices(kinds, weights)[0]
        run_call(kind, rng.getrandbits(48))


def events(seed, cache):
    """`jitdigest sum` children and cache removals, now and then, beside the workers."""
    rng = random.Random(seed)
    next_rmtree = time.monotonic() + rng.uniform(10, 60)
    while not STOP.wait(rng.uniform(4, 15)):
        if time.monotonic() >= next_rmtree:
            next_rmtree = time.monotonic() + rng.uniform(40, 120)
            S.count("cache rmtree", event=True)
            shutil.rmtree(cache, ignore_errors=True)
            continue
        run_call(rng.choice(("sum", "sum_sigint")), rng.getrandbits(48))


def watchdog():
    while not STOP.wait(1.0):
        now = time.monotonic()
        for ident, slot in list(SLOTS.items()):
            start = slot[0]
            if start is not None and not slot[2] and now - start > HANG_S:
                slot[2] = True
                S.fail("hang", slot[1], f"running {now - start:.0f} s (thread {ident}); threads:")
                with S.lock:
                    faulthandler.dump_traceback(file=sys.stderr, all_threads=True)
                    sys.stderr.flush()


def setup_cache(args):
    """JITDIGEST_CACHE_DIR is set to a fresh private folder (mode 0o700, removed at the end)
    before jitdigest is imported; ``--cache DIR`` seeds it from DIR, and fills DIR after warm-up
    when DIR is empty, so that later runs compile nothing."""
    cache = tempfile.mkdtemp(prefix="soak-cache-")
    os.chmod(cache, 0o700)
    seeded = bool(args.cache and os.path.isdir(args.cache) and os.listdir(args.cache))
    if seeded:
        shutil.copytree(args.cache, cache, dirs_exist_ok=True, symlinks=True)
    os.environ["JITDIGEST_CACHE_DIR"] = cache       # before jitdigest is imported
    return cache, seeded


def count_warning(message, category, filename, lineno, file=None, line=None):
    with S.lock:
        S.warned[category.__name__] += 1
        if S.warned[category.__name__] == 1:
            print(f"(first {category.__name__}: {str(message)[:300]})", file=sys.stderr,
                  flush=True)


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--minutes", type=float, default=10.0)
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--threads", type=int, default=4)
    p.add_argument("--max-rss-growth", type=float, default=50.0, metavar="MB")
    p.add_argument("--cache", metavar="DIR", help="seed the (private copy of the) kernel cache "
                   "from DIR; an empty or missing DIR is filled after warm-up")
    p.add_argument("--replay", metavar="KIND:SEED", help="run one call, then report")
    args = p.parse_args()

    cache, seeded = setup_cache(args)
    import soak_calls       # imports jitdigest: after JITDIGEST_CACHE_DIR is set
    work = tempfile.mkdtemp(prefix="soak-files-")
    soak_calls.init(work, sys.modules[__name__])
    warnings.showwarning = count_warning
    faulthandler.enable()
    code = 0
    try:
        if args.replay:
            kind, seed = args.replay.split(":")
            run_call(kind, int(seed))
            print(f"replay {args.replay}: {S.line()}")
            code = int(bool(S.failed))
        else:
            code = soak(args, cache, seeded, soak_calls)
    finally:
        STOP.set()
        shutil.rmtree(work, ignore_errors=True)
        shutil.rmtree(cache, ignore_errors=True)
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(code)          # hung threads (reported) must not keep the process alive


def soak(args, cache, seeded, calls):
    """The timed run: progress printed every minute, then one summary line; each failure is
    printed with its call's KIND:SEED (see ``--replay``). Returns the exit status."""
    t0 = time.monotonic()
    print(f"soak: seed {args.seed}, {args.minutes:g} min, {args.threads} threads, cache {cache}"
          f"{' (seeded from ' + args.cache + ')' if seeded else ''}; warming up ...", flush=True)
    threading.Thread(target=watchdog, daemon=True).start()
    warm = random.Random(args.seed - 1)
    for kind, n in calls.WARMUP:                     # compile every kernel used before timing
        for _ in range(n):
            run_call(kind, warm.getrandbits(48))
    if args.cache and not seeded:
        shutil.copytree(cache, args.cache, dirs_exist_ok=True, symlinks=True)
    print(f"soak: warm-up {time.monotonic() - t0:.0f} s, {S.line()}, RSS "
          f"{vmrss_mb():.1f} MB", flush=True)

    duration = args.minutes * 60
    start = time.monotonic()
    end = start + duration
    kinds, weights = zip(*calls.WEIGHTS.items())
    threads = [threading.Thread(target=worker, args=(args.seed * 1000 + i, kinds, weights),
                                daemon=True) for i in range(args.threads)]
    threads.append(threading.Thread(target=events, args=(args.seed * 1000 + 999, cache),
                                    daemon=True))
    for t in threads:
        t.start()
    rss_at = start + min(60.0, 0.2 * duration)       # concurrent warm-up before the baseline
    rss0 = None
    next_progress = start + 60
    forks = random.Random(args.seed * 1000 + 998)
    next_fork = start + forks.uniform(3, 20)
    while True:
        now = time.monotonic()
        if now >= end:
            break
        if now >= next_fork:        # from the main thread (Numba's TBB layer wants that)
            run_call("fork", forks.getrandbits(48))
            next_fork = time.monotonic() + forks.uniform(5, 25)
        if rss0 is None and now >= rss_at:
            rss0 = vmrss_mb()
        if now >= next_progress:
            next_progress += 60
            print(f"soak: {(now - start) / 60:.0f} min, {S.line()}, RSS {vmrss_mb():.1f} MB",
                  flush=True)
        time.sleep(min(0.5, max(0.0, end - now)))
    STOP.set()
    deadline = time.monotonic() + HANG_S + 10
    for t in threads:
        t.join(max(0.0, deadline - time.monotonic()))
    stuck = [t for t in threads if t.is_alive()]
    for slot in list(SLOTS.values()):
        if slot[0] is not None and not slot[2]:
            S.fail("hang", slot[1], "still running at the end")
    rss1 = vmrss_mb()
    rss0 = rss1 if rss0 is None else rss0
    growth = rss1 - rss0
    minutes = (time.monotonic() - start) / 60
    print("soak: calls per API: " + ", ".join(f"{k} {v}" for k, v in sorted(S.calls.items())))
    print("soak: events: " + ", ".join(f"{k} {v}" for k, v in sorted(S.events.items())))
    if S.warned:
        print("soak: warnings: " + ", ".join(f"{k} {v}" for k, v in S.warned.items()))
    print(f"soak: {S.line()}, RSS {growth:+.1f} MB (after warm-up {rss0:.1f} MB -> end "
          f"{rss1:.1f} MB), {minutes:.1f} min, CPU {cpu_model()}", flush=True)
    return int(bool(S.failed or stuck or growth > args.max_rss_growth))


if __name__ == "__main__":
    main()
