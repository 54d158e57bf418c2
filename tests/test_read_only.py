"""Read-only mounts of the package folder and of the per-user kernel cache (a locked-down
container, a pre-built image): everything still hashes right.

A file of its own, handed to the test workers last (tests/conftest.py): what the cache does not
hold compiles in memory in this test's process, so it runs after the rest have filled the cache,
as it would on a machine that ran ``jitdigest warmup`` before its folders were made read-only."""
import hashlib
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from jitdigest.base import cachedir as _cachedir
from test_cache import REPO, warnings_in


def _can_unshare():
    return shutil.which("unshare") and subprocess.run(
        ["unshare", "-rm", "true"], capture_output=True).returncode == 0


@pytest.mark.skipif(not _can_unshare(), reason="needs unprivileged mount namespaces")
def test_everything_read_only(tmp_path):
    """Package folder and the per-user cache folder on read-only mounts (the per-user one
    holding whatever kernels this machine compiled before, as a pre-built image would; the
    rest compile in memory): every algorithm, hash_many and jitdigest sum give hashlib's
    digests. (A cache folder that cannot be written at all, with nothing in it, is
    tests/test_cache.py's.)"""
    pkg = tmp_path / "site"
    shutil.copytree(REPO / "jitdigest", pkg / "jitdigest",
                    ignore=shutil.ignore_patterns("__pycache__"))
    user_cache = Path(_cachedir.root())
    user_cache.mkdir(parents=True, exist_ok=True)
    target = tmp_path / "home" / ".cache" / "jitdigest"
    target.mkdir(parents=True)
    data = tmp_path / "data.bin"
    data.write_bytes(bytes(range(256)) * 40)
    code = (
        "import hashlib, sys, numpy as np, jitdigest\n"
        "names = sorted(hashlib.algorithms_guaranteed) + ['sha512_224', 'sha512_256']\n"
        "for name in names:\n"
        "    a = (16,) if name.startswith('shake') else ()\n"
        "    assert jitdigest.new(name, b'ro').digest(*a) == hashlib.new(name, b'ro').digest(*a)\n"
        "    msgs = [b'x' * i for i in range(3)]\n"
        "    got = jitdigest.hash_many(name, msgs, length=16 if a else None)\n"
        "    assert [r.tobytes() for r in got] == [hashlib.new(name, m).digest(*a) for m in msgs]\n"
        "grid = np.arange(200 * 64, dtype=np.uint64).astype(np.uint8).reshape(200, 64)\n"
        "for name in ('md5', 'sha256'):\n"
        "    got = jitdigest.hash_many(name, grid)\n"
        "    assert all(got[i].tobytes() == hashlib.new(name, grid[i].tobytes()).digest()\n"
        "               for i in range(200)), name\n"
        "print(len(names), 'ok')\n"
        "from jitdigest.cli import main\n"
        f"sys.exit(main(['sum', '-a', 'sha1', {str(data)!r}]))\n")
    (tmp_path / "check.py").write_text(code)
    mounts = " && ".join(f"mount --bind -o ro {src} {dst}" for src, dst in
                         ((pkg, pkg), (user_cache, target)))
    script = f"{mounts} && {sys.executable} {tmp_path / 'check.py'}"
    env = {k: v for k, v in os.environ.items()
           if k not in ("NUMBA_CACHE_DIR", "JITDIGEST_CACHE_DIR", "XDG_CACHE_HOME")}
    env.update(HOME=str(tmp_path / "home"), PYTHONPATH=str(pkg))
    proc = subprocess.run(["unshare", "-rm", "sh", "-c", script], env=env, cwd=tmp_path,
                          capture_output=True, text=True, timeout=900)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert proc.stdout.splitlines() == [
        "16 ok", f"{hashlib.sha1(data.read_bytes()).hexdigest()}  {data}"], proc.stdout
    assert len(warnings_in(proc.stderr)) <= 1 and "Traceback" not in proc.stderr
    assert not list(pkg.rglob("*.nbi"))
