"""The command line against coreutils, byte for byte: ``python -m jitdigest sum`` and
sha256sum/md5sum/sha1sum/sha512sum/b2sum over a tree of awkward file names (spaces, backslash,
newline, CR, bytes that are not UTF-8, empty and ~3 MB files), plain, --tag and -z; --check
with good, tampered, missing and malformed lines (stdout, stderr and exit status); errors,
JSON, -j order, stdin, -r order, symlink loops, hash_many batching, the progress line.

Each tool's tests skip when the tool is absent. Child processes run with LC_ALL=C, so that
coreutils quotes names and values the same way whatever the machine's locale."""
import hashlib
import json
import os
import pathlib
import re
import shutil
import signal
import subprocess
import sys
import time

import pytest

REPO = pathlib.Path(__file__).resolve().parent.parent
ENV = dict(os.environ, LC_ALL="C", PYTHONPATH=os.pathsep.join(
    [str(REPO), os.environ.get("PYTHONPATH", "")]))
ENV.pop("LANGUAGE", None)

TOOLS = {"md5": "md5sum", "sha1": "sha1sum", "sha256": "sha256sum", "sha512": "sha512sum",
         "blake2b": "b2sum"}


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


# --- output, byte for byte ------------------------------------------------------------------

CASES = [(algo, mode) for algo in TOOLS for mode in ("plain", "tag")]
CASES += [("sha256", "zero"), ("blake2b", "zero"), ("blake2b-256", "plain"),
          ("blake2b-256", "tag")]


@pytest.mark.parametrize("algo,mode", CASES, ids=[f"{a}-{m}" for a, m in CASES])
def test_output_matches_coreutils(tree, algo, mode):
    """Every name, plus a missing file and a directory (errors on stderr, exit 1)."""
    name, _, bits = algo.partition("-")
    tool = TOOLS[name]
    need(tool)
    flags = {"plain": [], "tag": ["--tag"], "zero": ["-z"]}[mode]
    length = ["-l", bits] if bits else []
    files = operands() + [b"no such file", b"a dir"]
    ours = jd("-a", name, *length, *flags, "--", *files, cwd=tree)
    theirs = cu(tool, *length, *flags, "--", *files, cwd=tree)
    assert_same(ours, theirs, tool)
    assert ours.returncode == 1
    assert theirs.stdout.count(b"\0" if mode == "zero" else b"\n") == len(operands())


def test_binary_marker_and_escaped_names(tree):
    need("sha256sum")
    files = [b"plain.txt", b"back\\slash", b"new\nline", b"carriage\rreturn"]
    ours, theirs = jd("-b", *files, cwd=tree), cu("sha256sum", "-b", *files, cwd=tree)
    assert_same(ours, theirs, "sha256sum")
    lines = ours.stdout.split(b"\n")
    assert lines[0].endswith(b" *plain.txt")
    assert lines[1].startswith(b"\\") and lines[1].endswith(b" *back\\\\slash")
    assert lines[2].endswith(b" *new\\nline")
    assert lines[3].endswith(b" *carriage\\rreturn")
    # -t after --tag is refused, as coreutils does; --tag after -t is fine
    ours, theirs = jd("--tag", "-t", "plain.txt", cwd=tree), cu("sha256sum", "--tag", "-t",
                                                                "plain.txt", cwd=tree)
    assert ours.returncode == theirs.returncode == 1
    assert ours.stderr.splitlines()[0] == as_ours(theirs.stderr, "sha256sum").splitlines()[0]
    assert jd("-t", "--tag", "plain.txt", cwd=tree).stdout.startswith(b"SHA256 (plain.txt) = ")


def test_other_algorithms_and_lengths(tree):
    """sha224/384, SHA-3, SHAKE and BLAKE2s against hashlib; their BSD tags."""
    data = AWKWARD[b"with space.txt"]
    lines = []
    for args, tag, digest in [
        (["-a", "sha224"], b"SHA224", hashlib.sha224(data).hexdigest()),
        (["-a", "SHA-384"], b"SHA384", hashlib.sha384(data).hexdigest()),
        (["-a", "sha512_256"], b"SHA512-256", hashlib.new("sha512_256", data).hexdigest()),
        (["-a", "sha3_256"], b"SHA3-256", hashlib.sha3_256(data).hexdigest()),
        (["-a", "sha3", "-l", "384"], b"SHA3-384", hashlib.sha3_384(data).hexdigest()),
        (["-a", "shake_128"], b"SHAKE128-256", hashlib.shake_128(data).hexdigest(32)),
        (["-a", "shake_256"], b"SHAKE256-512", hashlib.shake_256(data).hexdigest(64)),
        (["-a", "shake_256", "-l", "80"], b"SHAKE256-80", hashlib.shake_256(data).hexdigest(10)),
        (["-a", "blake2s"], b"BLAKE2s", hashlib.blake2s(data).hexdigest()),
        (["-a", "blake2s", "-l", "128"], b"BLAKE2s-128",
         hashlib.blake2s(data, digest_size=16).hexdigest()),
    ]:
        proc = jd(*args, "--tag", "with space.txt", cwd=tree)
        assert proc.returncode == 0, proc.stderr
        assert proc.stdout == tag + b" (with space.txt) = " + digest.encode() + b"\n"
        lines.append(proc.stdout)
    # the lines check, each with the algorithm its tag names (SHAKE's length from the digest)
    lines.append(b"SHAKE128 (with space.txt) = " + hashlib.shake_128(data).hexdigest(5).encode()
                 + b"\n")
    lines.append(lines[0].replace(b"SHA224", b"SHA256"))           # wrong length: malformed
    check = jd("-c", "-w", "-", cwd=tree, input=b"".join(lines))
    assert check.stdout == b"with space.txt: OK\n" * (len(lines) - 1)
    assert check.stderr == (b"jitdigest: 'standard input': %d: improperly formatted SHA256 "
                            b"checksum line\njitdigest: WARNING: 1 line is improperly "
                            b"formatted\n" % len(lines))


def test_bsd_tags_read_back_from_the_table():
    """Each algorithm's BSD tag (coreutils' spelling where coreutils has one) names it again
    when read; lengths in tags as b2sum writes them; tags that name nothing are refused."""
    from jitdigest import _algorithms
    from jitdigest.sum import algos
    expected = {"md5": b"MD5", "sha1": b"SHA1", "sha224": b"SHA224", "sha256": b"SHA256",
                "sha384": b"SHA384", "sha512": b"SHA512", "sha512_224": b"SHA512-224",
                "sha512_256": b"SHA512-256", "sha3_224": b"SHA3-224", "sha3_256": b"SHA3-256",
                "sha3_384": b"SHA3-384", "sha3_512": b"SHA3-512", "blake2b": b"BLAKE2b",
                "blake2s": b"BLAKE2s", "shake_128": b"SHAKE128-256", "shake_256": b"SHAKE256-512"}
    assert set(expected) == set(_algorithms.SPECS)
    for name, tag in expected.items():
        algo = algos.get(name)
        assert algo.tag == tag
        m = algos.TAG_RE.fullmatch(tag)
        assert m and algos.from_tag(m.group(1), m.group(2), algo.size * 2) is algo, name
    assert algos.get("blake2b", 256).tag == b"BLAKE2b-256"
    assert algos.get("blake2b", 256) is algos.from_tag(b"BLAKE2b", b"256", 64)
    assert algos.get("blake2b", 512) is algos.get("blake2b")
    assert algos.from_tag(b"SHAKE128", None, 10) is algos.get("shake_128", 40)
    for base, bits in [(b"SHA3", None), (b"SHA3", b"100"), (b"SHA512", b"384"), (b"MD5", b"128"),
                       (b"BLAKE2s", b"512"), (b"BLAKE2b", b"12"), (b"SHAKE256", b"0")]:
        assert algos.from_tag(base, bits, 64) is None, (base, bits)


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

    def listing_then_delete(path):
        entries = real(path)
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


# --- beyond coreutils -----------------------------------------------------------------------

def test_recursive_order_and_symlink_loop(tree, tmp_path):
    """-r lists files in byte order of full paths (find | LC_ALL=C sort); directory symlinks
    are not followed, so a loop ends; symlinks to files are hashed; special files skipped."""
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
    # a dangling link is an error, the run goes on
    (root / "sub" / "dangling").symlink_to("nowhere")
    proc = jd("-r", "r", cwd=tmp_path, timeout=60)
    assert proc.returncode == 1
    assert proc.stderr == b"jitdigest: r/sub/dangling: No such file or directory\n"
    assert len(proc.stdout.splitlines()) == 9


def test_jobs_keep_input_order(tree):
    """-j 4 over the tree (large and small files mixed) prints what -j 1 and sha256sum do."""
    serial = jd("-r", "--", *operands(), cwd=tree)
    parallel = jd("-r", "-j", "4", "--", *operands(), cwd=tree)
    assert parallel.stdout == serial.stdout and parallel.returncode == serial.returncode == 0
    if have("sha256sum"):
        assert serial.stdout == cu("sha256sum", "--", *operands(), cwd=tree).stdout
    auto = jd("-j", "0", "-r", "--", *operands(), cwd=tree)
    assert auto.stdout == serial.stdout


def test_stdin(tree):
    data = b"from stdin\n" * 1000
    digest = hashlib.sha256(data).hexdigest().encode()
    assert jd(cwd=tree, input=data).stdout == digest + b"  -\n"
    proc = jd("-", "plain.txt", "-", cwd=tree, input=data)
    empty = hashlib.sha256(b"").hexdigest().encode()
    plain = hashlib.sha256(b"hello\n").hexdigest().encode()
    assert proc.stdout == digest + b"  -\n" + plain + b"  plain.txt\n" + empty + b"  -\n"
    if have("sha256sum"):
        assert proc.stdout == cu("sha256sum", "-", "plain.txt", "-", cwd=tree,
                                 input=data).stdout


def test_json_lines(tree):
    files = [b"plain.txt", b"caf\xe9-latin1", b"new\nline", b"no such file", b"large.bin"]
    proc = jd("--json", "-a", "md5", "--", *files, cwd=tree)
    assert proc.returncode == 1
    assert proc.stderr == b"jitdigest: 'no such file': No such file or directory\n"
    objs = [json.loads(line) for line in proc.stdout.splitlines()]
    assert [o["algorithm"] for o in objs] == ["md5"] * 5
    assert objs[0] == {"path": "plain.txt", "algorithm": "md5", "bits": 128,
                       "hex": hashlib.md5(b"hello\n").hexdigest(), "size": 6}
    import base64
    assert base64.b64decode(objs[1]["path_b64"]) == b"caf\xe9-latin1"
    assert os.fsencode(objs[1]["path"]) == b"caf\xe9-latin1"
    assert objs[2]["path"] == "new\nline" and "path_b64" not in objs[2]
    assert objs[3]["error"] == "No such file or directory" and objs[3]["errno"] == 2
    assert "hex" not in objs[3]
    assert objs[4]["size"] == LARGE_SIZE


_FAKE_BATCH = """
import hashlib, json, sys
import numpy as np
import jitdigest
calls = []
if sys.argv[1] == "fake":
    def hash_many(name, messages, *, length=None, threads=None):
        calls.append(len(messages))
        rows = [hashlib.new(name, bytes(m)).digest(*([length] if length else [])) for m in messages]
        return np.frombuffer(b"".join(rows), np.uint8).reshape(len(rows), -1)
    jitdigest.hash_many = hash_many
from jitdigest import cli
status = cli.main(sys.argv[2:])
sys.stdout.flush()
sys.stderr.write("batches " + json.dumps(calls) + "\\n")
sys.exit(status)
"""


def test_small_files_batched_through_hash_many(tmp_path):
    """Many small files go through jitdigest.hash_many (a stand-in here, which records its
    calls; the real one too), one by one with --no-batch; the output is the same."""
    root = tmp_path / "small"
    root.mkdir()
    for i in range(300):
        (root / f"f{i:03d}").write_bytes(bytes([i % 256]) * (i * 37 % 5000))
    (root / "zbig").write_bytes(b"B" * 200_000)
    outputs = {}
    for mode, extra in [("fake", []), ("fake", ["--no-batch"]), ("real", ["--no-batch"]),
                        ("real", []), ("fake", ["-j", "3"])]:
        proc = subprocess.run([sys.executable, "-c", _FAKE_BATCH, mode, "sum", "-r", *extra,
                               "small"], cwd=tmp_path, env=ENV, capture_output=True,
                              timeout=120)
        assert proc.returncode == 0, proc.stderr
        batches = json.loads(proc.stderr.decode().rsplit("batches ", 1)[1])
        if mode == "fake" and not extra:
            assert sum(batches) == 300 and max(batches) > 100
        elif mode == "fake" and extra[0] == "-j":
            assert sum(batches) == 300
        else:
            assert batches == []
        outputs[(mode, tuple(extra))] = proc.stdout
    assert len(set(outputs.values())) == 1
    first = next(iter(outputs.values())).splitlines()
    assert len(first) == 301 and first[-1].endswith(b"small/zbig")
    assert first[0] == hashlib.sha256(b"").hexdigest().encode() + b"  small/f000"
    # the same with SHAKE (hash_many's length=)
    for algo in ("shake_128",):
        runs = [subprocess.run([sys.executable, "-c", _FAKE_BATCH, mode, "sum", "-a", algo, "-r",
                                *extra, "small"], cwd=tmp_path, env=ENV, capture_output=True,
                               timeout=120) for mode, extra in (("fake", []),
                                                                ("real", ["--no-batch"]))]
        assert runs[0].stdout == runs[1].stdout and runs[0].returncode == 0
        assert "batches []" not in runs[0].stderr.decode()
        assert runs[0].stdout.splitlines()[0] == (hashlib.shake_128(b"").hexdigest(32).encode()
                                                  + b"  small/f000")


def test_progress_line_on_a_terminal(tmp_path):
    """stderr on a terminal and a run past a second: a \\r progress line, cleared at the end;
    --no-progress: none. (Standard input held open keeps the run going.)"""
    pty = pytest.importorskip("pty")
    import select
    for extra, expect in (([], True), (["--no-progress"], False)):
        master, slave = pty.openpty()
        proc = subprocess.Popen([sys.executable, "-m", "jitdigest", "sum", *extra],
                                stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=slave,
                                env=ENV)
        os.close(slave)
        proc.stdin.write(b"x" * 100_000)
        proc.stdin.flush()
        seen = b""
        if expect:
            deadline = time.monotonic() + 60
            while b"B/s" not in seen and time.monotonic() < deadline:
                if select.select([master], [], [], 0.2)[0]:
                    seen += os.read(master, 4096)
        else:
            time.sleep(1.5)
        proc.stdin.write(b"y" * 100_000)
        proc.stdin.close()
        out = proc.stdout.read()
        proc.wait(timeout=60)
        while True:
            try:
                chunk = os.read(master, 4096)
            except OSError:
                break
            if not chunk:
                break
            seen += chunk
        os.close(master)
        assert out == hashlib.sha256(b"x" * 100_000 + b"y" * 100_000).hexdigest().encode() \
            + b"  -\n"
        assert (b"\r" in seen and b"B/s" in seen) == expect, seen
        if expect:
            assert seen.endswith(b"\r\x1b[K")


def test_progress_line_format():
    from jitdigest.sum.progress import Progress
    import io
    stream = io.StringIO()
    progress = Progress(stream, total=4 << 20, delay=100)
    progress.add(1 << 20)
    progress.files = 3
    line = progress.line(100)
    progress.close()
    assert line.startswith(" 25% [") and "1.0 MiB" in line and "3 files" in line
    assert len(line) < 100 and stream.getvalue() == ""


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


def test_info_into_a_closed_pipe_is_quiet():
    """``jitdigest info | head -1``: the reader is gone before the output is written; the
    command stops with status 1 and no traceback (as coreutils stop)."""
    proc = subprocess.Popen([sys.executable, "-m", "jitdigest", "info"], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE)
    proc.stdout.close()                        # before the child has imported anything
    err = proc.stderr.read()
    assert proc.wait(timeout=120) == 1
    assert err == b""
