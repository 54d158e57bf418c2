"""Which batch kernel serves which message length, measured on the CPU that runs it.

Why: the best kernel for ``hash_many`` (a lane kernel of some width, or a per-message one such
as SHA-NI) depends on the CPU and the message length, and what one development machine
measured is wrong on the next (an AVX2 laptop, an AMD server, a CPU without SHA-NI). So
``jitdigest tune`` (and ``jitdigest warmup``) time every candidate here, on this CPU, and store
the winners in the kernel cache folder, in a file named after the CPU and its features; batch
calls read it. Without a table (or for an algorithm it lacks) dispatch keeps its built-in rule
(``_dispatch.default_batch_kernels``), and a table only replaces that rule's kernel where another
was faster by a margin in every repeat's median (``_config.TUNE_MARGIN``), so noise cannot move
a choice.

Table file: JSON ``{"cpu": ..., "features": ..., "made": ..., "algorithms": {name: {"lengths":
[...], "best": [backend name per length], "seconds": {backend: [median per length]}}}}``.
A batch whose mean message length is ``m`` uses the entry of the smallest tuned length >= m
(the largest one beyond the last). A table is read only from a folder ``_cachedir.trusted()``
passes: one planted by another user would steer which kernel runs.
"""
import json
import os
import time
import warnings

from . import _algorithms, _cachedir, _config, _cpu
from ._stdlib import hashlib

_TABLE = {}          # path -> the loaded "algorithms" dict (or {} when absent or unreadable)
_PATH = {}           # cache root -> the table's path under it


def path():
    """The table file for this CPU (model and Numba's target features) in the kernel cache
    folder of this version."""
    root = _cachedir.root()
    if root not in _PATH:
        name = _cpu.host_cpu_name()
        features = ",".join(sorted(_cpu.target_features()))
        key = hashlib.sha256(f"{name}\0{features}".encode()).hexdigest()[:16]
        _PATH[root] = os.path.join(_cachedir.directory(), f"calibration-{name}-{key}.json")
    return _PATH[root]


def table():
    """The stored table's algorithms for this CPU ({} when there is none, or no cache folder
    to hold one, or it is unreadable: a damaged file is ignored with one warning)."""
    where = path()
    if where not in _TABLE:
        found = {}
        if not _cachedir.trusted(os.path.dirname(where)):
            _TABLE[where] = found           # (one warning said why) the built-in rule
            return found
        try:
            with open(where, encoding="utf-8") as f:
                data = json.load(f)
            found = _valid(data)
        except (FileNotFoundError, NotADirectoryError):
            pass    # no table (or no cache folder at all: that was said once already)
        except (OSError, ValueError, TypeError, KeyError) as exc:
            warnings.warn(f"ignoring the calibration table {where}: {exc}",
                          _cachedir.CacheWarning, stacklevel=2)
        _TABLE[where] = found
    return _TABLE[where]


def _valid(data):
    algos = data["algorithms"]
    for name, entry in algos.items():
        lengths, best = entry["lengths"], entry["best"]
        if (not isinstance(name, str) or len(lengths) != len(best) or not lengths
                or any(not isinstance(n, int) for n in lengths)
                or any(not isinstance(b, str) for b in best) or lengths != sorted(lengths)):
            raise ValueError(f"bad entry for {name!r}")
    return algos


def choice(spec, mean_length):
    """The backend name the table picks for ``spec`` at ``mean_length`` bytes, or None."""
    entry = table().get(spec.name)
    if entry is None:
        return None
    for length, best in zip(entry["lengths"], entry["best"]):
        if mean_length <= length:
            return best
    return entry["best"][-1]


def source():
    """Where batch dispatch's choices come from, in words (for ``jitdigest info``)."""
    algos = table()
    if not algos:
        return "built-in rule (no calibration for this CPU: run 'jitdigest tune')"
    return f"calibrated for {len(algos)} algorithm{'s' if len(algos) != 1 else ''}: {path()}"


# --- measuring --------------------------------------------------------------------------------

def _per_call(func, calls):
    """Seconds per call of ``func()`` over ``calls`` calls in a row."""
    start = time.perf_counter()
    for _ in range(calls):
        func()
    return (time.perf_counter() - start) / calls


def measure(spec, sets, lengths, budget, repeats, min_seconds):
    """{backend name: [median seconds per batch, per length]} for the kernel sets
    ``sets``, each hashing ``budget`` bytes of rows of each length on one thread. The
    sets take turns (``repeats`` rounds), so that a noisy neighbour slows them alike, and
    each turn lasts at least ``min_seconds`` (calls repeated). A set whose fastest turn so far
    is slower than ``_config.TUNE_DROP`` times the slowest turn of the set leading (the one
    whose slowest turn is the fastest) takes no more turns at that length, from the
    third round on: it cannot be chosen (``decide``), and its median is of the turns it took."""
    import numpy as np

    from . import batch
    from ._dispatch import backend
    rng = np.random.default_rng(0)
    extra = {} if spec.digest_size else {"length": 32}
    seconds = {ks.name: [] for ks in sets}
    for length in lengths:
        n = max(4 * _config.ALIGN, budget // max(length, 1))
        rows = rng.integers(0, 256, (n, length), dtype=np.uint8)
        out = np.empty((n, spec.digest_size or 32), np.uint8)
        calls, runs = {}, {ks.name: [] for ks in sets}
        for ks in sets:
            with backend(ks.name):
                batch.hash_many(spec.name, rows[:_config.ALIGN], threads=1, **extra)  # compile
                one = _per_call(lambda: batch.hash_many(spec.name, rows, out=out, threads=1,
                                                        **extra), 1)
            calls[ks.name] = max(1, int(min_seconds / max(one, 1e-9)) + 1)
        taking = list(sets)
        for turn in range(repeats):
            for ks in taking:
                with backend(ks.name):
                    runs[ks.name].append(_per_call(
                        lambda: batch.hash_many(spec.name, rows, out=out, threads=1, **extra),
                        calls[ks.name]))
            if turn >= 1:
                lead = min(max(runs[ks.name]) for ks in taking)
                taking = [ks for ks in taking
                          if min(runs[ks.name]) <= _config.TUNE_DROP * lead]
        for name, times in runs.items():
            times.sort()
            seconds[name].append(times[len(times) // 2])
    return seconds


def decide(default, seconds):
    """Per length, the default backend unless another's median time is below it by the margin
    (``_config.TUNE_MARGIN``)."""
    best = []
    for i in range(len(seconds[default])):
        pick, pick_time = default, seconds[default][i]
        for name, times in seconds.items():
            if times[i] * _config.TUNE_MARGIN < pick_time:
                pick, pick_time = name, times[i]
        best.append(pick)
    return best


def candidates(spec, every=True):
    """The kernel sets to time for ``spec``, the built-in choice first: every lane width
    (``every``; else the widest only, and those the built-in rule never picks: interleaved
    SHA-NI) and the best per-message kernel (the others are slower versions of it: portable
    code where SHA-NI exists)."""
    from . import _dispatch
    default = _dispatch.default_batch_kernels(spec)
    lanes = [ks for ks in _dispatch.batch_kernel_sets(spec) if ks.backend.lanes > 1]
    if not every:
        lanes = lanes[:1] + [ks for ks in lanes[1:] if not ks.backend.by_default]
    single = _dispatch.usable_kernel_sets(spec)[:1]
    chosen = [default]
    for ks in lanes + single:
        if ks.name not in [c.name for c in chosen]:
            chosen.append(ks)
    return chosen


def classes(names, every=True):
    """``names`` grouped as {first: [names]}: algorithms that run the same candidate kernels
    on the same block size (sha224 and sha256, sha384 and sha512, sha3_256 and shake_256)
    take the same time for every length, so one of them is timed for all."""
    groups = {}
    for name in names:
        spec = _algorithms.lookup(name)
        key = (spec.family, spec.block_size, tuple(ks.name for ks in candidates(spec, every)))
        groups.setdefault(key, []).append(spec.name)
    return {members[0]: members for members in groups.values()}


def measure_algorithm(name, quick=False, every=True):
    """The table entry for ``name``: {"lengths", "best", "seconds"}, its candidates timed on
    this CPU (``quick``: a quarter of the data, turns half as long)."""
    spec = _algorithms.lookup(name)
    lengths = list(_config.TUNE_LENGTHS)
    budget = _config.TUNE_BYTES // (4 if quick else 1)
    sets = candidates(spec, every)
    seconds = measure(spec, sets, lengths, budget, _config.TUNE_REPEATS,
                      _config.TUNE_MIN_SECONDS / (2 if quick else 1))
    return {"lengths": lengths, "best": decide(sets[0].name, seconds), "seconds": seconds}


def tune(names, quick=False, every=True, report=None):
    """Measure and store the table for ``names`` (``every``: each lane width, else the kernels
    ``jitdigest warmup`` compiles: see ``candidates``); returns the table and whether it
    could be stored."""
    entries = {}
    for first, members in classes(names, every).items():
        entry = measure_algorithm(first, quick, every)
        for name in members:
            entries[name] = entry
            if report is not None:
                report(name, entry)
    return store(entries)


def describe(name, entry):
    """One line of what the table picks for ``name`` by length (what tune and warmup print)."""
    return f"{name}: " + ", ".join(f"{n} B {b}" for n, b in zip(entry["lengths"], entry["best"]))


def store(entries):
    """Add {algorithm: entry} to this CPU's table and write it; returns the table and
    whether it could be stored."""
    algos = dict(table())
    algos.update(entries)
    return algos, _store(algos)


def _store(algos):
    """Write the table (atomically) and use it in this process; where the cache folder
    cannot be written, say so once and use it in this process only."""
    where = path()
    _TABLE[where] = algos
    data = {"cpu": _cpu.host_cpu_name(), "features": sorted(_cpu.target_features()),
            "made": time.strftime("%Y-%m-%dT%H:%M:%S"), "algorithms": algos}
    if not _cachedir.trusted(os.path.dirname(where)):
        return False                        # (one warning said why)
    try:
        _cachedir.write_whole(where, json.dumps(data, indent=1, sort_keys=True).encode("utf-8"))
    except OSError as exc:
        warnings.warn(f"cannot store the calibration table {where} ({exc.strerror or exc}); "
                      "it is used by this process only", _cachedir.CacheWarning, stacklevel=3)
        return False
    return True
