"""The command line's walking, options and errors: -r order (byte order of full paths) and
symlink loops, -j keeping input order; --length and usage errors, unreadable, vanishing and
unwritable files, a closed pipe, and names quoted in error messages, all as coreutils words
them; --help naming every option; the info and warmup commands.

Each tool's tests skip when the tool is absent. Child processes run with LC_ALL=C, so that
coreutils quotes names and values the same way whatever the machine's locale."""
import hashlib
import os
import signal
import subprocess
import sys

import pytest

from cli_cases import ENV, as_ours, assert_same, cu, have, jd, need, operands
from cli_cases import tree  # noqa: F401 - a fixture; pytest finds it in this module


# --- options --------------------------------------------------------------------------------

def test_length_errors_match_b2sum(tree):
    need("b2sum")
    for bits in ("7", "1024", "abc"):
        ours = jd("-a", "blake2b", "-l", bits, "plain.txt", cwd=tree)
        theirs = cu("b2sum", "-l", bits, "plain.txt", cwd=tree)
        assert_same(ours, theirs, "b2sum")
    proc = jd("-a", "sha256", "-l", "128", "plain.txt", cwd=tree)
    assert proc.returncode == 1 and b"--length is only supported" in proc.stderr


def test_usage_errors_as_coreutils(tree):
    need("sha256sum")
    for args in (["-c", "-z"], ["-c", "--tag"], ["-c", "-b"], ["--status"],
                 ["--ignore-missing"]):
        ours = jd(*args, "plain.txt", cwd=tree)
        theirs = cu("sha256sum", *args, "plain.txt", cwd=tree)
        assert ours.returncode == theirs.returncode == 1, args
        assert ours.stderr.splitlines()[0] == \
            as_ours(theirs.stderr, "sha256sum").splitlines()[0], args
        assert ours.stdout == b""
    proc = jd("-a", "nosuch", "plain.txt", cwd=tree)
    assert proc.returncode == 1 and b"invalid argument 'nosuch' for '--algorithm'" in proc.stderr


# --- errors ----------------------------------------------------------------------------------

def test_errors_do_not_stop_the_run(tree):
    proc = jd("no such file", "plain.txt", "a dir", "empty", cwd=tree)
    assert proc.returncode == 1
    assert proc.stderr == (b"jitdigest: 'no such file': No such file or directory\n"
                           b"jitdigest: 'a dir': Is a directory\n")
    assert proc.stdout == (hashlib.sha256(b"hello\n").hexdigest().encode() + b"  plain.txt\n" +
                           hashlib.sha256(b"").hexdigest().encode() + b"  empty\n")


@pytest.mark.skipif(os.name != "posix" or os.geteuid() == 0,
                    reason="root reads files whatever their mode")
def test_permission_denied(tmp_path):
    secret = tmp_path / "secret"
    secret.write_bytes(b"s")
    secret.chmod(0)
    proc = jd("secret", cwd=tmp_path)
    assert proc.returncode == 1
    assert proc.stderr == b"jitdigest: secret: Permission denied\n"


def test_file_vanishing_mid_walk(tmp_path, capsysbinary, monkeypatch):
    """A file listed by the walk but gone when opened: reported, the rest hashed."""
    from jitdigest import cli, sum as engine
    from jitdigest.sum import walk
    for name in ("a", "b", "c"):
        (tmp_path / name).write_bytes(name.encode())
    real = walk._sorted_entries

    def listing_then_delete(path, *rest):
        entries = real(path, *rest)
        os.unlink(os.path.join(path, b"b"))
        return entries

    args = cli.build_parser().commands["sum"].parse_intermixed_args(
        ["-r", "--no-progress", str(tmp_path)])
    monkeypatch.setattr(walk, "_sorted_entries", listing_then_delete)
    status = engine.run(args)
    out, err = capsysbinary.readouterr()
    assert status == 1
    base = os.fsencode(tmp_path)
    assert out == (hashlib.sha256(b"a").hexdigest().encode() + b"  " + base + b"/a\n" +
                   hashlib.sha256(b"c").hexdigest().encode() + b"  " + base + b"/c\n")
    assert err == b"jitdigest: " + base + b"/b: No such file or directory\n"


def test_broken_pipe_is_quiet(tmp_path):
    """`jitdigest sum ... | head -1`: no traceback, no message, like sha256sum (killed by
    SIGPIPE). The output (~300 KB) is more than a pipe holds, so the reader's exit is seen."""
    for i in range(3000):
        (tmp_path / f"f{i:04d}").write_bytes(b"%d" % i)
    proc = subprocess.Popen([sys.executable, "-m", "jitdigest", "sum", "-r", "."],
                            cwd=tmp_path, env=ENV, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, bufsize=0)
    first = proc.stdout.read(10)
    proc.stdout.close()
    err = proc.stderr.read()
    status = proc.wait(timeout=120)
    assert len(first) == 10
    assert err == b""
    assert status in (-signal.SIGPIPE, 1)


@pytest.mark.skipif(not os.path.exists("/dev/full"), reason="needs /dev/full")
def test_write_error(tree):
    with open("/dev/full", "wb") as full:
        ours = subprocess.run([sys.executable, "-m", "jitdigest", "sum", "plain.txt"], cwd=tree,
                              env=ENV, stdout=full, stderr=subprocess.PIPE)
        assert ours.returncode == 1 and ours.stderr == b"jitdigest: write error\n"
        if have("sha256sum"):
            theirs = subprocess.run(["sha256sum", "plain.txt"], cwd=tree, env=ENV, stdout=full,
                                    stderr=subprocess.PIPE)
            assert ours.stderr == as_ours(theirs.stderr, "sha256sum")


# --- walking --------------------------------------------------------------------------------

def test_recursive_order_and_symlink_loop(tree, tmp_path):
    """-r lists files in byte order of full paths (find | LC_ALL=C sort); directory symlinks
    are not followed, so a loop ends; symlinks to files are hashed; special files and
    dangling links skipped."""
    root = tmp_path / "r"
    for rel in ("a/x", "a-b/y", "a.b/z", "a0/w", "top", "sp ace", "sub/deep/f", "a-c"):
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(rel.encode())
    (root / "sub" / "loop").symlink_to("..")
    (root / "sub" / "self").symlink_to(".")
    (root / "sub" / "tofile").symlink_to("../top")
    os.mkfifo(root / "fifo")
    proc = jd("-r", "r", cwd=tmp_path, timeout=60)
    assert proc.returncode == 0, proc.stderr
    names = [line.split(b"  ", 1)[1] for line in proc.stdout.splitlines()]
    assert names == [b"r/a-b/y", b"r/a-c", b"r/a.b/z", b"r/a/x", b"r/a0/w", b"r/sp ace",
                     b"r/sub/deep/f", b"r/sub/tofile", b"r/top"]
    if have("sha256sum"):
        listed = subprocess.run(f"find r -type f | LC_ALL=C sort | xargs -d '\\n' sha256sum",
                                shell=True, cwd=tmp_path, capture_output=True, env=ENV).stdout
        ours = [line for line in proc.stdout.splitlines(keepends=True)
                if not line.endswith(b"tofile\n")]
        assert b"".join(ours) == listed
    # a dangling link inside the walk is skipped, as find -type f leaves it out (named with
    # --verbose); named as an operand it is still an error, as in sha256sum
    (root / "sub" / "dangling").symlink_to("nowhere")
    again = jd("-r", "r", cwd=tmp_path, timeout=60)
    assert (again.stdout, again.stderr, again.returncode) == (proc.stdout, b"", 0)
    told = jd("-r", "--verbose", "r", cwd=tmp_path, timeout=60)
    assert told.stdout == proc.stdout and b"r/sub/dangling: skipped" in told.stderr
    named = jd("r/sub/dangling", cwd=tmp_path, timeout=60)
    assert named.returncode == 1
    assert named.stderr == b"jitdigest: r/sub/dangling: No such file or directory\n"


def test_jobs_keep_input_order(tree):
    """-j 4 over the tree (large and small files mixed) prints what -j 1 and sha256sum do."""
    serial = jd("-r", "--", *operands(), cwd=tree)
    parallel = jd("-r", "-j", "4", "--", *operands(), cwd=tree)
    assert parallel.stdout == serial.stdout and parallel.returncode == serial.returncode == 0
    if have("sha256sum"):
        assert serial.stdout == cu("sha256sum", "--", *operands(), cwd=tree).stdout
    auto = jd("-j", "0", "-r", "--", *operands(), cwd=tree)
    assert auto.stdout == serial.stdout


# --- names in errors, help, the other commands ----------------------------------------------

def test_quotef_matches_coreutils_error_names(tmp_path):
    """Error messages quote names as coreutils' quotef, in the C and UTF-8 locales."""
    need("sha256sum")
    names = [b"plain", b"a b", b"x~", b"~x", b"{a", b"{", b"a#", b"#a", b"it's", b"it's $",
             b"a:b", b"q\nw", b"x\xff", b"caf\xc3\xa9", b"tab\t", b"", b"back\\slash",
             b"a@b", b"del\x7f", b"\x01ctl", b"quo\"te", b"x\xe2\x82"]
    for locale in ("C", "C.UTF-8"):
        env = dict(ENV, LC_ALL=locale)
        ours = subprocess.run([sys.executable, "-m", "jitdigest", "sum", "--", *names],
                              cwd=tmp_path, env=env, capture_output=True)
        theirs = subprocess.run(["sha256sum", "--", *names], cwd=tmp_path, env=env,
                                capture_output=True)
        if locale != "C" and b"\xc3\xa9" not in theirs.stderr:
            continue                            # that locale is not installed here
        assert ours.stderr == as_ours(theirs.stderr, "sha256sum"), locale


def test_help_documents_every_option():
    from jitdigest import cli
    parser = cli.build_parser()
    sub = parser.commands["sum"]
    text = sub.format_help()
    assert sub.arguments and "--algorithm" in sub.value_options()
    for action in sub.arguments:
        assert action.help, action.option_strings
        for option in action.option_strings:
            assert option in text
    assert set(parser.commands) >= {"sum", "warmup", "info"}


def test_info_and_warmup_still_work(capsys):
    from jitdigest import cli
    assert cli.main(["info"]) == 0
    out = capsys.readouterr().out
    assert "kernel sha256 " in out and "UseSHA256Intrinsics = " in out
    assert cli.main(["warmup", "md5"]) == 0
    assert capsys.readouterr().out.startswith("md5: ")


@pytest.mark.skipif(not hasattr(signal, "SIGPIPE"), reason="POSIX signals")
def test_main_leaves_the_callers_sigpipe_as_it_was(tmp_path, capsys):
    """``cli.main(["sum", ...])`` called by a program: SIGPIPE is Python's (ignored) again after
    it, so that the program's own writes to a closed pipe raise instead of killing it."""
    from jitdigest import cli
    (tmp_path / "f").write_bytes(b"abc")
    before = signal.getsignal(signal.SIGPIPE)
    assert cli.main(["sum", str(tmp_path / "f")]) == 0
    assert capsys.readouterr().out.split()[0] == hashlib.sha256(b"abc").hexdigest()
    assert signal.getsignal(signal.SIGPIPE) == before


def test_info_into_a_closed_pipe_is_quiet():
    """``jitdigest info | head -1``: the reader is gone before the output is written; the
    command stops with status 1 and no traceback (as coreutils stop)."""
    proc = subprocess.Popen([sys.executable, "-m", "jitdigest", "info"], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE)
    proc.stdout.close()                        # before the child has imported anything
    err = proc.stderr.read()
    assert proc.wait(timeout=120) == 1
    assert err == b""
