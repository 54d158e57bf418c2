"""The command line's --check against coreutils: check files written by sha256sum, md5sum,
sha1sum, sha512sum and b2sum themselves, then with good, tampered, missing and malformed lines,
under every --check option (stdout, stderr and exit status); check lines from stdin.

Each tool's tests skip when the tool is absent. Child processes run with LC_ALL=C, so that
coreutils quotes names and values the same way whatever the machine's locale."""
import pathlib

import pytest

from cli_cases import assert_same, cu, jd, need, operands
from cli_cases import tree  # noqa: F401 - a fixture; pytest finds it in this module


# --- --check -------------------------------------------------------------------------------

def _check_lists(tree, tool, tool_args=()):
    """Check files made by the coreutils tool itself, then damaged."""
    root = pathlib.Path(tree)
    names = [n for n in operands() if n != b"large.bin"]
    good = cu(tool, *tool_args, "--", *names, cwd=tree).stdout
    tagged = cu(tool, *tool_args, "--tag", "--", *names[:4], cwd=tree).stdout
    lines = good.splitlines(keepends=True)
    hexlen = len(lines[0].split()[0].lstrip(b"\\"))
    tampered = list(lines)
    first = tampered[0]
    flip = b"0" if first[hexlen - 1:hexlen] != b"0" else b"1"
    tampered[0] = first[:hexlen - 1] + flip + first[hexlen:]
    mixed = tampered + [
        b"0" * hexlen + b"  missing file\n",
        b"0" * hexlen + b"  a dir\n",
        b"this line is not a checksum\n",
        b"# a comment\n",
        b"\n",
        lines[1].rstrip(b"\n") + b"\r\n",
        b"0" * (hexlen - 2) + b"  short.txt\n",
        b"\\" + b"0" * hexlen + b"  bad\\escape\n",
    ] + tagged.splitlines(keepends=True)
    (root / f"good.{tool}").write_bytes(good)
    (root / f"mixed.{tool}").write_bytes(b"".join(mixed))
    (root / f"missing.{tool}").write_bytes(b"0" * hexlen + b"  missing file\n" + lines[1])
    (root / f"malformed.{tool}").write_bytes(b"garbage\nmore garbage\n")
    return [f"good.{tool}", f"mixed.{tool}", f"missing.{tool}", f"malformed.{tool}"]


CHECK_OPTIONS = [[], ["--quiet"], ["--status"], ["-w"], ["--strict"], ["--ignore-missing"],
                 ["-w", "--strict", "--quiet"]]


@pytest.mark.parametrize("options", CHECK_OPTIONS, ids=lambda o: " ".join(o) or "default")
def test_check_matches_sha256sum(tree, options):
    need("sha256sum")
    lists = _check_lists(tree, "sha256sum")
    for listed in lists if not options else ():
        ours = jd("-c", *options, listed, cwd=tree)
        theirs = cu("sha256sum", "-c", *options, listed, cwd=tree)
        assert_same(ours, theirs, "sha256sum")
    # all at once, with a check file that does not exist
    ours = jd("-c", *options, *lists, "no-such-list", cwd=tree)
    theirs = cu("sha256sum", "-c", *options, *lists, "no-such-list", cwd=tree)
    assert_same(ours, theirs, "sha256sum")


@pytest.mark.parametrize("algo,tool,args", [("md5", "md5sum", []), ("sha1", "sha1sum", []),
                                            ("sha512", "sha512sum", []),
                                            ("blake2b", "b2sum", []),
                                            ("blake2b", "b2sum", ["-l", "256"])],
                         ids=["md5", "sha1", "sha512", "blake2b", "blake2b-256"])
def test_check_matches_other_tools(tree, algo, tool, args):
    need(tool)
    lists = _check_lists(tree, tool, args)
    ours = jd("-a", algo, "-c", "-w", *lists, cwd=tree)
    theirs = cu(tool, "-c", "-w", *lists, cwd=tree)
    assert_same(ours, theirs, tool)


def test_check_from_stdin_and_dash_lines(tree):
    need("sha256sum")
    good = cu("sha256sum", "plain.txt", cwd=tree).stdout
    for data in (good, good + b"garbage\n", b"0" * 64 + b"  -\n"):
        ours = jd("-c", "-w", cwd=tree, input=data)
        theirs = cu("sha256sum", "-c", "-w", cwd=tree, input=data)
        assert_same(ours, theirs, "sha256sum")
