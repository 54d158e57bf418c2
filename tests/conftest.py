"""Shared fixtures: every test that takes ``kernel`` runs once per kernel set this CPU can run
(portable always; hardware and unrolled forms where registered and usable); tests that check
known answers report how many through ``known_answers``, and the run ends with the totals."""
import collections
import contextlib
import hashlib
import os

import pytest

import jitdigest
from jitdigest import _algorithms, _dispatch


@pytest.hookimpl(optionalhook=True)
def pytest_xdist_auto_num_workers(config):
    """(A pytest-xdist hook: optional, so the suite also runs where xdist is not installed.)
    ``-n auto``: one worker per CPU this process may run on, and one more, at most five.
    A cold run is mostly compiling, but its workers also wait (on child processes, on another
    worker's compile of a kernel both need, on sleeps in the Ctrl-C and progress tests): in
    cold runs on 2 cores, 2 workers kept 1.78 cores busy on average, 3 workers 1.97."""
    try:
        cpus = len(os.sched_getaffinity(0))
    except AttributeError:
        cpus = os.cpu_count() or 1
    return min(cpus + 1, 5)


# The files whose tests took longest in a cold run (``--durations=0``, 2 cores), longest first:
# handed to the workers before the rest so that no long file starts near the end while the
# other workers sit idle (by default pytest-xdist hands out the files with the most tests first,
# and the one-test files last: the fuzzer and the install check, a minute or more each). The
# order changes the wall time only, never what runs.
LONGEST_FIRST = [
    "test_internals.py", "test_batch_kernels.py", "test_cache.py", "test_lanes.py",
    "test_differential.py", "test_blake2.py", "test_sum_fidelity.py", "test_blake3.py",
    "test_notebooks.py", "test_modes.py", "test_parallel.py", "test_api.py", "test_threads.py",
    "test_fuzz.py", "test_cli_output.py", "test_pbkdf2.py", "test_nist.py", "test_cuda_sim.py",
    "test_dask.py", "test_native.py", "test_memsafety.py", "test_install.py"]


# Last: a test that compiles in memory what the shared cache lacks when it runs.
LAST = ["test_read_only.py"]


def pytest_collection_modifyitems(items):
    """Those files first, in that order, then the others by number of tests (most first), then
    LAST; the order within a file is kept. ``--no-loadscope-reorder`` (addopts) makes
    pytest-xdist follow it."""
    counts = collections.Counter(item.path.name for item in items)
    rank = {name: i for i, name in enumerate(LONGEST_FIRST)}

    def key(item):
        name = item.path.name
        return (name in LAST, rank.get(name, len(rank)), -counts[name], name)
    items.sort(key=key)


FIXED = [name for name, spec in _algorithms.SPECS.items() if not spec.family.startswith("blake2")]
CORE = ["md5", "sha1", "sha224", "sha256", "sha384", "sha512", "sha512_224", "sha512_256"]


def kernel_params(names):
    """pytest params (algorithm, kernel set), one per usable backend, ids like sha256-sha_ni;
    registered backends the CPU lacks appear as skips."""
    params = []
    for name in names:
        spec = _algorithms.SPECS[name]
        for backend in _dispatch.backends(spec.family):
            marks = () if backend.usable() else (
                pytest.mark.skip(reason=f"{backend.name} not usable on this CPU/target"),)
            ks = _dispatch._kernel_set(backend, spec.word)
            params.append(pytest.param(name, ks, id=f"{name}-{backend.name}", marks=marks))
    return params


def make(name, kernels, data=b""):
    """A jitdigest hash object for ``name`` served by the backend of ``kernels``, made the
    public way (``jitdigest.backend``)."""
    with jitdigest.backend(kernels.name):
        h = jitdigest.new(name, data)
    assert h._kernels is kernels
    return h


@contextlib.contextmanager
def maker(name, kernels):
    """``make`` for many objects: yields ``new(data=b"")``, made the public way with the
    backend of ``kernels`` chosen for the whole block (entering ``jitdigest.backend`` costs
    about 50 us, ten times a small object's whole life: the Monte tests make 100,000)."""
    with jitdigest.backend(kernels.name):
        assert jitdigest.new(name)._kernels is kernels
        yield lambda data=b"": jitdigest.new(name, data)


def oracle(name, data=b""):
    return hashlib.new(name, data)


def out_of(h, length=None):
    """digest() for fixed-size algorithms, digest(length) for SHAKE."""
    return h.digest() if h.digest_size else h.digest(length)


def outcome(fn):
    """("ok", result) or (exception type name, message): to compare errors with the stdlib's."""
    try:
        return ("ok", fn())
    except Exception as exc:
        return (type(exc).__name__, str(exc))


# --- known answers: each test records what it checked; the summary adds it up ----------------

@pytest.fixture
def known_answers(record_property):
    """``known_answers((algorithm, kind, source), n)``: this test checked ``n`` known answers
    (a test that read none fails here); returns ``n``."""
    def count(what, n):
        assert n > 0, f"no known answers read for {what}"
        algorithm, kind, source = what
        record_property("known_answers", [algorithm, kind, source, n])
        return n
    return count


def pytest_terminal_summary(terminalreporter):
    per_algorithm = collections.defaultdict(dict)
    tests = collections.Counter()
    sources = set()
    for report in terminalreporter.stats.get("passed", []):
        if getattr(report, "when", None) != "call":
            continue
        for key, value in getattr(report, "user_properties", ()):
            if key == "known_answers":
                algorithm, kind, source, n = value
                per_algorithm[algorithm][kind] = n
                tests[algorithm] += 1
                sources.add(source)
    if not per_algorithm:
        return
    terminalreporter.section("known answers checked (passed tests)")
    total = 0
    for algorithm in sorted(per_algorithm):
        kinds = per_algorithm[algorithm]
        total += sum(kinds.values())
        text = ", ".join(f"{kind} {n}" for kind, n in sorted(kinds.items()))
        terminalreporter.write_line(f"{algorithm:<11} {text}  (in {tests[algorithm]} tests)")
    terminalreporter.write_line(f"{total} distinct records over {len(per_algorithm)} algorithms, "
                                f"{sum(tests.values())} tests; from {', '.join(sorted(sources))}")
