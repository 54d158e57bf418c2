"""Shared fixtures: every test that takes ``kernel`` runs once per kernel set this CPU can run
(portable always; hardware and unrolled forms where registered and usable); tests that check
known answers report how many through ``known_answers``, and the run ends with the totals."""
import collections
import contextlib
import faulthandler
import hashlib
import os
import signal

import pytest

import jitdigest
from jitdigest.base import algorithms as _algorithms
from jitdigest.engine import dispatch as _dispatch


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


# --- a scheduler that survives a crashed worker --------------------------------------------

try:
    from xdist.scheduler import LoadFileScheduling
except ImportError:                     # no pytest-xdist: the hook below is never called
    LoadFileScheduling = object


class LoadFileAfterCrash(LoadFileScheduling):
    """``--dist loadfile`` as pytest-xdist 3.8 runs it, less two ways its run hung for ever
    once a worker died and was replaced (all workers idle, the controller waiting):

    * the dead worker's *finished* files went back on the queue with its unfinished one; each
      later reached a worker as an empty batch, which never completes, so that worker was never
      given anything again. Only files with tests left go back now (first in the queue);
    * a worker runs a test only once it holds the next one (or is told to stop): a new worker
      given a file with one test left, while others were queued, waited for ever. A worker now
      holds two tests or more while any are queued.

    The test the worker died in is reported failed (pytest-xdist's "worker 'gwN' crashed while
    running ...") and not run again: a test that kills its worker would kill the next one."""

    def remove_node(self, node):
        workload = self.assigned_work.pop(node)
        left = {scope: unit for scope, unit in workload.items() if not all(unit.values())}
        if not left:
            return None
        crashitem = next(nodeid for unit in left.values()
                         for nodeid, done in unit.items() if not done)
        left[self._split_scope(crashitem)][crashitem] = True
        for scope, unit in reversed(left.items()):
            if not all(unit.values()):
                self.workqueue[scope] = unit
                self.workqueue.move_to_end(scope, last=False)
        for other in self.assigned_work:
            self._reschedule(other)
        return crashitem

    def _reschedule(self, node):
        super()._reschedule(node)
        while (not node.shutting_down and self.workqueue
               and self._pending_of(self.assigned_work[node]) < 2):
            self._assign_work_unit(node)


@pytest.hookimpl(optionalhook=True)
def pytest_xdist_make_scheduler(config, log):
    """(A pytest-xdist hook, optional like the one above.) ``--dist loadfile``: the scheduler
    above; any other --dist: pytest-xdist's own."""
    if config.getvalue("dist") == "loadfile":
        return LoadFileAfterCrash(config, log)
    return None


# --- time limits ------------------------------------------------------------------------------

_STDERR = pytest.StashKey[int]()     # a copy of standard error: see pytest_configure


def pytest_addoption(parser, pluginmanager):
    """The ``timeout`` ini key (pyproject.toml) is pytest-timeout's; where that plugin is not
    installed (or is disabled, ``-p no:timeout``) it is registered here, so that it still sets
    the last-resort limit below and pytest does not warn about an unknown key."""
    if not pluginmanager.has_plugin("timeout"):
        parser.addini("timeout", "per-test time limit in seconds (pytest-timeout's key)")


def pytest_configure(config):
    if not config.pluginmanager.has_plugin("timeout"):
        config.addinivalue_line("markers", "timeout(seconds): this test's time limit")
    # where a stuck test's stacks go: standard error as it was before pytest's capture (which
    # is suspended while pytest configures), as for pytest's faulthandler plugin
    config.stash[_STDERR] = os.dup(2)


def pytest_unconfigure(config):
    fd = config.stash.get(_STDERR, None)
    if fd is not None:
        os.close(fd)
        del config.stash[_STDERR]


def time_limit(item):
    """The test's limit in seconds (None: none): pytest-timeout's for it where that plugin runs
    (its marker, ``--timeout``, PYTEST_TIMEOUT, the ini key), else the marker or the ini key."""
    value = None
    if item.config.pluginmanager.has_plugin("timeout"):
        try:
            from pytest_timeout import _get_item_settings
            value = _get_item_settings(item).timeout
        except Exception:           # its internals moved: read the marker and the ini key
            pass
    if value is None:
        marker = item.get_closest_marker("timeout")
        if marker is not None:
            value = marker.args[0] if marker.args else marker.kwargs.get("timeout")
        else:
            try:
                value = item.config.getini("timeout")
            except ValueError:      # not registered (pytest_addoption above did not run)
                value = None
    try:
        value = float(value)
    except (TypeError, ValueError):
        return None
    return value if value > 0 else None


def last_resort(limit):
    """How long after a test starts its process is ended if the test is still running: the
    limit, and as long again, capped by the code below. pytest-timeout fails a test at its limit
    by SIGALRM (the "signal" method, its default on POSIX), which takes effect only when the
    main thread next runs Python code: not while it waits in C for something that never
    comes (a lock another thread forgot, a kernel that never returns)."""
    return limit + min(limit, 300.0)


# Signal dispositions that tests may change in this process and must not leave changed: `jitdigest
# sum` sets SIGPIPE to its default action (a closed pipe ends the command quietly, as it ends
# sha256sum), and tests that run ``cli.main(["sum", ...])`` in the worker did so for the rest of
# the worker's life. From then on a write to a pipe or socket whose reader is gone (a child that
# exited without reading all its input; also multiprocessing's resource-tracker probe and Python
# sockets, which count on SIGPIPE being ignored) kills the worker outright: no traceback, no
# kernel message, pytest-xdist's "node down: Not properly terminated", in whichever test file
# that worker happens to run later.
KEPT_SIGNALS = [getattr(signal, name) for name in ("SIGPIPE", "SIGINT", "SIGTERM", "SIGHUP",
                                                    "SIGCHLD", "SIGUSR1", "SIGUSR2")
                if hasattr(signal, name)]


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_protocol(item):
    """Around each test (setup, call and teardown):

    * the signal dispositions in KEPT_SIGNALS are put back as they were;
    * past ``last_resort(time_limit(item))`` seconds, every thread's stack is written to
      standard error and the process ends (faulthandler's watchdog, a C thread that needs
      neither the GIL nor the main thread): under pytest-xdist the worker's end is reported
      as "worker 'gwN' crashed while running 'TEST'", the test fails, a new worker takes the
      rest of the queue and the run goes on; without xdist the run ends there. Not when
      pytest's own ``faulthandler_timeout`` is set (it uses the same, single, watchdog)."""
    saved = {}
    for signum in KEPT_SIGNALS:
        handler = signal.getsignal(signum)
        if handler is not None:                 # None: set outside Python, cannot be put back
            saved[signum] = handler
    limit = time_limit(item)
    watch = (limit is not None and _STDERR in item.config.stash
             and not float(item.config.getini("faulthandler_timeout") or 0))
    if watch:
        faulthandler.dump_traceback_later(last_resort(limit), exit=True,
                                          file=item.config.stash[_STDERR])
    try:
        yield
    finally:
        if watch:
            faulthandler.cancel_dump_traceback_later()
        for signum, handler in saved.items():
            if signal.getsignal(signum) is not handler:
                signal.signal(signum, handler)


# The files whose tests took longest in a cold run (``--durations=0``, 2 cores), longest first:
# handed to the workers before the rest so that no long file starts near the end while the
# other workers sit idle (by default pytest-xdist hands out the files with the most tests first,
# and the one-test files last: the fuzzer and the install check, a minute or more each). The
# order changes the wall time only, never what runs.
LONGEST_FIRST = [
    "test_internals.py", "test_readme.py", "test_batch_kernels.py", "test_cache.py",
    "test_lanes.py", "test_numba_untouched.py", "test_differential.py", "test_blake2.py",
    "test_sum_fidelity.py", "test_blake3.py", "test_notebooks.py", "test_modes.py",
    "test_parallel.py", "test_sum_dask.py", "test_api.py", "test_dask_files.py", "test_threads.py",
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
            marks = () if _dispatch.usable(backend) else (
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
    many times a small object's whole life, and the Monte tests make 100,000)."""
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
