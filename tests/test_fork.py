"""A child forked while another thread makes jitdigest's first call of a kind (importing Numba,
loading or compiling kernels, in a ``prange`` region) hashes, promptly and right: a few of the
trials of ``tools/fork_trials.py`` (which runs every kind at five fork delays, 20 times each).
Each trial is a new process whose child's digests are checked against hashlib, hmac and the
``blake3`` package there."""
import importlib.util
import os
import pathlib

import pytest

TOOL = pathlib.Path(__file__).resolve().parent.parent / "tools" / "fork_trials.py"
_spec = importlib.util.spec_from_file_location("fork_trials", TOOL)
fork_trials = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(fork_trials)

# A child that has not finished by then is hung (a loaded machine compiles slowly: generous).
CHILD_LIMIT = 300


@pytest.mark.parametrize("kind", ["hash_many", "blake3", "pbkdf2", "hmac", "sha3_256"])
@pytest.mark.parametrize("delay", [0.0, 0.05])
def test_child_forked_during_a_first_call_hashes(kind, delay):
    result = fork_trials.trial(kind, delay, CHILD_LIMIT, cache=None)
    assert "error" not in result, result
    assert not result["hung"], f"the child hung: {result}"
    assert result["exitcode"] == 0 and result["wrong"] == [], result


@pytest.mark.skipif(not hasattr(os, "fork"), reason="needs os.fork")
@pytest.mark.filterwarnings("ignore:This process .* is multi-threaded:DeprecationWarning")
def test_module_locks_held_by_another_thread_are_free_in_a_child():
    """jitdigest's module-level locks, each held by another thread at the fork (as around a
    compile), are free in the child, which then hashes."""
    import threading

    from jitdigest.base import fork as _fork  # noqa: F401
    from jitdigest.engine import keyed as _keyed, notice as _notice, parallel as _parallel
    from jitdigest import dask, hmac
    held = [(module_globals, name) for module_globals, name in _fork._RENEWED]
    assert {name for _, name in held} >= {"_lock", "_serial", "_STARTING", "_warm_lock"}
    taken, release = threading.Event(), threading.Event()

    def hold():
        for module_globals, name in held:
            module_globals[name].acquire()
        taken.set()
        release.wait()
        for module_globals, name in held:
            module_globals[name].release()

    holder = threading.Thread(target=hold)
    holder.start()
    taken.wait()
    read, write = os.pipe()
    pid = os.fork()
    if pid == 0:                                                   # the child
        code = 1
        try:
            got = [g[name].acquire(blocking=False) for g, name in held]
            for (g, name), ok in zip(held, got):
                if ok:
                    g[name].release()       # free again: hashing may take them (a compile)
            free = all(got)
            digest = hmac.new(b"k", b"m", "sha256").digest()
            os.write(write, b"%d %s" % (free, digest.hex().encode()))
            code = 0
        finally:
            os._exit(code)
    release.set()
    holder.join()
    os.close(write)
    with os.fdopen(read, "rb") as f:
        reply = f.read()
    _, status = os.waitpid(pid, 0)
    assert os.waitstatus_to_exitcode(status) == 0
    import hmac as std_hmac
    assert reply == b"1 " + std_hmac.new(b"k", b"m", "sha256").hexdigest().encode()


CUT_IMPORTS = """
import os, sys, threading, time
import numpy, jitdigest
from jitdigest.base import config as _config
_config.FORK_WAIT = 0.3            # the fork stops waiting for the imports below
folder = sys.argv[1]
for package in (numpy, jitdigest):
    where = os.path.join(folder, package.__name__)
    os.makedirs(where)
    with open(os.path.join(where, "zz_slow.py"), "w") as f:
        f.write("import os, time\\nVALUE = 42\\nif os.getpid() == %d:\\n    time.sleep(3)\\n"
                % os.getpid())
    package.__path__.append(where)
importers = [threading.Thread(target=__import__, args=(name,))
             for name in ("numpy.zz_slow", "jitdigest.zz_slow")]
for t in importers:
    t.start()
time.sleep(0.5)                    # both imports under way, in the parent only
pid = os.fork()
if pid == 0:
    import numpy.zz_slow, jitdigest.zz_slow
    os._exit(0 if numpy.zz_slow.VALUE == jitdigest.zz_slow.VALUE == 42 else 1)
for _ in range(600):
    done, status = os.waitpid(pid, os.WNOHANG)
    if done:
        print("child", os.waitstatus_to_exitcode(status))
        break
    time.sleep(0.1)
else:
    os.kill(pid, 9)
    print("child hung")
"""


@pytest.mark.skipif(not hasattr(os, "fork"), reason="needs os.fork")
def test_a_child_imports_anew_what_a_vanished_thread_was_importing(tmp_path):
    """Imports of a jitdigest module and of a numpy submodule that another thread was running
    when the fork came (the fork's wait for them cut short): the child imports them anew
    instead of waiting for ever on their module locks."""
    import subprocess
    import sys
    proc = subprocess.run([sys.executable, "-c", CUT_IMPORTS, str(tmp_path)],
                          capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.split() == ["child", "0"], proc.stdout + proc.stderr
