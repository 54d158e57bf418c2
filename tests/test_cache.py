"""The kernel cache and the start-up path: where kernels are kept (outside the package, per
version and kernel sources), a world where nothing can be written, damaged cache files, the
compile notice on a terminal, ``jitdigest warmup`` / ``jitdigest cache``, environment faults, and
an import that loads no Numba. Every digest is checked against hashlib."""
import hashlib
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from jitdigest.base import cachedir as _cachedir

REPO = Path(__file__).resolve().parents[1]
ABC_MD5 = hashlib.md5(b"abc").hexdigest()
ABC_BLAKE3 = "6437b3ac38465133ffb63b75273a8db548c558465d79db03fd359c6cd5bd9d85"  # blake3 package


def run_python(args, env=None, cwd=None, timeout=600):
    full = {k: v for k, v in os.environ.items()
            if k not in ("NUMBA_CACHE_DIR", "JITDIGEST_CACHE_DIR", "JITDIGEST_DISABLE")}
    full.update(env or {})
    args = ["-c", args] if isinstance(args, str) else args
    return subprocess.run([sys.executable, *args], env=full, cwd=cwd, capture_output=True,
                          text=True, timeout=timeout)


def warnings_in(stderr):
    return [ln for ln in stderr.splitlines() if "CacheWarning" in ln]


# --- where -------------------------------------------------------------------------------

def test_cache_root_follows_the_environment(monkeypatch, tmp_path):
    for name in ("JITDIGEST_CACHE_DIR", "NUMBA_CACHE_DIR", "XDG_CACHE_HOME"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    if sys.platform.startswith("linux"):
        assert _cachedir.root() == str(tmp_path / "home" / ".cache" / "jitdigest")
        monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
        assert _cachedir.root() == str(tmp_path / "xdg" / "jitdigest")
    monkeypatch.setenv("NUMBA_CACHE_DIR", str(tmp_path / "numba"))
    assert _cachedir.root() == str(tmp_path / "numba" / "jitdigest")
    monkeypatch.setenv("JITDIGEST_CACHE_DIR", str(tmp_path / "mine"))
    assert _cachedir.root() == str(tmp_path / "mine")
    # answers are remembered per setting: going back to one, and a relative one (which follows
    # the working directory), still give the right folder
    monkeypatch.delenv("JITDIGEST_CACHE_DIR")
    assert _cachedir.root() == str(tmp_path / "numba" / "jitdigest")
    for folder in ("a", "b"):
        (tmp_path / folder).mkdir()
        monkeypatch.chdir(tmp_path / folder)
        monkeypatch.setenv("JITDIGEST_CACHE_DIR", "kernels")
        assert _cachedir.root() == str(tmp_path / folder / "kernels")
    import jitdigest
    assert Path(_cachedir.directory()).name.startswith(jitdigest.__version__ + "-")
    assert not _cachedir.directory().startswith(str(REPO / "jitdigest"))


def test_source_key_covers_every_kernel_file(monkeypatch, tmp_path):
    kernels = tmp_path / "kernels"
    shutil.copytree(REPO / "jitdigest" / "kernels", kernels,
                    ignore=shutil.ignore_patterns("__pycache__"))
    (tmp_path / "base").mkdir()
    for name in ("base/algorithms.py", "base/config.py"):
        shutil.copy(REPO / "jitdigest" / name, tmp_path / name)
    monkeypatch.setattr(_cachedir, "KERNELS", str(kernels))
    monkeypatch.setattr(_cachedir, "PACKAGE", str(tmp_path))
    keys = set()
    edits = ("kernels/_jit.py", "kernels/_md.py", "kernels/md5/portable.py",
             "kernels/sha256/avx512_x16.py", "base/algorithms.py", "base/config.py")
    for name in edits:
        _cachedir.source_key.cache_clear()
        keys.add(_cachedir.source_key())
        with open(tmp_path / name, "a") as f:
            f.write("\n# an edit\n")
    _cachedir.source_key.cache_clear()
    keys.add(_cachedir.source_key())
    monkeypatch.undo()
    _cachedir.source_key.cache_clear()
    assert len(keys) == len(edits) + 1  # every edit, shared pieces too, gives a new folder


def test_kernels_are_cached_outside_the_package(tmp_path):
    code = ("import jitdigest, sys; print(jitdigest.md5(b'abc').hexdigest());"
            "from jitdigest.base import cachedir as _cachedir; print(_cachedir.directory())")
    before = set((REPO / "jitdigest").rglob("*.nb[ic]"))      # a checkout's older debris
    first = run_python(code, env={"JITDIGEST_CACHE_DIR": str(tmp_path)})
    assert first.returncode == 0, first.stderr
    digest, folder = first.stdout.split()
    assert digest == ABC_MD5
    assert Path(folder).parent == tmp_path
    assert any(Path(folder).glob("*md5_portable.oneshot-md5-*.nbi"))
    assert set((REPO / "jitdigest").rglob("*.nb[ic]")) == before
    # a cached kernel loads with what it needs: not Numba's array module (no kernel allocates)
    second = run_python(
        "import sys, jitdigest; from jitdigest.kernels.md5 import portable;"
        "print(jitdigest.md5(b'abc').hexdigest(), sum(portable.BACKEND.oneshot.stats.cache_hits.values()),"
        " 'numba.np.arrayobj' in sys.modules)",
        env={"JITDIGEST_CACHE_DIR": str(tmp_path)})
    assert second.stdout.split() == [ABC_MD5, "1", "False"], second.stderr


# --- nothing writable, damaged files ------------------------------------------------------

def test_unwritable_cache_compiles_in_memory_with_one_warning(tmp_path):
    script = tmp_path / "f.bin"
    script.write_bytes(b"x" * 5000)
    code = (
        "import hashlib, jitdigest, subprocess, sys\n"
        "for name in ('md5',):\n"
        "    assert jitdigest.new(name, b'abc').digest() == hashlib.new(name, b'abc').digest()\n"
        "    h = jitdigest.new(name); h.update(b'x' * 300); h.update(b'y' * 5000)\n"
        "    assert h.digest() == hashlib.new(name, b'x' * 300 + b'y' * 5000).digest()\n"
        "rows = jitdigest.hash_many('md5', [b'a', b'bc', b''])\n"
        "assert [r.tobytes() for r in rows] == [hashlib.md5(m).digest() for m in (b'a', b'bc', b'')]\n"
        "from jitdigest.cli import main\n"
        f"sys.exit(main(['sum', '-a', 'md5', {str(script)!r}]))\n")
    # A cache folder below a regular file cannot be created, not even by root (for read-only
    # mounts of the package and the cache folder see tests/test_read_only.py). The batch goes
    # through the portable kernel, of the three MD5 sets the quickest to compile (in memory, in
    # this process, as every kernel here).
    proc = run_python(code, env={"JITDIGEST_CACHE_DIR": os.devnull + "/jitdigest",
                                 "JITDIGEST_DISABLE": "avx512,avx2"})
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout == f"{hashlib.md5(script.read_bytes()).hexdigest()}  {script}\n"
    assert len(warnings_in(proc.stderr)) == 1, proc.stderr
    assert "Traceback" not in proc.stderr


def test_two_processes_fill_one_cold_cache(tmp_path):
    env = {k: v for k, v in os.environ.items()
           if k not in ("NUMBA_CACHE_DIR", "JITDIGEST_DISABLE")}
    env["JITDIGEST_CACHE_DIR"] = str(tmp_path)
    code = ("import hashlib, jitdigest\n"
            "for n in range(1, 200, 7):\n"
            "    assert jitdigest.sha1(b'a' * n).digest() == hashlib.sha1(b'a' * n).digest()\n"
            "from jitdigest.engine import dispatch as _dispatch; from jitdigest.base import algorithms as _algorithms\n"
            "f = _dispatch.kernels_for(_algorithms.SPECS['sha1']).backend.oneshot\n"
            "print('ok', sum(f.stats.cache_hits.values()), sum(f.stats.cache_misses.values()))\n")
    procs = [subprocess.Popen([sys.executable, "-c", code], env=env, stdout=subprocess.PIPE,
                              stderr=subprocess.PIPE, text=True) for _ in range(2)]
    results = [p.communicate(timeout=600) for p in procs]
    assert [p.returncode for p in procs] == [0, 0], results
    assert not any(e for _, e in results), results
    # one of them compiled the kernel; the other waited on its lock and loaded what it wrote
    assert sorted(out for out, _ in results) == ["ok 0 1\n", "ok 1 0\n"], results
    later = run_python(code, env={"JITDIGEST_CACHE_DIR": str(tmp_path)})
    assert later.stdout.split() == ["ok", "1", "0"], later.stdout + later.stderr


def test_a_failed_compile_releases_its_lock(tmp_path, monkeypatch):
    """The lock a compile holds is released when the compile raises (it never reaches the
    save that releases it otherwise), and also after one that worked."""
    import fcntl
    import numba
    from jitdigest.kernels import _numba_cache
    monkeypatch.setenv("JITDIGEST_CACHE_DIR", str(tmp_path))

    def free(path):                     # can a descriptor of our own take it now?
        fd = os.open(path, os.O_RDWR)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            return True
        except BlockingIOError:
            return False
        finally:
            os.close(fd)

    def bad(x):
        return x.no_such_attribute
    bad = _numba_cache.attach(numba.njit(bad))
    with pytest.raises(numba.core.errors.TypingError):
        bad(1)
    lock = _numba_cache.cache_of(bad).lock_path
    assert os.path.exists(lock) and free(lock) and not _numba_cache._held

    def good(x):
        return x + 1
    good = _numba_cache.attach(numba.njit(good))
    assert good(1) == 2
    lock = _numba_cache.cache_of(good).lock_path
    assert os.path.exists(lock) and free(lock) and not _numba_cache._held
    assert _numba_cache.on_disk(good)


def test_a_kernel_outside_the_package_is_compiled_again_when_its_file_changes(tmp_path):
    """A kernel module of one's own (as the notebooks have) cached with jitdigest's kernels:
    its body edited, line numbers unchanged, the next process compiles the new text."""
    module = tmp_path / "own_kernels.py"
    text = "from jitdigest.kernels._jit import kernel\n\n@kernel\ndef f(x):\n    return x + %d\n"
    # (no .pyc: Python's own check of a module's compiled form, by its mtime in seconds and
    # its size, would take the edited file, written within the same second, as unchanged)
    env = {"JITDIGEST_CACHE_DIR": str(tmp_path / "cache"), "PYTHONDONTWRITEBYTECODE": "1",
           "PYTHONPATH": os.pathsep.join([str(tmp_path), os.environ.get("PYTHONPATH", "")])}
    code = ("import own_kernels as k\n"
            "print(k.f(1), sum(k.f.stats.cache_hits.values()))\n")
    results = []
    for add in (1, 1, 2):
        module.write_text(text % add)
        proc = run_python(code, env=env)
        assert proc.returncode == 0, proc.stderr
        results.append(proc.stdout.split())
    # compiled, loaded from the cache, compiled again after the edit
    assert results == [["2", "0"], ["2", "1"], ["3", "0"]], results


def _corrupt(path, how):
    blob = path.read_bytes()
    path.write_bytes({"truncated": blob[:len(blob) // 2], "emptied": b"",
                      "garbage": os.urandom(max(64, len(blob)))}[how])


DAMAGE = [(kind, how) for kind in ("nbi", "nbc") for how in ("truncated", "emptied", "garbage")]
OWN_KERNELS = "from jitdigest.kernels._jit import kernel\n" + "".join(
    f"\n\n@kernel\ndef f{i}(x):\n    return x + {i}\n" for i in range(len(DAMAGE))) + """

@kernel
def helper(x):
    return x * 3


@kernel
def g(x):
    return helper(x) + 1
"""


def test_damaged_cache_files_are_discarded_with_one_warning(tmp_path):
    """Every way a cache file is found damaged (truncated, emptied, garbage; index or data
    file; a callee's entry met while its caller is compiled again) is discarded and compiled
    again with one warning naming the entry, the results are right, and the next process loads
    the repaired entries silently. On a kernel module of one's own, one kernel per way, all in
    one process (each compiles in well under a second; the same cache class serves the digest
    kernels, whose case is the next test)."""
    (tmp_path / "own_kernels.py").write_text(OWN_KERNELS)
    # (no .pyc: Python's own check of a module's compiled form, by its mtime in seconds and
    # its size, would take the edited file, written within the same second, as unchanged)
    env = {"JITDIGEST_CACHE_DIR": str(tmp_path / "cache"), "PYTHONDONTWRITEBYTECODE": "1",
           "PYTHONPATH": os.pathsep.join([str(tmp_path), os.environ.get("PYTHONPATH", "")])}
    code = ("import own_kernels as k\n"
            f"print([getattr(k, 'f%d' % i)(2) for i in range({len(DAMAGE)})], k.g(2))\n")
    expected = f"{[2 + i for i in range(len(DAMAGE))]} 7"
    first = run_python(code, env=env)
    assert first.stdout.strip() == expected and not first.stderr, first.stderr
    folder = next((tmp_path / "cache").iterdir())
    for i, (kind, how) in enumerate(DAMAGE):
        found = sorted(folder.glob(f"own_kernels.f{i}-*.{kind}"))
        assert len(found) == 1, sorted(p.name for p in folder.iterdir())
        _corrupt(found[0], how)
    helper = sorted(folder.glob("own_kernels.helper-*.nbi"))
    caller = sorted(folder.glob("own_kernels.g-*.nb[ic]"))
    assert len(helper) == 1 and len(caller) == 2, sorted(p.name for p in folder.iterdir())
    for p in caller:                # g compiles again and meets its callee's damaged entry
        p.unlink()
    _corrupt(helper[0], "garbage")
    proc = run_python(code, env=env)
    assert proc.returncode == 0 and proc.stdout.strip() == expected, proc.stderr
    named = sorted(re.search(r"entry for own_kernels\.(\w+)-", w).group(1)
                   for w in warnings_in(proc.stderr))
    assert named == sorted([f"f{i}" for i in range(len(DAMAGE))] + ["helper"]), proc.stderr
    again = run_python(code, env=env)                   # repaired: loads, silent
    assert again.stdout.strip() == expected and not again.stderr, again.stderr


def test_a_damaged_digest_kernel_is_compiled_again(tmp_path):
    """A digest kernel's data file overwritten with garbage: the next process discards it,
    compiles it again with one warning and gives hashlib's digest. SHA-1's one-shot kernel: on
    SHA-NI CPUs the quickest to compile; the files are named after the backend module that
    serves it in the child (run_python leaves JITDIGEST_DISABLE out, so not necessarily the one
    this process would use)."""
    env = {"JITDIGEST_CACHE_DIR": str(tmp_path)}
    code = "import jitdigest; print(jitdigest.sha1(b'abc').hexdigest())"
    abc = hashlib.sha1(b"abc").hexdigest()
    first = run_python(code, env=env)
    assert first.stdout.strip() == abc, first.stderr
    assert "compiling" not in first.stderr          # not a terminal: no compile notice
    folder = next(tmp_path.iterdir())
    data = sorted(folder.glob("*.oneshot-sha1-*.nbc"))
    assert len(data) == 1, sorted(p.name for p in folder.iterdir())
    _corrupt(data[0], "garbage")
    proc = run_python(code, env=env)
    assert proc.returncode == 0 and proc.stdout.strip() == abc, proc.stderr
    assert len(warnings_in(proc.stderr)) == 1, proc.stderr
    assert "oneshot" in warnings_in(proc.stderr)[0], proc.stderr


@pytest.mark.skipif(sys.platform == "win32", reason="needs a pseudo-terminal")
def test_compile_notice_on_a_terminal(tmp_path):
    import pty
    pid, fd = pty.fork()
    if pid == 0:                                        # child: stderr is the terminal
        os.environ["JITDIGEST_CACHE_DIR"] = str(tmp_path)
        os.environ.pop("JITDIGEST_QUIET", None)
        os.execv(sys.executable, [sys.executable, "-c",
                                  "import jitdigest; print(jitdigest.sha1(b'abc').hexdigest())"])
    out = b""
    while True:
        try:
            chunk = os.read(fd, 4096)
        except OSError:
            break
        if not chunk:
            break
        out += chunk
    _, status = os.waitpid(pid, 0)
    assert status == 0
    # Numba imports colorama when it is installed, and colorama's exit hook writes a
    # colour reset to a terminal: drop escape sequences before reading the last line.
    text = re.sub(r"\x1b\[[0-9;]*[A-Za-z]", "", out.decode())
    assert "jitdigest: compiling sha1 kernels, once per machine" in text
    assert text.rstrip().endswith(hashlib.sha1(b"abc").hexdigest())


# --- warmup and the cache command ---------------------------------------------------------

def test_warmup_then_hash_many_compiles_nothing(tmp_path):
    # SHA-1: the quickest warmup here (on a SHA-NI CPU, ahead of MD5's),
    # with a per-message kernel and a batch one like every algorithm
    env = {"JITDIGEST_CACHE_DIR": str(tmp_path)}
    proc = run_python(["-m", "jitdigest", "warmup", "sha1", "-j", "2"], env=env)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.startswith("sha1: ") and "kernels ready in" in proc.stdout
    assert "stored for jitdigest sum" in proc.stdout.splitlines()[0]
    # its batch kernels timed in the workers, the table stored (hash_many below follows it)
    assert proc.stdout.splitlines()[-2].startswith("sha1: 16 B ")
    assert "batch kernels timed in" in proc.stdout and "calibration-" in proc.stdout
    # jitdigest sum then runs the stored batch kernel: no Numba, no numpy
    (tmp_path / "f.txt").write_bytes(b"abc" * 100)
    summed = run_python(["-c", "import sys\nfrom jitdigest import cli\n"
                         "cli.main(['sum', '-a', 'sha1', sys.argv[1]]); sys.stdout.flush()\n"
                         "print(sorted(m for m in sys.modules if m.split('.')[0] in"
                         " ('numba', 'numpy')))", str(tmp_path / "f.txt")], env=env)
    assert summed.stdout.split() == [hashlib.sha1(b"abc" * 100).hexdigest(),
                                     str(tmp_path / "f.txt"), "[]"], summed.stderr
    code = (
        "import hashlib, numpy as np, jitdigest\n"
        "from numba.core import event\n"
        "rows = np.arange(1000 * 64, dtype=np.uint64).astype(np.uint8).reshape(1000, 64)\n"
        "msgs = [bytes(rows[i][: i % 64]) for i in range(1000)]\n"
        "with event.install_recorder('numba:compile') as rec:\n"
        "    a = jitdigest.hash_many('sha1', rows)\n"
        "    b = jitdigest.hash_many('sha1', msgs)\n"
        "    c = jitdigest.hash_many('sha1', msgs[:3])\n"
        "    h = jitdigest.sha1(); h.update(bytearray(100)); d = h.digest()\n"
        "    e = jitdigest.sha1(b'abc').digest()\n"
        "assert all(a[i].tobytes() == hashlib.sha1(rows[i].tobytes()).digest() for i in range(1000))\n"
        "assert all(b[i].tobytes() == hashlib.sha1(msgs[i]).digest() for i in range(1000))\n"
        "assert [r.tobytes() for r in c] == [hashlib.sha1(m).digest() for m in msgs[:3]]\n"
        "assert d == hashlib.sha1(bytes(100)).digest() and e == hashlib.sha1(b'abc').digest()\n"
        "print('compiles', len(rec.buffer))\n")
    after = run_python(code, env=env)
    assert after.returncode == 0, after.stderr
    assert after.stdout.strip() == "compiles 0"


def test_warmup_and_tune_time_nothing_interpreted(tmp_path):
    """Under NUMBA_DISABLE_JIT=1 nothing is compiled and nothing is timed (timing the
    interpreter took hours, for a table no compiled run could use)."""
    env = {"JITDIGEST_CACHE_DIR": str(tmp_path), "NUMBA_DISABLE_JIT": "1"}
    warm = run_python(["-m", "jitdigest", "warmup", "md5", "-j", "2"], env=env, timeout=120)
    assert warm.returncode == 0, warm.stderr
    assert "kernels ready in" in warm.stdout and "timed" not in warm.stdout
    tune = run_python(["-m", "jitdigest", "tune", "md5"], env=env, timeout=120)
    assert tune.returncode == 0 and "nothing to time" in tune.stdout, tune.stderr
    assert not list(tmp_path.rglob("calibration-*"))


def test_a_warmup_worker_leaves_without_tearing_down(tmp_path):
    """``_warmup._worker_start``: the worker's exit handlers registered after it (Numba's,
    llvmlite's) still run, then it flushes what it printed and ends at once (exit status 0),
    without the interpreter's teardown (a module global's ``__del__`` never runs)."""
    mark = tmp_path / "mark"
    code = (
        "import atexit, sys\n"
        "from jitdigest import _warmup\n"
        "_warmup._worker_start()\n"
        "atexit.register(lambda: open(sys.argv[1], 'w').write('handler'))\n"
        "class Late:\n"
        "    def __del__(self, open=open, path=sys.argv[1]):\n"
        "        open(path, 'a').write(' teardown')\n"
        "keep = Late()\n"
        "sys.stdout.write('printed, not flushed')\n")
    proc = run_python(["-c", code, str(mark)])
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout == "printed, not flushed"
    assert mark.read_text() == "handler"
    # without it, the same program tears down (the check above can fail)
    plain = run_python(["-c", code.replace("_warmup._worker_start()\n", ""), str(mark)])
    assert plain.returncode == 0 and mark.read_text() == "handler teardown"


def test_warmup_chains_only_kernel_sets_that_share_kernels():
    """Kernel sets whose modules call one another's compiled functions are compiled one after
    another (BLAKE3's three share its tree code; the interleaved SHA-NI batch kernels call the
    per-message ``compress``); the others are chains of their own, for the other processes.
    Every task once, in plan order within its chain, longest chains first: the most source
    compiled (the chain's modules and those they call)."""
    from jitdigest.base import algorithms as _algorithms
    from jitdigest import _warmup
    assert _warmup._callees("sha1", "sha_ni_x4") == {"sha_ni"}
    assert _warmup._callees("sha256", "sha_ni_x2") == {"sha_ni"}
    assert _warmup._callees("blake3", "many_avx2_x8") == {"avx2_x8", "portable"}
    assert _warmup._callees("md5", "avx2_x16") == set() == _warmup._callees("md5", "portable")
    tasks, _ = _warmup.plan(sorted(_algorithms.SPECS), blake3=True)
    chains = _warmup.chains(tasks)
    assert sorted(t for chain in chains for t in chain) == sorted(tasks)

    def size(chain):
        files = set()
        for family, name, _, _ in chain:
            for module in {name} | _warmup._callees(family, name):
                path = Path(_warmup.__file__).parent / "kernels" / family / f"{module}.py"
                if path.exists():
                    files.add(path)
        return sum(path.stat().st_size for path in files)

    sizes = [size(c) for c in chains]
    assert sizes == sorted(sizes, reverse=True) and sizes[0] > 0 and sizes[-1] == 0
    # BLAKE3's chain (the tree code, two lane modules and the portable one) is among the longest
    assert any(c[0][0] == "blake3" for c in chains[:3])
    assert chains[-1] == [_warmup.JOIN_TASK]
    for chain in chains:
        assert chain == [t for t in tasks if t in chain]
    blake3 = [c for c in chains if c[0][0] == "blake3"]
    assert len(blake3) == 1 and len(blake3[0]) >= 2     # its objects' entries and batch ones
    md5 = [c for c in chains if c[0][0] == "md5"]
    assert len(md5) == len({t[1] for t in tasks if t[0] == "md5"})      # one chain per module


def test_cache_command_info_and_clear(tmp_path):
    env = {"JITDIGEST_CACHE_DIR": str(tmp_path)}
    old = tmp_path / "0.0.1-0123456789abcdef"
    old.mkdir()
    (old / "x.nbi").write_bytes(b"12345")
    (tmp_path / "keep.txt").write_text("not ours")
    (tmp_path / "my-folder").mkdir()                    # a dash, but not <version>-<key>
    info = run_python(["-m", "jitdigest", "cache", "info"], env=env)
    assert info.returncode == 0, info.stderr
    assert f"root {tmp_path}" in info.stdout and "0.0.1-0123456789abcdef  1 files" in info.stdout
    clear = run_python(["-m", "jitdigest", "cache", "clear"], env=env)
    assert clear.returncode == 0 and clear.stdout.startswith("removed 1 folder"), clear.stdout
    assert not old.exists() and (tmp_path / "keep.txt").exists()
    assert (tmp_path / "my-folder").is_dir()


# --- start-up and environment faults ------------------------------------------------------

def test_import_loads_no_numba_and_names_are_there():
    code = ("import sys, jitdigest\n"
            "heavy = sorted(m for m in sys.modules\n"
            "               if m.split('.')[0] in ('numba', 'llvmlite', 'numpy'))\n"
            "print(heavy)\n"
            # nor the standard library modules whose import took half of ``import jitdigest``
            "print(sorted({'dataclasses', 'inspect', 'ctypes', 'platform'} & set(sys.modules)))\n"
            "import hashlib\n"
            "print(jitdigest.__version__,\n"
            "      hashlib.algorithms_guaranteed <= jitdigest.algorithms_available)\n"
            "jitdigest.md5\n"
            # no kernel module: only the packages and the pure-Python contract and target query
            "print(sorted(m for m, mod in sys.modules.items() if m.startswith('jitdigest.kernels')"
            " and not mod.__file__.endswith('__init__.py')"
            " and m not in ('jitdigest.kernels._contract', 'jitdigest.kernels._target')))\n"
            "missing = [n for n in jitdigest.__all__ if not hasattr(jitdigest, n)]\n"
            "print(missing, sorted(set(jitdigest.__all__) - set(dir(jitdigest))))\n"
            "star = {}\n"
            "exec('from jitdigest import *', star)\n"
            "print([n for n in hashlib.__all__ if n not in star])\n"
            "print(star['sha256'](b'abc').hexdigest(), star['new']('md5', b'abc').hexdigest(),\n"
            "      star['hash_many']('sha256', [b'abc'])[0].tobytes().hex(),\n"
            "      star['blake3'].blake3(b'abc').hexdigest())\n")
    proc = run_python(code)
    assert proc.returncode == 0, proc.stderr
    lines = proc.stdout.splitlines()
    assert lines[0] == "[]" and lines[1] == "[]" and lines[3] == "[]"  # no kernel module
    assert lines[2].split()[1] == "True"             # every algorithm hashlib guarantees
    assert lines[4] == "[] []"                        # every public name resolves, dir() lists it
    assert lines[5] == "[]"                           # "import *" brings all of hashlib's names
    # the digests of b"abc": hashlib's SHA-256 and MD5, and the blake3 package's BLAKE3
    assert lines[6].split() == [hashlib.sha256(b"abc").hexdigest(), ABC_MD5,
                                hashlib.sha256(b"abc").hexdigest(), ABC_BLAKE3]


@pytest.mark.parametrize("value", ["0", "-5", "many"])
def test_bad_numba_num_threads_is_one_warning(value):
    proc = run_python("import jitdigest, numpy as np, hashlib\n"
                      "print(jitdigest.md5(b'abc').hexdigest())\n"
                      "print(jitdigest.hash_many('md5', np.zeros((300, 8), np.uint8))[7].tobytes()"
                      " == hashlib.md5(bytes(8)).digest())",
                      env={"NUMBA_NUM_THREADS": value})
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.split() == [ABC_MD5, "True"]
    assert "Traceback" not in proc.stderr
    assert sum("NUMBA_NUM_THREADS" in ln for ln in proc.stderr.splitlines()) >= 1


def test_unknown_disable_switch_is_named():
    proc = run_python("import jitdigest; print(jitdigest.md5(b'abc').hexdigest())",
                      env={"JITDIGEST_DISABLE": "sha_ni,shani,avx9"})
    assert proc.returncode == 0 and proc.stdout.strip() == ABC_MD5, proc.stderr
    assert "unknown switch(es) avx9, shani ignored (known: avx2, avx512, sha_ni, all)" \
        in proc.stderr


def test_info_names_the_cache_folder():
    import jitdigest
    from jitdigest import _info
    assert jitdigest.info()["cache"] == _cachedir.directory()
    assert f"cache = {_cachedir.directory()}" in _info.format_lines()
