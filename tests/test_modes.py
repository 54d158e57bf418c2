"""Interpreted mode, switches and compile hygiene, each in a fresh child process."""
import hashlib
import os
import pathlib
import shutil
import subprocess
import sys

import pytest

from vectors import label, messages

TESTS = pathlib.Path(__file__).resolve().parent
REPO = TESTS.parent

CORE = ["md5", "sha1", "sha224", "sha256", "sha384", "sha512", "sha512_224", "sha512_256"]
SPONGE = ["sha3_224", "sha3_256", "sha3_384", "sha3_512", "shake_128", "shake_256"]


def run_python(code_or_args, env=None, cwd=TESTS, timeout=600):
    """Run Python in a child; ``env`` adds variables to this process's, and a value of None
    removes one."""
    args = code_or_args if isinstance(code_or_args, list) else ["-c", code_or_args]
    full_env = dict(os.environ)
    full_env.update(env or {})
    full_env = {k: v for k, v in full_env.items() if v is not None}
    full_env["PYTHONPATH"] = os.pathsep.join([str(TESTS), full_env.get("PYTHONPATH", "")])
    return subprocess.run([sys.executable, *args], env=full_env, cwd=cwd, capture_output=True,
                          text=True, timeout=timeout)


@pytest.mark.parametrize("names", [CORE, SPONGE], ids=["md-sha2", "sha3-shake"])
def test_interpreted_mode_passes_short_messages(names, known_answers):
    proc = run_python([str(TESTS / "interpreted_check.py"), *names],
                      env={"NUMBA_DISABLE_JIT": "1"})
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "failures: 0" in proc.stdout
    total = 0
    for name in names:
        kind = "" if name == "md5" else "ShortMsg"
        want = len(messages(name, kind))             # read here too: the child read them all
        assert f"{name}: {want} vectors, kernel " in proc.stdout, proc.stdout
        known_answers(label(name, kind), want)
        total += want
    assert f"checked: {total} vectors" in proc.stdout, proc.stdout


# CHECK_NAMES: the algorithms whose kernel choice is checked; HASH_NAMES (default: the same):
# those hashed against hashlib.
CHECK_DIGESTS = """
import hashlib, os, jitdigest
names = os.environ.get("CHECK_NAMES", "").split() or sorted(hashlib.algorithms_guaranteed)
hashed = os.environ.get("HASH_NAMES", "").split() or names
checked = 0
for name in hashed:
    data = bytes(range(256)) * 5
    h, ref = jitdigest.new(name, data), hashlib.new(name, data)
    assert (h.digest(40) if name.startswith("shake") else h.digest()) == \\
           (ref.digest(40) if name.startswith("shake") else ref.digest()), name
    checked += 1
print("checked", checked)
print("kernels", sorted(set(jitdigest.info()["kernels"][name] for name in names)))
"""

def feature_bound():
    """The algorithms whose family has a per-message kernel needing a CPU feature that this
    host has (SHA-NI, AVX2 on x86; the ARMv8 extensions on aarch64), and those kernels' names:
    a generic target must serve them with the portable kernels. The other families have no
    such kernel here; compiling them again for the generic target would only repeat the host's
    checks, a long compile. Also the one of them to hash there: SHA-256
    where it is one (SHA-NI's), else the first."""
    from jitdigest.base import algorithms as _algorithms
    from jitdigest.engine import dispatch as _dispatch
    names, kernels = [], set()
    for name in sorted(set(_algorithms.SPECS) & hashlib.algorithms_available):
        bound = [b.name for b in _dispatch.backends(_algorithms.SPECS[name].family)
                 if b.feature is not None and _dispatch.usable(b)]
        if bound:
            names.append(name)
            kernels.update(bound)
    return names, sorted(kernels), (["sha256"] if "sha256" in names else names[:1])


FEATURE_BOUND, FEATURE_KERNELS, HASHED_GENERIC = feature_bound()


@pytest.mark.parametrize("env, absent", [
    ({"JITDIGEST_DISABLE": "all"}, FEATURE_KERNELS),
    ({"JITDIGEST_DISABLE": "sha_ni"}, ["sha_ni"]),
    # the choice checked for every feature-bound algorithm, hashing with one of them (each
    # family's portable kernels compiled for the generic target, a long compile a family)
    ({"NUMBA_CPU_NAME": "generic", "CHECK_NAMES": " ".join(FEATURE_BOUND),
      "HASH_NAMES": " ".join(HASHED_GENERIC)}, FEATURE_KERNELS),
    ({"NUMBA_DISABLE_JIT": "1"}, FEATURE_KERNELS),
], ids=["disable-all", "disable-sha_ni", "cpu-generic", "no-jit"])
def test_switched_processes_give_right_digests(env, absent):
    # Numba keys its cache by target CPU name and features, so a generic-target process does
    # not load host-compiled code from the shared cache.
    proc = run_python(CHECK_DIGESTS, env=env)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    names = (env.get("HASH_NAMES", "").split() or env.get("CHECK_NAMES", "").split()
             or hashlib.algorithms_guaranteed)
    assert f"checked {len(names)}\n" in proc.stdout, proc.stdout
    kernels = proc.stdout.split("kernels ")[1]
    assert "portable" in kernels, proc.stdout
    assert not [name for name in absent if repr(name) in kernels], proc.stdout


def test_import_compiles_nothing():
    """Importing jitdigest, and then every kernel module, leaves every dispatcher without a
    compiled signature (and there are dispatchers to look at)."""
    code = (
        "import importlib, pkgutil, sys, jitdigest, jitdigest.kernels, numba\n"
        "from numba.core.registry import CPUDispatcher\n"
        "for info in pkgutil.walk_packages(jitdigest.kernels.__path__, 'jitdigest.kernels.'):\n"
        "    importlib.import_module(info.name)\n"
        "mods = [m for n, m in list(sys.modules.items()) if n.startswith('jitdigest.kernels')]\n"
        "found = [(n, f) for m in mods for n, f in vars(m).items()\n"
        "         if isinstance(f, CPUDispatcher)]\n"
        "print('dispatchers:', len(found))\n"
        "print('compiled:', [n for n, f in found if f.signatures])\n"
    )
    proc = run_python(code)
    assert proc.returncode == 0, proc.stderr
    assert "compiled: []" in proc.stdout
    dispatchers = int(proc.stdout.split("dispatchers:")[1].split()[0])
    assert dispatchers > 20, proc.stdout


def test_warm_cache_reuses_compiled_kernels(tmp_path):
    env = {"NUMBA_CACHE_DIR": str(tmp_path), "JITDIGEST_CACHE_DIR": None}   # else it wins
    code = ("import jitdigest; print(jitdigest.sha256(b'abc').hexdigest());"
            "from jitdigest.kernels.sha256 import portable, sha_ni;"
            "print('hits', sum(sum(k.stats.cache_hits.values()) for k in"
            " (portable.BACKEND.oneshot, sha_ni.BACKEND.oneshot)))")
    first = run_python(code, env=env)
    second = run_python(code, env=env)
    assert first.returncode == 0 and second.returncode == 0, first.stderr + second.stderr
    assert first.stdout.split()[0] == second.stdout.split()[0] == \
        "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"
    assert "hits 0" in first.stdout and "hits 1" in second.stdout
    assert any(tmp_path.rglob("*.nbi"))         # NUMBA_CACHE_DIR honoured


@pytest.mark.skipif(shutil.which("unshare") is None, reason="needs unshare for a read-only mount")
def test_read_only_package_falls_back_to_user_cache(tmp_path):
    """A copy of the package on a read-only bind mount: kernels still compile, and are cached
    in the per-user cache directory instead of the package's __pycache__."""
    pkg_root = tmp_path / "site"
    shutil.copytree(REPO / "jitdigest", pkg_root / "jitdigest",
                    ignore=shutil.ignore_patterns("__pycache__"))
    home = tmp_path / "home"
    home.mkdir()
    code = ("import jitdigest, hashlib;"
            "assert jitdigest.md5(b'x'*100).digest() == hashlib.md5(b'x'*100).digest();"
            "print('ok', jitdigest.__file__)")
    script = (f"mount --bind -o ro {pkg_root} {pkg_root} && "
              f"{sys.executable} -c \"{code}\"")
    env = {k: v for k, v in os.environ.items()
           if k not in ("NUMBA_CACHE_DIR", "JITDIGEST_CACHE_DIR")}
    env.update(HOME=str(home), XDG_CACHE_HOME=str(home / ".cache"), PYTHONPATH=str(pkg_root))
    probe = subprocess.run(["unshare", "-rm", "true"], capture_output=True)
    if probe.returncode != 0:
        pytest.skip("unprivileged mount namespaces are not available here")
    proc = subprocess.run(["unshare", "-rm", "sh", "-c", script], env=env, cwd=tmp_path,
                          capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert f"ok {pkg_root}" in proc.stdout
    assert not any((pkg_root / "jitdigest").rglob("*.nbi"))
    assert any(home.rglob("*.nbi")), "no cache written to the per-user cache directory"
