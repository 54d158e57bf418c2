"""``jitdigest sum -a blake3``: digests against the ``blake3`` package, and, where b3sum 1.2 is
installed, stdout, stderr (program name aside) and exit status byte for byte against b3sum on
the same files: plain, -l, --no-names, --raw, --keyed, --derive-key, standard input, names
needing escapes, an empty file, one over 1 MiB, missing files, a directory, --check on good,
bad and malformed lines. Also what jitdigest adds (-r, -j, --json, --cache, --audit, lists).
Every jitdigest run of the file is made in one child process (tests/sum_child.py)."""
import hashlib
import json
import os
import pathlib
import re
import shutil
import subprocess
import sys

import pytest
from blake3 import blake3

from cli_cases import ENV

HERE = pathlib.Path(__file__).resolve().parent
B3SUM = shutil.which("b3sum")


def _b3sum_version():
    if B3SUM is None:
        return None
    proc = subprocess.run([B3SUM, "--version"], capture_output=True)
    return proc.stdout.decode(errors="replace").strip() if proc.returncode == 0 else None


HAVE_B3SUM = (_b3sum_version() or "").startswith("b3sum 1.2")

BIG = 1024 * 1024 + 13
FILES = {
    b"a": b"abc",
    b"empty": b"",
    b"back\\slash": b"x",
    b"new\nline": b"y" * 70,
    b"cr\rr": b"z" * 5,
    b"both\\and\nnl": b"b" * 7,
    b"sp ace": b"hi\n",
    b"bad\xffname": b"q",
    b"caf\xc3\xa9": b"e" * 1025,
    b"edge": b"s" * 65537,
    b"big": None,
    b"dir/inner": b"inner",
}
NAMES = [n for n in FILES if b"/" not in n]
KEY = bytes(range(1, 33))
CONTEXT = "jitdigest 2026-12-04 test context \u00e9"
STDIN = b"standard input\n" * 100


def _content(name):
    data = FILES[name]
    if data is None:
        data = (bytes(range(256)) * (BIG // 256 + 1))[:BIG]
    return data


def _lossy(name):
    return name.decode("utf-8", "replace").encode()


def _line(name, data, length=32, **mode):
    """b3sum's line for ``name``: the digest by the package, the name escaped as b3sum 1.2."""
    hexd = blake3(data, **mode).hexdigest(length).encode()
    shown = _lossy(name)
    if b"\\" in shown or b"\n" in shown:
        return b"\\" + hexd + b"  " + shown.replace(b"\\", b"\\\\").replace(b"\n", b"\\n") + b"\n"
    return hexd + b"  " + shown + b"\n"


def _good_checkfile():
    """b3sum's own lines for the files whose names survive UTF-8 (checkable by b3sum)."""
    return b"".join(_line(n, _content(n)) for n in NAMES if _lossy(n) == n)


def _mixed_checkfile():
    """Good lines, a wrong digest, missing and unreadable files, and malformed lines."""
    good = blake3(b"abc").hexdigest().encode()
    wrong = blake3(b"abd").hexdigest().encode()
    return b"".join([
        _line(b"a", b"abc"), b"\n", b"garbage\n", good.upper() + b"  a\n", good + b" *a\n",
        good + b"  missing\n", good + b"  dir\n", wrong + b"  a\n", b"\\" + good + b"  a\\x\n",
        good + b"  \n", good + b"  -\n", good + b"  a\r\n", b"# comment\n", good[:8] + b"  a\n",
        _line(b"sp ace", b"hi\n"), b"\\" + good + b"  a\\\n",
        good + b"  " + "\ufffd".encode() + b"\n", good + b"  nul\0byte\n", good + b"  a"])


# (id, argv after "sum -a blake3" / "b3sum", standard input, compare with b3sum)
def _cases(files):
    keyed = ["--keyed", "a", "big", "back\\slash"]
    cases = [
        ("plain", [*files, "missing", "dir"], b"", True),
        ("stdin", ["a", "-", "empty"], STDIN, True),
        ("no-operands", [], STDIN, True),
        ("length8", ["-l", "8", *files], b"", True),
        ("length0", ["-l", "0", "a", "empty"], b"", True),
        ("length100", ["-l", "100", "a", "big"], b"", True),
        ("length-plus", ["-l", "+5", "a"], b"", True),
        ("length-bad", ["-l", "x", "missing", "a"], b"", True),
        ("length-huge", ["-l", "18446744073709551616", "a"], b"", True),
        ("no-names", ["--no-names", *files], b"", True),
        ("raw", ["--raw", "big"], b"", True),
        ("raw-stdin", ["--raw", "-l", "100"], STDIN, True),
        ("raw-two", ["--raw", "a", "big"], b"", True),
        ("keyed", keyed, KEY, True),
        ("keyed-stdin", ["--keyed", "a", "-"], KEY, True),
        ("keyed-short", keyed, KEY[:31], True),
        ("keyed-long", keyed, KEY + b"!", True),
        ("derive", ["--derive-key", CONTEXT, "a", "big", "new\nline"], b"", True),
        ("derive-empty", ["--derive-key", "", "a"], b"", True),
        # one thread: the threaded kernels' compile belongs to test_blake3 (minutes cold)
        ("threads", ["--num-threads", "1", "--no-mmap", "big", "edge", "a"], b"", True),
        ("threads-all", ["--num-threads", "+0", "a"], b"", True),
        ("check-good", ["-c", "good.b3"], b"", True),
        ("check-mixed", ["-c", "mixed.b3"], b"", True),
        ("check-quiet", ["-c", "--quiet", "mixed.b3", "good.b3"], b"", True),
        ("check-stdin", ["-c"], _good_checkfile(), True),
        ("check-empty", ["-c", "empty"], b"", True),
        ("check-missing", ["-c", "good.b3", "missing", "good.b3"], b"", True),
        ("check-dir", ["-c", "dir"], b"", True),
        ("check-not-utf8", ["-c", "notutf8.b3"], b"", True),
        ("check-ours", ["-c", "ours.b3"], b"", True),
    ]
    for i, argv in enumerate([["--keyed", "--derive-key", "x", "a"], ["-c", "-l", "3", "x"],
                              ["-c", "--no-names", "x"], ["-c", "--raw", "x"],
                              ["-c", "--keyed", "x"], ["-c", "--derive-key", "x", "x"],
                              ["--quiet", "a"], ["--keyed"], ["-l"], ["--derive-key"]]):
        cases.append((f"usage{i}", argv, KEY, True))
    return cases


def _extras(files, db):
    """What jitdigest adds: (id, full argv after "sum", stdin); ``db``: the --cache file."""
    return [
        ("recursive", ["-a", "blake3", "-r", "."], b""),
        ("jobs", ["-a", "blake3", "-r", "-j", "3", "."], b""),
        ("json", ["-a", "blake3", "--json", "a", "big", "missing"], b""),
        ("list", ["-a", "blake3,sha256", "a", "back\\slash", "cr\rr"], b""),
        ("list-keyed", ["-a", "sha256,blake3", "--keyed", "a", "big"], KEY),
        ("list-length", ["-a", "blake3,blake2b", "-l", "256", "a"], b""),
        ("cache1", ["-a", "blake3", "--cache", db, "-r", "."], b""),
        ("cache2", ["-a", "blake3", "--cache", db, "-r", "."], b""),
        ("cache-derive", ["-a", "blake3", "--derive-key", CONTEXT, "--cache", db, "a"], b""),
        ("cache-keyed", ["-a", "blake3", "--keyed", "--cache", db, "a"], KEY),
        ("audit", ["-a", "blake3", "--audit", "audit.b3", "-r", "."], b""),
        ("not-blake3", ["-a", "sha256", "--no-names", "a"], b""),
        ("tag", ["-a", "blake3", "--tag", "a"], b""),
        ("check-jobs", ["-a", "blake3", "-c", "-j", "2", "mixed.b3", "good.b3"], b""),
        ("check-status", ["-a", "blake3", "-c", "--status", "good.b3"], b""),
        ("json-bad-length", ["-a", "blake3", "--json", "-l", "x", "a"], b""),
        ("threads-bad", ["-a", "blake3", "--num-threads", "x", "a"], b""),
    ]


def _arg(a):
    if isinstance(a, bytes):
        try:
            return a.decode()
        except UnicodeDecodeError:
            return {"hex": a.hex()}
    return a


def _b3sum(argv, stdin, cwd):
    proc = subprocess.run([B3SUM, *[os.fsencode(a) for a in argv]], input=stdin, cwd=cwd,
                          capture_output=True)
    err = re.sub(rb"(?m)^(b3sum|Error): ", b"jitdigest: ", proc.stderr)
    return proc.returncode, proc.stdout, err


@pytest.fixture(scope="module")
def runs(tmp_path_factory):
    root = tmp_path_factory.mktemp("b3sum")
    os.mkdir(root / "dir")
    for name in FILES:
        with open(os.path.join(os.fsencode(root), name), "wb") as f:
            f.write(_content(name))
    files = [os.fsdecode(n) for n in NAMES]
    (root / "good.b3").write_bytes(_good_checkfile())
    (root / "mixed.b3").write_bytes(_mixed_checkfile())
    (root / "notutf8.b3").write_bytes(_line(b"a", b"abc") + b"\xff\n" + _line(b"a", b"abc"))
    (root / "ours.b3").write_bytes(b"")         # filled with jitdigest's lines below
    audit = [_line(b"./a", b"abc"), _line(b"./sp ace", b"hi\n"),
             _line(b"./gone", b"nothing here"), _line(b"./empty", b"changed")]
    (root / "audit.b3").write_bytes(b"".join(audit))
    scratch = tmp_path_factory.mktemp("b3sum-runs")
    db = str(scratch / "c.db")
    cases = _cases(files)
    extras = _extras(files, db)
    # ours.b3 is checked by the run after the one that writes it: two child runs
    first = [{"argv": ["-a", "blake3", *map(_arg, argv)], "stdin": stdin.hex(), "cwd": str(root)}
             for _, argv, stdin, _ in cases]
    first += [{"argv": list(map(_arg, argv)), "stdin": stdin.hex(), "cwd": str(root)}
              for _, argv, stdin in extras]
    ours = _child(first[:1], scratch)[0]
    (root / "ours.b3").write_bytes(bytes.fromhex(ours["stdout"]))
    results = _child(first, scratch)
    jd = {}
    for (name, *_), r in zip(cases + extras, results):
        jd[name] = (r["status"], bytes.fromhex(r["stdout"]), bytes.fromhex(r["stderr"]))
    theirs = {}
    if HAVE_B3SUM:
        for name, argv, stdin, compare in cases:
            if compare:
                theirs[name] = _b3sum(argv, stdin, root)
    return {"root": root, "cases": cases, "jd": jd, "b3sum": theirs, "db": db}


def _child(cases, scratch):
    spec, out = scratch / "cases.json", scratch / "results.json"
    spec.write_text(json.dumps(cases))
    proc = subprocess.run([sys.executable, str(HERE / "sum_child.py"), str(spec), str(out)],
                          env=ENV, capture_output=True, timeout=600)
    assert proc.returncode == 0, proc.stderr.decode(errors="replace")
    return json.loads(out.read_text())


def test_digests_against_package(runs):
    jd = runs["jd"]
    checked = 0
    want = b"".join(_line(n, _content(n)) for n in NAMES)
    assert jd["plain"][1] == want
    checked += len(NAMES)
    want = b"".join(_line(n, _content(n), 8) for n in NAMES)
    assert jd["length8"][1] == want
    checked += len(NAMES)
    assert jd["length100"][1] == _line(b"a", b"abc", 100) + _line(b"big", _content(b"big"), 100)
    assert jd["length0"][1] == b"  a\n  empty\n"
    assert jd["no-names"][1] == b"".join(blake3(_content(n)).hexdigest().encode() + b"\n"
                                         for n in NAMES)
    assert jd["raw"][1] == blake3(_content(b"big")).digest()
    assert jd["raw-stdin"][1] == blake3(STDIN).digest(100)
    assert jd["stdin"][1] == _line(b"a", b"abc") + _line(b"-", STDIN) + _line(b"empty", b"")
    assert jd["keyed"][1] == b"".join(_line(n, _content(n), key=KEY)
                                      for n in (b"a", b"big", b"back\\slash"))
    assert jd["derive"][1] == b"".join(_line(n, _content(n), derive_key_context=CONTEXT)
                                       for n in (b"a", b"big", b"new\nline"))
    assert jd["threads"][1] == b"".join(_line(n, _content(n)) for n in (b"big", b"edge", b"a"))
    checked += 14 + 3
    assert jd["keyed-stdin"] == (1, _line(b"a", b"abc", key=KEY),
                                 b"jitdigest: -: Cannot open `-` in keyed mode\n")
    assert jd["keyed-short"] == (1, b"", b"jitdigest: expected 32 key bytes from stdin, "
                                         b"found 31\n")
    assert jd["check-good"][0] == 0 and jd["check-ours"][0] == 1    # the U+FFFD name
    assert jd["check-ours"][1].count(b": OK\n") == len(NAMES) - 1   # not the non-UTF-8 one
    assert checked == 2 * len(NAMES) + 17


def test_same_as_b3sum(runs):
    if not HAVE_B3SUM:
        pytest.skip("b3sum 1.2 not installed")
    compared = 0
    for name, argv, stdin, compare in runs["cases"]:
        if not compare:
            continue
        status, out, err = runs["jd"][name]
        b_status, b_out, b_err = runs["b3sum"][name]
        assert (status, out) == (b_status, b_out), name
        if name.startswith("usage"):
            assert status == 1 and err, name        # the message text is jitdigest's own
        else:
            assert err == b_err, name
        compared += 1
    assert compared == len(runs["cases"]) >= 40


def test_b3sum_checks_ours(runs):
    """b3sum --check accepts jitdigest's lines (and they say what b3sum's say)."""
    if not HAVE_B3SUM:
        pytest.skip("b3sum 1.2 not installed")
    root = runs["root"]
    status, out, err = _b3sum(["-c", "ours.b3"], b"", root)
    assert out.count(b": OK\n") == len(NAMES) - 1 and status == 1    # it refuses U+FFFD
    assert err == b"jitdigest: Unicode replacement character in path\n"
    assert (status, out, err) == runs["jd"]["check-ours"]


def _hexes(data, sha=False):
    return (hashlib.sha256(data) if sha else blake3(data)).hexdigest().encode()


def test_recursive_jobs_json_lists(runs):
    jd = runs["jd"]
    status, out, err = jd["recursive"]
    lines = out.split(b"\n")[:-1]
    listed = [f for _, _, fs in os.walk(os.fsencode(runs["root"])) for f in fs]
    assert len(lines) == len(listed) >= len(FILES) and status == 0 and err == b""
    names = [n for n in FILES]
    for name in names:
        assert _line(b"./" + name, _content(name)).rstrip(b"\n") in lines, name
    assert jd["jobs"] == jd["recursive"]
    objs = [json.loads(line) for line in jd["json"][1].splitlines()]
    assert [o.get("hex") for o in objs] == [_hexes(b"abc").decode(),
                                            _hexes(_content(b"big")).decode(), None]
    assert objs[0]["algorithm"] == "blake3" and objs[0]["bits"] == 256 and jd["json"][0] == 1
    want = []
    for name in (b"a", b"back\\slash", b"cr\rr"):
        esc = name.replace(b"\\", b"\\\\").replace(b"\r", b"\\r")   # coreutils' escaping
        mark = b"\\" if esc != name else b""
        want += [mark + _hexes(_content(name)) + b"  " + esc + b"\n",
                 mark + _hexes(_content(name), True) + b"  " + esc + b"\n"]
    assert jd["list"] == (0, b"".join(want), b"")
    keyed = b"".join([_hexes(b"abc", True) + b"  a\n",
                      blake3(b"abc", key=KEY).hexdigest().encode() + b"  a\n",
                      _hexes(_content(b"big"), True) + b"  big\n",
                      blake3(_content(b"big"), key=KEY).hexdigest().encode() + b"  big\n"])
    assert jd["list-keyed"] == (0, keyed, b"")
    assert jd["list-length"][0] == 1 and jd["list-length"][1] == b""
    assert jd["not-blake3"][0] == 1 and jd["tag"][0] == 1
    assert len(want) == 6
    assert jd["check-jobs"][0] == 1 and jd["check-jobs"][1:] == tuple(
        a + b for a, b in zip(jd["check-mixed"][1:], jd["check-good"][1:]))
    assert jd["check-status"][0] == 1 and jd["check-status"][1] == b""
    assert jd["threads-bad"] == (1, b"", b"jitdigest: Failed to parse num threads.\n")
    assert jd["json-bad-length"] == (1, b"", "jitdigest: invalid length: 'x'\n".encode())


def test_cache_and_audit(runs):
    jd = runs["jd"]
    for run in ("cache1", "cache2"):        # the digests computed, then read from the cache
        status, out, err = jd[run]
        assert (status, err) == (0, b""), run
        lines = out.split(b"\n")
        for name in FILES:
            assert _line(b"./" + name, _content(name)).rstrip(b"\n") in lines, (run, name)
    assert jd["cache-derive"][1] == _line(b"a", b"abc", derive_key_context=CONTEXT)
    assert jd["cache-keyed"][1] == _line(b"a", b"abc", key=KEY)
    import sqlite3
    with sqlite3.connect(runs["db"]) as db:
        algos = {row[0] for row in db.execute("SELECT algo FROM digests")}
    assert len(algos) == 3 and "blake3:256" in algos     # one row set per mode
    status, out, err = jd["audit"]
    lines = out.splitlines()
    assert b"MATCHED: ./a" in lines and b"MATCHED: ./sp ace" in lines
    assert b"CHANGED: ./empty" in lines and b"MISSING: ./gone" in lines
    assert lines[-1].startswith(b"TOTAL: 2 matched, 1 changed, ") and status == 1
