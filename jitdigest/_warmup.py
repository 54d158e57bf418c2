"""``jitdigest warmup``: compile ahead of time every kernel this CPU will use for some algorithms
(the per-message entries, the batch ones behind ``hash_many``, and the entries of a row's own
objects), in worker processes so that every core compiles, and store them in the kernel cache,
so that later runs load and never compile.

Numba compiles one function at a time per process, mostly in Python, so processes, not threads,
use the cores. Kernel sets that share compiled kernels (a backend module calling another's) are
compiled one after another (a chain), never by two processes at once; the rest are chains of
their own. The longest chains start first, a chain's length being the size of the source it
compiles (generated straight-line code, whose size follows its compile time), so that the last
tasks are the shortest. Backend modules are found through ``_dispatch``'s backend records.

The calibration (``_calibration``: which batch kernel serves which length on this CPU) runs in
the same workers: an algorithm is timed as soon as the kernels it compares are compiled, while
the other processes compile on. The measurements are in benchmarks/results/.
"""
import multiprocessing
import sys
import time
from concurrent.futures import FIRST_COMPLETED, ProcessPoolExecutor, wait

from . import _constructors, _tune
from .runtime import native as _native, stream as _stream
from .base import algorithms as _algorithms
from .engine import calibration as _calibration, cpu as _cpu, dispatch as _dispatch

# Entries of a batch ("lanes") backend: one task, as the prange entries call its hash_rows.
# Per-message backends serve every entry.
BATCH_TASKS = (("hash_rows", "hash_chunks", "grid_chunks"),)


def plan(names, tune=False, **rows):
    """[(backend, word name, entries)] that the algorithms ``names`` (any names of the table;
    a keyword ``NAME=True`` adds that row) use on this CPU, without repeats, lane kernels first, and
    {algorithm: (kernel, batch kernel)} names for the report. With ``tune``, also the kernels
    the calibration times (``_tune.candidates``), as it may pick any of them. A kernel set's
    entries are one task, as they share compiled pieces (a lane kernel's block function, a
    per-message kernel's ``compress``). A row hashlib lacks has objects of its own type,
    whose entries are one task of their own (``OBJECT``), its per-message backend's batch
    entries another (they serve batches of a few rows: ``_dispatch.default_batch_kernels``)."""
    tasks, chosen, native, streamed = {}, {}, set(), set()
    specs = [_algorithms.lookup_any(name) for name in names]
    specs += [_algorithms.TABLE[name] for name, wanted in rows.items() if wanted]
    for spec in dict.fromkeys(specs):
        single = _dispatch.kernels_for(spec)
        batch = _dispatch.batch_kernels_for(spec)
        chosen[spec.name] = (single.name, batch.name)
        word = spec.word_name
        timed = _tune.candidates(spec, every=False) if tune and spec.hashlib else []
        for ks in [batch] + timed:
            if ks is not single:
                for entries in BATCH_TASKS:
                    tasks.setdefault((ks.backend, word, entries), None)
        if spec.hashlib:
            tasks.setdefault((single.backend, word, _dispatch.ENTRIES), None)
            if _cpu.jit_enabled():
                native.add((batch.backend, word))
                if _stream.streams(spec):
                    streamed.add((single.backend, word))
            continue
        objects = _constructors.object_type(spec)
        chosen[spec.name] = (objects._backend_name(), batch.name)
        for entries in BATCH_TASKS:
            tasks.setdefault((single.backend, word, entries), None)
        module = next(b for b in _dispatch.backends(spec.family)
                      if b.name == objects._backend_name())
        tasks.setdefault((module, OBJECT, objects._ENTRIES), None)
        if _cpu.jit_enabled() and _stream.streams(spec):
            streamed.add((module, OBJECT))
        if _cpu.jit_enabled() and _native.tree_shape(spec.family) is not None:
            native.add((batch.backend, word))       # (a tree hash's batch kernel, stored too)
    order = sorted(tasks, key=lambda t: t[0].lanes == 1)       # stable: lanes first
    # (family, backend module's name, word, entries): plain values, sent to worker processes;
    # a hashlib algorithm's batch kernel set is also stored as machine code (NATIVE, last of
    # its entries), and a Merkle-Damgard one's hash objects' entries (STREAM); last, the batch
    # API's join of a list of bytes (kernels/_pyobjects.py), used by every algorithm
    return ([(b.family, _module_name(b), word,
              entries + ((NATIVE,) if (b, word) in native and "hash_rows" in entries else ())
              + ((STREAM,) if (b, word) in streamed and "update" in entries else ()))
             for b, word, entries in order]
            + [JOIN_TASK]), chosen


JOIN_TASK = ("bytes", "join", "uint8", ("join_exact_bytes",))
# the entry of a task that stores its kernel set's hash_rows as machine code (``_native``), for
# ``jitdigest sum`` to run without importing Numba
NATIVE = "native_rows"
# the entry of a task that stores its kernel set's update and final as machine code
# (``runtime/stream.py``), for ``jitdigest sum`` to stream large files without Numba
STREAM = "native_stream"
STORED = (NATIVE, STREAM)
# the "word" of a task of the entries of a row's own objects (``_constructors.object_type``)
OBJECT = "object"


def _module_name(backend):
    """A backend's module name in its family package: unlike ``NAME``, never shared (a
    family's chunk lanes and message lanes may share theirs)."""
    return backend.module.__name__.rpartition(".")[2]


def _backend(family, name):
    """The backend record (``_dispatch.Backend``) of ``family``'s module ``name``, per-message
    or batch; None for a family or module there is not (the bytes join task's)."""
    if family not in _dispatch.FAMILIES:
        return None
    return next((b for b in _dispatch.backends(family) + _dispatch.batch_backends(family)
                 if _module_name(b) == name), None)


def compile_one(family, name, word, entries):
    """Compile (or load) entries of one kernel set in this process; returns the seconds."""
    import numpy as np
    start = time.perf_counter()
    if (family, name, word, entries) == JOIN_TASK:
        from .kernels import _pyobjects
        _pyobjects.join([b""])
        return time.perf_counter() - start
    backend = _backend(family, name)
    if word == OBJECT:
        spec = next(s for s in _algorithms.TABLE.values()
                    if s.family == family and not s.hashlib)
        _constructors.object_type(spec)._compile_entries(
            backend.module, [entry for entry in entries if entry not in STORED])
        if STREAM in entries:
            try:
                _stream.write(spec)
            except OSError:
                pass                        # an unwritable cache: sum runs through Numba
        return time.perf_counter() - start
    ks = _dispatch._kernel_set(backend, np.dtype(word).type)
    ks.compile_all([entry for entry in entries if entry not in STORED])
    try:
        if NATIVE in entries:
            from .runtime import native_write as _native_write
            _native_write.write_kernel(ks)
        if STREAM in entries:
            _stream.write(next(s for s in _algorithms.SPECS.values()
                               if s.family == family and s.word_name == word), ks)
    except OSError:
        pass                                # an unwritable cache: sum runs through Numba
    return time.perf_counter() - start


def _store_index(names):
    """Index the batch kernels the tasks stored as machine code (``_native``); the names of
    the algorithms it could."""
    if not _cpu.jit_enabled():
        return []
    from .runtime import native_write as _native_write
    try:
        return _native_write.write_index(
            {name: _dispatch.batch_kernels_for(_algorithms.lookup_any(name)) for name in names})
    except OSError:
        return []                           # an unwritable cache: sum runs through Numba


def _label(task):
    family, name, _, entries = task
    return " ".join((family, name) + (entries if len(entries) == 1 else ()))


def _callees(family, name):
    """The kernel modules of ``family`` other than ``name`` whose compiled functions the backend
    module ``name`` calls (it imports them: ``from .sha_ni import compress``)."""
    backend = _backend(family, name)
    if backend is None:                     # not a family's module (the bytes join task)
        return set()
    module = backend.module
    prefix = module.__name__.rpartition(".")[0] + "."
    owners = {getattr(getattr(value, "py_func", None), "__module__", None)
              for value in vars(module).values()}
    return {owner[len(prefix):] for owner in owners
            if owner and owner.startswith(prefix) and owner != module.__name__}


def _source_size(family, name):
    """Bytes of the kernel module ``name`` of ``family`` (0 for a task that is not one)."""
    import os
    backend = _backend(family, name)
    try:
        return os.path.getsize(backend.module.__file__)
    except (AttributeError, OSError, TypeError):
        return 0


def chains(tasks):
    """``tasks`` (``plan``'s) as lists, each in plan order, the longest first (stable): the
    tasks of one backend module, and of modules that call one another's compiled functions, in
    one list, compiled one after another. Length: the source bytes of the chain's modules and
    of those they call (see the module's docstring)."""
    group = {}                              # (family, module name) -> its chain's key
    for family, name, _, _ in tasks:
        key = group.setdefault((family, name), (family, name))
        for other in _callees(family, name):
            old = group.setdefault((family, other), (family, other))
            group = {m: key if k == old else k for m, k in group.items()}
    by_key = {}
    for task in tasks:
        by_key.setdefault(group[task[:2]], []).append(task)

    def size(key):                          # every module the chain's group holds
        return sum(_source_size(*m) for m, k in group.items() if k == key)
    return [by_key[key] for key in sorted(by_key, key=size, reverse=True)]


def _worker_start():
    """In each worker process, first: its interpreter ends without tearing itself down (freeing
    a worker's compiled functions and typing caches took a noticeable share of a warmup's
    end, with the work all done). Nothing is left to write by then (a kernel is in the cache
    before its task returns; multiprocessing has flushed the result queue), so the last exit
    handler (registered first: they run last-in, first-out, after Numba's and llvmlite's)
    flushes the standard streams and leaves with ``os._exit``."""
    import atexit
    atexit.register(_exit_now)


def _exit_now():
    import os
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except (AttributeError, OSError, ValueError):
            pass
    os._exit(0)


def tune_one(name):
    """Time ``name``'s candidate kernels (compiled and cached by then) in this process: the
    table entry (``_tune.measure_algorithm``, quick) and the seconds it took."""
    start = time.perf_counter()
    entry = _tune.measure_algorithm(name, quick=True, every=False)
    return entry, time.perf_counter() - start


def tunings(names):
    """[(algorithm, its class's names, the (family, module name) of every kernel set it
    times)]: one timing per class (``_tune.classes``), ready once those are compiled."""
    found = []
    for first, members in _tune.classes(names, every=False).items():
        spec = _algorithms.lookup(first)
        needs = {(ks.backend.family, _module_name(ks.backend))
                 for ks in _tune.candidates(spec, every=False)}
        found.append((first, members, needs))
    return found


def run(names, jobs, out=None, err=None, tune=False):
    """Compile everything ``names`` (any names of the table) need on ``jobs`` processes; with
    ``tune``, also time the batch kernels of hashlib's among them and store the calibration table
    (``_calibration``): each algorithm in a worker as soon as its kernels are compiled, while
    the other workers compile on (its kernels take turns, so that load slows them alike).
    Returns the exit status. ``out``/``err``: the streams written to (default:
    sys.stdout/sys.stderr at call time)."""
    out = sys.stdout if out is None else out
    err = sys.stderr if err is None else err
    start = time.perf_counter()
    pool = None
    if jobs > 1:
        # the workers start, and import Numba, while this process makes the plan (which
        # imports it too)
        context = multiprocessing.get_context("spawn")       # a fresh interpreter: no locks
        pool = ProcessPoolExecutor(max_workers=jobs, mp_context=context,
                                   initializer=_worker_start)
        for _ in range(jobs):
            pool.submit(_preload)
    try:
        return _run(pool, names, jobs, out, err, tune, start)
    finally:
        if pool is not None:
            pool.shutdown(cancel_futures=True)


def _preload():
    """A worker's first job: import what compiling needs (Numba, the kernel helpers)."""
    from .kernels import _jit  # noqa: F401,F811


def _run(pool, names, jobs, out, err, tune, start):
    from .base import cachedir as _cachedir
    from .engine import notice as _notice
    tasks, chosen = plan(names, tune)
    # the batch kernels of hashlib's algorithms are timed and stored as machine code (a tree
    # hash's stored too); a row hashlib lacks has its batch kernel chosen by the CPU's features
    specs = list(map(_algorithms.lookup_any, names))
    indexed = [s.name for s in specs if s.hashlib or _native.tree_shape(s.family) is not None]
    names = [spec.name for spec in specs if spec.hashlib]
    pending_tunes = tunings(names) if tune else []
    total = len(tasks) + len(pending_tunes)
    jobs = max(1, min(jobs, total))
    tty = _notice.isatty(err)
    done = 0
    entries, tune_seconds = {}, 0.0
    left = {}                       # (family, module name) -> its tasks not finished
    for task in tasks:
        left[task[:2]] = left.get(task[:2], 0) + 1

    def report(label, seconds):
        nonlocal done
        done += 1
        if tty:
            err.write(f"\r\x1b[K[{done}/{total}] {label} {seconds:.1f} s")
            err.flush()

    def finished(task, seconds):
        report(_label(task), seconds)
        left[task[:2]] -= 1

    def timed(tuning, result):
        nonlocal tune_seconds
        entry, seconds = result
        tune_seconds += seconds
        for name in tuning[1]:
            entries[name] = entry
        report(f"timing {tuning[0]}", seconds)

    def ready_tunes():
        ready = [t for t in pending_tunes if all(left.get(m, 0) == 0 for m in t[2])]
        for t in ready:
            pending_tunes.remove(t)
        return ready

    if pool is None:
        for task in tasks:
            finished(task, compile_one(*task))
        for tuning in ready_tunes():
            timed(tuning, tune_one(tuning[0]))
    else:
        waiting = chains(tasks)
        tunes = []
        running = {}

        def submit(chain):
            if tunes:                   # an algorithm ready to be timed first
                tuning = tunes.pop(0)
                running[pool.submit(tune_one, tuning[0])] = (None, tuning, chain)
                return
            task = chain.pop(0)
            running[pool.submit(compile_one, *task)] = (task, None, chain)

        try:
            while waiting and len(running) < jobs:
                submit(waiting.pop(0))
            while running:
                complete, _ = wait(running, return_when=FIRST_COMPLETED)
                for future in complete:
                    task, tuning, chain = running.pop(future)
                    if task is not None:
                        finished(task, future.result())
                        tunes.extend(ready_tunes())
                    else:
                        timed(tuning, future.result())
                    if chain or tunes or waiting:
                        submit(chain if chain else waiting.pop(0) if waiting else [])
                while tunes and len(running) < jobs:
                    submit([])
        except BaseException:
            for future in running:
                future.cancel()
            raise
    if tty:
        err.write("\r\x1b[K")
        err.flush()
    stored = _store_index(indexed)
    for name, (single, batch) in sorted(chosen.items()):
        how = ", stored for jitdigest sum" if name in stored else ""
        out.write(f"{name}: {single} kernels, batch {batch}{how}: compiled and cached\n")
    count = sum(len([e for e in task[3] if e not in STORED]) for task in tasks)
    out.write(f"{count} kernels ready in {time.perf_counter() - start:.1f} s on {jobs} "
              f"process{'es' if jobs > 1 else ''}; cache: {_cachedir.directory()}\n")
    if entries:
        for name in names:
            out.write(_tune.describe(_algorithms.lookup(name).name, entries[name]) + "\n")
        _, saved = _calibration.store(entries)
        where = _calibration.path() if saved else "not stored (see the warning above)"
        out.write(f"batch kernels timed in {tune_seconds:.1f} s (while compiling); "
                  f"table: {where}\n")
    return 0
