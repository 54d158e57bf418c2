"""``jitdigest sum --files0-from`` and ``--files-from``: the names of ``find -print0`` hashed as
``xargs -0 sha256sum`` hashes them (newlines, backslashes and bytes that are not UTF-8 in
names), and the messages of coreutils' wc for a list that cannot be read, an empty name, '-'
in a list read from standard input, and operands beside a list."""
import os
import subprocess

import pytest

from cli_cases import ENV, as_ours, have, jd, need

NAMES = [b"plain", b"new\nline", b"back\\slash", b"both\\and\nnl", b"\xff\xfe-latin",
         b"caf\xc3\xa9", b"sp ace", b"cr\rx", b"-dash", b"sub/inner", b"sub/deeper/x"]


@pytest.fixture(scope="module")
def tree(tmp_path_factory):
    root = tmp_path_factory.mktemp("lists")
    for i, name in enumerate(NAMES):
        path = os.path.join(os.fsencode(root), b"t", name)
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(path, "wb") as f:
            f.write(name * (i * 700))       # empty up to streamed (over 64 KiB)
    return root


def _find(tree, *rules):
    return subprocess.run(["find", "t", *rules, "-type", "f", "-print0"], cwd=tree,
                          capture_output=True, check=True).stdout


def test_files0_from_stdin_as_xargs_sha256sum(tree):
    need("sha256sum")
    listing = _find(tree)
    assert listing.count(b"\0") == len(NAMES)
    want = subprocess.run(["xargs", "-0", "sha256sum"], input=listing, cwd=tree,
                          capture_output=True, env=ENV)
    got = jd("--files0-from", "-", cwd=tree, input=listing)
    assert (got.stdout, got.stderr, got.returncode) == (want.stdout, b"", 0)
    assert got.stdout.count(b"\n\\") >= 1 or got.stdout.startswith(b"\\")   # escaped lines


def test_files0_from_a_file_and_files_from(tree):
    need("sha256sum")
    listing = _find(tree)
    (tree / "list0").write_bytes(listing)
    want = subprocess.run(["xargs", "-0", "sha256sum"], input=listing, cwd=tree,
                          capture_output=True, env=ENV).stdout
    assert jd("--files0-from", "list0", cwd=tree).stdout == want
    # one name a line: the names without a newline
    lines = [n for n in listing.split(b"\0") if n and b"\n" not in n]
    (tree / "list").write_bytes(b"".join(n + b"\n" for n in lines))
    want = subprocess.run(["xargs", "-0", "sha256sum"], input=b"\0".join(lines), cwd=tree,
                          capture_output=True, env=ENV).stdout
    got = jd("--files-from", "list", "-j", "2", cwd=tree)
    assert (got.stdout, got.returncode) == (want, 0)


def _wc_message(args, cwd, stdin=None, **kwargs):
    """wc's stderr for the same list, as jitdigest would word it, and its status."""
    proc = subprocess.run(["wc", *args], cwd=cwd, capture_output=True, env=ENV, input=stdin,
                          **kwargs)
    return as_ours(proc.stderr, "wc"), proc.returncode


@pytest.mark.parametrize("case", ["empty name", "dash on stdin", "missing list",
                                  "list is a directory", "operand too", "missing file"])
def test_list_errors_worded_as_wc(tree, case):
    if not have("wc"):
        pytest.skip("wc (GNU coreutils) not installed")
    stdin = None
    if case == "empty name":
        (tree / "bad0").write_bytes(b"t/plain\0\0t/sp ace\0")
        args = ["--files0-from=bad0"]
    elif case == "dash on stdin":
        stdin = b"t/plain\0-\0"
        args = ["--files0-from=-"]
    elif case == "missing list":
        args = ["--files0-from=no such list"]
    elif case == "list is a directory":
        args = ["--files0-from=t"]
    elif case == "operand too":
        (tree / "ok0").write_bytes(b"t/plain\0")
        args = ["--files0-from=ok0", "t/plain"]
    else:
        (tree / "gone0").write_bytes(b"t/plain\0t/nothing here\0")
        args = ["--files0-from=gone0"]
    want_err, want_status = _wc_message(args, tree, stdin)
    got = jd(*args, cwd=tree, input=stdin)
    ours = got.stderr.replace(b"jitdigest sum --help", b"wc --help")
    assert (ours, got.returncode) == (want_err, want_status)
    if case == "empty name":        # the names around the empty one are hashed
        assert got.stdout.count(b"\n") == 2
