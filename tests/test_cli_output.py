"""The command line's hashing and output against coreutils, byte for byte: ``python -m jitdigest
sum`` and sha256sum/md5sum/sha1sum/sha512sum/b2sum over a tree of awkward file names (spaces,
backslash, newline, CR, bytes that are not UTF-8, empty and ~3 MB files), plain, --tag, -b and
-z; other algorithms and lengths with their BSD tags; stdin, JSON lines, hash_many batching and
the progress line.

Each tool's tests skip when the tool is absent. Child processes run with LC_ALL=C, so that
coreutils quotes names and values the same way whatever the machine's locale."""
import hashlib
import json
import os
import subprocess
import sys
import time

import pytest

from cli_cases import (AWKWARD, ENV, LARGE_SIZE, TOOLS, as_ours, assert_same, cu, have, jd,
                       need, operands)
from cli_cases import tree  # noqa: F401 - a fixture; pytest finds it in this module


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
    # with -a auto the lines check, each with the algorithm its tag names (SHAKE's length from
    # the digest); without it, -c takes only lines of the -a algorithm (tests/test_sum_fidelity)
    lines.append(b"SHAKE128 (with space.txt) = " + hashlib.shake_128(data).hexdigest(5).encode()
                 + b"\n")
    lines.append(lines[0].replace(b"SHA224", b"SHA256"))           # wrong length: malformed
    check = jd("-a", "auto", "-c", "-w", "-", cwd=tree, input=b"".join(lines))
    assert check.stdout == b"with space.txt: OK\n" * (len(lines) - 1)
    assert check.stderr == (b"jitdigest: 'standard input': %d: improperly formatted "
                            b"checksum line\njitdigest: WARNING: 1 line is improperly "
                            b"formatted\n" % len(lines))


def test_bsd_tags_read_back_from_the_table():
    """Each algorithm's BSD tag (coreutils' spelling where coreutils has one) names it again
    when read; lengths in tags as b2sum writes them; tags that name nothing are refused."""
    from jitdigest.base import algorithms as _algorithms
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


# --- stdin, JSON, batching, progress --------------------------------------------------------

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
    # the kernels stored as machine code (tests/test_native.py): neither used nor stored
    from jitdigest.runtime import native as _native, native_write, stream
    _native.rows = lambda name: None
    native_write.store = stream.store = lambda spec: False
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
