"""One hash object shared by threads, as hashlib allows: every update() atomic, copy() and
digest() between whole updates. Expected digests come from hashlib."""
import hashlib
import os
import threading

import pytest

import jitdigest

ALGORITHMS = sorted(jitdigest.algorithms_available)
THREADS = 8
UPDATES = 4                   # per thread per run
RUNS = 200
# one chunk length per run, in rotation: under hashlib's 2048-byte GIL threshold, just over it
# (not a whole number of blocks, so the partial block is in play), and several blocks over
CHUNKS = (100, 2085, 5000)


def _run_threads(target):
    threads = [threading.Thread(target=target) for _ in range(THREADS)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()


def _digest(h):
    return h.digest(32) if h.name.startswith("shake") else h.digest()


def test_every_hashlib_algorithm_is_shared_between_threads():
    """The tests below run for every algorithm hashlib guarantees (and SHA-512/224, /256)."""
    assert hashlib.algorithms_guaranteed | {"sha512_224", "sha512_256"} <= set(ALGORITHMS)


@pytest.mark.parametrize("name", ALGORITHMS)
def test_shared_object_updates(name):
    chunks = [os.urandom(n) for n in CHUNKS]
    expected = [_digest(hashlib.new(name, c * (THREADS * UPDATES))) for c in chunks]
    wrong = 0
    for run in range(RUNS):
        k = run % len(CHUNKS)
        chunk = memoryview(chunks[k])            # not bytes: every update streams
        h = jitdigest.new(name)
        start = threading.Barrier(THREADS)

        def feed():
            start.wait()
            for _ in range(UPDATES):
                h.update(chunk)
        _run_threads(feed)
        wrong += _digest(h) != expected[k]
    assert wrong == 0


@pytest.mark.parametrize("name", ALGORITHMS)
def test_shared_object_short_bytes_updates(name):
    # short bytes are gathered before they reach the kernel (_config.GATHER_UPDATES): threads
    # adding them, flushing them and reading the digest meanwhile must lose or tear nothing
    chunks = [os.urandom(n) for n in (100, 700)]
    expected = [_digest(hashlib.new(name, c * (THREADS * UPDATES * 4))) for c in chunks]
    valid = [{_digest(hashlib.new(name, c * i)) for i in range(THREADS * UPDATES * 4 + 1)}
             for c in chunks]
    wrong = torn = 0
    for run in range(40):
        k = run % len(chunks)
        h = jitdigest.new(name)
        start = threading.Barrier(THREADS)
        seen = []

        def feed():
            start.wait()
            for i in range(UPDATES * 4):
                h.update(chunks[k])
                if i % 5 == 0:
                    seen.append(_digest(h.copy() if i % 10 else h))
        _run_threads(feed)
        wrong += _digest(h) != expected[k]
        torn += sum(d not in valid[k] for d in seen)
    assert (wrong, torn) == (0, 0)


@pytest.mark.parametrize("name", ALGORITHMS)
def test_copy_while_updating(name):
    chunk = os.urandom(3001)
    updates = 300
    valid = {_digest(hashlib.new(name, chunk * i)): i for i in range(updates + 1)}
    h = jitdigest.new(name)
    done = threading.Event()
    copies = []

    def take_copies():
        while not done.is_set():
            copies.append(h.copy())

    def take_digests():
        while not done.is_set():
            copies.append(_digest(h))

    takers = [threading.Thread(target=take_copies), threading.Thread(target=take_digests)]
    for t in takers:
        t.start()
    for _ in range(updates):
        h.update(chunk)
    done.set()
    for t in takers:
        t.join()
    assert len(copies) > 0
    seen = [c if isinstance(c, bytes) else _digest(c) for c in copies]
    torn = [d for d in seen if d not in valid]
    assert torn == []
    assert valid[_digest(h)] == updates


def test_one_shot_object_shared():
    """Objects still on the one-shot path (bytes only) go streaming under the lock."""
    data = os.urandom(4096)
    for run in range(50):
        h = jitdigest.sha256(data)
        start = threading.Barrier(THREADS)

        def feed():
            start.wait()
            h.update(data)
        _run_threads(feed)
        assert h.digest() == hashlib.sha256(data * (THREADS + 1)).digest()
