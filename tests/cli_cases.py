"""Shared cases for the command-line tests (tests/test_cli_*.py): the child-process environment
(LC_ALL=C, so coreutils quotes names and values the same way whatever the machine's locale),
the coreutils tools and a check that each is installed, the tree of awkward file names (the
module-scoped ``tree`` fixture), running ``python -m jitdigest sum`` and a coreutils tool, and
comparing the two byte for byte."""
import os
import pathlib
import re
import shutil
import signal
import subprocess
import sys

import pytest

REPO = pathlib.Path(__file__).resolve().parent.parent
ENV = dict(os.environ, LC_ALL="C", PYTHONPATH=os.pathsep.join(
    [str(REPO), os.environ.get("PYTHONPATH", "")]))
ENV.pop("LANGUAGE", None)

TOOLS = {"md5": "md5sum", "sha1": "sha1sum", "sha256": "sha256sum", "sha512": "sha512sum",
         "blake2b": "b2sum"}


def interactive_sigint():
    """For a child that should take Ctrl-C as a terminal user's program does (``preexec_fn``):
    SIGINT at its default, even when this test run was started in the background (which ignores
    it, and a Python child then ignores it too)."""
    signal.signal(signal.SIGINT, signal.SIG_DFL)


def have(tool):
    if shutil.which(tool) is None:
        return False
    proc = subprocess.run([tool, "--version"], capture_output=True)
    return proc.returncode == 0 and b"coreutils" in proc.stdout


def need(tool):
    if not have(tool):
        pytest.skip(f"{tool} (GNU coreutils) not installed")


# Awkward names (bytes) and their contents.
AWKWARD = {
    b"plain.txt": b"hello\n",
    b"with space.txt": b"x" * 55,
    b" leading and trailing ": b"y" * 64,
    b"back\\slash": b"z" * 100,
    b"new\nline": b"n" * 1000,
    b"carriage\rreturn": b"r" * 3,
    b"both\\and\nnewline": b"b" * 7,
    b"tab\tname": b"t",
    b"caf\xe9-latin1": b"\xe9" * 17,
    b"\xff\xfe-not-utf8": b"\x00" * 65536,          # SMALL exactly
    "ünïcödé.txt".encode(): b"u" * 65537,           # SMALL + 1: streamed
    b"quote'name": b"q" * 200,
    b"colon:star*": b"c" * 300,
    b"-dash-first": b"-",
    b"empty": b"",
    b"large.bin": None,                             # ~3 MB, made below
    b"sub/inner file": b"inner",
    b"sub/deeper/x": b"deep",
}
LARGE_SIZE = 3 * 1024 * 1024 + 17


@pytest.fixture(scope="module")
def tree(tmp_path_factory):
    root = tmp_path_factory.mktemp("awkward")
    broot = os.fsencode(root)
    pattern = bytes(range(251))
    for name, data in AWKWARD.items():
        if data is None:
            data = (pattern * (LARGE_SIZE // 251 + 1))[:LARGE_SIZE]
        path = os.path.join(broot, name)
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(path, "wb") as f:
            f.write(data)
    os.mkdir(os.path.join(broot, b"a dir"))
    return root


def operands():
    return sorted(name for name in AWKWARD)


def jd(*args, cwd=None, input=None, timeout=120):
    """``python -m jitdigest sum ARGS`` (bytes arguments welcome)."""
    return subprocess.run([sys.executable, "-m", "jitdigest", "sum", *args], cwd=cwd,
                          input=input, capture_output=True, env=ENV, timeout=timeout)


class Ran:
    """What a run in this process gave, as subprocess.run's result names it."""

    def __init__(self, stdout, stderr, returncode):
        self.stdout, self.stderr, self.returncode = stdout, stderr, returncode


@pytest.fixture
def jd_here(capsysbinary, monkeypatch):
    """``jitdigest sum ARGS`` run in this process, in folder ``cwd`` (milliseconds, where a
    child process takes most of a second); no progress line."""
    from jitdigest import cli

    def run(*args, cwd, timeout=None):
        monkeypatch.chdir(cwd)
        capsysbinary.readouterr()
        status = cli.main(["sum", "--no-progress", *args])
        out, err = capsysbinary.readouterr()
        return Ran(out, err, status)
    return run


def cu(tool, *args, cwd=None, input=None):
    return subprocess.run([tool, *args], cwd=cwd, input=input, capture_output=True, env=ENV,
                          timeout=120)


def as_ours(stderr, tool):
    """coreutils' stderr with its program name prefix replaced by ours."""
    return re.sub(rb"(?m)^" + re.escape(tool.encode()) + rb": ", b"jitdigest: ", stderr)


def assert_same(ours, theirs, tool):
    assert ours.stdout == theirs.stdout
    assert ours.stderr == as_ours(theirs.stderr, tool)
    assert ours.returncode == theirs.returncode
