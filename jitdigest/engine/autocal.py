"""The batch kernel choice measured automatically, for CPUs nobody ran ``jitdigest tune`` on.

Why: the built-in rule (``dispatch.default_batch_kernels``) reads CPU features, and CPUs with
the same features differ in which kernel wins. So the first large batch of an algorithm that
this CPU's calibration table lacks times, there and then, every batch kernel it can run without
compiling another: the rule's (compiled for this batch anyway) and those already loaded or in
the kernel cache (the per-message kernel once small batches used it; all of them after a
``jitdigest warmup --no-tune``). With two or more to compare, the winners per length go into the
table (``calibration.store``, marked ``"auto"``), once per machine: later processes read them.
A tune replaces them. Skipped where measuring would mislead or could not be kept: interpreted
(NUMBA_DISABLE_JIT), switches off (``JITDIGEST_DISABLE``), ``dispatch.COMPILE_BATCH`` off, an
untrusted or unwritable cache, or ``JITDIGEST_AUTO_CALIBRATE=0``. One thread measures at a
time; another thread's batch meanwhile takes the rule, never waits.
"""
import os
import threading
import time
import warnings

from ..base import cachedir as _cachedir, config as _config
from . import calibration as _calibration, cpu as _cpu

ENV = "JITDIGEST_AUTO_CALIBRATE"
_OFF = ("0", "off", "no", "false")
_LOCK = threading.Lock()


def _new_lock():
    global _LOCK
    _LOCK = threading.Lock()     # a fork's child: the lock of a thread that is not there


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_new_lock)


def enabled():
    """Whether automatic measuring may run in this process now (see the module's docstring;
    the cache folder is checked where the table is stored)."""
    return (os.environ.get(ENV, "").strip().lower() not in _OFF and _cpu.jit_enabled()
            and not _cpu.DISABLED)


def choose(spec, rule, by_name, mean_length):
    """The backend name to serve ``spec`` at ``mean_length`` bytes after measuring (the first
    call per algorithm and process only), or None: the rule's ``rule`` (a kernel set) stays.
    ``by_name``: the batch kernel sets this process can run, by name."""
    if spec.name in _calibration.TRIED:
        return None
    if not _LOCK.acquire(blocking=False):
        return None                         # another thread measures: the rule meanwhile
    try:
        if spec.name in _calibration.TRIED:
            return None
        _calibration.TRIED.add(spec.name)
        if (not spec.hashlib or not enabled()
                or not _writable(os.path.dirname(_calibration.path()))):
            return None
        if spec.name in _calibration.reread():      # another process measured it meanwhile
            return _calibration.choice(spec, mean_length)
        sets = candidates(rule, by_name)
        if len(sets) < 2:
            return None
        try:
            for ks in sets:
                ks.hash_rows                # loaded (the rule's compiled) before the clock runs
            entry = measure(spec, sets)
        except Exception as exc:            # an optional step: the batch goes on by the rule
            warnings.warn(f"jitdigest: batch kernels for {spec.name} not measured ({exc!r}); "
                          "the built-in rule serves them", RuntimeWarning, stacklevel=2)
            return None
        _, stored = _calibration.store({spec.name: entry}, automatic=True)
    finally:
        _LOCK.release()
    return _calibration.choice(spec, mean_length) if stored else None


def _writable(folder):
    """Whether the table could be stored in ``folder``: a trusted folder (``_cachedir``) that
    this process may write, or could make (a read-only cache would only warn)."""
    if not _cachedir.trusted(folder):
        return False
    while not os.path.isdir(folder):
        parent = os.path.dirname(folder)
        if parent == folder:
            return False
        folder = parent
    return os.access(folder, os.W_OK)


def candidates(rule, by_name):
    """The kernel sets to compare, ``rule`` first: every other lane kernel set, and the best
    per-message one (as in a tune), whose ``hash_rows`` is loaded or cached: nothing is
    compiled for them."""
    found = [rule]
    singles = [ks for ks in by_name.values() if ks.backend.lanes == 1]
    best_single = singles[0] if singles else None
    for ks in by_name.values():
        if ks is rule or ks.name == rule.name:
            continue
        if ks.backend.lanes == 1 and ks is not best_single:
            continue
        if ks.ready("hash_rows"):
            found.append(ks)
    return found


def per_call(func, calls):
    """This thread's CPU seconds per call of ``func()`` over ``calls`` calls: the kernels run on
    this thread alone, and the time other processes took the core (a busy machine's turns
    scattered by several times on the wall clock) is not counted."""
    start = time.thread_time()
    for _ in range(calls):
        func()
    return (time.thread_time() - start) / calls


def decide(rule, turns):
    """The backend for one length: ``rule`` unless another's every turn, by the margin
    (``_config.TUNE_MARGIN``), beat the rule's fastest one (of those that did, the lowest
    median). Stricter than a tune's medians: short turns on a busy machine scatter, and a
    choice stored on noise would stay on the machine until a tune."""
    fastest = min(turns[rule])
    clear = [name for name, times in turns.items()
             if name != rule and max(times) * _config.TUNE_MARGIN < fastest]
    return min(clear, key=lambda name: _median(turns[name]), default=rule)


def _median(times):
    return sorted(times)[len(times) // 2]


def measure(spec, sets):
    """The table entry for ``spec``: {"lengths", "best", "seconds", "auto"}, the kernel sets
    ``sets`` (the rule's first) timed on one thread through their ``hash_rows`` on equal rows,
    taking turns as a tune's do (``_tune.measure``), with ``_config.AUTO_BYTES`` a length;
    ``decide`` picks."""
    import numpy as np

    rng = np.random.default_rng(0)
    lengths = list(_config.AUTO_LENGTHS)
    seconds = {ks.name: [] for ks in sets}
    best = []
    for length in lengths:
        n = max(_config.ALIGN, _config.AUTO_BYTES // max(length, 1))
        values = rng.integers(0, 256, n * length, dtype=np.uint8)
        starts = np.arange(n, dtype=np.int64) * length
        sizes = np.full(n, length, dtype=np.int64)
        rows = np.arange(n, dtype=np.int64)
        out = np.empty((n, spec.digest_size or 32), np.uint8)
        iv = spec.initial_state
        runs, calls = {}, {}
        for ks in sets:
            entry = ks.hash_rows

            def run(entry=entry):
                entry(values, starts, sizes, rows, iv, out)
            run()                                               # loaded or compiled first
            calls[ks.name] = max(1, int(_config.AUTO_MIN_SECONDS / max(per_call(run, 1),
                                                                       1e-9)) + 1)
            runs[ks.name] = (run, [])
        taking = list(runs)
        for turn in range(_config.TUNE_REPEATS):
            for name in taking:
                runs[name][1].append(per_call(runs[name][0], calls[name]))
            if turn >= 1:
                lead = min(max(runs[name][1]) for name in taking)
                taking = [name for name in taking
                          if min(runs[name][1]) <= _config.TUNE_DROP * lead]
        turns = {name: times for name, (_, times) in runs.items()}
        best.append(decide(sets[0].name, turns))
        for name, times in turns.items():
            seconds[name].append(_median(times))
    return {"lengths": lengths, "best": best, "seconds": seconds, "auto": True}
