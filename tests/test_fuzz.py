"""Fuzzing the batch API for crashes and wrong digests (tests/fuzz_batch.py), in child processes
so that a crash shows up as a signal death with the case that caused it.

The default run draws FUZZ_EXAMPLES inputs (about 5.7 checked calls each: every algorithm and
one HMAC for a hash_many input, uuid3/uuid5 as bytes and strings, hexdigests) in two children at
once. A release run draws more::

    JITDIGEST_FUZZ_EXAMPLES=500000 python -m pytest tests/test_fuzz.py -q -s -n 0 -o timeout=0

(``JITDIGEST_FUZZ_SEED`` picks another seed; each child gets seed + its number.)
"""
import os
import pathlib
import re
import subprocess
import sys
import tempfile

TESTS = pathlib.Path(__file__).resolve().parent
FUZZ_EXAMPLES = 4400
MIN_CASES = 20_000            # checked calls the default run must reach
PER_CHILD = 2500              # examples per child process


def _batches(examples):
    count = -(-examples // PER_CHILD)
    return [examples * i // count - examples * (i - 1) // count for i in range(1, count + 1)]


def _start(examples, seed, workdir):
    last = os.path.join(workdir, f"case-{seed}.txt")
    proc = subprocess.Popen([sys.executable, str(TESTS / "fuzz_batch.py"), str(examples),
                             str(seed), last], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True, cwd=TESTS)
    return proc, last


def _finish(proc, last):
    try:
        stdout, stderr = proc.communicate(timeout=900)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.communicate()
        raise AssertionError(f"fuzz child hung; last case: {open(last).read().strip()}")
    if proc.returncode < 0:
        raise AssertionError(f"fuzz child died of signal {-proc.returncode}; last case: "
                             f"{open(last).read().strip()}\n{stderr[-3000:]}")
    assert proc.returncode == 0, stdout[-3000:] + stderr[-6000:]
    found = re.search(r"^cases: (\d+)$", stdout, re.M)
    assert found, stdout + stderr
    return int(found.group(1))


def test_fuzz_batch_api():
    examples = int(os.environ.get("JITDIGEST_FUZZ_EXAMPLES", FUZZ_EXAMPLES))
    seed = int(os.environ.get("JITDIGEST_FUZZ_SEED", 2026))
    parallel = max(1, min(len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity")
                          else os.cpu_count() or 1, 8))
    batches = _batches(examples)
    total = 0
    with tempfile.TemporaryDirectory() as workdir:
        running = []
        for i, size in enumerate(batches):
            running.append(_start(size, seed + i, workdir))
            if len(running) == parallel:
                total += _finish(*running.pop(0))
        while running:
            total += _finish(*running.pop(0))
    print(f"fuzz: {examples} examples, {total} checked calls, 0 crashes, 0 wrong rows")
    assert total >= examples            # at least one checked call per example
    if examples >= FUZZ_EXAMPLES:
        assert total >= MIN_CASES
