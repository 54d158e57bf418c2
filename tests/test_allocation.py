"""No surprises after warm-up: update() allocates nothing and compiles nothing new."""
import contextlib
import sys
import tracemalloc

import numpy as np
import pytest

import jitdigest
from conftest import FIXED, kernel_params, make
from jitdigest.base.config import DIRECT_OUTPUT_MIN

JIT_ENABLED = not __import__("numba").config.DISABLE_JIT

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
    peak = 0
    for _ in range(3):
        # tracemalloc sees every thread: an allocation by another thread of the process (the
        # test runner's, a pool's) within one window shows as a slope (-5 bytes an update,
        # once in ~10 suite runs). Up to three measurements: one without such noise gives 0
        # where update() allocates nothing; an update() that allocates gives its bytes in all.
        short, peak1 = traced(h, data, 1000)
        long, peak2 = traced(h, data, 3000)
        peak = max(peak, peak1, peak2)
        if long == short:
            break
    return (long - short) / 2000, peak


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


# --- nothing compiled after warm-up ------------------------------------------------------------

def dispatcher_signatures():
    """{(module, name): signatures} of every Numba dispatcher in jitdigest's loaded modules."""
    from numba.core.registry import CPUDispatcher
    found = {}
    for modname, module in list(sys.modules.items()):
        if modname == "jitdigest" or modname.startswith("jitdigest."):
            for attr, obj in list(vars(module).items()):
                if isinstance(obj, CPUDispatcher):
                    found[(modname, attr)] = tuple(obj.signatures)
    return found


@contextlib.contextmanager
def compiles_seen():
    """A list that collects the names of the functions Numba compiles inside the block."""
    from numba.core import event
    seen = []
    with event.install_recorder("numba:compile") as recorder:
        yield seen
    seen += [ev.data["dispatcher"].py_func.__qualname__ for _, ev in recorder.buffer
             if ev.is_start]


def out(h, length=8):
    return h.digest(length) if h.name.startswith("shake") else h.digest()


def test_compile_detector_sees_a_compile():
    """The detector below is not blind: a fresh function compiled inside it is seen."""
    import numba

    @numba.njit
    def fresh(x):
        return x + 1
    before = dispatcher_signatures()
    with compiles_seen() as seen:
        fresh(1)
    assert seen == ["test_compile_detector_sees_a_compile.<locals>.fresh"]
    assert dispatcher_signatures() == before          # not a jitdigest dispatcher


@pytest.mark.skipif(not JIT_ENABLED, reason="no dispatchers without the JIT")
@pytest.mark.parametrize("name", FIXED)
def test_no_new_signatures_after_warm_up(name):
    """After one use of each entry (and, for SHAKE, one long squeeze, which goes through the
    ``final`` dispatcher itself), varied inputs compile nothing and add no signature to any
    dispatcher; the hash object calls each entry as a compiled form of its dispatcher, not the
    dispatcher (which would resolve types, and compile, per call)."""
    shake = name.startswith("shake")
    long_out = DIRECT_OUTPUT_MIN if shake else None
    h = jitdigest.new(name, b"x" * 1000)              # one-shot buffer, then update
    h.update(bytearray(300))
    out(h)
    out(jitdigest.new(name, b"abc"))                  # the one-shot entry
    if shake:
        h.digest(long_out)
    ks = h._kernels
    before = dispatcher_signatures()
    with compiles_seen() as seen:
        for data in (np.arange(77, dtype=np.int16), memoryview(b"abc"), b"z" * 5000,
                     bytearray(1), b"", np.zeros((3, 5), np.float32),
                     memoryview(bytearray(200)).cast("I")):
            h.update(data)
            g = jitdigest.new(name, bytes(data))
            out(g)
            out(g.copy(), 3)
        for length in (1, 8, 200, 1000):
            out(h, length)
        if shake:
            h.digest(long_out + 1)
            jitdigest.new(name, b"q").digest(2 * long_out + 7)
    after = dispatcher_signatures()
    assert seen == [], f"compiled after warm-up: {seen}"
    assert after == before, {k: (before.get(k), v) for k, v in after.items()
                             if before.get(k) != v}
    for entry in ("update", "final", "oneshot"):
        dispatcher = ks.backend.function(entry)
        assert dispatcher.signatures, f"{entry}: no compiled signature"
        called = getattr(ks, entry)
        assert called is not dispatcher
        assert any(called is o.entry_point for o in dispatcher.overloads.values()), \
            f"{entry}: the hash object calls something other than a compiled form of " \
            f"{dispatcher}"
