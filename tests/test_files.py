"""``jitdigest.hash_files``: every file of a mixed tree (empty, 1 B, the small-file limit and one
byte more, 100 MiB, unreadable, a directory, vanished between listing and reading, missing)
against hashlib and the blake3 package, with both error policies; several algorithms from one
read; the progress callback; paths consumed lazily (at most a batch ahead of the results); the
arguments checked at the call; ``cache=``: files opened (os.open counted) on a second call, after
a change, and across ``jitdigest sum --cache``, and a damaged database."""
import errno
import hashlib
import os
import warnings

import pytest

import jitdigest
from jitdigest.base import config as _config
from jitdigest.base.config import SUM_BATCH_FILES, SUM_SMALL_FILE

blake3 = pytest.importorskip("blake3")

BIG = 100 << 20


@pytest.fixture(scope="module")
def tree(tmp_path_factory):
    root = tmp_path_factory.mktemp("hash-files")
    sizes = {"empty": 0, "one": 1, "limit": SUM_SMALL_FILE, "limit+1": SUM_SMALL_FILE + 1,
             "odd": 12345}
    for name, size in sizes.items():
        (root / name).write_bytes(os.urandom(size))
    block = os.urandom(1 << 20)
    with open(root / "big", "wb") as f:
        for i in range(BIG >> 20):
            f.write(block[i:] + block[:i])
    (root / "locked").write_bytes(b"secret")
    (root / "locked").chmod(0)          # unreadable (though not to root: then it is read)
    (root / "a-dir").mkdir()
    (root / "doomed").write_bytes(b"gone before it is read")
    names = ["empty", "one", "limit", "doomed", "limit+1", "big", "locked", "a-dir", "odd",
             "missing"]
    return root, names


def _paths(tree):
    """The tree's paths, ``doomed`` removed just before it is handed out (listed, then gone)."""
    root, names = tree
    for name in names:
        if name == "doomed" and (root / name).exists():
            (root / name).unlink()
        yield root / name


def _expected(path, names):
    """(digest or digests, size) from hashlib and the blake3 package, or the OSError that
    reading the file with open() gives."""
    try:
        with open(path, "rb") as f:
            data = f.read()
    except OSError as exc:
        return exc
    digests = []
    for name in names:
        if name == "blake3":
            digests.append(blake3.blake3(data).digest())
        elif name.startswith("shake"):
            digests.append(hashlib.new(name, data).digest(40))
        else:
            digests.append(hashlib.new(name, data).digest())
    return (digests[0] if len(names) == 1 else tuple(digests)), len(data)


@pytest.mark.parametrize("names", [["sha256"], ["md5", "sha3_256", "blake3"]], ids=str)
def test_collect_matches_hashlib(tree, names):
    results = list(jitdigest.hash_files(_paths(tree), names if len(names) > 1 else names[0],
                                        errors="collect"))
    assert [r.path for r in results] == [tree[0] / n for n in tree[1]]
    failed = 0
    for r in results:
        want = _expected(r.path, names)
        if isinstance(want, OSError):
            failed += 1
            assert r.digest is None and r.error.errno == want.errno
        else:
            assert r.error is None and (r.digest, r.size) == want
    assert failed >= 3                  # the directory, the vanished and the missing file


def test_shake_length_and_blake3_length(tree):
    root, _ = tree
    paths = [root / "one", root / "limit+1", root / "big", root / "odd"]
    for r in jitdigest.hash_files(paths, "shake_128", length=40):
        assert r.digest == hashlib.shake_128(r.path.read_bytes()).digest(40)
    for r in jitdigest.hash_files(paths, "blake3", length=100):
        assert r.digest == blake3.blake3(r.path.read_bytes()).digest(100)


def test_raise_yields_up_to_the_first_error(tree):
    got = []
    with pytest.raises(OSError) as info:
        for r in jitdigest.hash_files(_paths(tree)):
            got.append(r)
    first_bad = next(i for i, p in enumerate(_paths(tree))
                     if isinstance(_expected(p, ["sha256"]), OSError))
    assert len(got) == first_bad
    assert info.value.errno == errno.ENOENT         # "doomed": listed, then gone
    for r in got:
        assert r.digest == hashlib.sha256(r.path.read_bytes()).digest() and r.error is None


def test_progress_counts_files_and_bytes(tree):
    root, _ = tree
    paths = [root / n for n in ("empty", "one", "limit", "odd", "missing")]
    seen = []
    results = list(jitdigest.hash_files(paths, errors="collect",
                                        progress=lambda f, b: seen.append((f, b))))
    sizes = [r.size for r in results]
    assert seen == [(i + 1, sum(sizes[:i + 1])) for i in range(len(paths))]
    assert sizes[:4] == [os.path.getsize(p) for p in paths[:4]]


def test_paths_are_consumed_lazily(tree):
    """A stream of paths (the tree's small files, repeated) is read at most a batch ahead of
    the results: memory is bounded by the batch, not by the number of paths."""
    root, _ = tree
    small = [root / n for n in ("empty", "one", "odd", "limit")]
    n = 3 * SUM_BATCH_FILES + 17
    taken = [0]

    def stream():
        for i in range(n):
            taken[0] += 1
            yield small[i % len(small)]

    ahead = 0
    for done, r in enumerate(jitdigest.hash_files(stream()), 1):
        ahead = max(ahead, taken[0] - done)
        assert r.digest == hashlib.sha256(r.path.read_bytes()).digest()
    assert done == n and taken[0] == n
    assert 0 < ahead < SUM_BATCH_FILES


def test_a_fifo_longer_than_a_small_file_streams(tmp_path):
    """A FIFO (no seeking back) with more than SUM_SMALL_FILE bytes: its first bytes and the
    rest reach every algorithm once, as a regular file's do."""
    import threading
    data = os.urandom(3 * SUM_SMALL_FILE + 5)
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)

    def write():
        with open(fifo, "wb") as f:
            f.write(data)

    writer = threading.Thread(target=write, daemon=True)
    writer.start()
    (r,) = jitdigest.hash_files([fifo], ["sha256", "md5"])
    writer.join(60)
    assert r.error is None and r.size == len(data)
    assert r.digest == (hashlib.sha256(data).digest(), hashlib.md5(data).digest())


def test_arguments_checked_at_the_call():
    never = iter(())
    with pytest.raises(ValueError):
        jitdigest.hash_files(never, errors="ignore")
    with pytest.raises(ValueError):
        jitdigest.hash_files(never, "sha257")
    with pytest.raises(TypeError):
        jitdigest.hash_files(never, "shake_256")
    with pytest.raises(ValueError):
        jitdigest.hash_files(never, "sha256,SHA-256")
    assert list(jitdigest.hash_files([])) == []


# --- cache= : the database of ``jitdigest sum --cache`` ------------------------------------------

@pytest.fixture
def cached_tree(tmp_path, monkeypatch):
    """Small files in two folders and one streamed file; the racy margin off (they were made
    just now); os.open counted (how hash_files and jitdigest sum open a file)."""
    monkeypatch.setattr(_config, "SUM_CACHE_RACY_NS", 0)
    root = tmp_path / "tree"
    (root / "sub").mkdir(parents=True)
    sizes = {"a": 0, "b": 100, "sub/c": 5000, "sub/d": 1, "big": SUM_SMALL_FILE + 99}
    for name, size in sizes.items():
        (root / name).write_bytes(os.urandom(size))
    opened = []                         # the tree's files opened
    real = os.open

    def counting(path, *args, **kwargs):
        if os.fsencode(path).startswith(os.fsencode(root)):
            opened.append(os.fsencode(path))
        return real(path, *args, **kwargs)

    monkeypatch.setattr(os, "open", counting)
    return [root / name for name in sizes], tmp_path / "digests.db", opened


def _check(results, paths, name="sha256"):
    assert [r.path for r in results] == paths
    for r in results:
        data = r.path.read_bytes()
        want = blake3.blake3(data).digest() if name == "blake3" else hashlib.new(name, data).digest()
        assert (r.digest, r.size, r.error) == (want, len(data), None)


def test_cache_second_call_opens_nothing(cached_tree):
    paths, db, opened = cached_tree
    _check(list(jitdigest.hash_files(paths, cache=db)), paths)
    assert len(opened) == len(paths)
    del opened[:]
    _check(list(jitdigest.hash_files(paths, cache=str(db))), paths)
    assert opened == []
    # several algorithms: stored per algorithm, a hit only when all are there
    got = list(jitdigest.hash_files(paths, "sha256,md5", cache=db))
    assert len(opened) == len(paths)
    assert [r.digest[1] for r in got] == [hashlib.md5(p.read_bytes()).digest() for p in paths]
    # a caller that stops early: what was hashed is committed when the iterator closes
    new_db = db.with_name("early.db")
    it = jitdigest.hash_files(paths, cache=new_db)
    next(it)
    it.close()
    from jitdigest.sum.cache import stored_files
    assert stored_files(new_db) == {"sha256:256": 1}


def test_cache_rereads_changed_files(cached_tree):
    paths, db, opened = cached_tree
    list(jitdigest.hash_files(paths, cache=db))
    changed = [paths[1], paths[4]]
    changed[0].write_bytes(bytes(255 - b for b in changed[0].read_bytes()))    # same size
    with open(changed[1], "ab") as f:
        f.write(b"!")
    del opened[:]
    _check(list(jitdigest.hash_files(paths, cache=db)), paths)
    assert sorted(opened) == sorted(os.fsencode(p) for p in changed)


def test_cache_shared_with_jitdigest_sum(cached_tree, capsysbinary):
    from jitdigest import cli
    paths, db, opened = cached_tree
    root = paths[0].parent
    assert cli.main(["sum", "-r", str(root), "--cache", str(db)]) == 0
    del opened[:]
    _check(list(jitdigest.hash_files(paths, cache=db)), paths)
    assert opened == []
    # the other way round, with b3sum's row (its own cache key rule in jitdigest sum)
    capsysbinary.readouterr()
    _check(list(jitdigest.hash_files(paths, "blake3", cache=db)), paths, "blake3")
    del opened[:]
    assert cli.main(["sum", "-r", "-a", "blake3", str(root), "--cache", str(db)]) == 0
    assert opened == []
    out = capsysbinary.readouterr().out
    want = [blake3.blake3(p.read_bytes()).hexdigest().encode() + b"  " + os.fsencode(p)
            for p in paths]
    assert sorted(out.splitlines()) == sorted(want)


def test_damaged_cache_costs_one_warning(cached_tree):
    paths, db, _ = cached_tree
    db.write_bytes(b"not a database, " * 512)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        _check(list(jitdigest.hash_files(paths, cache=db)), paths)
    assert len(caught) == 1 and "cache not used" in str(caught[0].message)
