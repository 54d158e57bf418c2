"""``jitdigest sum``'s command line: --version, a --help whose first screen is the usage and
the common options (each named in it), -j with no number (the next argument stays an
operand; output as -j 1 and sha256sum), and --audit's MOVED lines in the tree's path style."""
import subprocess
import sys

from cli_cases import ENV, cu, have, jd, need
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
