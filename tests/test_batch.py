"""The batch API (jitdigest.batch): hash_many over every input layout and every batch kernel
set against hashlib, the hash_rows contract itself, threads, bad input, hex and UUID strings,
uuid3_many/uuid5_many against the uuid module, and interpreted mode in a child process."""
import hashlib
import os
import pathlib
import subprocess
import sys
import threading
import uuid

import numpy as np
import pytest

import jitdigest
from jitdigest import _algorithms, _dispatch, batch

TESTS = pathlib.Path(__file__).resolve().parent
ALL = sorted(_algorithms.SPECS)
SHAKE_LENGTH = 40
LAYOUTS = ["rows", "offsets", "list", "arrow", "arrow_chunked"]
N_RAGGED = 77          # > 4 lane groups of 16, the last one partial


def registered_batch_backends(spec):
    """Every backend registered to serve hash_rows for an algorithm: lane kernels, then the
    per-message kernels."""
    return _dispatch.batch_backends(spec.family) + _dispatch.backends(spec.family)


def batch_params(names):
    """pytest params (algorithm, kernel set), one per registered batch backend; only those
    this CPU/target cannot run appear as skips (a backend without a hash_rows entry fails)."""
    params = []
    for name in names:
        spec = _algorithms.SPECS[name]
        for backend in registered_batch_backends(spec):
            marks = () if backend.usable() else (
                pytest.mark.skip(reason=f"{backend.name} not usable on this CPU/target"),)
            ks = _dispatch._kernel_set(backend, spec.word)
            params.append(pytest.param(name, ks, id=f"{name}-{backend.name}", marks=marks))
    return params


@pytest.mark.parametrize("name", ALL)
def test_every_registered_backend_has_hash_rows(name):
    """Each backend the registry names (usable here or not) has its hash_rows entry, and every
    algorithm has a batch kernel: imports the modules, compiles nothing."""
    spec = _algorithms.SPECS[name]
    backends = registered_batch_backends(spec)
    assert backends
    for backend in backends:
        assert callable(getattr(backend.module, "hash_rows", None)), \
            f"{backend.module.__name__} has no hash_rows"


def expected(name, msg, length=SHAKE_LENGTH):
    h = hashlib.new(name, bytes(msg))
    return h.digest(length) if name.startswith("shake") else h.digest()


def out_length(name, length=SHAKE_LENGTH):
    spec = _algorithms.SPECS[name]
    return spec.digest_size or length


def length_kw(name, length=SHAKE_LENGTH):
    return {"length": length} if name.startswith("shake") else {}


def edge_lengths(spec):
    """Message lengths from 0 to 3 blocks, with the padding edges (the last length that still
    fits the length field in the final block, and the first that does not)."""
    bs = spec.block_size
    pad = spec.min_padding
    lengths = {0, 1, 2, bs // 2, bs - 1, bs, bs + 1, 2 * bs - 1, 2 * bs, 2 * bs + 1,
               3 * bs - 1, 3 * bs, 3 * bs + 1}
    if pad:
        lengths |= {bs - pad, bs - pad + 1, 2 * bs - pad, 2 * bs - pad + 1}
    return sorted(lengths)


def ragged_messages(spec, n=N_RAGGED, seed=0):
    rng = np.random.default_rng(seed)
    lengths = np.resize(edge_lengths(spec), n)
    rng.shuffle(lengths)
    return [rng.integers(0, 256, int(k), dtype=np.uint8).tobytes() for k in lengths]


def rows_widths(spec):
    bs = spec.block_size
    pad = spec.min_padding
    return sorted({0, 1, max(bs - pad, 0), bs - pad + 1, bs, 2 * bs + 1, 3 * bs})


def layout(kind, msgs):
    """(messages, offsets) laying ``msgs`` out as ``kind``."""
    n = len(msgs)
    if kind == "rows":
        width = len(msgs[0]) if msgs else 0
        assert all(len(m) == width for m in msgs)
        return np.frombuffer(b"".join(msgs), np.uint8).reshape(n, width).copy(), None
    if kind == "offsets":
        lengths = np.array([len(m) for m in msgs], np.int64)
        offsets = np.concatenate(([5], 5 + np.cumsum(lengths)))   # junk before and after
        values = np.frombuffer(b"head!" + b"".join(msgs) + b"tail", np.uint8)
        return values, offsets
    if kind == "list":
        kinds = (bytes, bytearray, memoryview)
        return [kinds[i % 3](m) for i, m in enumerate(msgs)], None
    pa = pytest.importorskip("pyarrow")
    if kind == "arrow":
        return pa.array([b"junk"] * 3 + msgs, pa.binary())[3:], None    # a slice: offset 3
    assert kind == "arrow_chunked"
    cut = n // 3
    return pa.chunked_array([pa.array(msgs[:cut], pa.large_binary()),
                             pa.array([], pa.large_binary()),
                             pa.array(msgs[cut:] + [b"x"], pa.large_binary())[:n - cut]],
                            pa.large_binary()), None


def check_batch(name, msgs, got, length=SHAKE_LENGTH):
    assert got.dtype == np.uint8 and got.flags.c_contiguous
    assert got.shape == (len(msgs), out_length(name, length))
    bad = [i for i, m in enumerate(msgs) if got[i].tobytes() != expected(name, m, length)]
    assert not bad, f"{name}: rows {bad[:10]} differ (lengths {[len(msgs[i]) for i in bad[:10]]})"


# --- every algorithm x layout x batch kernel set ---------------------------------------------

@pytest.mark.parametrize("kind", LAYOUTS)
@pytest.mark.parametrize("name, kernels", batch_params(ALL))
def test_layouts_and_kernels_match_hashlib(name, kernels, kind):
    spec = _algorithms.SPECS[name]
    if kind == "rows":
        batches = [[bytes([(7 * i + w) & 0xFF]) * w for i in range(37)]
                   for w in rows_widths(spec)]
        batches.append([bytes(range(i, i + spec.block_size)) for i in range(2 * 16 + 5)])
    else:
        batches = [ragged_messages(spec)]
    for n in (1, 2, 17):
        batches.append(ragged_messages(spec, n=n, seed=n))
    for msgs in batches:
        if kind == "rows" and len({len(m) for m in msgs}) > 1:
            continue
        messages, offsets = layout(kind, msgs)
        with jitdigest.backend(kernels.name):
            got = jitdigest.hash_many(name, messages, offsets,
                                      length=length_kw(name).get("length"))
        check_batch(name, msgs, got)


@pytest.mark.parametrize("name, kernels", batch_params(ALL))
def test_hash_rows_contract(name, kernels):
    """hash_rows itself: only the listed rows, in any order, are written; each gets the first
    out.shape[1] bytes of its digest (or that many SHAKE bytes); nothing else is touched."""
    spec = _algorithms.SPECS[name]
    msgs = ragged_messages(spec, n=3 * 16 + 5, seed=3)
    lengths = np.array([len(m) for m in msgs], np.int64)
    starts = np.concatenate(([0], np.cumsum(lengths)[:-1])).astype(np.int64)
    values = np.frombuffer(b"".join(msgs), np.uint8)
    iv = batch.initial_state(spec)
    rng = np.random.default_rng(5)
    rows = rng.permutation(len(msgs))[:40].astype(np.int64)
    if spec.digest_size:
        widths = [spec.digest_size, 16]
    else:
        widths = [SHAKE_LENGTH, 3 * spec.block_size + 7]
    for width in widths:
        guard = np.full((len(msgs) + 2, width), 0xA5, np.uint8)
        out = guard[1:-1]
        kernels.hash_rows(values, starts, lengths, rows, iv, out)
        for r in range(len(msgs)):
            want = expected(name, msgs[r], width)[:width] if r in set(rows.tolist()) \
                else b"\xa5" * width
            assert out[r].tobytes() == want, f"row {r} width {width}"
        assert (guard[0] == 0xA5).all() and (guard[-1] == 0xA5).all()


@pytest.mark.parametrize("name, kernels", batch_params(ALL))
def test_hash_grid_contract(name, kernels):
    """The grid form of hash_rows (rows of one width, no index arrays): only rows
    first..stop-1 are written, each with its digest; nothing else is touched."""
    spec = _algorithms.SPECS[name]
    width = spec.block_size + 3                    # one block plus a tail
    n, first, stop = 3 * 16 + 5, 7, 3 * 16 + 2
    grid = np.random.default_rng(6).integers(0, 256, (n, width), dtype=np.uint8)
    outlen = spec.digest_size or SHAKE_LENGTH
    guard = np.full((n + 2, outlen), 0xA5, np.uint8)
    out = guard[1:-1]
    kernels.hash_grid(grid.reshape(-1), width, width, (first, stop),
                      batch.initial_state(spec), out)
    for r in range(n):
        want = expected(name, grid[r].tobytes(), outlen) if first <= r < stop \
            else b"\xa5" * outlen
        assert out[r].tobytes() == want, f"row {r}"
    assert (guard[0] == 0xA5).all() and (guard[-1] == 0xA5).all()


@pytest.mark.parametrize("name, kernels", batch_params(["shake_128", "shake_256"]))
def test_shake_output_longer_than_the_rate(name, kernels):
    spec = _algorithms.SPECS[name]
    msgs = ragged_messages(spec, n=20)
    length = 3 * spec.block_size + 7
    with jitdigest.backend(kernels.name):
        got = jitdigest.hash_many(name, msgs, length=length)
    check_batch(name, msgs, got, length)


# --- the public function --------------------------------------------------------------------

@pytest.mark.parametrize("name", ALL)
def test_hash_many_public(name):
    spec = _algorithms.SPECS[name]
    msgs = ragged_messages(spec, n=40, seed=11)
    got = jitdigest.hash_many(name, msgs, **length_kw(name))
    check_batch(name, msgs, got)
    assert jitdigest.hash_many(name, [], **length_kw(name)).shape == (0, out_length(name))


def test_aliases_and_empty_inputs():
    msgs = [b"abc", b""]
    want = np.array([list(hashlib.sha256(m).digest()) for m in msgs], np.uint8)
    assert (jitdigest.hash_many("SHA-256", msgs) == want).all()
    assert jitdigest.hash_many("md5", np.empty((0, 8), np.uint8)).shape == (0, 16)
    assert jitdigest.hash_many("md5", np.empty(0, np.uint8), [0]).shape == (0, 16)
    zero = jitdigest.hash_many("md5", np.empty((3, 0), np.uint8))
    assert [bytes(r) for r in zero] == [hashlib.md5(b"").digest()] * 3
    assert jitdigest.hash_many("shake_128", msgs, length=0).shape == (2, 0)


def test_values_and_offsets_variants():
    msgs = [b"alpha", b"", b"gamma" * 30, b"d"]
    offsets = np.concatenate(([0], np.cumsum([len(m) for m in msgs])))
    values = b"".join(msgs)
    want = np.array([list(hashlib.sha1(m).digest()) for m in msgs], np.uint8)
    assert (jitdigest.hash_many("sha1", msgs) == want).all()
    for offs in (offsets, offsets.astype(np.int32), offsets.astype(np.uint16),
                 offsets.astype(np.uint64), offsets.tolist(), offsets[::-1][::-1].copy()):
        assert (jitdigest.hash_many("sha1", values, offs) == want).all()
        assert (jitdigest.hash_many("sha1", np.frombuffer(values, np.uint8), offs) == want).all()
    strided = np.zeros(2 * len(offsets), np.int64)
    strided[::2] = offsets
    assert (jitdigest.hash_many("sha1", values, strided[::2]) == want).all()
    assert (jitdigest.hash_many("sha1", bytearray(values), offsets) == want).all()
    assert (jitdigest.hash_many("sha1", tuple(msgs)) == want).all()
    assert (jitdigest.hash_many("sha1", iter(msgs)) == want).all()
    assert (jitdigest.hash_many("sha1", np.array(msgs, dtype=object)) == want).all()


def test_non_byte_buffers_are_hashed_as_raw_bytes():
    arrays = [np.arange(5, dtype=np.int32), np.arange(3, dtype=np.float64), np.zeros(0, np.int16)]
    got = jitdigest.hash_many("md5", arrays)
    assert [bytes(r) for r in got] == [hashlib.md5(a.tobytes()).digest() for a in arrays]


def test_out_is_filled_and_returned_and_nothing_written_past_it():
    msgs = [bytes([i]) * (i * 5) for i in range(50)]
    guard = np.full((52, 32), 0x5A, np.uint8)
    out = guard[1:-1]
    res = jitdigest.hash_many("sha256", msgs, out=out)
    assert res is out
    check_batch("sha256", msgs, out)
    assert (guard[0] == 0x5A).all() and (guard[-1] == 0x5A).all()


@pytest.mark.parametrize("out, exc, match", [
    (np.zeros((3, 16), np.uint8), ValueError, "shape"),
    (np.zeros((4, 20), np.uint8), ValueError, "shape"),
    (np.zeros((4, 16), np.int8), TypeError, "dtype"),
    (np.zeros((4, 32), np.uint8)[:, ::2], ValueError, "C-contiguous"),
    ([[0] * 16] * 4, TypeError, "numpy array"),
], ids=["rows", "width", "dtype", "strided", "list"])
def test_bad_out(out, exc, match):
    with pytest.raises(exc, match=match):
        jitdigest.hash_many("md5", [b"a", b"b", b"c", b"d"], out=out)


def test_read_only_out():
    out = np.zeros((1, 16), np.uint8)
    out.setflags(write=False)
    with pytest.raises(ValueError, match="read-only"):
        jitdigest.hash_many("md5", [b"a"], out=out)


VALUES = np.frombuffer(b"abcdefgh", np.uint8)


@pytest.mark.parametrize("args, exc, match", [
    (("abc",), TypeError, "Strings must be encoded"),
    (([b"a", "b"],), TypeError, r"Strings must be encoded.*message 1"),
    (([b"a", None],), TypeError, "message 1: object supporting the buffer API"),
    (([b"a", 5],), TypeError, "message 1"),
    ((None,), TypeError, "not None"),
    ((5,), TypeError, "not int"),
    ((b"abc",), TypeError, "single bytes-like object"),
    ((VALUES,), TypeError, "needs offsets"),
    ((np.zeros((2, 3), np.int32),), TypeError, "uint8"),
    ((np.zeros((2, 6), np.uint8)[:, ::2],), ValueError, "C-contiguous"),
    ((np.zeros((2, 2, 2), np.uint8),), ValueError, "3-D"),
    ((np.zeros((2, 3), np.uint8), [0, 1, 2]), TypeError, "offsets go with"),
    ((VALUES.astype(np.int16), [0, 2]), TypeError, "uint8"),
    ((np.zeros(8, np.uint8)[::2], [0, 2]), ValueError, "C-contiguous"),
    ((VALUES, [0, 4, 2]), ValueError, r"non-decreasing: offsets\[2\] = 2 < offsets\[1\] = 4"),
    ((VALUES, [0, 9]), ValueError, r"offsets\[-1\] = 9 is past the end of values \(8 bytes\)"),
    ((VALUES, [-1, 2]), ValueError, "negative"),
    ((VALUES, []), ValueError, "n \\+ 1 entries"),
    ((VALUES, [[0, 1]]), ValueError, "n \\+ 1 entries"),
    ((VALUES, [0.0, 1.0]), TypeError, "integers"),
    ((VALUES, np.array([True, True])), TypeError, "integers"),
    ((VALUES, np.array([0, 2 ** 63], np.uint64)), ValueError, "int64"),
    (("abc", [0, 1]), TypeError, "Strings must be encoded"),
    (([1.5], None), TypeError, "message 0"),
])
def test_bad_messages(args, exc, match):
    with pytest.raises(exc, match=match):
        jitdigest.hash_many("md5", *args)


def test_bad_name_length_threads():
    with pytest.raises(ValueError, match="unsupported hash type"):
        jitdigest.hash_many("md6", [b"a"])
    with pytest.raises(TypeError, match="length"):
        jitdigest.hash_many("shake_256", [b"a"])
    with pytest.raises(TypeError, match="SHAKE only"):
        jitdigest.hash_many("md5", [b"a"], length=16)
    with pytest.raises(ValueError, match="non-negative"):
        jitdigest.hash_many("shake_128", [b"a"], length=-1)
    with pytest.raises(ValueError, match="at least 1"):
        jitdigest.hash_many("md5", [b"a"], threads=0)
    with pytest.raises(TypeError, match="threads"):
        jitdigest.hash_many("md5", [b"a"], threads="2")
    assert jitdigest.hash_many("md5", [b"a"], threads=np.int64(3)).shape == (1, 16)


def test_arrow_strings_nulls_and_types():
    pa = pytest.importorskip("pyarrow")
    words = ["", "a", "h\u00e9llo", "\u6f22\u5b57" * 40]
    want = [hashlib.sha256(w.encode()).digest() for w in words]
    for typ in (pa.string(), pa.large_string(), pa.binary()):
        arr = pa.array([w.encode() if typ == pa.binary() else w for w in words], typ)
        assert [bytes(r) for r in jitdigest.hash_many("sha256", arr)] == want
    for name in ("binary_view", "string_view"):
        typ = getattr(pa, name, None)
        if typ is not None:
            arr = pa.array(words, pa.string()).cast(typ())
            assert [bytes(r) for r in jitdigest.hash_many("sha256", arr)] == want
    fixed = pa.array([b"abcd", b"efgh", b"ijkl"], pa.binary(4))[1:]
    assert [bytes(r) for r in jitdigest.hash_many("md5", fixed)] == \
        [hashlib.md5(b"efgh").digest(), hashlib.md5(b"ijkl").digest()]
    with pytest.raises(ValueError, match="1 null entry"):
        jitdigest.hash_many("md5", pa.array([b"a", None, b"c"]))
    with pytest.raises(ValueError, match="2 null entries"):
        jitdigest.hash_many("md5", pa.chunked_array([[b"a", None], [None]]))
    assert jitdigest.hash_many("md5", pa.array([b"a", None, b"c"]).drop_null()).shape == (2, 16)
    with pytest.raises(TypeError, match="int64"):
        jitdigest.hash_many("md5", pa.array([1, 2, 3]))
    with pytest.raises(TypeError, match="offsets go with"):
        jitdigest.hash_many("md5", pa.array([b"a"]), [0, 1])
    assert jitdigest.hash_many("md5", pa.chunked_array([], pa.binary())).shape == (0, 16)


def test_arrow_is_not_imported():
    code = ("import sys, jitdigest; jitdigest.hash_many('md5', [b'x']);"
            "print('pyarrow' in sys.modules)")
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          timeout=300)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip() == "False"


# --- threads --------------------------------------------------------------------------------

@pytest.fixture
def small_chunks(monkeypatch):
    """Split even small batches across threads, with chunk cuts on multiples of 16 rows."""
    monkeypatch.setattr(batch, "MIN_BLOCKS_PER_THREAD", 4)
    monkeypatch.setattr(batch, "ALIGN", 16)


@pytest.fixture
def kernel_threads(monkeypatch):
    """The native id of the thread of every batch kernel call made while the fixture is on
    (hash_many's threads are Python threads calling the GIL-free entry, so each call shows the
    thread it ran on)."""
    seen = []
    real_entry = batch._entry

    def entry(ks, spec, name):
        kernel = real_entry(ks, spec, name)

        def recorded(*args):
            seen.append(threading.get_native_id())
            return kernel(*args)
        return recorded
    monkeypatch.setattr(batch, "_entry", entry)
    return seen


@pytest.mark.parametrize("name", ALL)
def test_threads_one_and_many_agree(name, small_chunks, kernel_threads):
    spec = _algorithms.SPECS[name]
    rng = np.random.default_rng(21)
    lengths = rng.integers(0, 4 * spec.block_size, 1000)
    values = rng.integers(0, 256, int(lengths.sum()), dtype=np.uint8)
    offsets = np.concatenate(([0], np.cumsum(lengths)))
    kw = length_kw(name)
    msgs = [values[a:b].tobytes() for a, b in zip(offsets[:-1], offsets[1:])]
    for threads in (1, 2, 3, 7):
        check_batch(name, msgs, jitdigest.hash_many(name, values, offsets, threads=threads, **kw))
    assert len(set(kernel_threads)) > 1              # the batch was split across threads
    rows = values[:64 * 300].reshape(300, 64)
    for threads in (1, 4):
        check_batch(name, list(rows), jitdigest.hash_many(name, rows, threads=threads, **kw))


def test_big_uniform_batch_runs_on_several_threads(kernel_threads):
    rows = np.random.default_rng(2).integers(0, 256, (20000, 64), dtype=np.uint8)
    want = [hashlib.md5(r.tobytes()).digest() for r in rows]
    me = threading.get_native_id()
    one = jitdigest.hash_many("md5", rows, threads=1)
    assert [bytes(r) for r in one] == want
    assert kernel_threads == [me]                    # one call, on this thread
    kernel_threads.clear()
    many = jitdigest.hash_many("md5", rows, threads=4)
    assert [bytes(r) for r in many] == want
    # Four chunks: this thread takes one, pool threads the others (a pool thread that finished
    # its chunk may take the next, so at least two threads, not always four).
    assert len(kernel_threads) == 4
    assert me in kernel_threads and len(set(kernel_threads)) >= 2


def test_four_threads_calling_at_once(small_chunks):
    names = ["md5", "sha256", "sha3_256", "sha512"]
    rng = np.random.default_rng(4)
    jobs = []
    for i, name in enumerate(names):
        msgs = [rng.integers(0, 256, int(k), dtype=np.uint8).tobytes()
                for k in rng.integers(0, 300, 600)]
        jobs.append((name, msgs, [expected(name, m) for m in msgs]))
        jitdigest.hash_many(name, msgs[:1])                 # compile outside the race
    barrier = threading.Barrier(len(jobs))
    errors = []

    def work(name, msgs, want):
        try:
            barrier.wait()
            for threads in (1, 3, None, 2, 3):
                got = jitdigest.hash_many(name, msgs, threads=threads)
                if [bytes(r) for r in got] != want:
                    errors.append(f"{name} threads={threads}")
        except Exception as exc:            # noqa: BLE001 - reported below
            errors.append(repr(exc))

    workers = [threading.Thread(target=work, args=job) for job in jobs]
    for w in workers:
        w.start()
    for w in workers:
        w.join()
    assert errors == []


@pytest.mark.skipif(not hasattr(os, "fork"), reason="needs os.fork")
@pytest.mark.filterwarnings("ignore:This process .* is multi-threaded:DeprecationWarning")
def test_threads_work_in_a_forked_child(small_chunks):
    rows = np.random.default_rng(6).integers(0, 256, (500, 100), dtype=np.uint8)
    want = np.array([list(hashlib.md5(r.tobytes()).digest()) for r in rows], np.uint8)
    assert (jitdigest.hash_many("md5", rows, threads=3) == want).all()  # the pool has threads
    pid = os.fork()
    if pid == 0:                                                  # child: the pool is new
        code = 1
        try:
            code = 0 if (jitdigest.hash_many("md5", rows, threads=3) == want).all() else 1
        finally:
            os._exit(code)
    for _ in range(600):
        done, status = os.waitpid(pid, os.WNOHANG)
        if done:
            break
        threading.Event().wait(0.1)
    else:
        os.kill(pid, 9)
        os.waitpid(pid, 0)
        pytest.fail("the forked child hung")
    assert os.waitstatus_to_exitcode(status) == 0


def cpus_allowed():
    """The CPUs this process may run on, asked of the OS directly."""
    if hasattr(os, "process_cpu_count"):               # Python 3.13+
        return os.process_cpu_count()
    if hasattr(os, "sched_getaffinity"):
        return len(os.sched_getaffinity(0))
    return os.cpu_count()


def test_default_threads(monkeypatch):
    """NUMBA_NUM_THREADS when set to a number, else the CPUs this process may run on."""
    monkeypatch.setenv("NUMBA_NUM_THREADS", "3")
    assert batch.default_threads() == 3
    monkeypatch.setenv("NUMBA_NUM_THREADS", "many")      # not a number: ignored
    assert batch.default_threads() == cpus_allowed()
    monkeypatch.delenv("NUMBA_NUM_THREADS")
    assert batch.default_threads() == cpus_allowed()


@pytest.mark.skipif(not hasattr(os, "sched_setaffinity"), reason="needs sched_setaffinity")
def test_default_threads_follow_cpu_affinity():
    """A process pinned to one CPU uses one thread, however many the machine has."""
    code = ("import os; os.sched_setaffinity(0, {min(os.sched_getaffinity(0))});"
            "from jitdigest import batch; print(batch.default_threads(), os.cpu_count())")
    env = {k: v for k, v in os.environ.items() if k != "NUMBA_NUM_THREADS"}
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          env=env, timeout=300)
    assert proc.returncode == 0, proc.stderr
    threads, cpu_count = proc.stdout.split()
    assert threads == "1", (threads, cpu_count)


# --- hex and UUID strings -------------------------------------------------------------------

def test_hexdigests():
    msgs = [bytes([i]) * i for i in range(100)]
    d = jitdigest.hash_many("sha512", msgs)
    hx = jitdigest.hexdigests(d)
    assert isinstance(hx, np.ndarray) and hx.dtype == np.dtype("<U128") and hx.shape == (100,)
    assert hx.tolist() == [hashlib.sha512(m).hexdigest() for m in msgs]
    assert jitdigest.hexdigests(d[:, ::3]).tolist() == [bytes(r[::3]).hex() for r in d]
    assert jitdigest.hexdigests(np.zeros((0, 16), np.uint8)).shape == (0,)
    assert jitdigest.hexdigests(np.zeros((2, 0), np.uint8)).tolist() == ["", ""]
    with pytest.raises(TypeError, match="uint8"):
        jitdigest.hexdigests(d.astype(np.int64))
    with pytest.raises(ValueError, match="2-D"):
        jitdigest.hexdigests(d[0])


def test_uuid_strings():
    us = [uuid.uuid4() for _ in range(50)]
    arr = np.array([list(u.bytes) for u in us], np.uint8)
    assert jitdigest.uuid_strings(arr).tolist() == [str(u) for u in us]
    with pytest.raises(ValueError, match="16 bytes"):
        jitdigest.uuid_strings(np.zeros((2, 15), np.uint8))


def _reference_uuid(version, namespace, name):
    data = namespace.bytes + (name.encode() if isinstance(name, str) else bytes(name))
    digest = (hashlib.md5 if version == 3 else hashlib.sha1)(data).digest()
    return uuid.UUID(bytes=digest[:16], version=version)


@pytest.mark.parametrize("version", [3, 5])
def test_uuid_many_against_uuid_module(version):
    func = jitdigest.uuid3_many if version == 3 else jitdigest.uuid5_many
    std = uuid.uuid3 if version == 3 else uuid.uuid5
    rng = np.random.default_rng(version)
    # 100k ASCII names of 0..60 characters: the one-join fast path
    sizes = rng.integers(0, 61, 100_000)
    pool = "abcdefghijklmnopqrstuvwxyz0123456789-._/:"
    chars = np.array(list(pool))[rng.integers(0, len(pool), int(sizes.sum()))]
    text = "".join(chars.tolist())
    ends = np.cumsum(sizes)
    names = [text[e - s:e] for s, e in zip(sizes.tolist(), ends.tolist())]
    got = func(uuid.NAMESPACE_DNS, names)
    assert got.shape == (100_000, 16) and got.dtype == np.uint8
    want = np.frombuffer(b"".join(std(uuid.NAMESPACE_DNS, n).bytes for n in names),
                         np.uint8).reshape(-1, 16)
    assert (got == want).all()
    strings = func(uuid.NAMESPACE_DNS, names[:1000], as_strings=True)
    assert strings.tolist() == [str(std(uuid.NAMESPACE_DNS, n)) for n in names[:1000]]
    # non-ASCII str, bytes and mixed names: the per-name encoding path
    odd = ["", "\u00e9", "na\u00efve", "\U0001F600" * 20, b"raw\xff\x00", bytearray(b"ba"),
           "x" * 300] * 7
    got = func(uuid.NAMESPACE_URL, odd, as_strings=True)
    assert got.tolist() == [str(_reference_uuid(version, uuid.NAMESPACE_URL, n)) for n in odd]
    assert got[0] == str(std(uuid.NAMESPACE_URL, ""))
    assert func(uuid.NAMESPACE_OID, []).shape == (0, 16)
    assert func(uuid.NAMESPACE_OID, (n for n in ["a", "b"])).shape == (2, 16)


def test_uuid_many_bad_input():
    with pytest.raises(TypeError, match="uuid.UUID"):
        jitdigest.uuid3_many("6ba7b810-9dad-11d1-80b4-00c04fd430c8", ["a"])
    with pytest.raises(TypeError, match="single str"):
        jitdigest.uuid5_many(uuid.NAMESPACE_DNS, "abc")
    with pytest.raises(TypeError, match="message 1"):
        jitdigest.uuid5_many(uuid.NAMESPACE_DNS, ["a", 3])


# --- hypothesis, sparingly ------------------------------------------------------------------

try:
    from hypothesis import given, settings, strategies as st
except ImportError:         # pragma: no cover - hypothesis is in the test extras
    given = None

if given is not None:
    FIXED_NAMES = [n for n in ALL if not n.startswith("blake2")]

    @settings(max_examples=40, deadline=None)
    @given(name=st.sampled_from(FIXED_NAMES),
           msgs=st.lists(st.binary(max_size=300), max_size=40),
           threads=st.integers(1, 4))
    def test_random_batches(name, msgs, threads):
        got = jitdigest.hash_many(name, msgs, threads=threads, **length_kw(name))
        check_batch(name, msgs, got)


# --- interpreted mode -----------------------------------------------------------------------

INTERPRETED = r"""
import hashlib, uuid, numpy as np, jitdigest
from jitdigest import _algorithms, _dispatch, batch
from jitdigest.kernels._jit import JIT_ENABLED
assert not JIT_ENABLED
failures, done = [], []
for name, spec in sorted(_algorithms.SPECS.items()):
    bs = spec.block_size
    lengths = [0, 1, bs - 9, bs - 1, bs, bs + 1, 2 * bs + 3, 5, 0, 2]
    msgs = [bytes((i * 7 + k) & 0xFF for k in range(n)) for i, n in enumerate(lengths)]
    kw = {"length": 50} if name.startswith("shake") else {}
    want = [hashlib.new(name, m).digest(*kw.values()) for m in msgs]
    for backend in jitdigest.backends(name):
        with jitdigest.backend(backend):
            got = jitdigest.hash_many(name, msgs, threads=2, **kw)
        if [bytes(r) for r in got] != want:
            failures.append(f"{name}/{backend}")
        done.append(f"{name}/{backend}")
    rows = np.frombuffer(bytes(range(256)) * 4, np.uint8)[:5 * (bs + 1)].reshape(5, bs + 1)
    got = jitdigest.hash_many(name, rows, **kw)
    if [bytes(r) for r in got] != [hashlib.new(name, r.tobytes()).digest(*kw.values())
                                   for r in rows]:
        failures.append(f"{name}/rows")
names = ["a", "\u00e9t\u00e9", "www.example.org"]
if [str(u) for u in jitdigest.uuid3_many(uuid.NAMESPACE_DNS, names, as_strings=True)] != \
        [str(uuid.uuid3(uuid.NAMESPACE_DNS, n)) for n in names]:
    failures.append("uuid3")
if [str(u) for u in jitdigest.uuid5_many(uuid.NAMESPACE_DNS, names, as_strings=True)] != \
        [str(uuid.uuid5(uuid.NAMESPACE_DNS, n)) for n in names]:
    failures.append("uuid5")
print("checked:", " ".join(done))
print("failures:", len(failures), failures)
"""


def test_interpreted_mode_small_batch():
    env = dict(os.environ, NUMBA_DISABLE_JIT="1")
    proc = subprocess.run([sys.executable, "-c", INTERPRETED], env=env, cwd=TESTS,
                          capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "failures: 0" in proc.stdout, proc.stdout
    for name in ALL:                               # every algorithm had a batch kernel
        assert f" {name}/" in proc.stdout, proc.stdout
