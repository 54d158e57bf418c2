"""The README's two commands, in order, in one new virtual environment, as a newcomer runs them:
``pip install .`` and the main job (``jitdigest sum -r jitdigest``), then
``pip install -e ".[test]"``; then jitdigest is imported from several working directories in
child processes and every algorithm checked against hashlib there; ``pip uninstall`` must
leave nothing behind. (The second command's ``pytest`` is this suite: not run again here.)

The tree installed is this checkout's files as a clone would have them (tracked and untracked,
not ignored; no build or cache debris). The new environment sees the packages of the one
running the tests through a ``.pth`` line, so nothing is downloaded but pip's build backend.
"""
import hashlib
import importlib.util
import os
import shutil
import subprocess
import sys
import sysconfig
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
ALGORITHMS = sorted(hashlib.algorithms_guaranteed) + ["sha512_224", "sha512_256"]


def _clone(dest):
    """Copy the files a clone plus the uncommitted work would hold."""
    if shutil.which("git") and (REPO / ".git").exists():
        listed = subprocess.run(["git", "ls-files", "-z", "--cached", "--others",
                                 "--exclude-standard"], cwd=REPO, capture_output=True,
                                check=True).stdout.split(b"\0")
        for rel in filter(None, listed):
            src = REPO / os.fsdecode(rel)
            if src.is_file():
                target = dest / os.fsdecode(rel)
                target.parent.mkdir(parents=True, exist_ok=True)
                shutil.copy2(src, target)
    else:
        shutil.copytree(REPO, dest, ignore=shutil.ignore_patterns(
            "__pycache__", "*.egg-info", "build", ".venv", ".git", "*.nbi", "*.nbc"))


def _site_of(module):
    spec = importlib.util.find_spec(module)
    return str(Path(spec.origin).resolve().parents[1])


def _run(cmd, cwd, env, timeout=600):
    proc = subprocess.run(cmd, cwd=cwd, env=env, capture_output=True, text=True,
                          timeout=timeout)
    assert proc.returncode == 0, f"{cmd}\n{proc.stdout[-3000:]}\n{proc.stderr[-3000:]}"
    return proc


CHECK = """
import hashlib, sys, jitdigest
names = {names!r}
for name in names:
    data = b"jitdigest " * 30
    ours, ref = jitdigest.new(name, data), hashlib.new(name, data)
    args = (32,) if name.startswith("shake") else ()
    assert ours.digest(*args) == ref.digest(*args), name
print(len(names), "algorithms ok from", jitdigest.__file__)
"""


@pytest.mark.skipif(importlib.util.find_spec("venv") is None, reason="no venv module")
def test_readme_commands_in_one_new_venv(tmp_path):
    clone = tmp_path / "clone"
    _clone(clone)
    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True, timeout=300)
    python = str(venv / ("Scripts" if os.name == "nt" else "bin") / "python")
    site = Path(subprocess.run([python, "-c", "import sysconfig; print(sysconfig.get_paths()"
                                "['purelib'])"], capture_output=True, text=True,
                               check=True).stdout.strip())
    outer = {_site_of(m) for m in ("numba", "llvmlite", "numpy", "setuptools", "pytest")
             if importlib.util.find_spec(m)}
    (site / "outer-environment.pth").write_text("\n".join(sorted(outer)) + "\n")
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PYTHON", "PIP_"))}
    env.update(PIP_DISABLE_PIP_VERSION_CHECK="1", PIP_NO_INPUT="1")
    bindir = str(Path(python).parent)
    env["PATH"] = bindir + os.pathsep + env.get("PATH", "")

    # First command: install, then the main job.
    _run([python, "-m", "pip", "install", "-q", "."], clone, env)
    installed = site / "jitdigest"
    assert (installed / "__init__.py").exists()
    job = _run([str(Path(bindir) / "jitdigest"), "sum", "-r", "jitdigest"], clone, env)
    line = next(ln for ln in job.stdout.splitlines() if ln.endswith("jitdigest/base/algorithms.py"))
    expected = hashlib.sha256((clone / "jitdigest" / "base" / "algorithms.py").read_bytes()).hexdigest()
    assert line == f"{expected}  jitdigest/base/algorithms.py"
    debris = [p for p in installed.rglob("*") if p.suffix in (".nbi", ".nbc")]
    assert not debris, f"kernel cache written into the installed package: {debris[:3]}"

    # Second command's install, over the first.
    _run([python, "-m", "pip", "install", "-q", "-e", ".[test]"], clone, env)
    assert not installed.exists(), "pip install -e left a jitdigest folder in site-packages"
    code = CHECK.format(names=ALGORITHMS)
    scratch = tmp_path / "elsewhere"
    scratch.mkdir()
    for cwd in (clone / "tests", Path(os.sep), scratch):
        out = _run([python, "-c", code], cwd, env).stdout
        assert f"{len(ALGORITHMS)} algorithms ok from {clone / 'jitdigest'}" in out, out

    _run([python, "-m", "pip", "uninstall", "-y", "-q", "jitdigest"], tmp_path, env)
    left = [p.name for p in site.iterdir() if "jitdigest" in p.name.lower()]
    assert not left, f"pip uninstall left {left} in site-packages"
    assert sysconfig.get_paths()["purelib"] != str(site)      # the suite's env is untouched
