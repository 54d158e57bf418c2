"""jitdigest.dask on a real two-process LocalCluster and on Dask's synchronous scheduler: every
row of every result checked against hashlib or hmac, the index of a column kept, two workers
filling one empty kernel cache at once, a kernel compiled at most once per worker process
whatever the number of tasks, and the errors.

A cold run is mostly compiling, so few kernels are used: one, the portable Keccak kernel (the
fastest to compile; the others are tested elsewhere), in the workers only (made the workers'
default backend): SHA3-256, SHAKE128, and HMAC with
SHA3-256, which runs on the same batch kernel (MD5's and SHA-2's need their keyed kernels
compiled too). The synchronous scheduler serves only tests that compile nothing.
"""
import hashlib
import hmac
import os
import subprocess
import sys
import textwrap

import numpy as np
import pytest

dask = pytest.importorskip("dask")
pytest.importorskip("distributed")
da = pytest.importorskip("dask.array")
dd = pytest.importorskip("dask.dataframe")
db = pytest.importorskip("dask.bag")
pd = pytest.importorskip("pandas")
pa = pytest.importorskip("pyarrow")

from jitdigest import dask as jd  # noqa: E402

ALGO = "sha3_256"     # the one algorithm the cluster compiles: the fastest cold compile
KEY = b"pseudonymise"


@pytest.fixture(scope="module")
def cache_dir(tmp_path_factory):
    return tmp_path_factory.mktemp("dask-kernel-cache")


@pytest.fixture(scope="module")
def client(cache_dir):
    """Two worker processes of one thread each, started once, sharing one empty kernel cache."""
    from distributed import Client, LocalCluster
    env = {"JITDIGEST_CACHE_DIR": str(cache_dir), "JITDIGEST_DISABLE": "all",
           "JITDIGEST_QUIET": "1"}
    with LocalCluster(n_workers=2, processes=True, threads_per_worker=1,
                      dashboard_address=None, env=env) as cluster, Client(cluster) as c:
        c.run(_portable_kernels)
        yield c


def _portable_kernels(dask_worker):
    """In a worker: the portable kernels from now on, in every task's thread (compiles
    nothing). ``jitdigest.backend()`` holds in the context that enters it, and a task runs in
    a thread of its own: the forced name is made the default of every context instead."""
    import contextvars
    from jitdigest.engine import dispatch as _dispatch
    _dispatch._FORCED = contextvars.ContextVar("jitdigest_backend", default="portable")


def _rows(n, width, seed):
    return np.random.default_rng(seed).integers(0, 256, (n, width), dtype=np.uint8)


def _messages(n, seed, max_len=150):
    rng = np.random.default_rng(seed)
    lengths = rng.integers(0, max_len, n)
    lengths[:4] = [0, 55, 64, 128]
    return [rng.bytes(int(k)) for k in lengths]


def _expected(name, messages, key=None, length=None):
    if key is not None:
        return [hmac.new(key, bytes(m), name).digest() for m in messages]
    if length is not None:
        return [hashlib.new(name, bytes(m)).digest(length) for m in messages]
    return [hashlib.new(name, bytes(m)).digest() for m in messages]


def _check_rows(got, expected):
    """Every row of an (n, size) uint8 array against the expected bytes; returns n."""
    assert got.dtype == np.uint8 and got.shape == (len(expected), len(expected[0]))
    assert [bytes(r) for r in got] == expected
    return len(expected)


# --- the cluster: the first test meets an empty cache ---------------------------------------

def _count_kernel_loads():
    """In a worker: count, per entry, the kernel compiles or cache loads of this process
    (``KernelSet.compiled`` runs only for an entry not loaded yet)."""
    from jitdigest.engine import dispatch as _dispatch
    counts = {}
    original = _dispatch.KernelSet.__dict__["compiled"]

    def counting(self, entry):
        if entry not in self.__dict__:
            counts[(self.name, entry)] = counts.get((self.name, entry), 0) + 1
        return original(self, entry)
    _dispatch.KernelSet.compiled = counting
    _dispatch.KernelSet._load_counts = counts
    _dispatch.KernelSet._original_compiled = original


def _kernel_loads():
    from jitdigest.engine import dispatch as _dispatch
    counts = dict(_dispatch.KernelSet._load_counts)
    _dispatch.KernelSet.compiled = _dispatch.KernelSet._original_compiled
    return {f"{name}.{entry}": n for (name, entry), n in counts.items()}


def test_two_workers_fill_one_cold_cache_and_load_each_kernel_once(client, cache_dir):
    assert not any(cache_dir.iterdir())                          # nothing compiled yet
    assert all(not w for w in client.run(jd.warmed).values())
    client.run(_count_kernel_loads)
    rows = _rows(3000, 40, seed=1)
    messages = _messages(1200, seed=2)
    x = da.from_array(rows, chunks=(250, 40))                     # 12 blocks
    bag = db.from_sequence(messages, npartitions=12)
    got_rows, got_bag = dask.compute(jd.hash_array(x, ALGO), jd.hash_bag(bag, ALGO))
    loads = client.run(_kernel_loads)
    assert _check_rows(got_rows, _expected(ALGO, rows)) == 3000
    assert got_bag == _expected(ALGO, messages) and len(got_bag) == 1200
    # 24 tasks on 2 processes: both filled the cache, each entry at most once in each process
    assert len(loads) == 2 and all(loads.values()), loads
    entries = {e for per_worker in loads.values() for e in per_worker}
    assert {e.rpartition(".")[2] for e in entries} >= {"hash_rows"}
    assert all(n == 1 for per_worker in loads.values() for n in per_worker.values()), loads
    # the cache the two workers wrote at once loads in a new process: no compile, no warning
    script = textwrap.dedent(f"""
        import hashlib, warnings
        import numpy as np
        import jitdigest
        from jitdigest.base import algorithms as _algorithms; from jitdigest.engine import dispatch as _dispatch
        warnings.simplefilter("error", jitdigest.CacheWarning)
        with jitdigest.backend("portable"):                # as in the workers
            ks = _dispatch.batch_kernels_for(_algorithms.lookup("{ALGO}"))
            assert ks.ready("hash_rows"), ks
            rows = np.arange(64 * 100, dtype=np.uint64).astype(np.uint8).reshape(100, 64)
            got = jitdigest.hash_many("{ALGO}", rows)
        assert [bytes(r) for r in got] == [hashlib.{ALGO}(bytes(r)).digest() for r in rows]
        print(ks.name, len(got))
    """)
    env = dict(os.environ, JITDIGEST_CACHE_DIR=str(cache_dir), JITDIGEST_DISABLE="all",
               JITDIGEST_QUIET="1")
    proc = subprocess.run([sys.executable, "-c", script], env=env, capture_output=True,
                          text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.split()[1] == "100"


def test_array_on_the_cluster(client):
    rows = _rows(2500, 70, seed=3)
    x = da.from_array(rows, chunks=(600, 30))            # rows split across chunks: rechunked
    d = jd.hash_array(x, ALGO)
    assert d.dtype == np.uint8 and d.chunks == ((600, 600, 600, 600, 100), (32,))
    assert _check_rows(d.compute(), _expected(ALGO, rows)) == 2500


def _object_frame(messages, index, npartitions):
    with dask.config.set({"dataframe.convert-string": False}):    # keep bytes as bytes
        return dd.from_pandas(pd.DataFrame({"col": messages}, index=index),
                              npartitions=npartitions)


def test_bytes_column_on_the_cluster(client):
    messages = _messages(2000, seed=5)
    index = pd.Index([f"row-{i:05d}" for i in range(2000)], name="id")
    ddf = _object_frame(messages, index, 5)
    assert ddf["col"].dtype == object
    out = jd.hash_column(ddf["col"], ALGO)
    assert out.dtype == pd.ArrowDtype(pa.binary()) and out.name == "col"
    got = out.compute()
    assert got.index.equals(index) and got.dtype == out.dtype
    want = _expected(ALGO, messages)
    assert got.tolist() == want and len(want) == 2000
    assert sum(d.endswith(b"\0") for d in want) > 0        # trailing zero bytes survive
    hexes = jd.hash_column(ddf["col"], ALGO, hex=True).compute()
    assert hexes.dtype == "string[pyarrow]" and hexes.index.equals(index)
    assert hexes.tolist() == [d.hex() for d in want]


def test_string_pyarrow_column_on_the_cluster(client):
    texts = [f"naïve-{i}-" + "é" * (i % 70) for i in range(1500)]
    index = pd.Index(np.random.default_rng(6).permutation(1500) * 7 + 3)
    ddf = dd.from_pandas(pd.DataFrame({"s": pd.array(texts, dtype="string[pyarrow]")},
                                      index=index), npartitions=4, sort=False)
    assert ddf["s"].dtype == "string[pyarrow]"
    want = _expected(ALGO, [t.encode() for t in texts])
    out = jd.hash_column(ddf["s"], ALGO)
    assert out.dtype == pd.ArrowDtype(pa.binary())
    got = out.compute()
    assert got.index.equals(index) and got.tolist() == want and len(want) == 1500
    hexes = jd.hash_column(ddf["s"], ALGO, hex=True)
    assert hexes.dtype == "string[pyarrow]"
    got = hexes.compute()
    assert got.index.equals(index) and got.tolist() == [d.hex() for d in want]


def test_warm_kernels_plugin(client):
    client.register_plugin(jd.WarmKernels([ALGO]))
    per_worker = client.run(jd.warmed)
    assert len(per_worker) == 2
    for done in per_worker.values():
        assert {(ALGO, layout, False) for layout in jd.LAYOUTS} <= set(done)


def test_shake_needs_and_takes_length(client):
    rows = _rows(300, 50, seed=9)
    d = jd.hash_array(da.from_array(rows, chunks=(128, 50)), "shake_128", length=40)
    assert d.chunks[1] == (40,)
    assert _check_rows(d.compute(), _expected("shake_128", rows, length=40)) == 300
    messages = _messages(250, seed=10)
    ddf = _object_frame(messages, pd.RangeIndex(10, 260), 3)
    got = jd.hash_column(ddf["col"], "shake_128", length=7, hex=True).compute()
    assert got.tolist() == [d.hex() for d in _expected("shake_128", messages, length=7)]
    got = jd.hash_bag(db.from_sequence(messages, npartitions=2), "shake_128", length=0)
    assert got.compute() == [b""] * 250
    with pytest.raises(TypeError, match="length"):
        jd.hash_array(da.from_array(rows), "shake_128")


def test_keyed(client):
    """HMAC's keyed states compile per-message kernels: on one worker only, to compile once."""
    worker = sorted(client.scheduler_info()["workers"])[0]
    rows = _rows(400, 45, seed=4)
    texts = [f"user-{i}@example.org" for i in range(300)]
    ddf = dd.from_pandas(pd.DataFrame({"s": pd.array(texts, dtype="string[pyarrow]")},
                                      index=pd.RangeIndex(1000, 1300)), npartitions=3)
    messages = _messages(200, seed=12)
    array, column, bag = client.gather([client.compute(c, workers=[worker]) for c in (
        jd.hash_array(da.from_array(rows, chunks=(150, 20)), "sha3_256", key=KEY),
        jd.hash_column(ddf["s"], "sha3_256", key=KEY, hex=True),
        jd.hash_bag(db.from_sequence(messages, npartitions=2), "sha3_256", key=KEY))])
    assert _check_rows(array, _expected("sha3_256", rows, key=KEY)) == 400
    assert column.index.equals(pd.RangeIndex(1000, 1300))
    want = _expected("sha3_256", [t.encode() for t in texts], key=KEY)
    assert column.tolist() == [d.hex() for d in want] and len(want) == 300
    assert bag == _expected("sha3_256", messages, key=KEY) and len(bag) == 200


def test_object_column_of_str_is_hashed_as_utf8(client):
    texts = ["", "abc", "ü" * 40, "x" * 200]
    with dask.config.set({"dataframe.convert-string": False}):
        ddf = dd.from_pandas(pd.DataFrame({"s": pd.Series(texts, dtype=object)}),
                             npartitions=2)
    got = jd.hash_column(ddf["s"], "shake_128", length=16).compute()
    assert got.tolist() == _expected("shake_128", [t.encode() for t in texts], length=16)


def test_object_column_pyarrow_does_not_take(client):
    """Items pyarrow's binary conversion refuses (a numpy array) beside str, bytes and
    bytearray: each hashed as hashlib would be given it (str as UTF-8)."""
    items = [np.frombuffer(b"array", np.uint8), "text", b"bytes", bytearray(b"ba"), "ü"]
    ddf = _object_frame(pd.Series(items, dtype=object), None, 2)
    got = jd.hash_column(ddf["col"], ALGO).compute()
    assert got.tolist() == _expected(ALGO, [bytes(items[0]), b"text", b"bytes", b"ba",
                                            "ü".encode()])


# --- in this process: errors, before any kernel runs ---------------------------------------

@pytest.fixture
def sync():
    with dask.config.set(scheduler="sync"):
        yield


def test_nulls_are_refused(sync):
    strings = dd.from_pandas(pd.DataFrame({"s": pd.array(["a", None, "b"],
                                                         dtype="string[pyarrow]")}),
                             npartitions=1)
    with pytest.raises(ValueError, match="null"):
        jd.hash_column(strings["s"], "shake_128", length=4).compute()
    objects = _object_frame([b"a", None, b"b"], None, 1)
    with pytest.raises(ValueError, match="null"):
        jd.hash_column(objects["col"], "shake_128", length=4).compute()
    mixed = _object_frame([b"a", 3], None, 1)
    with pytest.raises(TypeError, match="message 1"):         # hash_many's own error
        jd.hash_column(mixed["col"], "shake_128", length=4).compute()
    # where pyarrow takes not every item (a numpy array): nulls refused the same way, and a
    # str that is not UTF-8 raises its encoding error, naming its row
    array = np.frombuffer(b"a", np.uint8)
    for items, count in (([array, None], "1 null value"),
                         ([array, float("nan"), None, b"b"], "2 null values")):
        with pytest.raises(ValueError, match=count):
            jd.hash_column(_object_frame(pd.Series(items, dtype=object), None, 1)["col"],
                           "shake_128", length=4).compute()
    for items, row in ((["ok", "x\udcff"], 1), ([array, "\ud800"], 1)):
        with pytest.raises(UnicodeEncodeError, match=f"row {row} "):
            jd.hash_column(_object_frame(pd.Series(items, dtype=object), None, 1)["col"],
                           "shake_128", length=4).compute()


def test_errors_are_raised_when_the_call_is_made():
    x = da.from_array(_rows(10, 8, seed=11))
    with pytest.raises(TypeError, match="uint8"):
        jd.hash_array(x.astype(np.int32), "md5")
    with pytest.raises(ValueError, match="2-D"):
        jd.hash_array(x.ravel(), "md5")
    with pytest.raises(ValueError, match="2-D"):
        jd.hash_array(x.reshape(10, 2, 4), "md5")
    with pytest.raises(TypeError, match="dask array"):
        jd.hash_array(_rows(10, 8, seed=11), "md5")
    with pytest.raises(ValueError, match="nope"):
        jd.hash_array(x, "nope")
    ddf = _object_frame([b"a", b"b"], None, 1)
    with pytest.raises(ValueError, match="nope"):
        jd.hash_column(ddf["col"], "nope")
    with pytest.raises(ValueError, match="nope"):
        jd.hash_bag(db.from_sequence([b"a"]), "nope")
    with pytest.raises(TypeError, match="bytes or str"):
        jd.hash_column(dd.from_pandas(pd.DataFrame({"i": [1, 2]}), npartitions=1)["i"], "md5")
    with pytest.raises(TypeError, match="HMAC"):
        jd.hash_array(x, "shake_128", key=KEY, length=4)
    with pytest.raises(ValueError):
        jd.hash_bag(db.from_sequence([b"a"]), "shake_128", key=KEY)
    with pytest.raises(TypeError, match="key"):
        jd.hash_array(x, "md5", key="text")
    with pytest.raises(ValueError, match="nope"):
        jd.WarmKernels(["nope"])
    assert jd.WarmKernels(["blake3", "sha256"]).names == ("blake3", "sha256")
    indexed = dd.from_pandas(pd.DataFrame({"c": [b"a"]}, index=pd.Index(["x"])), npartitions=1)
    with pytest.raises(TypeError, match="to_series"):
        jd.hash_column(indexed.index, "md5")


def test_import_needs_no_dask_and_says_how_to_get_it():
    script = textwrap.dedent("""
        import sys
        import jitdigest
        assert not {"dask", "distributed", "pandas"} & set(sys.modules), "imported by jitdigest"
        sys.modules["dask"] = None                     # as if dask were not installed
        try:
            import jitdigest.dask
        except ImportError as exc:
            print(exc)
    """)
    proc = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                          timeout=120)
    assert proc.returncode == 0, proc.stderr
    assert 'pip install "jitdigest[dask]"' in proc.stdout


def test_block_results_come_from_pyarrows_pool_once_it_is_imported(sync, monkeypatch):
    """A block's digests (and a hex column's text) are written into memory from pyarrow's
    pool, which reuses what was just freed, where np.empty would map new pages in a Dask
    worker; without pyarrow imported, np.empty. Every row is still hashlib's."""
    rows = _rows(5000, 64, seed=3)
    block = jd._hash_block(rows, "sha256", None, None, 32)
    owner = block
    while isinstance(owner, np.ndarray) and owner.base is not None:
        owner = owner.base
    assert isinstance(owner, pa.Buffer) and owner.size == 5000 * 32
    assert [bytes(r) for r in block] == [hashlib.sha256(r.tobytes()).digest() for r in rows]
    column = jd.hash_column(_object_frame([r.tobytes() for r in rows], None, 2)["col"], "md5",
                            hex=True).compute()
    assert column.tolist() == [hashlib.md5(r.tobytes()).hexdigest() for r in rows]
    del block
    monkeypatch.delitem(sys.modules, "pyarrow")
    plain = jd._out_array((7, 3), np.uint16)
    assert plain.base is None and plain.shape == (7, 3) and plain.dtype == np.uint16
    assert jd._out_array((0, 32), np.uint8).shape == (0, 32)


def test_bag_items_joined_or_not(sync):
    """A bag partition of exact ``bytes`` is joined into the thread's reused buffers,
    partitions of changing sizes one after another; one holding other buffers (bytearray,
    memoryview, a numpy array) goes to hash_many as it is; a str is refused as hashlib
    refuses it. Every digest is hashlib's."""
    rng = np.random.default_rng(21)
    messages = [rng.bytes(int(k)) for k in rng.integers(0, 300, 700)]
    got = jd.hash_bag(db.from_sequence(messages, npartitions=5), "sha1").compute()
    assert got == _expected("sha1", messages) and len(got) == 700
    others = [bytearray(m) if i % 3 == 0 else memoryview(m) if i % 3 == 1
              else np.frombuffer(m, np.uint8) for i, m in enumerate(messages[:90])]
    got = jd.hash_bag(db.from_sequence(others + messages[90:120], npartitions=2),
                      "md5").compute()
    assert got == _expected("md5", messages[:120]) and len(got) == 120
    with pytest.raises(TypeError, match="encoded"):
        jd.hash_bag(db.from_sequence([b"a", "b"], npartitions=1), "md5").compute()


def test_digest_columns_of_one_shape_share_their_offsets_and_keep_their_rows():
    """Partitions of the same length share one read-only Arrow offsets buffer (made once, not
    per partition); each column still reads as its own rows, hex ones too."""
    rng = np.random.default_rng(5)
    a, b = (rng.integers(0, 256, (1000, 32), dtype=np.uint8) for _ in range(2))
    col_a, col_b = jd._arrow_binary(a), jd._arrow_binary(b)
    assert col_a.tolist() == [bytes(r) for r in a] and col_b.tolist() == [bytes(r) for r in b]
    off_a, off_b = (c.__arrow_array__().chunk(0).buffers()[1] for c in (col_a, col_b))
    assert off_a.address == off_b.address and not off_a.is_mutable
    hex_a, hex_b = jd._arrow_hex(a), jd._arrow_hex(b)
    assert hex_a.tolist() == [bytes(r).hex() for r in a]
    assert hex_b.tolist() == [bytes(r).hex() for r in b]


def test_digest_columns_over_2_gib_are_split_into_arrow_chunks(monkeypatch):
    """int32 offsets: a partition's digests past 2 GiB go into several chunks (shown here with
    a limit of 10 bytes), each item still its row's bytes."""
    digests = np.arange(12 * 3, dtype=np.uint8).reshape(12, 3)
    monkeypatch.setattr(jd, "_INT32_MAX", 10)
    column = jd._arrow_binary(digests)
    assert column.__arrow_array__().num_chunks == 4
    assert column.tolist() == [bytes(r) for r in digests] and len(column) == 12
    empty = jd._arrow_binary(np.empty((5, 0), np.uint8))
    assert empty.tolist() == [b""] * 5
