"""One test per private Numba/llvmlite seam of ``jitdigest/kernels/_internals/``: each reads
back from the compiled code (IR, assembly, allocation counts, another thread) that the seam
still does what it is there for, so a Numba or llvmlite upgrade that breaks one fails here
instead of silently costing speed or aborting the process."""
import os
import subprocess
import sys
import threading
import time

import numpy as np
import pytest

from jitdigest.engine import cpu as _cpu

numba = pytest.importorskip("numba")
if numba.config.DISABLE_JIT:
    pytest.skip("the seams are in compiled code (NUMBA_DISABLE_JIT=1)", allow_module_level=True)

from jitdigest.kernels import _internals  # noqa: E402
from jitdigest.kernels._jit import reacquire_gil, release_gil_if  # noqa: E402


def sha_ni_block_functions():
    """{family: block-function dispatcher} of the SHA-NI kernels (where they live today)."""
    from jitdigest.kernels.sha1 import sha_ni as sha1_ni
    from jitdigest.kernels.sha256 import sha_ni as sha256_ni
    return {"sha256": sha256_ni.compress, "sha1": sha1_ni.compress}


def run_python(code, env=None, timeout=300):
    full = {k: v for k, v in os.environ.items() if not k.startswith("NUMBA_")}
    full.update(env or {})
    return subprocess.run([sys.executable, "-c", code], env=full, capture_output=True, text=True,
                          timeout=timeout)


# --- the private names --------------------------------------------------------------------

def test_private_names_are_all_there():
    problems = _internals.missing()
    assert not problems, (
        f"numba {numba.__version__} / llvmlite {__import__('llvmlite').__version__} lack what "
        "jitdigest/kernels/_internals/ relies on:\n  " + "\n  ".join(problems))


def test_kernel_cache_reaches_numbas_instance_attributes(tmp_path):
    class Probe(_internals.KernelCache):
        directory = staticmethod(lambda: str(tmp_path))
        source_stamp = staticmethod(lambda py_file: "stamp")

    def twice(x):
        return 2 * x
    dispatcher = numba.njit(twice)
    try:
        cache = Probe(twice)
        assert _internals.set_cache(dispatcher, cache) is dispatcher
        assert _internals.cache_of(dispatcher) is cache
        assert cache.folder == str(tmp_path)
        assert cache.entry_name.startswith("test_internals.") and "twice" in cache.entry_name
        assert os.path.dirname(cache.index_path) == str(tmp_path)
    except AttributeError as exc:
        pytest.fail(f"numba {numba.__version__}: CompileResult._reduce/_rebuild or "
                    f"the dispatcher's _cache moved: {exc}")
    assert dispatcher(21) == 42                     # compiled, saved through Probe
    assert cache.entry_files() and os.path.exists(cache.index_path)
    again = numba.njit(twice)
    _internals.set_cache(again, Probe(twice))
    assert again(21) == 42 and again.stats.cache_hits, "the saved kernel was not loaded"


# --- 1. wide vectors ----------------------------------------------------------------------

def test_wide_vectors_sets_the_function_attribute():
    @numba.njit
    def wide(a):
        _internals.wide_vectors()
        s = 0
        for i in range(a.shape[0]):
            s += a[i]
        return s
    assert wide(np.arange(10, dtype=np.uint32)) == 45
    llvm = wide.inspect_llvm(wide.signatures[0])
    assert _internals.PREFER_512 in llvm, (
        f"llvmlite {__import__('llvmlite').__version__} no longer takes the "
        f"{_internals.PREFER_512} function attribute (FunctionAttributes._known): the AVX-512 "
        "lane kernels run at 256-bit width")


# --- 2. SHA-NI code -----------------------------------------------------------------------

SHA_INSTRUCTIONS = {"sha256": ("sha256rnds2", "sha256msg1", "sha256msg2"),
                    "sha1": ("sha1rnds4", "sha1nexte", "sha1msg1", "sha1msg2")}


@pytest.mark.skipif(not _cpu.usable("sha", "sha_ni"),
                    reason="no SHA-NI here: the host CPU or Numba's compile target lacks the "
                           "'sha' feature (or JITDIGEST_DISABLE=sha_ni), and compiling the "
                           "SHA-NI kernels for it would abort the process")
@pytest.mark.parametrize("family", sorted(SHA_INSTRUCTIONS))
def test_sha_ni_kernels_compile_to_the_sha_instructions(family):
    kernel = numba.njit(nogil=True)(sha_ni_block_functions()[family].py_func)   # compiled here
    words = 8 if family == "sha256" else 5
    state = np.zeros(words, np.uint32)
    kernel(state, np.zeros(64, np.uint8), 0, 1)
    asm = kernel.inspect_asm(kernel.signatures[0])
    for instruction in SHA_INSTRUCTIONS[family]:
        assert instruction in asm, f"{family}: no {instruction} in the compiled kernel"
    if "avx" in _cpu.target_features():
        assert "vzeroupper" in asm, f"{family}: no vzeroupper before the SSE-only SHA rounds"


# --- 3. the GIL ---------------------------------------------------------------------------

class Counter:
    """A Python thread counting loop iterations in ``seen[0]`` (an array, so that compiled code
    can read it too); ``share(call)`` is the fraction of ``call``'s run time the thread ran,
    compared to running alone (1 = all of it)."""

    def __init__(self):
        self.seen = np.zeros(1, np.int64)
        self.running = True
        self.thread = threading.Thread(target=self._loop, daemon=True)
        self.thread.start()

    def _loop(self):
        seen = self.seen
        while self.running:
            seen[0] += 1

    def rate(self, seconds=0.1):
        c0, t0 = int(self.seen[0]), time.perf_counter()
        time.sleep(seconds)                     # sleeping releases the GIL: the thread runs alone
        return (int(self.seen[0]) - c0) / (time.perf_counter() - t0)

    def share(self, call):
        rate = self.rate()
        c0, t0 = int(self.seen[0]), time.perf_counter()
        call()
        c1, t1 = int(self.seen[0]), time.perf_counter()
        return (c1 - c0) / (rate * (t1 - t0)), t1 - t0

    def stop(self):
        self.running = False
        self.thread.join()


@pytest.fixture
def counter():
    c = Counter()
    yield c
    c.stop()


def test_gil_released_over_the_threshold(counter):
    import jitdigest
    data = np.zeros(256 << 20, np.uint8)         # zero pages: no memory used
    h = jitdigest.sha256()
    h.update(data[:1 << 20])                    # compile or load the kernel
    # Held, the other thread could run only just before and after the call (a switch interval
    # each side); released, it runs all along. The best of three runs, against load.
    shares = [counter.share(lambda: h.update(data)) for _ in range(3)]
    best, seconds = max(shares)
    assert best > 0.3, (f"during a 256 MiB update ({seconds * 1000:.0f} ms) another thread ran "
                        f"at most {best:.0%} of the time: the GIL was not released")


@numba.njit(nogil=False)
def _spin(release, n, seen):
    """Spin ``n`` steps, the GIL released around them if ``release``; returns how far the
    counter thread's ``seen[0]`` moved meanwhile (read here, with the GIL held both times)."""
    before = seen[0]
    token = release_gil_if(release)
    x = np.uint64(88172645463325252)
    for _ in range(n):
        x ^= x << np.uint64(13)
        x ^= x >> np.uint64(7)
        x ^= x << np.uint64(17)
    reacquire_gil(token)
    return seen[0] - before, x


def test_gil_released_only_when_asked(counter):
    _spin(False, 1, counter.seen)               # compile
    n = 1 << 16
    while True:                                 # spin for a tenth of a second
        t0 = time.perf_counter()
        _spin(False, n, counter.seen)
        if time.perf_counter() - t0 > 0.1 or n > 1 << 34:
            break
        n *= 2
    held, _ = _spin(False, n, counter.seen)
    released, _ = _spin(True, n, counter.seen)
    assert held == 0, f"release_gil_if(False): another thread ran ({held} steps) meanwhile"
    assert released > 0, "release_gil_if(True): no other thread ran meanwhile (GIL kept)"


# --- 4. Numba's target --------------------------------------------------------------------

TARGET_CHECK = r"""
import numba
from jitdigest.engine import cpu as _cpu
from jitdigest.kernels import _internals

@numba.njit
def addf(x):
    return x + 1.5
addf(1.0)
asm = addf.inspect_asm(addf.signatures[0])
print(repr((_internals.jit_target(), _internals.compiled_target(), _cpu.target_cpu_name(),
            sorted(_cpu.target_features()), "vaddsd" in asm, "addsd" in asm)))
"""


@pytest.mark.parametrize("env", [{}, {"NUMBA_CPU_NAME": "generic"}, {"NUMBA_ENABLE_AVX": "0"}],
                         ids=["host", "generic", "no-avx"])
def test_target_features_agree_with_numbas_code_generator(env, tmp_path):
    result = run_python(TARGET_CHECK, env={**env, "JITDIGEST_CACHE_DIR": str(tmp_path)})
    assert result.returncode == 0, result.stderr
    mirrored, compiled, cpu_name, features, vex, sse = eval(result.stdout.strip().splitlines()[-1])
    assert mirrored == compiled, (
        f"numba {numba.__version__} changed how it picks its JIT target "
        f"(numba.core.codegen.JITCPUCodegen): _internals.jit_target() says {mirrored[0]} "
        f"{mirrored[1][:200]}..., the code generator has {compiled[0]} {compiled[1][:200]}...")
    assert cpu_name == compiled[0]
    plus = {f[1:] for f in compiled[1].split(",") if f.startswith("+")}
    minus = {f[1:] for f in compiled[1].split(",") if f.startswith("-")}
    assert plus <= set(features) and not minus & set(features)
    if not (sys.platform.startswith("linux") and os.uname().machine == "x86_64"):
        return
    # Read back from the machine code: with AVX, LLVM encodes scalar float adds as VEX.
    assert sse, "no scalar float add found in the compiled code"
    avx = "avx" in features
    assert vex or not avx, "_cpu says the target has AVX, the compiled code has none"
    if env.get("NUMBA_ENABLE_AVX") == "0" and vex and not avx:
        # Numba switches off only the avx* names; LLVM turns AVX back on for a later +fma,
        # +f16c, +vaes, ... in the same string. The rule under-reports here (the safe way:
        # only vzeroupper and the AVX lane kernels are left out).
        return
    assert vex == avx, f"_cpu says avx={avx}, the compiled code says {vex}"


# --- 5. stack arrays ----------------------------------------------------------------------

STACK_CHECK = r"""
import numpy as np, numba
from numba.core.runtime import rtsys
from jitdigest.kernels._jit import scratch

@numba.njit
def fill(n):
    w = scratch(n, np.uint32, 16)
    for i in range(n):
        w[i] = 3 * i
    s = 0
    for i in range(n):
        s += w[i]
    return s

@numba.njit
def zeros(n):
    w = scratch(n, np.uint32, 16)
    s = 0
    for i in range(n):
        s += w[i]
    return s

@numba.njit
def heap(n):
    return np.zeros(n, np.uint32).sum()

def allocs():
    return rtsys.get_allocation_stats().alloc

fill(1), zeros(1), heap(1)
a0 = allocs()
on_stack = [fill(n) for n in range(17)] + [zeros(n) for n in range(17)]
a1 = allocs()
on_heap = [heap(n) for n in (17, 100)]
a2 = allocs()
over = []
for f in (fill, zeros):
    try:
        f(17)
    except ValueError as exc:
        over.append(str(exc))
print(repr((a1 - a0, a2 - a1, on_stack, over)))
"""


def test_scratch_is_on_the_stack_up_to_its_cap(tmp_path):
    result = run_python(STACK_CHECK, env={"NUMBA_NRT_STATS": "1",
                                          "JITDIGEST_CACHE_DIR": str(tmp_path)})
    assert result.returncode == 0, result.stderr
    stack_allocs, heap_allocs, on_stack, over = eval(result.stdout.strip().splitlines()[-1])
    assert heap_allocs == 2, "NRT allocation counting does not see np.zeros"
    assert stack_allocs == 0, f"scratch(n <= cap) made {stack_allocs} heap allocations"
    assert on_stack == [3 * n * (n - 1) // 2 for n in range(17)] + [0] * 17
    assert over == ["scratch words over their cap"] * 2      # n > cap: refused, not on the heap


def test_threading_layer_seams():
    """``launch_threading_layer`` loads Numba's layer and names it as ``numba.threading_layer``
    does; ``launched_layer`` then agrees; ``compiler_lock`` is the lock Numba's compiles take."""
    import numba
    from numba.core.compiler_lock import global_compiler_lock

    from jitdigest.kernels import _internals
    name = _internals.launch_threading_layer()
    assert name in ("tbb", "omp", "workqueue")
    assert _internals.launched_layer() == name == numba.threading_layer()
    lock = _internals.compiler_lock()
    assert not global_compiler_lock.is_locked()
    with lock:
        assert global_compiler_lock.is_locked()


def test_llvm_lock_is_the_lock_llvm_calls_take():
    """``llvm_lock`` is the lock llvmlite holds around each call into LLVM: seen held by the
    calling thread from the callbacks llvmlite runs just after taking it, and free after."""
    import llvmlite.binding as ll

    from jitdigest.kernels import _internals
    lock = _internals.llvm_lock()
    seen = []

    def acquired():
        seen.append(lock._is_owned())

    def released():
        pass

    ll.ffi.register_lock_callback(acquired, released)
    try:
        ll.get_host_cpu_name()
    finally:
        ll.ffi.unregister_lock_callback(acquired, released)
    assert seen and all(seen)
    assert not lock._is_owned() and lock.acquire(blocking=False)
    lock.release()


# --- 7. thread-local words (CUDA device code; the same intrinsics compile for the CPU) -------

def test_local_words_are_zeroed_copied_and_sized():
    from jitdigest.kernels._internals import local_copy, local_scratch, local_words

    @numba.njit
    def check(src, n):
        w = local_words(6, np.uint64)
        s = local_scratch(n, np.uint8, 32)
        c = local_copy(src, 8)
        out = np.empty(3 + len(w) + len(s) + len(c), np.int64)
        out[0], out[1], out[2] = len(w), len(s), len(c)
        k = 3
        for i in range(len(w)):
            out[k] = w[i]
            k += 1
        for i in range(len(s)):
            out[k] = s[i]
            k += 1
        for i in range(len(c)):
            out[k] = c[i]
            k += 1
        return out

    src = np.array([5, 7, 9], np.uint32)
    got = check(src, 11).tolist()
    assert got[:3] == [6, 11, 3]
    assert got[3:3 + 17] == [0] * 17                   # local_words, local_scratch: zeroed
    assert got[20:] == [5, 7, 9]                        # local_copy: the words, its length


# --- 8. PTX without a GPU -------------------------------------------------------------------

PTX_CHECK = r"""
import importlib, json
import numba, numpy as np
from numba import cuda
from jitdigest.kernels import _internals
from jitdigest.kernels._rows_cuda import FAMILIES, rows_kernel
TWO_D = %r
try:
    _internals.ptx_without_gpu(lambda a: None, "(uint8[::1],)", (9, 0))
except Exception as exc:
    print(json.dumps({"skip": f"{type(exc).__name__}: {exc}"[:200]}))
    raise SystemExit
# First every family's CPU batch kernel compiled here (not loaded from a cache), as a process
# does that hashes on the CPU before it uses jitdigest.cuda: the CPU typing of the shared
# helpers must not leak into the CUDA compiles below.
from jitdigest.base import algorithms as _algorithms
from jitdigest.batch import initial_state
values = np.arange(256, dtype=np.uint8)
for name in ("md5", "sha1", "sha256", "sha512", "sha3_256", "blake2b", "blake2s"):
    spec = _algorithms.lookup(name)
    portable = importlib.import_module(f"jitdigest.kernels.{spec.family}.portable")
    out = np.zeros((2, spec.digest_size), np.uint8)
    index = np.arange(2, dtype=np.int64)
    numba.njit(portable.BACKEND.hash_rows.py_func)(values, index * 64, index * 0 + 64, index,
                                           initial_state(spec), out)
    assert out[0].tobytes() == __import__("hashlib").new(name, values[:64].tobytes()).digest()
stats = {}
for family in FAMILIES:
    word = "uint64" if family in ("sha512", "keccak", "blake2b") else "uint32"
    for layout, sig in (("ragged", f"(uint8[::1], int64[::1], int64[::1], int64, {word}[::1], "
                                   "uint8[:, ::1])"),
                        ("2-D", f"(uint8[::1], int64, int64, int64, {word}[::1], "
                                "uint8[:, ::1])")):
        if layout == "2-D" and family not in TWO_D:
            continue
        ptx = _internals.ptx_without_gpu(rows_kernel(family).py_func, sig, (9, 0))
        stats[f"{family} {layout}"] = {
            "entry": ptx.count(".entry"), "calls": ptx.count("call.uni"),
            "funnel": ptx.count(".wrap.b32"), "ld32": ptx.count("ld.global.u32"),
            "ld64": ptx.count("ld.global.u64")}
print(json.dumps(stats))
"""


# the 2-D layout (rows of one length) differs from the ragged one in its indexing only: checked
# for a family of 32-bit and one of 64-bit words
TWO_D = ("sha256", "sha512")


def test_every_cuda_batch_kernel_compiles_to_ptx():
    """Every family's CUDA batch kernel (the CPU source through ``_jit_cuda.device``), ragged
    (and 2-D: ``TWO_D``), lowers to PTX with no GPU here, after the same family's CPU kernel was compiled in
    the process: one kernel entry, its device functions inlined (no calls), the 32-bit rotations
    as funnel shifts, message words loaded whole from global memory where aligned. Needs
    numba-cuda, NVVM and NVRTC (``nvidia-nvvm``, ``nvidia-cuda-nvrtc``: the test extra)."""
    import importlib.util
    import json
    if importlib.util.find_spec("numba_cuda") is None:
        pytest.skip("numba-cuda is not installed")
    result = run_python(PTX_CHECK % (TWO_D,), timeout=900)
    assert result.returncode == 0, result.stderr[-3000:]
    stats = json.loads(result.stdout.strip().splitlines()[-1])
    if "skip" in stats:
        pytest.skip(f"no NVVM to compile PTX with: {stats['skip']}")
    families = ["md5", "sha1", "sha256", "sha512", "keccak", "blake2b", "blake2s"]
    assert sorted(stats) == sorted([f"{f} ragged" for f in families]
                                   + [f"{f} 2-D" for f in TWO_D])
    for case, s in stats.items():
        family = case.split()[0]
        assert s["entry"] == 1 and s["calls"] == 0, (case, s)
        if family in ("md5", "sha1", "sha256", "blake2s"):
            assert s["funnel"] > 0 and s["ld32"] > 0, (case, s)     # rotations, whole words
        else:
            assert s["ld64"] > 0, (case, s)


# --- 8. whole words from byte arrays ------------------------------------------------------

def test_address_and_words_of_a_byte_array():
    from jitdigest.kernels._internals import address_of, word_at

    @numba.njit
    def read(data, pos):
        return (address_of(data), address_of(data[pos:]), word_at(data, pos, np.uint32),
                word_at(data, pos, np.uint64))

    data = np.arange(64, dtype=np.uint8)
    base, at, w32, w64 = read(data, 8)
    assert base == data.ctypes.data and at == base + 8
    assert w32 == int.from_bytes(data[8:12].tobytes(), sys.byteorder)
    assert w64 == int.from_bytes(data[8:16].tobytes(), sys.byteorder)


def _md_body(state, data, offset, nblocks):
    for b in range(nblocks):
        for i in range(64):
            state[i % 8] += np.uint32(data[offset + 64 * b + i])


def _b2_body(state, data, offset, nblocks, inc, last):
    for b in range(nblocks):
        state[8] += np.uint64(inc)
        for i in range(128):
            state[i % 8] ^= np.uint64(data[offset + 128 * b + i])
    if last:
        state[10] += np.uint64(1)


def test_block_functions_are_typed_once_for_every_caller():
    """``typed_once``: a stand-in block function called with everything the drivers hold (an
    array, a read-only array, ``bytes``, ``bytearray``; literal and computed offsets and counts
    of several integer types; literal and computed bools) ends up with one compiled signature
    and reads the caller's bytes; the same function under plain ``numba.njit`` gets a signature
    per argument type (so the count is not blind). Every family's block function is declared
    with ``block_function``, which applies it."""
    from jitdigest.engine import dispatch as _dispatch
    from jitdigest.kernels._internals.typed_once import TypedOnceDispatcher

    md_blocks = _internals.typed_once(numba.njit(_md_body))
    b2_blocks = _internals.typed_once(numba.njit(_b2_body))
    untyped = numba.njit(_md_body)

    def direct_calls(blocks):
        @numba.njit
        def direct(state, array, readonly, raw, mutable_raw, at):
            blocks(state, array, 0, 1)
            blocks(state, readonly, np.uint64(64), np.int32(1))
            blocks(state, raw, at, 1)
            blocks(state, mutable_raw, 64, np.uint8(1))
        return direct

    @numba.njit
    def b2_calls(state, data, raw, n):
        b2_blocks(state, data, 0, 1, 128, False)
        b2_blocks(state, raw, 128, np.uint64(1), n, n > 5)

    source = bytes(range(7, 256)) + bytes(range(7))
    args = (np.frombuffer(source, np.uint8).copy(), np.frombuffer(source, np.uint8), source,
            bytearray(source), 128)
    expected = np.zeros(8, np.uint64)                   # what the four calls add, by Python
    for offset in (0, 64, 128, 64):
        for i in range(64):
            expected[i % 8] += source[offset + i]
    for blocks in (md_blocks, untyped):
        state = np.zeros(8, np.uint32)
        direct_calls(blocks)(state, *args)
        assert state.tolist() == expected.tolist()
    state = np.zeros(11, np.uint64)
    b2_calls(state, args[0], source, 9)
    assert state[8] == 128 + 9 and state[10] == 1
    assert len(md_blocks.signatures) == 1, md_blocks.signatures
    assert len(b2_blocks.signatures) == 1, b2_blocks.signatures
    assert len(untyped.signatures) >= 3, untyped.signatures

    declared = [getattr(b.module, name) for family in _dispatch.FAMILIES
                for b in _dispatch.backends(family) for name in ("compress", "absorb")
                if hasattr(b.module, name) and family != "blake3"]
    assert len(declared) >= 10
    assert all(isinstance(f, TypedOnceDispatcher) for f in declared), declared


def _copy_body(src, start, n, out):
    for i in range(n):
        out[i] = src[start + i]


def test_pieces_are_typed_once_with_writable_outputs():
    """``typed_once`` with ``outputs``: a stand-in piece that reads one buffer and writes
    another, called with an array, ``bytes`` and a read-only array to read and a bytearray, an
    array and a slice of a stack array to write, ends up with one signature (a writable array
    for the output) and writes into the caller's buffers; a ``bytes`` output is not made
    writable (typing fails)."""
    piece = _internals.typed_once(numba.njit(_copy_body), outputs=(3,))

    @numba.njit
    def calls(array, raw, readonly, target, into):
        piece(array, 1, 3, target)
        piece(raw, 0, np.int32(2), into[2:])
        piece(readonly, np.uint8(2), 1, into)

    source = bytes(range(10, 20))
    target, into = bytearray(4), np.zeros(5, np.uint8)
    calls(np.frombuffer(source, np.uint8).copy(), source, np.frombuffer(source, np.uint8),
          target, into)
    assert bytes(target) == bytes([11, 12, 13, 0]) and into.tolist() == [12, 0, 10, 11, 0]
    assert len(piece.signatures) == 1, piece.signatures
    assert str(piece.signatures[0][3]) == "array(uint8, 1d, C)"

    @numba.njit
    def into_bytes(raw):
        piece(raw, 0, 1, raw)
    with pytest.raises(numba.TypingError):
        into_bytes(source)


# --- 13. a kernel's address, looked up once -------------------------------------------------

def test_kernel_address_is_a_first_class_function_argument():
    """``KernelAddress``: a compiled function given to another for a ``FunctionType``
    parameter (as the batch ``prange`` driver takes a backend's kernel) runs by the address
    looked up when it was made, for two kernels through one compiled caller, from the
    caller's ``prange`` loop too; and unboxing it does not look the address up again."""
    from timeit import repeat

    from numba import types
    from numba.experimental import function_type

    def add(a, i):
        a[i] += np.int64(i + 1)

    def sub(a, i):
        a[i] -= np.int64(i + 1)

    def drive(f, a):
        for i in numba.prange(a.shape[0]):
            f(a, np.int64(i))
    array = types.Array(types.int64, 1, "C")
    signature = types.none(array, types.int64)
    kernels = [numba.njit(add), numba.njit(sub)]
    for k in kernels:
        k.compile(signature.args)
    fn = types.FunctionType(signature)
    for options in ({}, {"parallel": True}):
        caller = numba.njit(**options)(drive).compile((fn, array))
        for k, sign in zip(kernels, (1, -1)):
            a = np.zeros(5, np.int64)
            caller(_internals.KernelAddress(k, signature), a)
            assert a.tolist() == [sign * (i + 1) for i in range(5)]
    wrapped = _internals.KernelAddress(kernels[0], signature)
    looked_up = []
    real = function_type._get_wrapper_address
    function_type._get_wrapper_address = lambda f, s: looked_up.append(f) or real(f, s)
    try:
        caller(wrapped, np.zeros(5, np.int64))
    finally:
        function_type._get_wrapper_address = real
    assert looked_up == [wrapped]       # Numba asks the object, which answers from its field
    a = np.zeros(5, np.int64)
    by_address = min(repeat(lambda: caller(wrapped, a), number=200, repeat=5))
    by_dispatcher = min(repeat(lambda: caller(kernels[0], a), number=200, repeat=5))
    assert by_address < by_dispatcher


# --- 14. a batch kernel as machine code, run without Numba's runtime ----------------------

@pytest.mark.parametrize("loader", ["elf", "mcjit"])
def test_a_batch_kernel_as_machine_code_runs_without_numba(loader, monkeypatch):
    """``native.rows_entry`` views raw pointers as a ``hash_rows`` kernel's arrays (read-only
    where its signature says so: no second compile), ``object_code`` emits the linked module,
    ``declarations`` lists what it uses; ``jitdigest.runtime.native`` links it, through
    ``jitdigest/runtime/elf.py`` (x86-64 Linux) or llvmlite's MCJIT, and calls it."""
    from jitdigest.engine import dispatch as _dispatch
    from jitdigest.runtime import native as _native
    from jitdigest.kernels._internals import native
    if loader == "elf":
        if not _native.ELF_LOADER:
            pytest.skip("the ELF loader serves x86-64 Linux")
        # the MCJIT path must not be reached: the ELF loader links these objects itself
        monkeypatch.setattr(_native, "_link_mcjit", lambda parts, meta, found: None)
    else:
        monkeypatch.setattr(_native, "ELF_LOADER", False)

    import tiny_rows_kernel
    kernel = tiny_rows_kernel.compiled()
    entry = native.rows_entry(kernel, np.uint32)
    assert len(kernel.signatures) == 1                  # the cfunc called the compiled one
    code, symbol = native.object_code(entry)
    functions, variables = native.declarations(entry)
    assert isinstance(code, bytes) and len(code) > 100 and symbol == entry.native_name
    # the object the JIT engine emitted when the cfunc compiled, not a second emission
    assert native.compiled_object(entry._library) == code
    assert not any(n.startswith("NRT_MemInfo_alloc") for n in functions)
    function = _native._link(code, {"uses": functions + variables, "symbol": symbol})
    assert function is not None
    assert tiny_rows_kernel.answers(_native.Rows(function, [7], "uint32", 0))

    # the kernel's own object (compiled here, so Numba kept it) beside a wrapper that calls it
    # by its symbol: the wrapper's object declares the kernel, the pair runs alike
    compiled = kernel.overloads[_dispatch._signatures(np.uint32)["hash_rows"]]
    kernel_code, kernel_uses, kernel_symbol = native.kernel_object(compiled)
    alone = native.rows_entry(kernel, np.uint32, compiled)
    wrapper_code, symbol = native.object_code(alone)
    functions, variables = native.declarations(alone)
    assert kernel_symbol in functions and len(wrapper_code) < len(code)
    uses = sorted((set(functions + variables) | set(kernel_uses)) - {kernel_symbol})
    function = _native._link(kernel_code + wrapper_code,
                             {"uses": uses, "symbol": symbol,
                              "parts": [len(kernel_code), len(wrapper_code)]})
    assert function is not None
    assert tiny_rows_kernel.answers(_native.Rows(function, [7], "uint32", 0))

    class Library:                          # as Numba loads one from its cache: no object kept
        def _get_compiled_object(self):
            raise RuntimeError("no compiled object yet")

    class Loaded:
        library, fndesc = Library(), None
    assert native.kernel_object(Loaded()) is None


def test_update_and_final_as_machine_code_run_without_numba():
    """``native.stream_entry`` runs a hash object's ``update`` (absorb, return the new
    buffered length) and ``final`` (a digest of what was absorbed) on raw pointers, one symbol
    for both; ``jitdigest.runtime.stream`` links it and a Stream calls it. Two toy kernels
    stand in for a family's: a running product of the bytes, its bytes with the length."""
    import numba
    from jitdigest.runtime import native as _native, stream as _stream
    from jitdigest.kernels._internals import native

    @numba.njit
    def update(state, buf, buflen, data):
        for i in range(data.shape[0]):
            state[0] = state[0] * np.uint32(31) + np.uint32(data[i])
        return (buflen + data.shape[0]) % buf.shape[0]

    @numba.njit
    def final(state, buf, buflen, total, out):
        value = np.uint64(state[0]) ^ (np.uint64(total) << np.uint64(32)) \
            ^ np.uint64(buflen << 56)
        for i in range(out.shape[0]):
            out[i] = (value >> np.uint64(8 * i)) & np.uint64(0xFF)

    def reference(data, block):
        value = 5
        for byte in data:
            value = (value * 31 + byte) & 0xFFFFFFFF
        value ^= (len(data) << 32) ^ ((len(data) % block) << 56)
        return value.to_bytes(8, "little")

    entry = native.stream_entry(update, final, np.uint32)
    code, symbol = native.object_code(entry)
    functions, variables = native.declarations(entry)
    function = _native._link(code, {"uses": functions + variables, "symbol": symbol},
                             _stream.PROTOTYPE)
    assert function is not None
    h = _stream.Stream("toy", function, [5], "uint32", 8, 16)
    data = bytes(range(7, 250)) * 3
    h.update(data[:5])
    assert h.digest() == reference(data[:5], 16)
    h.update(bytearray(data[5:100]))
    h.update(memoryview(data)[100:])
    assert h.digest() == reference(data, 16) and h.hexdigest() == reference(data, 16).hex()


# --- 19. compiled entries as builtin functions ----------------------------------------------

@pytest.mark.parametrize("name", ["md5", "sha1", "sha256", "sha512", "sha3_256", "shake_128"])
def test_oneshot_builtin_reads_its_arguments_and_checks_them(name):
    """``bytes_entry``: on a 64-bit CPython with the GIL, the probed layouts are found and each
    kernel set's one-shot entry is a builtin function; it gives hashlib's digests (beyond the
    length at which the kernel releases the GIL too, from several threads at once), returns
    its output with one more reference and leaks none, and raises TypeError for anything but
    (the kernel's word array, bytes, bytes)."""
    import hashlib
    import sysconfig

    from jitdigest.base import algorithms as _algorithms
    from jitdigest.engine import dispatch as _dispatch
    if sysconfig.get_config_var("Py_GIL_DISABLED"):
        pytest.skip("the builtin reads objects of the GIL build's layout")
    assert _internals.fastcall_layout() is not None
    spec = _algorithms.SPECS[name]
    kernels = _dispatch.kernels_for(spec)
    entry = kernels.oneshot_bytes
    assert entry.__name__ == f"{spec.family}_{kernels.name}_oneshot"   # not Numba's wrapper
    size = spec.digest_size or 32
    iv = spec.initial_state
    checked = 0
    for length in (0, 1, 55, 56, 64, 111, 112, 128, 135, 136, 1000, 2047, 2048, 70_000):
        data = bytes((7 * i + length) % 251 for i in range(length))
        out = bytes(size)
        count = sys.getrefcount(out)
        assert entry(iv, data, out) is out
        assert sys.getrefcount(out) == count
        want = hashlib.new(name, data)
        assert out == (want.digest(size) if name.startswith("shake") else want.digest())
        checked += 1
    assert checked == 14

    data = bytes(range(256)) * 1000
    want = hashlib.new(name, data)
    want = want.digest(size) if name.startswith("shake") else want.digest()
    results = []

    def work():
        for _ in range(20):
            out = bytes(size)
            entry(iv, data, out)
            results.append(out == want)
    threads = [threading.Thread(target=work) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert results == [True] * 80

    other = np.uint64 if iv.dtype == np.uint32 else np.uint32
    wrong = [(), (iv, b""), (iv, b"", bytes(size), 1), (iv, "abc", bytes(size)),
             (iv, bytearray(3), bytes(size)), (iv, b"abc", bytearray(size)),
             (iv, b"abc", memoryview(bytes(size))), (list(iv), b"abc", bytes(size)),
             (iv.astype(other), b"abc", bytes(size)),
             (iv.astype(iv.dtype.newbyteorder()), b"abc", bytes(size)),
             (np.tile(iv, (2, 1)), b"abc", bytes(size)),
             (np.repeat(iv, 2)[::2], b"abc", bytes(size)),
             (np.frombuffer(b"\0" + iv.tobytes(), np.uint8)[1:].view(iv.dtype), b"abc",
              bytes(size))]    # unaligned
    for args in wrong:
        with pytest.raises(TypeError, match="takes a 1-d C-contiguous ndarray of uint.., bytes, "
                                            "bytes$"):
            entry(*args)


@pytest.mark.parametrize("name", ["md5", "sha1", "sha256", "sha384"])
def test_hmac_builtin_takes_key_message_and_output_bytes(name):
    """``bytes_entry`` over HMAC's one-call kernel (an IV and three ``bytes``: key, message,
    output): the standard library's HMAC for keys shorter and longer than a block, and
    TypeError for a bytearray or str where bytes go."""
    import hmac
    import sysconfig

    from jitdigest.base import algorithms as _algorithms
    from jitdigest.engine import keyed as _keyed
    if sysconfig.get_config_var("Py_GIL_DISABLED"):
        pytest.skip("the builtin reads objects of the GIL build's layout")
    spec = _algorithms.SPECS[name]
    entry = _keyed.entry(spec, "hmac_bytes")
    assert entry.__name__.endswith("_hmac")                   # not Numba's wrapper
    checked = 0
    for key_length in (0, 20, spec.block_size, spec.block_size + 1, 300):
        for length in (0, 64, 1000, 5000):
            key = bytes((3 * i + 1) % 256 for i in range(key_length))
            msg = bytes((5 * i + length) % 256 for i in range(length))
            out = bytes(spec.digest_size)
            assert entry(spec.initial_state, key, msg, out) is out
            assert out == hmac.digest(key, msg, name)
            checked += 1
    assert checked == 20
    for args in [(spec.initial_state, b"k", b"m"),
                 (spec.initial_state, bytearray(b"k"), b"m", bytes(spec.digest_size)),
                 (spec.initial_state, b"k", "m", bytes(spec.digest_size)),
                 (spec.initial_state, b"k", b"m", bytearray(spec.digest_size))]:
        with pytest.raises(TypeError, match="ndarray of uint.., bytes, bytes, bytes$"):
            entry(*args)


@pytest.mark.parametrize("name", ["md5", "sha1", "sha256", "sha512", "sha3_256"])
def test_update_builtin_takes_bytes_and_returns_an_int(name):
    """``bytes_entry`` over a kernel set's ``update`` (writable word and byte arrays, an int,
    the data as ``bytes``; an int back): chunks of many sizes fed through it, then ``final``,
    give hashlib's digest; a read-only state, a buffer of another type, a bool or numpy int for
    the length, or a bytearray for the data raise TypeError, a negative length ValueError and
    one past int64 OverflowError."""
    import hashlib
    import sysconfig

    from jitdigest.base import algorithms as _algorithms
    from jitdigest.engine import dispatch as _dispatch
    if sysconfig.get_config_var("Py_GIL_DISABLED"):
        pytest.skip("the builtin reads objects of the GIL build's layout")
    spec = _algorithms.SPECS[name]
    kernels = _dispatch.kernels_for(spec)
    entry = kernels.update_bytes
    assert entry.__name__ == f"{spec.family}_{kernels.name}_update"   # not Numba's wrapper
    checked = 0
    for sizes in ([0], [1, 63, 64, 65], [spec.block_size - 1, 2, 1000], [3000, 70_000, 5]):
        state, buf = spec.initial_state.copy(), np.zeros(spec.block_size, np.uint8)
        buflen, whole = 0, b""
        for size in sizes:
            data = bytes((11 * i + size) % 256 for i in range(size))
            buflen = entry(state, buf, buflen, data)
            assert type(buflen) is int
            whole += data
        out = bytearray(spec.digest_size)
        kernels.final(state, buf, buflen, len(whole), out)
        assert bytes(out) == hashlib.new(name, whole).digest()
        checked += 1
    assert checked == 4
    state, buf = spec.initial_state.copy(), np.zeros(spec.block_size, np.uint8)
    frozen = state.copy()
    frozen.flags.writeable = False
    for args in [(frozen, buf, 0, b"x"), (state, buf.astype(np.int8), 0, b"x"),
                 (state, buf, True, b"x"), (state, buf, np.int64(0), b"x"),
                 (state, buf, 0.0, b"x"),
                 (state, buf, 0, bytearray(b"x")), (state, buf, 0), (state, buf, 0, b"x", b"")]:
        with pytest.raises(TypeError, match="writable ndarray of uint8, int, bytes$"):
            entry(*args)
    with pytest.raises(OverflowError):
        entry(state, buf, 2**70, b"x")
    with pytest.raises(ValueError, match="takes no negative int"):
        entry(state, buf, -1, b"x")
