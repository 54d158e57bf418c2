"""Child-process scenarios for tests/test_parallel.py: each runs in a fresh interpreter (the
threading layer is chosen once per process, a fork needs a process to fork) and prints one JSON
line with what it saw. Expected digests come from hashlib.

    python tests/parallel_child.py threads     8 threads of hash_many + a thread of sha256()
    python tests/parallel_child.py fork-after  forks after a parallel call, 20 children hash
    python tests/parallel_child.py fork-load   forks while another thread compiles
"""
import hashlib
import json
import multiprocessing
import sys
import threading
import time

import numpy as np

import jitdigest

ROWS = 200_000                 # rows per hash_many call: 64 B each, well over the parallel cut
WIDTH = 64


def _batch(seed, n=ROWS, name="md5"):
    rows = np.random.default_rng(seed).integers(0, 256, (n, WIDTH), dtype=np.uint8)
    want = np.frombuffer(b"".join(hashlib.new(name, r.tobytes()).digest() for r in rows),
                         np.uint8).reshape(n, -1)
    return rows, want


def threads(calls=50, nthreads=8):
    rows, want = _batch(1)
    jitdigest.hash_many("md5", rows)                 # compile / load before the race
    wrong, done, errors = [0], [0], []
    stop = threading.Event()
    lock = threading.Lock()

    def worker():
        try:
            for _ in range(calls):
                ok = np.array_equal(jitdigest.hash_many("md5", rows), want)
                with lock:
                    done[0] += 1
                    wrong[0] += not ok
        except BaseException as exc:                 # noqa: BLE001 - reported, not hidden
            errors.append(repr(exc))

    singles = [0, 0]

    def single():
        data = bytes(range(256)) * 4
        want1 = hashlib.sha256(data).digest()
        while not stop.is_set():
            singles[0] += 1
            singles[1] += jitdigest.sha256(data).digest() != want1

    workers = [threading.Thread(target=worker) for _ in range(nthreads)]
    side = threading.Thread(target=single)
    side.start()
    for t in workers:
        t.start()
    for t in workers:
        t.join()
    stop.set()
    side.join()
    import numba
    return {"layer": numba.threading_layer(), "calls": done[0], "wrong": wrong[0],
            "errors": errors, "singles": singles[0], "singles_wrong": singles[1],
            "info": jitdigest.info()["parallel"]}


def _child_hash(queue, seed):
    rows, want = _batch(seed, 20_000)
    got = jitdigest.hash_many("md5", rows, threads=2)
    ok = np.array_equal(got, want)
    # a kernel this process loads (or compiles) itself: it needs Numba's compiler lock
    ok = ok and jitdigest.sha512(b"abc").digest() == hashlib.sha512(b"abc").digest()
    queue.put(bool(ok))


def _fork_trials(trials, before_each):
    ctx = multiprocessing.get_context("fork")
    results = []
    for i in range(trials):
        queue = ctx.Queue()
        before_each(i)
        p = ctx.Process(target=_child_hash, args=(queue, i))
        p.start()
        p.join(60)
        if p.is_alive():
            p.kill()
            p.join()
            results.append("hang")
        else:
            results.append("ok" if p.exitcode == 0 and not queue.empty() and queue.get()
                           else f"exit {p.exitcode}")
    return results


def fork_after(trials=20):
    rows, want = _batch(2)
    assert np.array_equal(jitdigest.hash_many("md5", rows, threads=2), want)
    import numba
    results = _fork_trials(trials, lambda i: None)
    return {"layer": numba.threading_layer(), "results": results}


def fork_load(trials=20):
    """Each trial starts a thread compiling a new Numba function (as a first call of a kernel
    does: it holds Numba's compiler lock for tens of milliseconds), waits until that thread
    holds the lock, and forks; the child then loads a kernel of its own."""
    import numba
    from jitdigest.kernels._internals import compiler_lock
    rows, want = _batch(3, 20_000)
    assert np.array_equal(jitdigest.hash_many("md5", rows, threads=2), want)
    lock = compiler_lock()
    caught = [0]
    compilers = []

    def start_compiling(i):
        func = numba.njit(eval(f"lambda x: x * {i + 2} + 1"))
        t = threading.Thread(target=func, args=(i,))
        compilers.append(t)
        t.start()
        deadline = time.monotonic() + 5
        while time.monotonic() < deadline and t.is_alive():
            if lock.acquire(blocking=False):
                lock.release()
            else:
                caught[0] += 1                         # the other thread holds it: fork now
                return
    results = _fork_trials(trials, start_compiling)
    for t in compilers:
        t.join()
    return {"results": results, "forked_while_compiling": caught[0]}


if __name__ == "__main__":
    scenario = {"threads": threads, "fork-after": fork_after, "fork-load": fork_load}
    print(json.dumps(scenario[sys.argv[1]]()), flush=True)
