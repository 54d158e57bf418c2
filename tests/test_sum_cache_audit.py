"""``jitdigest sum --cache`` and ``--audit``, in-process: digests against hashlib, output equal
to a run without the cache, which files a run reads (os.open counted), racy files, damaged and
locked databases; audit categories from how each test built its tree."""
import hashlib
import os
import sqlite3
import subprocess
import sys
import threading

import pytest

from jitdigest.base import config as _config
from jitdigest import cli
from jitdigest.sum import cache as cache_mod

SIZES = [0, 1, 55, 64, 1000, 4096, 16384, 65536, 65537, 100_000, 7, 300]


def _make_tree(root):
    """{relative name (bytes): content} under root, in two folders."""
    files = {}
    for i, size in enumerate(SIZES):
        name = f"{'sub/' if i % 3 == 0 else ''}f{i:02d}.bin".encode()
        data = bytes((i * 7 + j) % 251 for j in range(size))
        path = os.path.join(os.fsencode(root), name)
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(path, "wb") as f:
            f.write(data)
        files[name] = data
    return files


def _expected(root, files, algo="sha256", **kw):
    """sha256sum's lines for the tree, from hashlib, sorted."""
    top = os.fsencode(root)
    lines = []
    for name in files:
        h = hashlib.new(algo, files[name], **kw).hexdigest().encode()
        lines.append(h + b"  " + os.path.join(top, name) + b"\n")
    return sorted(lines)


@pytest.fixture
def tree(tmp_path):
    root = tmp_path / "tree"
    files = _make_tree(root)
    return root, files


@pytest.fixture
def reads(monkeypatch):
    """The paths os.open opened (the hasher's only way into a file)."""
    opened = []
    real = os.open

    def counting(path, *args, **kwargs):
        opened.append(os.fsencode(path))
        return real(path, *args, **kwargs)

    monkeypatch.setattr(os, "open", counting)
    return opened


def _run(capsysbinary, *argv):
    status = cli.main(["sum", *map(str, argv)])
    out, err = capsysbinary.readouterr()
    return status, out, err


def _tree_reads(opened, root):
    top = os.fsencode(root)
    return sorted(p for p in opened if p.startswith(top))


def test_cache_output_and_second_run_reads_nothing(tree, tmp_path, reads, capsysbinary,
                                                   monkeypatch):
    monkeypatch.setattr(_config, "SUM_CACHE_RACY_NS", 0)    # files made just now: trust them
    root, files = tree
    db = tmp_path / "sums.db"
    status, plain, err = _run(capsysbinary, "-r", root)
    assert (status, err) == (0, b"")
    assert sorted(plain.splitlines(True)) == _expected(root, files)
    assert len(plain.splitlines()) == len(SIZES)
    reads.clear()
    assert _run(capsysbinary, "-r", root, "--cache", db) == (0, plain, b"")
    assert len(_tree_reads(reads, root)) == len(SIZES)
    reads.clear()
    assert _run(capsysbinary, "-r", root, "--cache", db) == (0, plain, b"")
    assert _tree_reads(reads, root) == []
    # -j 2 and file operands: the same lines, still nothing read
    assert _run(capsysbinary, "-r", root, "--cache", db, "-j", "2") == (0, plain, b"")
    assert _tree_reads(reads, root) == []
    # --no-cache-read reads everything again
    assert _run(capsysbinary, "-r", root, "--cache", db, "--no-cache-read") == (0, plain, b"")
    assert len(_tree_reads(reads, root)) == len(SIZES)


def test_a_run_that_finds_every_file_imports_neither_numpy_nor_numba(tree, tmp_path):
    """A second run over an unchanged tree reads no file and loads no kernel: its start-up is
    the interpreter, the walk and the database (the first run's numpy and Numba import were a
    large share of a rerun before)."""
    root, files = tree
    db = tmp_path / "sums.db"
    code = ("import sys\n"
            "from jitdigest.base import config as _config; from jitdigest import cli\n"
            "_config.SUM_CACHE_RACY_NS = 0\n"
            "status = cli.main(['sum', '-r', sys.argv[1], '--cache', sys.argv[2]])\n"
            "sys.stdout.flush()\n"
            "heavy = sorted({m.split('.')[0] for m in sys.modules} & {'numpy', 'numba'})\n"
            "print(status, heavy, file=sys.stderr)\n")
    runs = [subprocess.run([sys.executable, "-c", code, str(root), str(db)],
                           capture_output=True, timeout=600) for _ in range(2)]
    first, second = [r.stderr.decode().split("\n")[-2] for r in runs]
    # (the first run's kernels may come through Numba or stored machine code, as stored)
    assert first.startswith("0 [") and second == "0 []"
    assert runs[0].stdout == runs[1].stdout
    assert sorted(runs[1].stdout.splitlines(True)) == _expected(root, files)


def test_changed_and_touched_files_are_read_again(tree, tmp_path, reads, capsysbinary,
                                                  monkeypatch):
    monkeypatch.setattr(_config, "SUM_CACHE_RACY_NS", 0)
    root, files = tree
    db = tmp_path / "sums.db"
    assert _run(capsysbinary, "-r", root, "--cache", db)[0] == 0
    top = os.fsencode(root)
    changed = [b"f01.bin", b"sub/f03.bin"]                 # same size, other content
    for name in changed:
        files[name] = bytes(255 - b for b in files[name])
        with open(os.path.join(top, name), "r+b") as f:
            f.write(files[name])
    touched = b"f04.bin"
    os.utime(os.path.join(top, touched), ns=(10**18, 10**18))
    grown = b"f02.bin"
    files[grown] += b"!"
    with open(os.path.join(top, grown), "ab") as f:
        f.write(b"!")
    reads.clear()
    status, out, err = _run(capsysbinary, "-r", root, "--cache", db)
    assert (status, err) == (0, b"")
    assert sorted(out.splitlines(True)) == sorted(_expected(root, files))
    want = sorted(os.path.join(top, n) for n in changed + [touched, grown])
    assert _tree_reads(reads, root) == want and len(want) == 4


def test_racy_files_are_read_again(tree, tmp_path, reads, capsysbinary, monkeypatch):
    root, files = tree
    db = tmp_path / "sums.db"
    # default margin: files changed within it of the storing run's start are never trusted
    assert _run(capsysbinary, "-r", root, "--cache", db)[0] == 0
    reads.clear()
    assert _run(capsysbinary, "-r", root, "--cache", db)[0] == 0
    assert len(_tree_reads(reads, root)) == len(SIZES)
    # no margin, but the storing run "started" before the files changed: racy, read again;
    # stored with a later start, they are trusted afterwards
    monkeypatch.setattr(_config, "SUM_CACHE_RACY_NS", 0)
    real_ns = cache_mod.time.time_ns
    monkeypatch.setattr(cache_mod.time, "time_ns", lambda: real_ns() - 60 * 10**9)
    db2 = tmp_path / "racy.db"
    assert _run(capsysbinary, "-r", root, "--cache", db2)[0] == 0
    monkeypatch.setattr(cache_mod.time, "time_ns", real_ns)
    reads.clear()
    status, out, _ = _run(capsysbinary, "-r", root, "--cache", db2)
    assert len(_tree_reads(reads, root)) == len(SIZES)
    assert sorted(out.splitlines(True)) == sorted(_expected(root, files))
    reads.clear()
    assert _run(capsysbinary, "-r", root, "--cache", db2)[1] == out
    assert _tree_reads(reads, root) == []


def test_algorithm_and_length_are_part_of_the_key(tree, tmp_path, capsysbinary, monkeypatch):
    monkeypatch.setattr(_config, "SUM_CACHE_RACY_NS", 0)
    root, files = tree
    db = tmp_path / "sums.db"
    checked = 0
    for argv, algo, kw in ((["-a", "blake2b"], "blake2b", {}),
                           (["-a", "blake2b", "-l", "256"], "blake2b", {"digest_size": 32}),
                           ([], "sha256", {}),
                           (["-a", "blake2b", "-l", "256"], "blake2b", {"digest_size": 32})):
        status, out, err = _run(capsysbinary, "-r", root, "--cache", db, *argv)
        assert (status, err) == (0, b"")
        assert sorted(out.splitlines(True)) == sorted(_expected(root, files, algo, **kw))
        checked += 1
    assert checked == 4


def test_a_database_of_the_previous_layout_is_replaced(tree, tmp_path, reads, capsysbinary,
                                                       monkeypatch):
    """One row a file (user_version 2, as earlier versions made it): the tables are made anew,
    without a warning, and the run after the next reads nothing."""
    monkeypatch.setattr(_config, "SUM_CACHE_RACY_NS", 0)
    root, files = tree
    db = tmp_path / "old.db"
    con = sqlite3.connect(db)
    con.execute("CREATE TABLE digests (dir BLOB NOT NULL, name BLOB NOT NULL, algo TEXT NOT "
                "NULL, dev INTEGER NOT NULL, ino INTEGER NOT NULL, size INTEGER NOT NULL, "
                "mtime_ns INTEGER NOT NULL, ctime_ns INTEGER NOT NULL, run_start_ns INTEGER "
                "NOT NULL, digest BLOB NOT NULL, PRIMARY KEY (dir, algo, name)) WITHOUT ROWID")
    con.execute("INSERT INTO digests VALUES (x'2f', x'61', 'sha256:256', 1, 2, 3, 4, 5, 6, "
                "x'00')")
    con.execute("PRAGMA user_version = 2")
    con.commit()
    con.close()
    for read_again in (len(SIZES), 0):
        reads.clear()
        status, out, err = _run(capsysbinary, "-r", root, "--cache", db)
        assert (status, err) == (0, b"")
        assert sorted(out.splitlines(True)) == _expected(root, files)
        assert len(_tree_reads(reads, root)) == read_again
    assert cache_mod.stored_files(db) == {"sha256:256": len(SIZES)}


def test_rows_whose_parts_disagree_are_not_trusted(tree, tmp_path, reads, capsysbinary,
                                                   monkeypatch):
    """A row's names, stats and digests must line up; one that does not (a damaged or edited
    database) is ignored: its files are read again, the digests right."""
    monkeypatch.setattr(_config, "SUM_CACHE_RACY_NS", 0)
    root, files = tree
    db = tmp_path / "sums.db"
    assert _run(capsysbinary, "-r", root, "--cache", db)[0] == 0
    con = sqlite3.connect(db)
    damaged = {"one digest byte short": "digests = substr(digests, 2)",
               "a stat short": "stats = substr(stats, 41)",
               "a name more": "names = names || x'0078'",
               "text, not blobs": "names = 'f00.bin'",
               "empty": "names = x'', stats = x'', digests = x''"}
    checked = 0
    for how, change in damaged.items():
        con.execute("UPDATE digests SET " + change)
        con.commit()
        reads.clear()
        status, out, err = _run(capsysbinary, "-r", root, "--cache", db, "--no-cache-read")
        assert (status, err) == (0, b""), how
        assert sorted(out.splitlines(True)) == _expected(root, files), how
        con.execute("UPDATE digests SET " + change)
        con.commit()
        reads.clear()
        status, out, err = _run(capsysbinary, "-r", root, "--cache", db)
        assert (status, err) == (0, b""), how
        assert sorted(out.splitlines(True)) == _expected(root, files), how
        assert len(_tree_reads(reads, root)) == len(SIZES), how
        checked += 1
    con.close()
    assert checked == len(damaged)


def test_a_directory_stored_in_many_commits_is_merged(tree, tmp_path, reads, capsysbinary,
                                                      monkeypatch):
    """A commit every file: a directory's rows are merged past SUM_CACHE_ROWS_KEPT, and every
    file is still found."""
    monkeypatch.setattr(_config, "SUM_CACHE_RACY_NS", 0)
    monkeypatch.setattr(_config, "SUM_CACHE_COMMIT_FILES", 1)
    monkeypatch.setattr(_config, "SUM_CACHE_ROWS_KEPT", 2)
    root, files = tree
    db = tmp_path / "sums.db"
    assert _run(capsysbinary, "-r", root, "--cache", db)[0] == 0
    per_dir = sqlite3.connect(db).execute(
        "SELECT COUNT(*) FROM digests GROUP BY dir, algo").fetchall()
    assert len(per_dir) == 2 and all(1 <= n <= 3 for (n,) in per_dir)
    assert cache_mod.stored_files(db) == {"sha256:256": len(SIZES)}
    reads.clear()
    status, out, err = _run(capsysbinary, "-r", root, "--cache", db)
    assert (status, err) == (0, b"")
    assert sorted(out.splitlines(True)) == _expected(root, files)
    assert _tree_reads(reads, root) == []


def test_a_time_past_64_bits_of_nanoseconds_is_hashed_not_stored(tree, tmp_path, reads,
                                                                 capsysbinary, monkeypatch):
    root, files = tree
    db = tmp_path / "sums.db"
    far = os.path.join(os.fsencode(root), b"f01.bin")
    try:
        os.utime(far, ns=(2**63 + 10**9, 2**63 + 10**9))     # the year 2262 and a bit
    except (OSError, OverflowError):
        pytest.skip("the file system does not take that time")
    if os.stat(far).st_mtime_ns < 2**63:
        pytest.skip("the file system does not keep that time")
    monkeypatch.setattr(_config, "SUM_CACHE_RACY_NS", -2**64)   # the far future is not racy
    for _ in range(2):
        reads.clear()
        status, out, err = _run(capsysbinary, "-r", root, "--cache", db)
        assert (status, err) == (0, b"")
        assert sorted(out.splitlines(True)) == _expected(root, files)
    assert _tree_reads(reads, root) == [far]


def test_damaged_database_warns_once_and_runs(tree, tmp_path, capsysbinary):
    root, files = tree
    db = tmp_path / "garbage.db"
    db.write_bytes(b"this is not a database\n" * 200)
    status, out, err = _run(capsysbinary, "-r", root, "--cache", db)
    assert status == 0
    assert sorted(out.splitlines(True)) == sorted(_expected(root, files))
    assert len(err.splitlines()) == 1 and b"cache not used" in err
    assert db.read_bytes() == b"this is not a database\n" * 200     # left as it was


def test_locked_database_degrades_to_hashing(tree, tmp_path, capsysbinary, monkeypatch):
    monkeypatch.setattr(_config, "SUM_CACHE_RACY_NS", 0)
    monkeypatch.setattr(_config, "SUM_CACHE_BUSY_S", 0.05)
    root, files = tree
    db = tmp_path / "sums.db"
    assert _run(capsysbinary, "-r", root, "--cache", db)[0] == 0
    other = sqlite3.connect(db, isolation_level=None)
    other.execute("BEGIN EXCLUSIVE")                         # another run writing, for long
    try:
        status, out, err = _run(capsysbinary, "-r", root, "--cache", db, "--no-cache-read")
    finally:
        other.execute("ROLLBACK")
        other.close()
    assert status == 0
    assert sorted(out.splitlines(True)) == _expected(root, files)
    assert len(err.splitlines()) == 1 and b"locked" in err
    # two runs at once on one database: both right, the database intact
    results = []
    barrier = threading.Barrier(2)

    def run_cache(read):
        from jitdigest.sum.algos import get
        from jitdigest.sum.cache import Cache
        from jitdigest.sum.hasher import Hasher
        from jitdigest.sum.walk import expand_operands
        c = Cache(os.fsencode(db), results.append, read=read)
        barrier.wait()
        items = []
        for item in expand_operands([os.fsencode(root)], True):
            item.algo = get("sha256")
            items.append(item)
        got = {i.name: i.digest for i in c.run(Hasher(), items)}
        c.close()
        results.append(got)

    threads = [threading.Thread(target=run_cache, args=(r,)) for r in (True, False)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    done = [r for r in results if isinstance(r, dict)]
    assert len(done) == 2
    top = os.fsencode(root)
    for got in done:
        assert got == {os.path.join(top, n): hashlib.sha256(d).digest()
                       for n, d in files.items()}
    assert sqlite3.connect(db).execute("PRAGMA integrity_check").fetchone() == ("ok",)


def test_interrupted_run_leaves_a_usable_database(tree, tmp_path, capsysbinary, monkeypatch):
    monkeypatch.setattr(_config, "SUM_CACHE_RACY_NS", 0)
    monkeypatch.setattr(_config, "SUM_CACHE_COMMIT_FILES", 3)
    root, files = tree
    db = tmp_path / "sums.db"
    real = os.open
    top = os.fsencode(root)
    count = []

    def failing(path, *args, **kwargs):
        if os.fsencode(path).startswith(top):
            count.append(path)
            if len(count) == 8:
                raise KeyboardInterrupt
        return real(path, *args, **kwargs)

    monkeypatch.setattr(os, "open", failing)
    with pytest.raises(KeyboardInterrupt):
        cli.main(["sum", "-r", str(root), "--cache", str(db)])
    capsysbinary.readouterr()
    stored = sum(cache_mod.stored_files(db).values())
    assert 3 <= stored < len(SIZES)
    monkeypatch.setattr(os, "open", real)
    reads = []
    monkeypatch.setattr(os, "open", lambda p, *a, **k: reads.append(p) or real(p, *a, **k))
    status, out, err = _run(capsysbinary, "-r", root, "--cache", db)
    assert (status, err) == (0, b"")
    assert sorted(out.splitlines(True)) == sorted(_expected(root, files))
    assert len(_tree_reads([os.fsencode(p) for p in reads], root)) == len(SIZES) - stored


def _manifest_line(name, data, tagged=False):
    hexd = hashlib.sha256(data).hexdigest().encode()
    if tagged:
        return b"SHA256 (" + name + b") = " + hexd + b"\n"
    return hexd + b"  " + name + b"\n"


@pytest.mark.parametrize("tagged", [False, True])
def test_audit_categories(tmp_path, capsysbinary, monkeypatch, tagged):
    monkeypatch.chdir(tmp_path)
    files = {b"t/keep1": b"same", b"t/keep2": b"same too", b"t/edit": b"before",
             b"t/old/place": b"moving content", b"t/gone": b"gone content",
             b"t/sub/keep3": b"x" * 70000}
    manifest = b"".join(_manifest_line(n, d, tagged) for n, d in files.items())
    (tmp_path / "MANIFEST").write_bytes(b"# comment\n" + manifest)
    for name, data in files.items():
        os.makedirs(os.path.dirname(name), exist_ok=True)
        with open(name, "wb") as f:
            f.write(data)
    # all matched: status 0
    argv = ["-r", "t", "--audit", "MANIFEST"] + (["-a", "auto"] if tagged else [])
    status, out, err = _run(capsysbinary, *argv)
    assert (status, err) == (0, b"")
    assert out.splitlines()[-1] == b"TOTAL: 6 matched, 0 changed, 0 new, 0 moved, 0 missing, " \
                                   b"0 unreadable"
    # one of each
    with open(b"t/edit", "wb") as f:
        f.write(b"after")
    os.makedirs(b"t/new", exist_ok=True)
    os.rename(b"t/old/place", b"t/new/place")
    os.remove(b"t/gone")
    with open(b"t/fresh", "wb") as f:
        f.write(b"never listed")
    status, out, err = _run(capsysbinary, *argv)
    assert (status, err) == (1, b"")
    assert out.splitlines() == [
        b"CHANGED: t/edit",
        b"NEW: t/fresh",
        b"MATCHED: t/keep1",
        b"MATCHED: t/keep2",
        b"MOVED: t/old/place -> t/new/place",
        b"MATCHED: t/sub/keep3",
        b"MISSING: t/gone",
        b"TOTAL: 3 matched, 1 changed, 1 new, 1 moved, 1 missing, 0 unreadable",
    ]
    # with --cache too, the same report; a usage error is status 2
    db = tmp_path / "a.db"
    assert _run(capsysbinary, *argv, "--cache", db)[:2] == (1, out)
    assert _run(capsysbinary, *argv, "--cache", db)[:2] == (1, out)
    # file operands: the others listed are missing; a listed operand that is gone too
    status, out, err = _run(capsysbinary, "--audit", "MANIFEST", "t/keep1", "./t/gone",
                            *argv[4:])
    assert (status, err) == (1, b"")
    assert out.splitlines() == [b"MATCHED: t/keep1"] + [
        b"MISSING: " + n for n in files if n != b"t/keep1"] + [
        b"TOTAL: 1 matched, 0 changed, 0 new, 0 moved, 5 missing, 0 unreadable"]
    assert _run(capsysbinary, "--audit", "MANIFEST")[0] == 2
    assert _run(capsysbinary, *argv, "--json")[0] == 2


def test_cache_usage_errors(tmp_path, capsysbinary):
    assert _run(capsysbinary, "-c", "--cache", tmp_path / "db", tmp_path / "x")[0] == 1
    assert _run(capsysbinary, "--no-cache-read", tmp_path)[0] == 1
