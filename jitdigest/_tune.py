"""``jitdigest tune``: time the batch kernels of each algorithm on this CPU and store which
serves each message length (``engine/calibration.py`` keeps the table and reads it).

The kernels are timed through ``hash_many`` as a user calls it, with each backend forced in
turn, so what is measured is what a call costs: on one thread, in that thread's CPU time (as
the automatic measurement, ``engine/autocal.py``), which the other processes of a busy machine
do not scatter as they scatter the wall clock.
"""
from . import batch
from .base import algorithms as _algorithms, config as _config
from .engine import calibration as _calibration, dispatch as _dispatch
from .engine.autocal import per_call as _per_call
from .engine.dispatch import backend


def measure(spec, sets, lengths, budget, repeats, min_seconds):
    """{backend name: [median seconds per batch, per length]} for the kernel sets
    ``sets``, each hashing ``budget`` bytes of rows of each length on one thread. The
    sets take turns (``repeats`` rounds), so that a noisy neighbour slows them alike, and
    each turn lasts at least ``min_seconds`` (calls repeated). A set whose fastest turn so far
    is slower than ``_config.TUNE_DROP`` times the slowest turn of the set leading (the one
    whose slowest turn is the fastest) takes no more turns at that length, from the
    third round on: it cannot be chosen (``decide``), and its median is of the turns it took."""
    import numpy as np

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
    return _calibration.store(entries)


def describe(name, entry):
    """One line of what the table picks for ``name`` by length (what tune and warmup print)."""
    return f"{name}: " + ", ".join(f"{n} B {b}" for n, b in zip(entry["lengths"], entry["best"]))
