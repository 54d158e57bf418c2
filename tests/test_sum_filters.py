"""``jitdigest sum -r``'s filters against ``find`` with the same rules: --exclude and --include
globs (rsync's reading: no '/' matches a name at any depth, a '/' the path relative to the
operand, a trailing '/' directories only), --min-size and --max-size; a broken symlink, a FIFO
and a socket inside the tree skipped with exit status 0 (named with --verbose); -L on a
symlink loop ending with a warning. The command runs in this process (``run``): one run is
milliseconds, a child process most of a second."""
import os
import socket
import subprocess

import pytest

from cli_cases import ENV, need
from cli_cases import jd_here as jd  # noqa: F401 - a fixture

K = 1024
FILES = {"a.txt": 10, "b.tmp": 20, "big.bin": 3 * K * K, "edge.bin": K * K,
         "edge1.bin": K * K + 1, "sub/c.txt": 1, "sub/d.tmp": 0, "sub/e.c": 300,
         "sub/deep/f.txt": 5000, "build/g.txt": 7, "build/sub/h.c": 9, "x/build/i.txt": 3,
         "with space/j.tmp": 2, "name.tmp/k.txt": 4}


@pytest.fixture(scope="module")
def tree(tmp_path_factory):
    root = tmp_path_factory.mktemp("filters")
    for rel, size in FILES.items():
        path = root / "t" / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(bytes([len(rel)]) * size)
    (root / "t" / "broken").symlink_to("nowhere")
    os.mkfifo(root / "t" / "sub" / "fifo")
    sock = socket.socket(socket.AF_UNIX)
    sock.bind(os.fsdecode(os.path.join(os.fsencode(root), b"t/sock")))
    sock.close()
    return root


def _found(tree, *rules):
    """sha256sum's lines for what ``find t RULES`` prints (-print0), in byte order."""
    listing = subprocess.run(["find", "t", *rules], cwd=tree, capture_output=True,
                             check=True).stdout
    names = sorted(n for n in listing.split(b"\0") if n)
    assert names, rules                     # no case passes on nothing
    return subprocess.run(["sha256sum", "--", *names], cwd=tree, capture_output=True,
                          env=ENV, check=True).stdout


FILE = ["-type", "f", "-print0"]
CASES = [
    (["--exclude", "*.tmp"], ["-name", "*.tmp", "-prune", "-o", *FILE]),
    (["--exclude", "*.tmp", "--max-size", "1M"],
     ["-name", "*.tmp", "-prune", "-o", "-size", "-%dc" % (K * K + 1), *FILE]),
    (["--min-size", "1K"], ["-size", "+%dc" % (K - 1), *FILE]),
    (["--max-size", "1048576", "--min-size", "5"], ["-size", "-%dc" % (K * K + 1),
                                                      "-size", "+4c", *FILE]),
    (["--exclude", "build/"], ["-type", "d", "-name", "build", "-prune", "-o", *FILE]),
    (["--exclude", "/build"], ["-path", "t/build", "-prune", "-o", *FILE]),
    (["--exclude", "sub/*.c"], ["-path", "t/sub/*.c", "-prune", "-o", *FILE]),
    (["--exclude", "**/*.txt"], ["-name", "*.txt", "-prune", "-o", *FILE]),
    (["--include", "*.txt"], ["-name", "*.txt", *FILE]),
    (["--include", "*.c", "--exclude", "build"],
     ["-name", "build", "-prune", "-o", "-name", "*.c", *FILE]),
    (["--include", "*.t[!m]?", "--exclude", "with space"],
     ["-name", "with space", "-prune", "-o", "-name", "*.t[!m]?", *FILE]),
]


@pytest.mark.parametrize("ours, rules", CASES, ids=[" ".join(c[0]) for c in CASES])
def test_filters_select_what_find_selects(tree, jd, ours, rules):
    need("sha256sum")
    got = jd("-r", *ours, "t", cwd=tree)
    assert (got.stdout, got.stderr, got.returncode) == (_found(tree, *rules), b"", 0)


def test_special_files_in_a_walk_are_skipped(tree, jd):
    """A broken link, a FIFO and a socket: skipped, exit 0, every regular file hashed; with
    --verbose each is named on stderr. Named as operands, coreutils' errors as before."""
    need("sha256sum")
    got = jd("-r", "t", cwd=tree, timeout=60)
    assert (got.stdout, got.stderr, got.returncode) == (_found(tree, *FILE), b"", 0)
    told = jd("-r", "--verbose", "t", cwd=tree, timeout=60)
    assert told.stdout == got.stdout and told.returncode == 0
    for name in (b"t/broken", b"t/sub/fifo", b"t/sock"):
        assert b"jitdigest: " + name + b": skipped" in told.stderr, told.stderr
    named = jd("t/broken", cwd=tree)
    assert (named.returncode, named.stderr) == (
        1, b"jitdigest: t/broken: No such file or directory\n")


def test_dereference_ends_a_symlink_loop_with_a_warning(tmp_path, jd):
    need("sha256sum")
    (tmp_path / "t" / "d").mkdir(parents=True)
    (tmp_path / "t" / "d" / "f").write_bytes(b"f")
    (tmp_path / "t" / "d" / "up").symlink_to("..")
    (tmp_path / "other").mkdir()
    (tmp_path / "other" / "o").write_bytes(b"o")
    (tmp_path / "t" / "link").symlink_to("../other")
    got = jd("-r", "-L", "t", cwd=tmp_path, timeout=60)
    want = subprocess.run(["sha256sum", "t/d/f", "t/link/o"], cwd=tmp_path,
                          capture_output=True, env=ENV).stdout
    assert (got.stdout, got.returncode) == (want, 0)
    assert got.stderr == b"jitdigest: warning: t/d/up: file system loop detected; " \
                         b"not followed\n"
    plain = jd("-r", "t", cwd=tmp_path, timeout=60)      # -P: links to directories not taken
    assert (plain.stdout, plain.stderr) == (want.split(b"\n")[0] + b"\n", b"")


def test_bad_size_is_a_usage_error(tree, jd):
    got = jd("-r", "--max-size", "12Q", "t", cwd=tree)
    assert got.returncode == 1 and got.stdout == b""
    assert b"invalid size" in got.stderr and b"12Q" in got.stderr


def test_one_file_system_stays_on_the_operands(tmp_path, jd):
    """With -L a link leads onto another file system (/dev/shm, a tmpfs, where it is one);
    --one-file-system does not enter it, and says so with --verbose."""
    other = "/dev/shm"
    if not os.path.isdir(other) or os.stat(other).st_dev == os.stat(tmp_path).st_dev:
        pytest.skip("no second file system to link to")
    (tmp_path / "t").mkdir()
    (tmp_path / "t" / "f").write_bytes(b"f")
    (tmp_path / "t" / "elsewhere").symlink_to(other)
    got = jd("-r", "-L", "--one-file-system", "--verbose", "t", cwd=tmp_path)
    assert got.returncode == 0
    assert [line.split(b"  ", 1)[1] for line in got.stdout.splitlines()] == [b"t/f"]
    assert got.stderr == b"jitdigest: t/elsewhere: skipped: on another file system\n"
