"""``jitdigest.dask.hash_files`` on a real LocalCluster of two worker processes, and the BLAKE3
subtrees it splits a large file into (``jitdigest/blake3/subtree.py``).

Checked against hashlib, the blake3 package and b3sum: a mixed tree with both error policies;
a BLAKE3 file above the split size hashed in pieces by both workers (the task stream names
them) equal to b3sum's digest and to ``jitdigest.hash_files``'; the pieces' merge for every
mode and output length in this process; a split whose pieces saw the file change hashed again
whole; ``cache=`` read on a second run (no task sent); paths consumed a window ahead only.
"""
import hashlib
import os
import subprocess

import pytest

pytest.importorskip("distributed")
blake3 = pytest.importorskip("blake3")

import jitdigest  # noqa: E402
from jitdigest.base import config as _config  # noqa: E402
from jitdigest.blake3 import params, subtree  # noqa: E402
from jitdigest.sum import dask_hasher  # noqa: E402

SPLIT = dask_hasher.SPLIT_FROM + 3 * 1024 + 77      # just above the split size


@pytest.fixture(scope="module")
def tree(tmp_path_factory):
    root = tmp_path_factory.mktemp("dask-files")
    for name, size in {"empty": 0, "one": 1, "k64": 65536, "k64+1": 65537, "odd": 4321,
                       "mid": 3 << 20}.items():
        (root / name).write_bytes(os.urandom(size))
    block = os.urandom(1 << 20)
    with open(root / "split", "wb") as f:
        for i in range(SPLIT >> 20):
            f.write(block[i:] + block[:i])
        f.write(block[:SPLIT % (1 << 20)])
    (root / "a-dir").mkdir()
    (root / "doomed").write_bytes(b"listed, then removed")
    names = ["empty", "one", "doomed", "k64", "a-dir", "k64+1", "odd", "missing", "mid"]
    return root, names


@pytest.fixture(scope="module")
def client():
    from distributed import Client, LocalCluster
    with LocalCluster(n_workers=2, processes=True, threads_per_worker=1,
                      dashboard_address=":0", timeout=60) as cluster, \
            Client(cluster, timeout=60) as c:
        yield c


def _paths(root, names):
    for name in names:
        if name == "doomed" and (root / name).exists():
            (root / name).unlink()
        yield root / name


def _expected(path, name):
    try:
        data = path.read_bytes()
    except OSError as exc:
        return exc
    return hashlib.new(name, data).digest()


def test_both_error_policies_match_hashlib(tree, client):
    from jitdigest import dask as jd
    root, names = tree
    (root / "doomed").write_bytes(b"again")
    got = list(jd.hash_files(_paths(root, names), ["sha256", "md5"], client=client,
                             errors="collect"))
    assert [r.path for r in got] == [root / n for n in names]
    errors = 0
    for r in got:
        want = _expected(r.path, "sha256")
        if isinstance(want, OSError):
            errors += 1
            assert r.digest is None and r.error.errno == want.errno
        else:
            assert r.digest == (want, hashlib.md5(r.path.read_bytes()).digest())
            assert r.size == r.path.stat().st_size
    assert errors == 3
    (root / "doomed").write_bytes(b"and again")
    seen = []
    with pytest.raises(OSError) as info:
        for r in jd.hash_files(_paths(root, names), client=client):
            seen.append(r)
    assert info.value.errno == _expected(root / "missing", "sha256").errno
    assert [r.path.name for r in seen] == names[:2]
    assert all(r.digest == _expected(r.path, "sha256") for r in seen)


def test_a_large_blake3_file_is_split_over_both_workers(tree, client):
    from distributed import get_task_stream
    from jitdigest import dask as jd
    root, _ = tree
    path = root / "split"
    with get_task_stream(client) as stream:
        [result] = jd.hash_files([path], "blake3", client=client)
    workers = {t["worker"] for t in stream.data if "piece_task" in str(t["key"])}
    pieces = sum("piece_task" in str(t["key"]) for t in stream.data)
    assert len(workers) == 2 and pieces >= 4
    b3 = subprocess.run(["b3sum", "--no-names", path], capture_output=True, check=True)
    assert result.digest.hex().encode() + b"\n" == b3.stdout
    assert result.digest == blake3.blake3(path.read_bytes()).digest()
    [local] = jitdigest.hash_files([path], "blake3")
    assert local.digest == result.digest and result.size == SPLIT


def test_a_split_whose_pieces_saw_a_change_is_hashed_whole(tree, client):
    """Pieces reporting different stats (the file changed between them): the file goes to one
    worker whole, its digest that of the bytes that worker read."""
    root, _ = tree
    path = root / "mid"

    class Done:
        def __init__(self, value):
            self.value = value

        def result(self):
            return self.value

    hasher = dask_hasher.DaskHasher(client)
    size = path.stat().st_size
    piece = 1 << 20
    spans = subtree.pieces(size, piece)
    algo = jitdigest.sum.algos.Keyed()
    mode = dask_hasher._mode(algo)
    honest = [dask_hasher.piece_task(str(path), o, n, mode, algo.name) for o, n in spans]
    changed = [Done((v, n, (size, i, 0, 0, 0))) for i, (v, n, _) in enumerate(honest)]
    item = jitdigest.sum.walk.Item(0, b"mid", os.fsencode(path),
                                   algo=jitdigest.sum.algos.Keyed())
    out = hasher._merged(item, (size, piece, changed))
    assert out.digest == blake3.blake3(path.read_bytes()).digest() and out.size == size
    item.digest = None
    merged = hasher._merged(item, (size, piece, [Done(r) for r in honest]))
    assert merged.digest == out.digest


def test_a_task_dask_gave_up_on_ends_the_run_with_its_reason():
    from distributed import KilledWorker
    from jitdigest.sum.errors import FatalError

    class Lost:
        def result(self):
            raise KilledWorker("hash_task-1", "tcp://127.0.0.1:1")

    with pytest.raises(FatalError, match="KilledWorker"):
        dask_hasher._result(Lost())


@pytest.mark.parametrize("size", [1025, 2048, 2049, 8192, 10000, 65536 + 7, 300_001])
@pytest.mark.parametrize("mode", ["plain", "keyed", "derive"])
def test_subtree_merge_is_blake3(tmp_path, size, mode):
    data = os.urandom(size)
    path = tmp_path / "f"
    path.write_bytes(data)
    key = bytes(range(32))
    kwargs = {"plain": {}, "keyed": {"key": key},
              "derive": {"derive_key_context": "jitdigest subtree test"}}[mode]
    words = params(**kwargs)
    fd = os.open(path, os.O_RDONLY)
    try:
        for piece in (1024, 2048, 4096, 65536):     # the last: whole lane groups
            if size <= piece:
                continue
            values = [subtree.chaining_value(fd, o, n, words)[0]
                      for o, n in subtree.pieces(size, piece)]
            for length in (32, 100):
                assert subtree.merge(values, words, length) == \
                    blake3.blake3(data, **kwargs).digest(length)
    finally:
        os.close(fd)


def test_subtree_refuses_a_piece_that_is_not_a_whole_subtree(tmp_path):
    """chaining_value hashes whole subtrees only: a piece not aligned to its size (rounded up
    to a power of two chunks) is a ValueError before any kernel runs."""
    path = tmp_path / "f"
    path.write_bytes(os.urandom(16 * 1024))
    words = params()
    fd = os.open(path, os.O_RDONLY)
    try:
        for offset, length in ((1024, 2048), (2048, 4096), (2048, 3 * 1024), (512, 1024),
                               (0, 0), (-1024, 1024)):
            with pytest.raises(ValueError):
                subtree.chaining_value(fd, offset, length, words)
        for offset, length in ((1024, 1024), (4096, 4096), (4096, 3 * 1024), (8192, 5)):
            assert subtree.chaining_value(fd, offset, length, words)[1] == length
    finally:
        os.close(fd)


def test_cache_spares_the_second_run(tree, client, tmp_path, monkeypatch):
    from distributed import get_task_stream
    from jitdigest import dask as jd
    root, _ = tree
    monkeypatch.setattr(_config, "SUM_CACHE_RACY_NS", 0)    # files made just now: trust them
    paths = [root / n for n in ("empty", "one", "k64", "odd")]
    db = tmp_path / "db"
    first = list(jd.hash_files(paths, client=client, cache=db))
    with get_task_stream(client) as stream:
        again = list(jd.hash_files(paths, client=client, cache=db))
    assert again == first
    assert [r.digest for r in first] == [_expected(p, "sha256") for p in paths]
    assert not [t for t in stream.data if "hash_task" in str(t["key"])]


def test_paths_are_consumed_a_window_ahead(tree, client):
    from jitdigest import dask as jd
    root, _ = tree
    small = [root / n for n in ("empty", "one", "odd")]
    n = 4000
    taken = [0]

    def stream():
        for i in range(n):
            taken[0] += 1
            yield small[i % 3]

    threads = sum(client.nthreads().values())
    window = (dask_hasher.AHEAD * threads + 3) * _config.SUM_BATCH_FILES
    ahead = 0
    for done, r in enumerate(jd.hash_files(stream(), client=client), 1):
        ahead = max(ahead, taken[0] - done)
    assert done == n and 0 < ahead <= window < n
