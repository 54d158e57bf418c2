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

    from jitdigest import _fork, _keyed, _notice, _parallel, dask, hmac  # noqa: F401
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
            free = all(g[name].acquire(blocking=False) for g, name in held)
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
