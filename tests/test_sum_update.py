"""``jitdigest sum --update MANIFEST`` (rhash -u) and ``--match``/``--no-match KNOWN``
(hashdeep -m/-x). A manifest of 1,000 files, after 10 added, 10 deleted and 10 changed, comes
out as sha256sum over the tree would write it, with only the 20 new or changed files read
(opens counted in the child); a run killed midway leaves the old manifest as it was; --tag,
--json and b3sum manifests keep their format. --match/--no-match against the manifest of
another tree select the files whose content is (or is not) in it."""
import hashlib
import json
import os
import signal
import subprocess
import sys
import time

import pytest

from cli_cases import ENV, have, jd, need

from jitdigest.base import config as _config

# Runs the command with os.open counted for paths under t/ (or $UNDER); with KILL_AT=N set, the process
# kills itself (SIGKILL: no cleanup of any kind) at the N-th such open.
COUNTING = """\
import os, signal, sys
import jitdigest.cli as cli
real = os.open
opened = []
kill_at = int(os.environ.get("KILL_AT", "0"))
prefix = os.environ.get("UNDER", "t/").encode()
def counted(path, *args, **kwargs):
    if os.fsencode(path).startswith(prefix):
        opened.append(path)
        if len(opened) == kill_at:
            os.kill(os.getpid(), signal.SIGKILL)
    return real(path, *args, **kwargs)
os.open = counted
status = cli.main(sys.argv[1:])
sys.stdout.flush()
sys.stderr.write("opened %d\\n" % len(opened))
sys.exit(status)
"""


def counted(args, cwd, **env):
    proc = subprocess.run([sys.executable, "-c", COUNTING, "sum", *args], cwd=cwd,
                          capture_output=True, env=dict(ENV, **env), timeout=120)
    *messages, last = proc.stderr.rstrip(b"\n").split(b"\n") or [b""]
    opened = int(last.split()[1]) if last.startswith(b"opened ") else None
    return proc, messages, opened


def sha256sum_tree(cwd, *extra):
    listing = subprocess.run("find t -type f | LC_ALL=C sort", shell=True, cwd=cwd,
                             capture_output=True, check=True).stdout.split(b"\n")
    return subprocess.run(["sha256sum", *extra, "--", *filter(None, listing)], cwd=cwd,
                          capture_output=True, env=ENV, check=True).stdout


@pytest.fixture(scope="module")
def updated(tmp_path_factory):
    """A tree of 1,000 files and its manifests (plain, --tag, --json), made more than the
    racy window after the files; then 10 files added, 10 deleted, 10 changed."""
    root = tmp_path_factory.mktemp("update")
    for i in range(1000):
        d = root / "t" / f"d{i % 10}"
        d.mkdir(parents=True, exist_ok=True)
        (d / f"f{i:04d}").write_bytes(b"%d\n" % i * (1 + i % 7))
    (root / "c").mkdir()
    for i in range(5):
        (root / "c" / f"f{i}").write_bytes(b"%d" % i)
    time.sleep(_config.SUM_CACHE_RACY_NS / 1e9 + 0.2)   # older than the window: trusted
    for name, extra in (("plain", []), ("tag", ["--tag"]), ("json", ["--json"])):
        with open(root / name, "wb") as f:
            subprocess.run([sys.executable, "-m", "jitdigest", "sum", "-r", *extra, "t"],
                           cwd=root, stdout=f, env=ENV, check=True)
        (root / ("known-" + name)).write_bytes((root / name).read_bytes())
    if have("b3sum"):
        with open(root / "b3", "wb") as f:
            subprocess.run([sys.executable, "-m", "jitdigest", "sum", "-a", "blake3", "-r",
                            "t"], cwd=root, stdout=f, env=ENV, check=True)
    for i in range(10):
        (root / "t" / f"d{i}" / f"f{30 + i:04d}").unlink()
        (root / "t" / f"d{i}" / f"f{50 + i:04d}").write_bytes(b"changed %d\n" % i)
        (root / "t" / f"d{i}" / f"new{i}").write_bytes(b"new %d\n" % i)
    return root


def test_update_reads_only_new_and_changed_files(updated):
    need("sha256sum")
    before = (updated / "plain").read_bytes()
    # killed at its 5th read: the old manifest as it was
    proc, _, _ = counted(["-r", "--update", "plain", "t"], updated, KILL_AT="5")
    assert proc.returncode == -signal.SIGKILL
    assert (updated / "plain").read_bytes() == before
    for leftover in updated.glob(".plain.*.tmp"):
        leftover.unlink()                   # what SIGKILL leaves: a temporary file, not ours
    proc, messages, opened = counted(["-r", "--update", "plain", "t"], updated)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout == b""
    assert messages == [b"jitdigest: plain: 10 added, 10 removed, 10 changed, 980 unchanged"]
    assert opened == 20
    assert (updated / "plain").read_bytes() == sha256sum_tree(updated)
    # up to date now; the 20 written within the racy window before that update began are
    # read again (they could have changed unseen in the same tick), no other
    proc, messages, opened = counted(["-r", "--update", "plain", "t"], updated)
    assert (proc.returncode, opened) == (0, 20)
    assert messages == [b"jitdigest: plain: 0 added, 0 removed, 0 changed, 1000 unchanged"]


def test_update_keeps_the_manifest_format(updated):
    need("sha256sum")
    for name in ("tag", "json"):
        proc, messages, opened = counted(["-r", "--update", name, "t"], updated)
        assert (proc.returncode, opened) == (0, 20), proc.stderr
    assert (updated / "tag").read_bytes() == sha256sum_tree(updated, "--tag")
    want = []
    for line in sha256sum_tree(updated).splitlines():
        hexd, name = line.split(b"  ", 1)
        want.append({"path": name.decode(), "algorithm": "sha256", "bits": 256,
                     "hex": hexd.decode(), "size": os.path.getsize(updated / name.decode())})
    assert [json.loads(line) for line in (updated / "json").read_bytes().splitlines()] == want
    if have("b3sum"):
        proc, messages, opened = counted(["-a", "blake3", "-r", "--update", "b3", "t"],
                                         updated)
        assert (proc.returncode, opened) == (0, 20), proc.stderr
        listing = subprocess.run("find t -type f | LC_ALL=C sort", shell=True, cwd=updated,
                                 capture_output=True).stdout.split(b"\n")
        want = subprocess.run(["b3sum", "--", *filter(None, listing)], cwd=updated,
                              capture_output=True).stdout
        assert (updated / "b3").read_bytes() == want


def test_update_with_cache_reads_what_the_database_lacks(updated):
    """With --cache the database decides; a missing manifest is made."""
    need("sha256sum")
    proc, _, opened = counted(["-r", "--cache", "db", "--update", "m", "c"], updated,
                              UNDER="c/")
    assert (proc.returncode, opened) == (0, 5), proc.stderr
    (updated / "c" / "f9").write_bytes(b"9")
    proc, messages, opened = counted(["-r", "--cache", "db", "--update", "m", "c"], updated,
                                     UNDER="c/")
    assert (proc.returncode, opened) == (0, 1)
    assert messages == [b"jitdigest: m: 1 added, 0 removed, 0 changed, 5 unchanged"]
    want = subprocess.run(["sha256sum"] + [f"c/f{i}" for i in (0, 1, 2, 3, 4, 9)],
                          cwd=updated, capture_output=True, env=ENV).stdout
    assert (updated / "m").read_bytes() == want


@pytest.mark.parametrize("form", ["plain", "tag", "json"])
def test_match_and_no_match_against_another_trees_manifest(updated, tmp_path, form):
    """Files of another tree whose content is in the manifest (hashdeep -m), or is not (-x);
    names play no part."""
    need("sha256sum")
    known = {hashlib.sha256(b"%d\n" % i * (1 + i % 7)).digest() for i in range(1000)}
    contents = {"same-as-7": b"7\n" * 8, "changed-2": b"changed 2\n", "other": b"other\n",
                "sub/same-as-42": b"42\n" * 1, "sub/deleted-13": b"13\n" * 7}
    for name, data in contents.items():
        (tmp_path / "o" / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / "o" / name).write_bytes(data)
    names = sorted(contents)
    inside = [n for n in names if hashlib.sha256(contents[n]).digest() in known]
    assert inside and len(inside) < len(names)
    manifest = os.path.join(updated, "known-" + form)
    want = {n: hashlib.sha256(contents[n]).hexdigest() for n in names}
    for option, chosen in (("--match", inside), ("--no-match",
                                                 [n for n in names if n not in inside])):
        got = jd("-r", option, manifest, "o", cwd=tmp_path)
        assert got.returncode == 0, got.stderr
        assert got.stdout == b"".join(f"{want[n]}  o/{n}\n".encode() for n in sorted(
            chosen, key=lambda n: ("o/" + n).encode())), option


def test_update_and_match_need_operands(updated):
    for option in ("--update", "--match"):
        got = jd(option, "plain", cwd=updated)
        assert got.returncode == 1
        assert got.stderr.startswith(f"jitdigest: {option} needs FILE or DIR operands".encode())


def test_update_leaves_the_manifest_itself_out(tmp_path):
    """A manifest inside the tree it lists: neither it nor its new copy is listed."""
    need("sha256sum")
    for name in ("a", "b"):
        (tmp_path / name).write_bytes(name.encode())
    got = jd("-r", "--update", "SUMS", ".", cwd=tmp_path)
    assert got.returncode == 0, got.stderr
    want = subprocess.run(["sha256sum", "./a", "./b"], cwd=tmp_path, capture_output=True,
                          env=ENV).stdout
    assert (tmp_path / "SUMS").read_bytes() == want
    assert sorted(p.name for p in tmp_path.iterdir()) == ["SUMS", "a", "b"]
