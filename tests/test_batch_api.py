"""The public batch function, jitdigest.hash_many: aliases and empty batches, every accepted
form of messages and offsets, out=, bad input and its messages, Arrow arrays (and Arrow not
imported when unused), threads (one and many agree, chunks on pool threads, concurrent callers,
a forked child, the default count), and random batches with hypothesis."""
import hashlib
import os
import subprocess
import sys
import threading

import numpy as np
import pytest

import jitdigest
from jitdigest.base import algorithms as _algorithms, config as _config
from jitdigest import batch

from batch_cases import ALL, check_batch, expected, length_kw, out_length, ragged_messages


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


@pytest.mark.parametrize("width", [0, 1, 64, 200])
def test_offsets_of_rows_of_one_length(width):
    """Values with offsets whose rows all have one length (the first past 0, bytes before and
    after them) take the grid form, as a 2-D array does, and hash as hashlib does; a row of
    another length among them keeps the general form."""
    from jitdigest.engine import layout as _layout
    msgs = [bytes((i * 7 + j) & 0xFF for j in range(width)) for i in range(70)]
    values = np.frombuffer(b"abc" + b"".join(msgs) + b"tail", np.uint8)
    offsets = 3 + np.arange(71) * width
    (seg,), n = _layout.segments(values, offsets)
    assert (seg.width, n) == (width, 70)
    for name in ("md5", "sha256", "sha3_256", "blake2s"):
        got = jitdigest.hash_many(name, values, offsets)
        assert [bytes(row) for row in got] == [hashlib.new(name, m).digest() for m in msgs]
    offsets[-1] += 1                                  # the last row one byte longer
    (seg,), _ = _layout.segments(values, offsets)
    assert seg.width is None
    got = jitdigest.hash_many("sha1", values, offsets)
    expected = msgs[:-1] + [msgs[-1] + b"t"]
    assert [bytes(row) for row in got] == [hashlib.sha1(m).digest() for m in expected]


def test_offsets_of_one_length_checked_a_window_at_a_time():
    """Int32/int64 offsets are checked for rows of one length a window (GRID_WINDOW offsets)
    at a time, without an n-long copy: rows of another length in a later window, or a last
    offset past the end, are still found; other offsets types take the general check."""
    from jitdigest.engine import layout as _layout
    n, width = 2 * _config.GRID_WINDOW + 5, 3
    values = np.frombuffer(os.urandom(n * width + 10), np.uint8)
    equal = np.arange(n + 1) * width
    for offsets in (equal.astype(np.int32), equal, equal.astype(np.uint64), equal.tolist()):
        (seg,), count = _layout.segments(values, offsets)
        assert (seg.width, count) == (width, n)
    offsets = equal.astype(np.int32)
    offsets[_config.GRID_WINDOW + 7] += 1        # two rows of other lengths, in the 2nd window
    (seg,), _ = _layout.segments(values, offsets)
    assert seg.width is None
    got = jitdigest.hash_many("md5", values, offsets)
    expected = [values[a:b].tobytes() for a, b in zip(offsets[:-1], offsets[1:])]
    assert [bytes(row) for row in got] == [hashlib.md5(m).digest() for m in expected]
    offsets = (np.arange(n + 1) * (width + 1)).astype(np.int32)   # equal, but past the end
    with pytest.raises(ValueError, match="past the end of values"):
        jitdigest.hash_many("md5", values, offsets)


@pytest.mark.parametrize("name", [np.zeros((2, 8), np.uint8), b"md5", None, 5])
def test_name_that_is_not_a_string(name):
    """The name first, as hashlib.new's: anything else (the arguments swapped, say) is
    hashlib's TypeError, not an error from comparing an array with a name."""
    with pytest.raises(TypeError, match="name must be a string"):
        jitdigest.hash_many(name, [b"a"])


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
    """Split even small batches across threads, with chunk cuts on multiples of 16 rows, and
    grids into windows of 48 rows (several per chunk, the last one short)."""
    monkeypatch.setattr(_config, "MIN_BLOCKS_PER_THREAD", 4)      # batch reads both per call
    monkeypatch.setattr(_config, "ALIGN", 16)
    monkeypatch.setattr(_config, "GRID_WINDOW", 48)


@pytest.fixture
def kernel_calls(monkeypatch):
    """(entry name, threads a parallel region may use) for every batch kernel call made while
    the fixture is on: ``hash_rows`` runs on the calling thread, the ``*_chunks``
    entries are prange loops over chunks on Numba's threading layer."""
    import numba
    seen = []
    real_entry = batch._entry

    def entry(ks, spec, grid=None):
        kernel = real_entry(ks, spec, grid)
        name = "hash_rows" if grid is None else "grid_chunks" if grid else "hash_chunks"

        def recorded(*args):
            seen.append((name, numba.get_num_threads()))
            return kernel(*args)
        return recorded
    monkeypatch.setattr(batch, "_entry", entry)
    return seen


@pytest.mark.parametrize("name", ALL)
def test_threads_one_and_many_agree(name, small_chunks, kernel_calls):
    spec = _algorithms.SPECS[name]
    rng = np.random.default_rng(21)
    lengths = rng.integers(0, 4 * spec.block_size, 1000)
    values = rng.integers(0, 256, int(lengths.sum()), dtype=np.uint8)
    offsets = np.concatenate(([0], np.cumsum(lengths)))
    kw = length_kw(name)
    msgs = [values[a:b].tobytes() for a, b in zip(offsets[:-1], offsets[1:])]
    for threads in (1, 2, 3, 7):
        check_batch(name, msgs, jitdigest.hash_many(name, values, offsets, threads=threads, **kw))
    assert ("hash_chunks", 2) in kernel_calls      # the batch went to the prange entry
    rows = values[:64 * 300].reshape(300, 64)
    for threads in (1, 4):
        check_batch(name, list(rows), jitdigest.hash_many(name, rows, threads=threads, **kw))


def test_big_uniform_batch_runs_on_several_threads(kernel_calls):
    import numba
    rows = np.random.default_rng(2).integers(0, 256, (20000, 64), dtype=np.uint8)
    want = [hashlib.md5(r.tobytes()).digest() for r in rows]
    before = numba.get_num_threads()
    one = jitdigest.hash_many("md5", rows, threads=1)
    assert [bytes(r) for r in one] == want
    # this thread, a window of rows per call
    assert [name for name, _ in kernel_calls] == ["hash_rows"] * -(-20000 // _config.GRID_WINDOW)
    kernel_calls.clear()
    many = jitdigest.hash_many("md5", rows, threads=2)
    assert [bytes(r) for r in many] == want
    # one prange call with two chunks, on two threads; the caller's setting restored after
    assert kernel_calls == [("grid_chunks", 2)]
    assert numba.get_num_threads() == before


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
    """Before Numba's threading layer runs: NUMBA_NUM_THREADS when set to a number, else the
    CPUs this process may run on (after: numba.get_num_threads(), tests/test_parallel.py)."""
    monkeypatch.setattr(batch._parallel, "current_threads", lambda: None)
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
