"""A child forked while another thread makes jitdigest's first call of a kind (importing Numba,
loading or compiling kernels, in a ``prange`` region) hashes, promptly and right: a few of the
trials of ``tools/fork_trials.py`` (which runs every kind at five fork delays, 20 times each).
Each trial is a new process whose child's digests are checked against hashlib, hmac and the
``blake3`` package there."""
import importlib.util
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
