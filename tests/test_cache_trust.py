"""A kernel cache folder that another user could write, or that another user owns, is not
used: a process pointed at it reads no stored machine code and no pickle from it, writes
nothing there, says so in one ``CacheWarning`` and hashes right (compiling in memory); the same
folder with safe owner and modes is read (the control). Digests are checked against hashlib.

The rule itself (``_cachedir.trusted``) is tested in this process on small folder trees."""
import hashlib
import json
import os
import shutil
import stat
import sys

import pytest

from jitdigest.base import cachedir as _cachedir
from test_cache import run_python, warnings_in

# The portable MD5 kernels, of all kernel sets the quickest to compile in memory; the same
# setting in every process, so that they share one stored kernel's context (``_native``).
ENV = {"JITDIGEST_DISABLE": "avx512,avx2"}

# Records every file opened, and every library loaded, under the cache folder (the audit hook
# is in place before jitdigest is imported), then hashes: the first one-shot digests go through
# the stored batch kernel (``_native``), the later ones, a stream and a batch through Numba's
# kernels (its cache). Prints hashlib's verdict, then what was opened there as JSON.
CHILD = r"""
import hashlib, json, os, sys
cache = os.path.realpath(os.environ["JITDIGEST_CACHE_DIR"])
opened = []

def hook(event, args):
    if event in ("open", "ctypes.dlopen") and args and isinstance(args[0], (str, bytes)):
        path = os.path.realpath(os.fsdecode(args[0]))
        if path == cache or path.startswith(cache + os.sep):
            opened.append(os.path.relpath(path, cache))
sys.addaudithook(hook)

import jitdigest
messages = [bytes(range(i % 256)) * (i // 7 + 1) for i in range(24)]
assert all(jitdigest.md5(m).digest() == hashlib.md5(m).digest() for m in messages)
h = jitdigest.md5()
for m in messages:
    h.update(m)
assert h.hexdigest() == hashlib.md5(b"".join(messages)).hexdigest()
rows = jitdigest.hash_many("md5", messages[:5])
assert [r.tobytes() for r in rows] == [hashlib.md5(m).digest() for m in messages[:5]]
if len(sys.argv) > 1:                       # the first process: store the batch kernel too
    from jitdigest.base import algorithms as _algorithms
    from jitdigest.runtime import native_write
    assert native_write.store(_algorithms.SPECS["md5"])
print("ok")
print(json.dumps(opened))
"""


def _run(cache, *argv):
    """(stdout's "ok" line, [paths opened under ``cache``], stderr) of CHILD."""
    proc = run_python(["-c", CHILD, *argv], env=dict(ENV, JITDIGEST_CACHE_DIR=str(cache)))
    assert proc.returncode == 0, proc.stdout + proc.stderr
    status, opened = proc.stdout.splitlines()
    return status, json.loads(opened), proc.stderr


def _files(folder):
    """{path relative to ``folder``: bytes} of every file below it."""
    return {str(p.relative_to(folder)): p.read_bytes() for p in folder.rglob("*") if p.is_file()}


@pytest.fixture(scope="module")
def populated(tmp_path_factory):
    """A cache folder filled by a process of the same user: Numba's cache files of the MD5
    kernels and the stored batch kernel (``_native``)."""
    cache = tmp_path_factory.mktemp("trust") / "cache"
    status, _, err = _run(cache, "store")
    assert status == "ok" and not warnings_in(err), err
    names = list(_files(cache))
    assert any(n.endswith(".nbi") for n in names) and any(n.endswith(".nbc") for n in names)
    assert any(n.endswith(".o") for n in names), names
    return cache


def _copy(populated, tmp_path):
    cache = tmp_path / "cache"
    shutil.copytree(populated, cache, symlinks=True)
    return cache


def test_a_safe_cache_folder_is_read(populated, tmp_path):
    """The control: the folders as jitdigest made them (this user's, 0o700) are read, the
    stored kernel and Numba's index and data files, with no warning."""
    cache = _copy(populated, tmp_path)
    assert stat.S_IMODE(os.stat(cache).st_mode) == 0o700
    status, opened, err = _run(cache)
    assert status == "ok" and not warnings_in(err), err
    assert any(p.endswith(".o") for p in opened), opened
    assert any(p.endswith(".nbi") for p in opened) and any(p.endswith(".nbc") for p in opened)


def _garbage(cache):
    """Every file below ``cache`` replaced by bytes that would fail loudly if read (a damaged
    pickle is discarded with a warning of its own); returns what is there now."""
    for path in cache.rglob("*"):
        if path.is_file():
            path.write_bytes(b"\x80garbage" * 64)
    return _files(cache)


def _check_untouched(cache, before, err, reason):
    warned = warnings_in(err)
    assert len(warned) == 1, err
    assert str(cache) in warned[0] and reason in warned[0], warned
    assert "Traceback" not in err
    assert _files(cache) == before                      # nothing read, removed or written


def test_a_world_writable_cache_folder_is_not_read(populated, tmp_path):
    cache = _copy(populated, tmp_path)
    before = _garbage(cache)
    cache.chmod(0o777)
    status, opened, err = _run(cache)
    assert status == "ok"
    assert opened == []
    _check_untouched(cache, before, err, "can be written by everyone (mode 777)")


@pytest.mark.skipif(not hasattr(os, "geteuid") or os.geteuid() != 0,
                    reason="giving a folder to another user (chown) needs root")
def test_a_cache_folder_of_another_user_is_not_read(populated, tmp_path):
    """Owned by uid 65534 ("nobody"), writable by that user alone: not this user's or root's,
    so not trusted either."""
    cache = _copy(populated, tmp_path)
    before = _garbage(cache)
    for path in [cache, *cache.rglob("*")]:
        os.chown(path, 65534, -1, follow_symlinks=False)
    cache.chmod(0o755)
    status, opened, err = _run(cache)
    assert status == "ok"
    assert opened == []
    _check_untouched(cache, before, err, "uid 65534")


# --- the rule, in this process ----------------------------------------------------------

@pytest.fixture
def tree(tmp_path, monkeypatch):
    """A fresh verdict for each folder (they are kept per process) and a cache root below
    ``tmp_path`` (this user's, 0o700, under /tmp's sticky bit)."""
    monkeypatch.setattr(_cachedir, "_TRUSTED", {})
    monkeypatch.setattr(_cachedir, "_WARNED", set())

    def use(path):
        monkeypatch.setenv(_cachedir.ENV, str(path))
        return _cachedir.directory()
    return use


@pytest.mark.skipif(not _cachedir._CHECKS, reason="no POSIX owners and modes: not checked")
def test_the_rule(tmp_path, tree, recwarn):
    ok = tmp_path / "ok"
    ok.mkdir(mode=0o700)
    assert _cachedir.trusted(tree(ok))
    # missing folders pass (nothing to read), and are looked at again once they exist
    assert _cachedir.trusted(tree(tmp_path / "later"))
    (tmp_path / "later").mkdir(mode=0o777)
    os.chmod(tmp_path / "later", 0o777)
    assert not _cachedir.trusted(tree(tmp_path / "later"))
    # a sticky world-writable folder may be above the cache root, not be it
    sticky = tmp_path / "sticky"
    sticky.mkdir()
    sticky.chmod(0o1777)
    (sticky / "mine").mkdir(mode=0o700)
    assert _cachedir.trusted(tree(sticky / "mine"))
    assert not _cachedir.trusted(tree(sticky))
    # a group-writable folder above; a link to a world-writable one
    group = tmp_path / "group"
    (group / "inner").mkdir(parents=True, mode=0o700)
    group.chmod(0o770)
    assert not _cachedir.trusted(tree(group / "inner"))
    (tmp_path / "link").symlink_to("later")
    assert not _cachedir.trusted(tree(tmp_path / "link"))
    assert len(recwarn) == 3                             # later, sticky, group: one each
    assert all(w.category is _cachedir.CacheWarning for w in recwarn)
    # folders jitdigest makes are this user's alone, however permissive the umask
    old = os.umask(0)
    try:
        _cachedir.write_whole(str(tmp_path / "made" / "a" / "b" / "f"), b"x")
    finally:
        os.umask(old)
    for folder in ("made", "made/a", "made/a/b"):
        assert stat.S_IMODE(os.stat(tmp_path / folder).st_mode) == 0o700, folder
    # and nothing is written to a folder that is not trusted
    with pytest.raises(PermissionError):
        _cachedir.write_whole(os.path.join(tree(tmp_path / "later"), "f"), b"x")
