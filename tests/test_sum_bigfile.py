"""``jitdigest sum``'s large-file path (jitdigest/_bigfile.py): digests against hashlib and
the ``blake3`` package (b3sum and sha256sum too, where installed) for files around the small-file
limit and the read block, with the tree hash on one thread and on several; a file that grows,
shrinks or fails while it is read gives what coreutils' reads give (reads, never a memory map:
a truncated map would kill the process); FIFOs and standard input; large reads only. Each with
a thread reading ahead, without, and both in timed turns; the faster way is the one kept."""
import errno
import hashlib
import os
import shutil
import subprocess
import sys
import threading

import pytest
from blake3 import blake3

from cli_cases import ENV
from jitdigest.base.config import SUM_SMALL_FILE as SMALL
from jitdigest import _bigfile as bigfile
from jitdigest.sum import algos
from jitdigest.sum.hasher import Hasher
from jitdigest.sum.walk import FILE, Item

BLOCK = bigfile.BLOCK
TREE = bigfile.TREE_BLOCK           # the reads of a tree hash on several threads
SIZES = sorted({SMALL, SMALL + 1, SMALL + 2, BLOCK - 1, BLOCK, BLOCK + 1, SMALL + 1 + BLOCK,
                SMALL + 2 + BLOCK, 2 * BLOCK + 1, TREE, SMALL + 1 + TREE, SMALL + 2 + TREE,
                (bigfile.DEPTH + 2) * TREE + 4097})


def _content(size):
    unit = bytes((i * 7 + 3) % 251 for i in range(65521))     # not a power of two long
    return (unit * (size // len(unit) + 1))[:size]


@pytest.fixture(scope="module")
def files(tmp_path_factory):
    root = tmp_path_factory.mktemp("bigfile")
    paths = {}
    for size in SIZES:
        path = root / f"f{size}"
        path.write_bytes(_content(size))
        paths[size] = path
    return paths


def _oracle(name, data):
    return blake3(data).digest() if name == algos.B3SUM else hashlib.new(name, data).digest()


def _algo(name, threads=1):
    return algos.Keyed(threads=threads) if name == algos.B3SUM else algos.get(name)


def _hash(paths, algo, jobs=1):
    items = [Item(FILE, os.fsencode(p), os.fsencode(p), algo=algo) for p in paths]
    hasher = Hasher(jobs)
    try:
        return list(hasher.run(items))
    finally:
        hasher.close()


@pytest.fixture(params=["reading-thread", "one-thread", "measured"])
def overlap(request, monkeypatch):
    """Each way of reading: a second thread reading ahead (timed faster), reads between
    hashes (one CPU, or those timed faster), and both in turns while they are timed (turns of
    two blocks here: every file crosses from one way to the other), then the faster."""
    monkeypatch.setattr(bigfile, "second_cpu", lambda: request.param != "one-thread")
    monkeypatch.setattr(bigfile, "_ways", {})
    if request.param == "measured":
        monkeypatch.setattr(bigfile, "PROBE", 1)
    else:
        monkeypatch.setattr(bigfile, "_way", lambda key: request.param == "reading-thread")
    return request.param


@pytest.mark.parametrize("name, threads, jobs", [
    ("sha256", 1, 1), ("md5", 1, 2), (algos.B3SUM, 1, 1), (algos.B3SUM, 2, 1),
    (algos.B3SUM, 2, 2)])
def test_sizes_against_oracles(files, overlap, name, threads, jobs):
    before = threading.active_count()
    done = _hash([files[s] for s in SIZES], _algo(name, threads), jobs)
    assert [item.error for item in done] == [None] * len(SIZES)
    for size, item in zip(SIZES, done):
        assert item.size == size
        assert item.digest == _oracle(name, _content(size)), (name, size)
    assert threading.active_count() == before           # no reading thread left behind


def test_several_algorithms_one_read(files):
    size = SIZES[-1]
    algo = algos.from_list("sha256,blake3", None)
    (item,) = _hash([files[size]], algo)
    data = _content(size)
    assert item.digest == (hashlib.sha256(data).digest(), blake3(data).digest())


class _Changing:
    """Stands in for bigfile._readinto: before read number ``at`` of the file, ``change`` is
    applied to it (through another descriptor, as another process would), or ``error`` raised;
    counts the reads and the bytes each asked for."""

    def __init__(self, monkeypatch, path, at, change=None, error=None):
        self.path, self.at, self.change, self.error = path, at, change, error
        self.asked = []
        real = bigfile._readinto

        def readinto(fd):
            inner = real(fd)

            def read(buf):
                self.asked.append(len(buf))
                if len(self.asked) == self.at:
                    if self.error is not None:
                        raise self.error
                    self.change(self.path)
                return inner(buf)
            return read
        monkeypatch.setattr(bigfile, "_readinto", readinto)


def _truncate_to(size):
    def change(path):
        with open(path, "r+b") as f:
            f.truncate(size)
    return change


def _append(data):
    def change(path):
        with open(path, "ab") as f:
            f.write(data)
    return change


@pytest.mark.parametrize("name", ["sha256", algos.B3SUM])
def test_file_shrinking_while_read(tmp_path, monkeypatch, overlap, name):
    path = tmp_path / "shrinks"
    data = _content(TREE + 100)
    path.write_bytes(data)
    # the head (SMALL + 1 bytes) and one read are done before the file is cut short of that
    counter = _Changing(monkeypatch, path, 2, change=_truncate_to(SMALL))
    (item,) = _hash([path], _algo(name, 2))
    assert item.error is None
    assert item.size == SMALL + 1 + counter.asked[0]
    assert item.digest == _oracle(name, data[:item.size])


@pytest.mark.parametrize("name", ["sha256", algos.B3SUM])
def test_file_growing_while_read(tmp_path, monkeypatch, overlap, name):
    path = tmp_path / "grows"
    data = _content(2 * (TREE if name == algos.B3SUM else BLOCK) + 100)   # two full reads
    more = b"appended while read" * 1000
    path.write_bytes(data)
    _Changing(monkeypatch, path, 3, change=_append(more))
    (item,) = _hash([path], _algo(name, 2))
    assert item.error is None
    assert item.digest == _oracle(name, data + more)


def test_read_error_mid_file(tmp_path, monkeypatch, overlap):
    path = tmp_path / "fails"
    path.write_bytes(_content(5 * BLOCK))
    before = threading.active_count()
    _Changing(monkeypatch, path, 3, error=OSError(errno.EIO, os.strerror(errno.EIO)))
    ok = tmp_path / "ok"
    ok.write_bytes(b"after")
    bad, good = _hash([path, ok], algos.get("sha256"))
    assert isinstance(bad.error, OSError) and bad.error.errno == errno.EIO
    assert bad.digest is None
    assert good.digest == hashlib.sha256(b"after").digest()
    assert threading.active_count() == before


@pytest.mark.parametrize("name, threads, block", [("sha1", 1, BLOCK), (algos.B3SUM, 2, TREE)])
def test_large_reads_only(files, monkeypatch, overlap, name, threads, block):
    size = SIZES[-1]
    counter = _Changing(monkeypatch, files[size], 0)
    (item,) = _hash([files[size]], _algo(name, threads))
    assert item.digest == _oracle(name, _content(size))
    # the first read ends at a block boundary of the file, every later one asks for a block
    assert counter.asked[0] == block - (SMALL + 1) % block
    assert set(counter.asked[1:]) == {block}
    # all full but the last two (the short one and the one that finds the end)
    assert len(counter.asked) <= -(-(size - counter.asked[0] - SMALL - 1) // block) + 2


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="no FIFOs here")
def test_fifo(tmp_path):
    path = tmp_path / "fifo"
    os.mkfifo(path)
    data = _content(2 * BLOCK + 3)

    def write():
        with open(path, "wb") as f:
            f.write(data)
    writer = threading.Thread(target=write)
    writer.start()
    try:
        (item,) = _hash([path], _algo(algos.B3SUM, 2))
    finally:
        writer.join()
    assert item.error is None and item.digest == blake3(data).digest()


def test_command_against_tools(files, tmp_path):
    """The command itself, with standard input among the files: b3sum's and sha256sum's lines
    (the digests from the oracles where a tool is missing)."""
    names = [str(files[s]) for s in (SMALL + 1, BLOCK, SIZES[-1])]
    stdin = _content(BLOCK + 5)
    runs = {}
    for key, argv in (("b3", ["-a", "blake3", "--num-threads", "0", "-j", "2"]),
                      ("sha", ["-j", "1"])):
        proc = subprocess.run([sys.executable, "-m", "jitdigest", "sum", "--no-progress", *argv,
                               *names, "-"], input=stdin, env=ENV, capture_output=True,
                              timeout=300)
        assert proc.returncode == 0, proc.stderr
        runs[key] = proc.stdout
    datas = [_content(s) for s in (SMALL + 1, BLOCK, SIZES[-1])] + [stdin]
    want_b3 = "".join(f"{blake3(d).hexdigest()}  {n}\n" for d, n in zip(datas, names + ["-"]))
    want_sha = "".join(f"{hashlib.sha256(d).hexdigest()}  {n}\n"
                       for d, n in zip(datas, names + ["-"]))
    assert runs["b3"].decode() == want_b3
    assert runs["sha"].decode() == want_sha
    if shutil.which("b3sum"):
        tool = subprocess.run(["b3sum", *names, "-"], input=stdin, capture_output=True)
        assert tool.stdout == runs["b3"]
    if shutil.which("sha256sum"):
        tool = subprocess.run(["sha256sum", *names, "-"], input=stdin, capture_output=True)
        assert tool.stdout == runs["sha"]


@pytest.mark.parametrize("thread_cost, faster", [(1, True), (3, False)])
def test_the_faster_way_is_timed_then_kept(tmp_path, monkeypatch, thread_cost, faster):
    """The first file of a kind is read both ways in turns and timed; the faster way reads
    the rest and is kept for the next file. A clock that advances by the bytes hashed, at a
    cost per byte of 2 between reads and ``thread_cost`` while the reading thread runs,
    stands in for the machine."""
    clock = [0.0]
    monkeypatch.setattr(bigfile, "time", type("Clock", (), {"perf_counter": lambda: clock[0]}))
    monkeypatch.setattr(bigfile, "second_cpu", lambda: True)
    monkeypatch.setattr(bigfile, "PROBE", 1)                 # turns of two blocks
    monkeypatch.setattr(bigfile, "_ways", {})

    class Timed:
        name = "timed"

        def __init__(self):
            self.inner = hashlib.sha256()

        def update(self, data):
            reading = any(t.name == "jitdigest-read" for t in threading.enumerate())
            clock[0] += len(data) * (thread_cost if reading else 2)
            self.inner.update(data)

    data = _content(12 * BLOCK + 5)
    path = tmp_path / "timed"
    path.write_bytes(data)
    for _ in range(2):
        h = Timed()
        with open(path, "rb") as f:
            assert bigfile.hash_rest(f.fileno(), h) == len(data)
        assert h.inner.digest() == hashlib.sha256(data).digest()
        assert bigfile._ways == {((Timed, "timed"), BLOCK): faster}
