"""``jitdigest sum``'s command line: --version, a --help whose first screen is the usage and
the common options (each named in it), -j with no number (the next argument stays an
operand; output as -j 1 and sha256sum), and --audit's MOVED lines in the tree's path style."""
import subprocess
import sys

from cli_cases import ENV, cu, have, interactive_sigint, jd, need
from cli_cases import jd_here, tree  # noqa: F401 - fixtures; pytest finds them here


def test_version_exits_zero():
    got = jd("--version")
    assert got.returncode == 0 and got.stderr == b""
    assert got.stdout.startswith(b"jitdigest sum ")


def test_help_first_screen_and_length():
    got = subprocess.run([sys.executable, "-m", "jitdigest", "sum", "--help"], capture_output=True,
                         env=dict(ENV, COLUMNS="80"))
    lines = got.stdout.decode().split("\n")
    assert got.returncode == 0 and len(lines) < 100
    screen = "\n".join(lines[:24])
    assert lines[0].startswith("usage: jitdigest sum [OPTION]... [FILE]...")
    for option in ("--algorithm", "--check", "--recursive", "--jobs", "--tag", "--json",
                   "--exclude", "--files0-from", "--update", "--match"):
        assert option in screen, option
    assert "rsync" in got.stdout.decode()           # the glob rules are told
    assert "--dask" in got.stdout.decode()


def test_jobs_without_a_number(tree, jd_here):  # noqa: F811
    need("sha256sum")
    jd = jd_here
    names = ["plain.txt", "large.bin", "empty"]
    want = cu("sha256sum", *names, cwd=tree).stdout
    for args in (["-j", *names], [*names, "-j"], ["-j", "--", *names], ["--jobs", *names],
                 ["-j", "-r", "sub"]):
        got = jd(*args, cwd=tree)
        assert got.returncode == 0, (args, got.stderr)
        if "sub" not in args:
            assert got.stdout == want, args
    assert jd("-j", "2", *names, cwd=tree).stdout == want


def test_audit_moved_line_in_one_style(tmp_path, jd_here):
    (tmp_path / "f3.txt").write_bytes(b"three")
    if not have("sha256sum"):
        return
    manifest = cu("sha256sum", "f3.txt", cwd=tmp_path).stdout
    (tmp_path / "m").write_bytes(manifest)
    (tmp_path / "f3.txt").rename(tmp_path / "f3b.txt")
    got = jd_here("-r", "--audit", "m", ".", cwd=tmp_path)
    assert b"MOVED: ./f3.txt -> ./f3b.txt\n" in got.stdout, got.stdout


def test_interrupted_run_writes_its_lines_unbuffered(tmp_path):
    """Ctrl-C with PYTHONUNBUFFERED=1 (stdout then has jitdigest's own buffer): the lines of
    the files hashed before it are all on stdout, and the run ends by SIGINT as before. The
    child is stopped while it reads a FIFO: by then standard input (read after the three
    files, whose lines go out first with -j 1) was read to its end."""
    import errno
    import fcntl
    import hashlib
    import os
    import signal
    import struct
    import termios
    import time
    names = ["f1", "f2", "f3"]
    for name in names:
        (tmp_path / name).write_bytes(name.encode() * 3)
    (tmp_path / "in").write_bytes(b"standard input")
    os.mkfifo(tmp_path / "fifo")
    with open(tmp_path / "in", "rb") as stdin:
        child = subprocess.Popen([sys.executable, "-m", "jitdigest", "sum", "-j", "1", *names,
                                  "-", "fifo"], cwd=tmp_path, stdin=stdin,
                                 stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                 env=dict(ENV, PYTHONUNBUFFERED="1"),
                                 preexec_fn=interactive_sigint)
    deadline = time.monotonic() + 300           # a hang guard, not a measurement
    while True:
        try:                                    # succeeds once the child opens it to read
            writer = os.open(tmp_path / "fifo", os.O_WRONLY | os.O_NONBLOCK)
            break
        except OSError as exc:
            assert exc.errno == errno.ENXIO and child.poll() is None
            assert time.monotonic() < deadline
            time.sleep(0.02)
    try:
        # one byte, then wait until the child has read it: it is then blocked reading the rest
        os.write(writer, b"x")
        while struct.unpack("i", fcntl.ioctl(writer, termios.FIONREAD, b"\0" * 4))[0]:
            assert time.monotonic() < deadline and child.poll() is None
            time.sleep(0.02)
        # A SIGINT that lands as the child goes from one read() to the next runs Python's
        # handler only after the next: another one interrupts it (a hang guard, as above)
        for _ in range(30):
            child.send_signal(signal.SIGINT)
            try:
                out, _ = child.communicate(timeout=10)
                break
            except subprocess.TimeoutExpired:
                pass
        else:
            child.kill()
            child.communicate()
            raise AssertionError("SIGINT did not stop jitdigest sum")
    finally:
        os.close(writer)
    assert child.returncode == -signal.SIGINT
    assert out == b"".join(hashlib.sha256(name.encode() * 3).hexdigest().encode() + b"  "
                           + name.encode() + b"\n" for name in names)
