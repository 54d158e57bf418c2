"""``jitdigest sum -a sha256,md5,sha1``: several digests from one read of each file. Expected
lines are built with hashlib (names escaped here as coreutils escapes them), for plain, --tag,
-z and --json output, with -j 3; each file is opened once (os.open counted); --cache with a
row per algorithm; the usage errors."""
import hashlib
import json
import os
import subprocess
import sys

import pytest

from jitdigest import cli

from cli_cases import ENV

LIST = ["sha256", "md5", "sha1"]
TAGS = {"sha256": b"SHA256", "md5": b"MD5", "sha1": b"SHA1"}
# name -> size; contents are a pattern of that size (64 KiB + 1 and 3 MiB are streamed)
SIZES = {b"empty": 0, b"one": 1, b"small-a": 55, b"small-b": 1000, b"small-c": 4096,
         b"edge": 65536, b"over": 65537, b"big": 3 * 1024 * 1024 + 5,
         b"new\nline": 17, b"back\\slash": 300, b"carriage\rreturn": 2, b"with space": 64,
         b"\xff\xfe-not-utf8": 9, b"sub/inner": 100, b"sub/deeper/x": 70000}


def _data(size):
    pattern = bytes(range(251))
    return (pattern * (size // 251 + 1))[:size]


@pytest.fixture(scope="module")
def tree(tmp_path_factory):
    """(root as bytes, {full path: content}), paths in walk order (bytes order)."""
    root = os.fsencode(tmp_path_factory.mktemp("multi"))
    files = {}
    for name, size in SIZES.items():
        path = os.path.join(root, name)
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(path, "wb") as f:
            f.write(_data(size))
        files[path] = _data(size)
    return root, dict(sorted(files.items()))


def _escaped(name):
    """(name as written in a line, whether the line starts with a backslash)."""
    out = name.replace(b"\\", b"\\\\").replace(b"\n", b"\\n").replace(b"\r", b"\\r")
    return out, out != name


def _expected(files, algos=LIST, tag=False, zero=False, **kw):
    lines = []
    for path, data in files.items():
        name, escaped = (path, False) if zero else _escaped(path)
        for algo in algos:
            hexd = hashlib.new(algo, data, **kw).hexdigest().encode()
            if tag:
                line = TAGS.get(algo, algo.encode()) + b" (" + name + b") = " + hexd
            else:
                line = hexd + b"  " + name
            lines.append((b"\\" if escaped else b"") + line + (b"\0" if zero else b"\n"))
    return lines


def _run(capsysbinary, *argv):
    status = cli.main(["sum", *[a if isinstance(a, str) else os.fsdecode(a) for a in argv]])
    out, err = capsysbinary.readouterr()
    return status, out, err


def _lines(out, end=b"\n"):
    return [line + end for line in out.split(end)[:-1]]


@pytest.fixture
def opened(monkeypatch):
    """The paths os.open opened (the hasher's only way into a file)."""
    paths = []
    real = os.open

    def counting(path, *args, **kwargs):
        paths.append(os.fsencode(path))
        return real(path, *args, **kwargs)

    monkeypatch.setattr(os, "open", counting)
    return paths


@pytest.mark.parametrize("extra", [[], ["-j", "3"], ["--no-batch"]])
def test_lines_match_hashlib_and_each_file_is_read_once(tree, capsysbinary, opened, extra):
    root, files = tree
    status, out, err = _run(capsysbinary, "-r", "-a", ",".join(LIST), *extra, root)
    assert (status, err) == (0, b"")
    want = _expected(files)
    assert len(want) == 3 * len(SIZES) == 45
    assert _lines(out) == want
    ours = sorted(p for p in opened if p.startswith(root))
    assert ours == sorted(files) and len(ours) == len(SIZES)


def test_many_batches_keep_their_order(tree, capsysbinary, monkeypatch):
    """Batches of 2 files: with -j 1 each is hashed while the next is read; -j 3 as well."""
    from jitdigest.sum import hasher
    monkeypatch.setattr(hasher, "BATCH_FILES", 2)
    root, files = tree
    want = _expected(files, ["sha1", "sha256", "md5"])
    assert len(want) == 45
    for extra in ([], ["-j", "3"]):
        status, out, err = _run(capsysbinary, "-r", "-a", "sha1,sha256,md5", *extra, root)
        assert (status, err) == (0, b"")
        assert _lines(out) == want


def test_tag_and_zero(tree, capsysbinary):
    root, files = tree
    status, out, err = _run(capsysbinary, "-r", "--tag", "-a", "md5,sha256,sha1", root)
    assert (status, err) == (0, b"")
    want = _expected(files, ["md5", "sha256", "sha1"], tag=True)
    assert _lines(out) == want and len(want) == 45
    status, out, err = _run(capsysbinary, "-r", "-z", "-a", "sha1,md5", root)
    assert (status, err) == (0, b"")
    want = _expected(files, ["sha1", "md5"], zero=True)
    assert _lines(out, b"\0") == want and len(want) == 30


def test_json_lists_every_digest(tree, capsysbinary):
    root, files = tree
    status, out, err = _run(capsysbinary, "-r", "--json", "-j", "3", "-a", "sha256,md5,sha1",
                            root)
    assert (status, err) == (0, b"")
    objs = [json.loads(line) for line in out.splitlines()]
    assert len(objs) == len(files) == len(SIZES)
    for obj, (path, data) in zip(objs, files.items()):
        assert os.fsencode(obj["path"]) == path
        b64 = ["path_b64"] if b"\xff" in path else []
        assert list(obj) == ["path", *b64, "digests", "size"]
        assert obj["size"] == len(data)
        assert obj["digests"] == [{"algorithm": a, "bits": hashlib.new(a).digest_size * 8,
                                   "hex": hashlib.new(a, data).hexdigest()} for a in LIST]
    # one algorithm: today's object, key for key
    status, out, _ = _run(capsysbinary, "--json", os.path.join(root, b"one"))
    assert json.loads(out) == {"path": os.fsdecode(os.path.join(root, b"one")),
                               "algorithm": "sha256", "bits": 256, "size": 1,
                               "hex": hashlib.sha256(_data(1)).hexdigest()}
    assert list(json.loads(out)) == ["path", "algorithm", "bits", "hex", "size"]


def test_unreadable_file_is_one_error(tree, tmp_path, capsysbinary):
    root, files = tree
    one = os.path.join(root, b"one")
    missing = os.fsencode(tmp_path / "missing")
    status, out, err = _run(capsysbinary, "-a", "sha256,md5,sha1", one, missing, one)
    assert status == 1
    assert err.count(b"\n") == 1 and err.endswith(b"missing: No such file or directory\n")
    want = _expected({one: files[one]})
    assert _lines(out) == want + want and len(want) == 3
    status, out, err = _run(capsysbinary, "--json", "-a", "sha256,md5", missing)
    assert status == 1 and err.count(b"\n") == 1
    assert json.loads(out) == {"path": os.fsdecode(missing), "error": "No such file or directory",
                               "errno": 2, "digests": [{"algorithm": "sha256", "bits": 256},
                                                       {"algorithm": "md5", "bits": 128}]}


def test_length_applies_to_blake2_and_shake(tree, capsysbinary):
    root, files = tree
    path = os.path.join(root, b"small-b")
    data = files[path]
    status, out, err = _run(capsysbinary, "--tag", "-a", "sha256,blake2b,shake_128", "-l", "256",
                            path)
    assert (status, err) == (0, b"")
    assert _lines(out) == [
        b"SHA256 (" + path + b") = " + hashlib.sha256(data).hexdigest().encode() + b"\n",
        b"BLAKE2b-256 (" + path + b") = "
        + hashlib.blake2b(data, digest_size=32).hexdigest().encode() + b"\n",
        b"SHAKE128-256 (" + path + b") = "
        + hashlib.shake_128(data).hexdigest(32).encode() + b"\n"]


def test_standard_input_once(tree):
    data = _data(100_000)
    proc = subprocess.run([sys.executable, "-m", "jitdigest", "sum", "-a", "md5,sha256"],
                          input=data, capture_output=True, env=ENV, timeout=120)
    assert (proc.returncode, proc.stderr) == (0, b"")
    assert proc.stdout == (hashlib.md5(data).hexdigest().encode() + b"  -\n"
                           + hashlib.sha256(data).hexdigest().encode() + b"  -\n")


@pytest.mark.parametrize("argv, message", [
    (["-a", "sha256,md5,sha256"], "given twice"),
    (["-a", "sha256,SHA-256"], "given twice"),
    (["-a", "md5,sha256", "-c"], "several algorithms cannot be combined with --check"),
    (["-a", "md5,sha256", "--audit", "MANIFEST"],
     "several algorithms cannot be combined with --audit"),
    (["-a", "md5,"], "for "),
    (["-a", "md5,sha1", "-l", "128"], "--length is only supported with"),
])
def test_usage_errors(tree, capsysbinary, argv, message):
    root, _ = tree
    status, out, err = _run(capsysbinary, *argv, os.path.join(root, b"one"))
    assert status in (1, 2) and out == b""
    assert message.encode() in err and err.startswith(b"jitdigest: ")


def test_cache_keeps_a_row_per_algorithm(tree, tmp_path, capsysbinary, opened, monkeypatch):
    from jitdigest.base import config as _config
    monkeypatch.setattr(_config, "SUM_CACHE_RACY_NS", 0)    # files made before: trust them
    root, files = tree
    db = tmp_path / "sums.db"
    want = _expected(files)
    assert _run(capsysbinary, "-r", "-a", "sha256,md5,sha1", "--cache", db, root) == (
        0, b"".join(want), b"")
    assert len([p for p in opened if p.startswith(root)]) == len(files)
    from jitdigest.sum.cache import stored_files
    assert stored_files(db) == {"md5:128": len(files), "sha1:160": len(files),
                                "sha256:256": len(files)}
    # all three stored: nothing read; the same lines, also with -j 3
    opened.clear()
    for extra in ([], ["-j", "3"]):
        assert _run(capsysbinary, "-r", "-a", "sha256,md5,sha1", "--cache", db, *extra,
                    root) == (0, b"".join(want), b"")
    assert [p for p in opened if p.startswith(root)] == []
    # one more algorithm: every file read again, then its rows are there too
    want = _expected(files, ["sha1", "sha512"])
    assert _run(capsysbinary, "-r", "-a", "sha1,sha512", "--cache", db, root) == (
        0, b"".join(want), b"")
    assert len([p for p in opened if p.startswith(root)]) == len(files)
    opened.clear()
    assert _run(capsysbinary, "-r", "-a", "sha512,md5", "--cache", db, root)[0] == 0
    assert [p for p in opened if p.startswith(root)] == []
