"""Inputs that once crashed the process or gave a wrong digest, each in a child process where it
could crash: every one must end in hashlib's digests or a clear TypeError/ValueError/BufferError,
never a signal or a hang. Expected digests come from hashlib, computed in the child."""
import hashlib
import os
import pathlib
import signal
import subprocess
import sys
import textwrap
import time

import numpy as np
import pytest

import jitdigest
from jitdigest.base import algorithms as _algorithms
from jitdigest.engine import dispatch as _dispatch
from jitdigest import batch

TESTS = pathlib.Path(__file__).resolve().parent
PRELUDE = """\
import hashlib, threading, uuid
import numpy as np
import jitdigest
from jitdigest import hash_many, hexdigests

def want(name, msgs):
    return [hashlib.new(name, bytes(memoryview(m))).digest() for m in msgs]

def rows(arr):
    return [bytes(r) for r in arr]

def raises(exc, func, *args, **kwargs):
    try:
        func(*args, **kwargs)
    except exc as e:
        print("raised", type(e).__name__, e)
        return
    raise AssertionError(f"{exc.__name__} not raised")
"""


def run_child(code, timeout=300):
    """Run ``code`` after PRELUDE in a child; fail on a signal death, a hang or an error."""
    try:
        proc = subprocess.run([sys.executable, "-c", PRELUDE + textwrap.dedent(code)],
                              capture_output=True, text=True, timeout=timeout, cwd=TESTS)
    except subprocess.TimeoutExpired:
        pytest.fail(f"child hung for {timeout} s")
    assert proc.returncode >= 0, f"child died of signal {-proc.returncode}: {proc.stderr}"
    assert proc.returncode == 0, proc.stdout + proc.stderr
    return proc.stdout


@pytest.mark.parametrize("name, offsets", [
    ("sha256", "[0, 5, -2 ** 63 + 1]"),
    ("md5", "[10, -2 ** 63 + 5]"),
    ("sha3_256", "[10, -2 ** 63 + 5]"),
    ("md5", "[0, 2 ** 63 - 1]"),
    ("md5", "np.array([0, 2 ** 64 - 1], np.uint64)"),
    ("sha1", "np.array([2 ** 63 - 1, -2 ** 63], np.int64)"),
])
def test_offsets_whose_differences_overflow(name, offsets):
    out = run_child(f"""
        raises(ValueError, hash_many, {name!r}, np.zeros(26, np.uint8), {offsets})
    """, timeout=120)
    assert out.count("raised ValueError") == 1


def test_items_whose_len_is_not_their_size():
    out = run_child("""
        z = np.empty((2 ** 62, 0), np.uint8)
        assert len(z) == 2 ** 62 and memoryview(z).nbytes == 0
        class Lying(bytes):
            def __len__(self):
                return 2 ** 62
        class LyingArray(bytearray):
            def __len__(self):
                return 3
        for msgs in ([z, z, z, z, b"abc"], [memoryview(z)] * 4 + [b"abc"],
                     [Lying(b"x"), Lying(b"yy"), Lying(b""), Lying(b"w"), b"abc"],
                     [LyingArray(b"12345678"), b"ab"]):
            for name in ("md5", "sha256", "sha3_256"):
                assert rows(hash_many(name, msgs)) == want(name, msgs), (name, msgs)
        print("checked")
    """)
    assert "checked" in out


def test_sequences_whose_len_lies():
    """A list subclass or sequence whose ``__len__`` is not its number of items: the messages
    are those its iteration yields, as in a loop over it (no error naming a message's size)."""
    out = run_child("""
        import hmac
        msgs = [b"a", bytearray(b"bc"), b"", memoryview(b"def")]
        for claimed in (0, 2, 7, 2 ** 40):
            class Lying(list):
                def __len__(self):
                    return claimed
            class Seq:
                def __len__(self):
                    return claimed
                def __iter__(self):
                    return iter(msgs)
            for seq in (Lying(msgs), Lying([bytes(m) for m in msgs]), Seq()):
                assert rows(hash_many("sha256", seq)) == want("sha256", msgs), (claimed, seq)
                got = rows(jitdigest.hmac_many("md5", b"key", seq))
                assert got == [hmac.digest(b"key", m, "md5") for m in msgs], (claimed, seq)
        print("checked")
    """)
    assert "checked" in out


def test_items_that_change_size_while_read():
    out = run_child("""
        class Growing(bytearray):
            def __len__(self):
                self.extend(b"!" * (1 << 20))        # grows whenever its length is asked
                return super().__len__()
        g = Growing(b"abc")
        before = bytes(g)
        got = hash_many("md5", [g, b"tail"])
        assert rows(got) in (want("md5", [before, b"tail"]), want("md5", [bytes(g), b"tail"]))

        small, big = b"s" * 10, b"B" * (1 << 20)
        ba = bytearray(small)
        stop = threading.Event()
        def resize():
            while not stop.is_set():
                for content in (big, small):
                    try:
                        ba[:] = content
                    except BufferError:              # exported: hash_many holds it
                        pass
        t = threading.Thread(target=resize)
        t.start()
        allowed = {hashlib.sha256(small).digest(), hashlib.sha256(big).digest()}
        try:
            for _ in range(300):
                got = hash_many("sha256", [b"x", ba, b"y", ba])
                assert {bytes(r) for r in got[1::2]} <= allowed
                assert rows(got[0::2]) == want("sha256", [b"x", b"y"])
        finally:
            stop.set()
            t.join()
        print("checked")
    """)
    assert "checked" in out


def test_exact_bytes_joined_in_one_compiled_pass():
    """Lists, tuples and object arrays of exact ``bytes`` are read through CPython's object
    layout (``kernels/_pyobjects.py``): the layout must be proved on this interpreter, any other
    item must go back to the Python join, and a list that other threads resize, refill and sort
    while it is read must give rows that are each the digest of a message it held."""
    out = run_child("""
        import random
        import time
        from jitdigest.kernels import _pyobjects
        assert _pyobjects.layout() is not None, "the object layout was not proved"
        msgs = [bytes([i % 251]) * (i % 200) for i in range(3000)]
        for seq in (msgs, tuple(msgs), np.array(msgs + [b""], dtype=object)[:-1]):
            assert _pyobjects.join(seq) is not None
            assert rows(hash_many("sha1", seq)) == want("sha1", msgs)
        class Sub(bytes):
            def __len__(self):
                return 7
        for odd in (Sub(b"abc"), bytearray(b"abc"), memoryview(b"abc"), np.ones(3, np.uint8)):
            mixed = msgs[:50] + [odd] + msgs[50:100]
            assert _pyobjects.join(mixed) is None
            assert rows(hash_many("md5", mixed)) == want("md5", mixed), type(odd)
        assert _pyobjects.join(np.array(msgs, dtype=object)[::2]) is None   # strided: Python
        shared = list(msgs[:500])
        allowed = {hashlib.md5(m).digest() for m in msgs} | {hashlib.md5(b"n" * 9).digest()}
        stop = threading.Event()
        def churn(seed):
            rng = random.Random(seed)
            while not stop.is_set():
                k = rng.randrange(100)
                if k < 30:
                    shared.extend(msgs[rng.randrange(3000):][:300])
                elif k < 60:
                    del shared[rng.randrange(len(shared) + 1):]
                elif k < 80:
                    shared[:] = [b"n" * 9] * rng.randrange(600)
                elif k < 98:
                    shared[:] = sorted(shared, key=lambda m: (m[:1], len(m)))
                else:
                    # list.sort empties the list while its key function runs, and the GIL
                    # changes hands mostly inside those calls: rare, or most calls see no items
                    try:
                        shared.sort(key=lambda m: (m[:1], len(m)))
                    except ValueError:          # "list modified during sort"
                        pass
        workers = [threading.Thread(target=churn, args=(i,)) for i in range(2)]
        for w in workers:
            w.start()
        calls = rows_seen = nonempty = 0
        deadline = time.monotonic() + 120
        try:
            # at least 400 calls and 100 that saw items (how many do depends on the threads'
            # timing: under load most calls can land inside a sort)
            while (calls < 400 or nonempty < 100) and time.monotonic() < deadline:
                got = hash_many("md5", shared)
                assert {bytes(r) for r in got} <= allowed
                calls += 1
                rows_seen += len(got)
                nonempty += len(got) > 0
        finally:
            stop.set()
            for w in workers:
                w.join()
        print("checked", nonempty, calls, rows_seen)
    """, timeout=300)
    nonempty, calls, rows_seen = map(int, out.split("checked")[1].split())
    assert nonempty >= 100 and calls >= 400 and rows_seen >= nonempty, out


def test_joined_into_reused_scratch_buffers():
    """``join(..., scratch=True)`` (jitdigest.dask's partitions) fills this thread's kept
    buffers: growing and shrinking containers, a container that outgrows them, a non-bytes item
    after a grown one, and a nested take (it gets its own buffers) all give hashlib's rows."""
    out = run_child("""
        from jitdigest.kernels import _pyobjects
        rng = np.random.default_rng(3)
        checked = 0
        for n in (10, 3000, 0, 7, 5000, 1, 4000):
            msgs = [rng.bytes(int(k)) for k in rng.integers(0, 300, n)]
            joined = _pyobjects.join(msgs, scratch=True)
            values, offsets, lengths = joined
            inner = _pyobjects.join(msgs[:3], scratch=True)             # nested: own buffers
            assert not np.shares_memory(inner[0], values) or n == 0
            _pyobjects.release(inner)
            assert offsets.shape[0] == n + 1 and offsets[n] == values.shape[0]
            assert rows(hash_many("sha256", values, offsets)) == want("sha256", msgs)
            assert lengths.tolist() == [len(m) for m in msgs]
            _pyobjects.release(joined)
            assert _pyobjects.join(msgs + [bytearray(b"x")], scratch=True) is None
            checked += n
        print("checked", checked)
    """)
    assert "checked" in out and int(out.split("checked")[1]) == 10 + 3000 + 7 + 5000 + 1 + 4000


def test_out_subclass_with_a_larger_shape():
    out = run_child("""
        class Liar(np.ndarray):
            shape = property(lambda self: (1000, 16))
            ndim = property(lambda self: 2)
        guard = np.zeros((4, 16), np.uint8)
        liar = guard[1:3].view(Liar)
        assert liar.shape == (1000, 16)
        msgs = [bytes([i % 256]) * (i % 300) for i in range(1000)]
        raises(ValueError, hash_many, "md5", msgs, out=liar)
        assert not guard.any()
        got = hash_many("md5", msgs[:2], out=liar)
        assert got is liar and rows(guard[1:3]) == want("md5", msgs[:2]) and not guard[0].any()
        class LiarIn(np.ndarray):
            shape = property(lambda self: (1000, 64))
        arr = np.arange(64, dtype=np.uint8).reshape(1, 64).view(LiarIn)
        assert rows(hash_many("md5", arr)) == want("md5", [bytes(range(64))])
        print("checked")
    """)
    assert "checked" in out


def test_arrow_offsets_changed_during_the_call():
    pytest.importorskip("pyarrow")
    out = run_child("""
        import pyarrow as pa
        n = 200
        values = np.frombuffer(bytes(range(256)) * 8, np.uint8).copy()
        good = np.arange(0, 10 * (n + 1), 10, dtype=np.int32)
        offsets = good.copy()
        arr = pa.Array.from_buffers(pa.binary(), n, [None, pa.py_buffer(offsets),
                                                     pa.py_buffer(values)])
        expected = want("md5", [values[a:b] for a, b in zip(good[:-1], good[1:])])
        stop = threading.Event()
        def flip():
            while not stop.is_set():
                offsets[n // 2] = 2 ** 31 - 1
                offsets[-1] = 2 ** 31 - 1
                offsets[:] = good
        t = threading.Thread(target=flip)
        t.start()
        errors = digests = 0
        try:
            for _ in range(500):
                try:
                    got = hash_many("md5", arr)
                except ValueError:
                    errors += 1
                    continue
                digests += 1
                assert rows(got) == expected
        finally:
            stop.set()
            t.join()
        print("checked", errors, digests)
    """)
    assert "checked" in out


def test_arrow_views_outside_their_buffers():
    """A binary_view/string_view array whose views point outside their data buffers (which
    ``Array.from_buffers`` accepts): ValueError, not a crash or another object's bytes hashed;
    good views, inline and out of line, sliced, against hashlib."""
    pa = pytest.importorskip("pyarrow")
    if not hasattr(pa, "binary_view"):
        pytest.skip("pyarrow without view types")
    out = run_child("""
        import pyarrow as pa
        data = b"0123456789abcdefghijklmnopqrstuvwxyz"          # 36 bytes
        def view(size, buffer, offset):
            return (np.int32(size).tobytes() + data[:4] + np.int32(buffer).tobytes()
                    + np.int32(offset).tobytes())
        bad = {"offset past the buffer": view(20, 0, 1 << 30),
               "a buffer that is not there": view(20, 7, 0),
               "a negative size": view(-20, 0, 0),
               "longer than the buffer": view(2_000_000, 0, 0),
               "a negative offset": view(20, 0, -1_000_000),
               "ends one byte past": view(20, 0, 17)}
        refused = 0
        for t in (pa.binary_view(), pa.string_view()):
            for how, v in bad.items():
                for good_first in (False, True):
                    views = (view(20, 0, 16) if good_first else b"") + v
                    n = len(views) // 16
                    arr = pa.Array.from_buffers(t, n, [None, pa.py_buffer(views),
                                                       pa.py_buffer(data)])
                    for call in (lambda: hash_many("sha256", arr),
                                 lambda: jitdigest.hmac_many("sha256", b"k", arr)):
                        try:
                            call()
                        except ValueError as exc:
                            assert "malformed" in str(exc), (how, exc)
                            refused += 1
                        else:
                            raise AssertionError(how)
        # good ones: inline (up to 12 bytes) and out of line, sliced
        msgs = [data[:k] for k in (0, 1, 12, 13, 36)] + [data[5:30]]
        for t in (pa.binary_view(), pa.string_view()):
            arr = pa.array([m.decode() for m in msgs], pa.string()).cast(t)
            assert rows(hash_many("sha256", arr)) == want("sha256", msgs)
            assert rows(hash_many("sha256", arr[2:5])) == want("sha256", msgs[2:5])
        print("checked", refused)
    """)
    assert "checked 48" in out


def test_zero_width_arrays_in_a_list_and_as_uuid_names():
    out = run_child("""
        pair = [np.empty((3, 0), np.uint8), np.zeros(3, np.uint16)]     # len() sums to nbytes
        assert rows(hash_many("sha256", pair)) == [hashlib.sha256(b"").digest(),
                                                   hashlib.sha256(bytes(6)).digest()]
        msgs = [np.empty((3, 0), np.uint8), np.zeros(3, np.uint16), np.empty((0, 5), np.int32),
                np.zeros((2, 3), np.uint8)]
        for name in ("sha256", "md5", "sha3_256", "blake2b"):
            assert rows(hash_many(name, msgs)) == want(name, msgs), name
            assert rows(hash_many(name, pair)) == want(name, pair), name
        ns = uuid.NAMESPACE_URL
        names = [np.empty((4, 0), np.uint8), b"abc", np.zeros(2, np.uint16), np.empty((2, 0))]
        for version, many in ((3, jitdigest.uuid3_many), (5, jitdigest.uuid5_many)):
            h = {3: hashlib.md5, 5: hashlib.sha1}[version]
            ref = [bytes(uuid.UUID(bytes=h(ns.bytes + bytes(memoryview(m))).digest()[:16],
                                   version=version).bytes) for m in names]
            assert rows(many(ns, names)) == ref
        print("checked")
    """)
    assert "checked" in out


def test_out_overlapping_input_rows():
    out = run_child("""
        rng = np.random.default_rng(7)
        for shift in (1, 17, 100, 999):
            buf = rng.integers(0, 256, (1000 + shift, 16), dtype=np.uint8)
            msgs, dst = buf[:-shift], buf[shift:]      # out[i] is input row i + shift
            expected = want("md5", list(msgs))
            assert hash_many("md5", msgs, out=dst) is dst and rows(dst) == expected, shift
            lengths = rng.integers(0, 40, 1000)
            offsets = np.concatenate(([0], np.cumsum(lengths)))
            flat = rng.integers(0, 256, shift * 16 + max(int(offsets[-1]), 16000), np.uint8)
            values, dst = flat[shift * 16:], flat[:1000 * 16].reshape(1000, 16)
            expected = want("md5", [values[a:b] for a, b in zip(offsets[:-1], offsets[1:])])
            assert rows(hash_many("md5", values, offsets, out=dst)) == expected, shift
        buf = rng.integers(0, 256, (1000, 16), dtype=np.uint8)
        expected = want("md5", list(buf))
        assert rows(hash_many("md5", buf, out=buf)) == expected      # in place
        flat = rng.integers(0, 256, 40 * 32, dtype=np.uint8)
        offsets = np.arange(0, 40 * 32 + 1, 32)
        expected = want("sha256", [flat[a:b] for a, b in zip(offsets[:-1], offsets[1:])])
        got = hash_many("sha256", flat, offsets, out=flat.reshape(40, 32))
        assert rows(got) == expected
        print("checked")
    """)
    assert "checked" in out


def test_shake_long_output_is_one_allocation():
    out = run_child("""
        import resource
        def peak_mib():
            return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
        length = 256 << 20
        small = jitdigest.shake_128(b"abc").digest(1 << 16)           # compile outside
        assert small == hashlib.shake_128(b"abc").digest(1 << 16)
        before = peak_mib()
        got = jitdigest.shake_128(b"abc").digest(length)
        grown = peak_mib() - before
        assert got[-64:] == hashlib.shake_128(b"abc").digest(length)[-64:]
        print("grown", grown)
        assert grown < 1.25 * (length >> 20), grown
    """)
    assert "grown" in out


def test_contract_of_hashlib_and_numpy():
    out = run_child("""
        h, j = hashlib.shake_128(b"a"), jitdigest.shake_128(b"a")
        assert j.digest(np.int64(5)) == h.digest(np.int64(5))
        assert j.hexdigest(np.uint8(7)) == h.hexdigest(np.uint8(7))
        for bad in (5.0, "5", None, 2 ** 70):
            try:
                h.digest(bad)
            except Exception as exc:
                want_exc = exc
            try:
                j.digest(bad)
            except Exception as exc:
                assert type(exc) is type(want_exc) and str(exc) == str(want_exc), (exc, want_exc)
            else:
                raise AssertionError(bad)
        raises(ValueError, j.digest, -1)       # hashlib: ValueError (3.12+) or SystemError

        for item in (memoryview(b"abcd")[::2], np.zeros(8, np.uint8)[::2],
                     np.zeros((4, 4), np.uint8).T):
            try:
                hashlib.md5(item)
            except Exception as exc:
                want_exc = type(exc)
            raises(want_exc, hash_many, "md5", [b"ok", item])
        raises(TypeError, hash_many, "md5", [b"a"], threads=True)
        raises(TypeError, hash_many, "md5", [b"a"], threads=np.True_)
        d = np.asfortranarray(np.arange(60, dtype=np.uint8).reshape(3, 20))
        assert list(hexdigests(d)) == [bytes(r).hex() for r in d]
        assert list(hexdigests(d[:, ::3])) == [bytes(r).hex() for r in d[:, ::3]]
        print("checked")
    """)
    assert "checked" in out


@pytest.mark.parametrize("name", ["md5", "sha3_256"])
def test_kernels_refuse_a_negative_length(name):
    spec = _algorithms.SPECS[name]
    values = np.zeros(64, np.uint8)
    starts = np.zeros(3, np.int64)
    lengths = np.array([5, -2 ** 62, 3], np.int64)
    rows = np.arange(3, dtype=np.int64)
    for a in (values, starts, lengths, rows):
        a.setflags(write=False)         # read-only, as hash_many passes them: its kernels
    out = np.zeros((3, spec.digest_size), np.uint8)
    lanes, portable = _dispatch.batch_kernels_for(spec), _dispatch.usable_kernel_sets(spec)[-1]
    sets = {lanes, portable}            # one kernel set where portable code serves batches too
    for ks in sets:
        with pytest.raises(ValueError, match="negative message length"):
            ks.hash_rows(values, starts, lengths, rows, batch.initial_state(spec), out)
    assert len(sets) == (1 if lanes.name == portable.name else 2)


INTERRUPT = """
import sys, time
import numpy as np
import jitdigest
threads = int(sys.argv[1])
jitdigest.hash_many("sha3_512", np.zeros((64, 65536), np.uint8), threads=threads)  # compile
rows = np.zeros((1 << 16, 1 << 16), np.uint8)         # 4 GiB of untouched zero pages
t = time.perf_counter()
jitdigest.hash_many("sha3_512", rows[:1 << 12], threads=threads)    # a sixteenth of it
print("start", time.perf_counter() - t, flush=True)
t = time.perf_counter()
try:
    jitdigest.hash_many("sha3_512", rows, threads=threads)
except KeyboardInterrupt:
    print("interrupted", time.perf_counter() - t, flush=True)
    raise
print("finished", time.perf_counter() - t, flush=True)
"""


@pytest.mark.skipif(not hasattr(signal, "SIGINT") or os.name != "posix", reason="POSIX signals")
@pytest.mark.parametrize("threads", [1, 2])
def test_ctrl_c_ends_a_long_batch(threads):
    # SIGINT at its default in the child, as in a terminal, even when this run was started in
    # the background (which makes children ignore it)
    proc = subprocess.Popen([sys.executable, "-c", INTERRUPT, str(threads)],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
    # the batch takes about sixteen times what its sixteenth took in the child just before:
    # Ctrl-C sent once a sixteenth of it has had time to run must end it well before it could
    # have finished (under half of it: times measured on the same machine at the same load)
    try:
        word, sixteenth = proc.stdout.readline().split()
        assert word == "start"
        time.sleep(float(sixteenth))
        proc.send_signal(signal.SIGINT)
        stdout, stderr = proc.communicate(timeout=600)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    assert "interrupted" in stdout, stdout + stderr
    assert "KeyboardInterrupt" in stderr
    ran = float(stdout.split("interrupted", 1)[1].split()[0])
    assert ran < 8 * float(sixteenth), f"Ctrl-C ended the call after {ran:.2f} s of it"


def test_long_shake_output_matches_hashlib():
    for name in ("shake_128", "shake_256"):
        for length in (65535, 65536, 200_001):
            for data in (b"", b"abc", bytes(range(256)) * 3):
                oneshot = getattr(jitdigest, name)(data)
                streamed = getattr(jitdigest, name)()
                streamed.update(bytearray(data))
                want = hashlib.new(name, data).digest(length)
                assert oneshot.digest(length) == want
                assert streamed.digest(np.int32(length)) == want
                assert oneshot.hexdigest(length) == want.hex()      # the object stays usable


@pytest.mark.parametrize("n", [1, 2, 64, 65, 1000])
def test_last_checks_before_the_kernel(n):
    # the checks every segment and row array passes just before a kernel call, on short batches
    # (worked out on Python ints) and long ones (numpy): each bad index is refused
    from jitdigest.base import config as _config
    from jitdigest.engine import layout as _layout
    assert _config.FEW_ROWS == 64            # the sizes above straddle it
    size = 10 * n
    values = np.zeros(size, np.uint8)
    starts = np.arange(n, dtype=np.int64) * 10
    lengths = np.full(n, 10, np.int64)
    _layout.check_segment(_layout.Segment(0, values, starts, lengths))
    _layout.check_rows(np.arange(n, dtype=np.int64), n)
    refused = 0
    for i in (0, n // 2, n - 1):
        for bad_starts, bad_lengths in [(-1, 10), (0, -1), (size - 9, 10), (2 ** 62, 2 ** 62),
                                        (size, 1), (-2 ** 63, 2 ** 63 - 1)]:
            s, ln = starts.copy(), lengths.copy()
            s[i], ln[i] = bad_starts, bad_lengths
            with pytest.raises(ValueError):
                _layout.check_segment(_layout.Segment(0, values, s, ln))
            refused += 1
        for bad in (-1, n, 2 ** 63 - 1, -2 ** 63):
            rows = np.arange(n, dtype=np.int64)
            rows[i] = bad
            with pytest.raises(ValueError):
                _layout.check_rows(rows, n)
            refused += 1
    assert refused == 30
    assert _layout.Segment(0, values, starts, lengths).nbytes() == size
