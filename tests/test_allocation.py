"""No surprises after warm-up: update() allocates nothing and compiles nothing new."""
import tracemalloc

import numpy as np
import pytest

import jitdigest
from conftest import FIXED, kernel_params, make

CHUNK = 4096


def traced(h, data, rounds):
    """(bytes still allocated after ``rounds`` updates, peak above the start)."""
    tracemalloc.start()
    try:
        before, _ = tracemalloc.get_traced_memory()
        tracemalloc.reset_peak()
        for _ in range(rounds):
            h.update(data)
        after, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    return after - before, peak - before


def allocated_per_update(h, data):
    """Bytes allocated per update() (the slope between 1,000 and 3,000 updates: a constant
    few bytes, such as the new int object holding the running length, cancel out), and the
    largest transient allocation seen. A first traced run takes the interpreter's one-time
    allocations (Python 3.10 keeps ~700 bytes of frame objects from the first thousand traced
    calls; a slope with them in it comes out negative)."""
    for _ in range(50):                          # warm-up: compile, load the cache
        h.update(data)
    traced(h, data, 1000)                        # one-time allocations seen under tracing
    short, peak1 = traced(h, data, 1000)
    long, peak2 = traced(h, data, 3000)
    return (long - short) / 2000, max(peak1, peak2)


@pytest.mark.parametrize("name,kernel", kernel_params(FIXED))
def test_update_allocates_nothing(name, kernel):
    data = np.frombuffer(bytes(range(256)) * (CHUNK // 256), np.uint8)
    per_update, peak = allocated_per_update(make(name, kernel), data)
    assert per_update == 0
    # No copy of the 4 KiB chunk is ever made; only small transient objects (the view).
    assert peak < CHUNK // 2


@pytest.mark.parametrize("wrap", [bytes, bytearray, memoryview], ids=["bytes", "bytearray", "memoryview"])
def test_update_of_python_buffers_allocates_nothing_net(wrap):
    per_update, peak = allocated_per_update(jitdigest.sha256(), wrap(bytes(CHUNK)))
    assert per_update == 0
    assert peak < CHUNK // 2


@pytest.mark.parametrize("name", FIXED)
def test_no_new_signatures_after_warm_up(name):
    h = jitdigest.new(name, b"x" * 1000)
    h.update(bytearray(300))
    h.digest(8) if name.startswith("shake") else h.digest()
    ks = h._kernels
    dispatchers = [getattr(ks._module, ks.backend.prefix + e) for e in ("update", "final", "oneshot")]
    before = [list(getattr(d, "signatures", [])) for d in dispatchers]
    for data in (np.arange(77, dtype=np.int16), memoryview(b"abc"), b"z" * 5000, bytearray(1)):
        h.update(data)
        jitdigest.new(name, bytes(data))
    h.digest(8) if name.startswith("shake") else h.digest()
    after = [list(getattr(d, "signatures", [])) for d in dispatchers]
    assert after == before
    assert all(len(s) <= 1 for s in after)       # one argument type per kernel
