"""Which batch kernel serves which message length, measured on the CPU that runs it.

Why: the best kernel for ``hash_many`` (a lane kernel of some width, or a per-message one such
as SHA-NI) depends on the CPU and the message length, and what one development machine
measured is wrong on the next (an AVX2 laptop, an AMD server, a CPU without SHA-NI). So
``jitdigest tune`` (and ``jitdigest warmup``) time every candidate here, on this CPU, and store
the winners in the kernel cache folder, in a file named after the CPU and its features; batch
calls read it. Without a table (or for an algorithm it lacks) dispatch keeps its built-in rule
(``_dispatch.default_batch_kernels``), and a table only replaces that rule's kernel where another
was faster by a margin in every repeat's median (``_config.TUNE_MARGIN``), so noise cannot move
a choice. A batch call of an algorithm the table lacks may add an entry measured there and
then (``engine/autocal.py``; marked ``"auto"``, replaced by a tune). A table is read only from
a folder ``_cachedir.trusted()`` passes: one planted by another user would steer which kernel
runs. (``path()``: the table file and its format; ``choice()``: which entry a batch uses.)
"""
import json
import os
import time
import warnings

from ..base import cachedir as _cachedir
from . import cpu as _cpu
from ..base.stdlib import hashlib

_TABLE = {}          # path -> the loaded "algorithms" dict (or {} when absent or unreadable)
_PATH = {}           # cache root -> the table's path under it
# algorithms whose automatic measurement (``autocal``) this process has tried: tried once
TRIED = set()


def path():
    """The table file for this CPU (model and Numba's target features) in the kernel cache
    folder of this version: JSON ``{"cpu": ..., "features": ..., "made": ..., "algorithms":
    {name: {"lengths": [...], "best": [backend name per length], "seconds": {backend: [median
    per length]}, "auto": true where measured automatically (absent: by a tune)}}}``."""
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
        _TABLE[where] = _read(where)
    return _TABLE[where]


def _read(where, warn=True):
    """The algorithms of the table file ``where`` ({} where there is none or it may not be
    read: see ``table``)."""
    if not _cachedir.trusted(os.path.dirname(where)):
        return {}                           # (one warning said why) the built-in rule
    try:
        with open(where, encoding="utf-8") as f:
            data = json.load(f)
        return _valid(data)
    except (FileNotFoundError, NotADirectoryError):
        pass    # no table (or no cache folder at all: that was said once already)
    except (OSError, ValueError, TypeError, KeyError) as exc:
        if warn:
            warnings.warn(f"ignoring the calibration table {where}: {exc}",
                          _cachedir.CacheWarning, stacklevel=3)
    return {}


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
    """The backend name the table picks for ``spec`` at ``mean_length`` bytes, or None: the
    entry of the smallest tuned length >= ``mean_length`` (the largest one beyond the last)."""
    entry = table().get(spec.name)
    if entry is None:
        return None
    for length, best in zip(entry["lengths"], entry["best"]):
        if mean_length <= length:
            return best
    return entry["best"][-1]


def sources():
    """{algorithm: "tuned" or "measured automatically"} for this CPU's table's entries (the
    others: the built-in rule)."""
    return {name: "measured automatically" if entry.get("auto") else "tuned"
            for name, entry in table().items()}


def source():
    """Where batch dispatch's choices come from, in words (for ``jitdigest info``)."""
    found = sources()
    if not found:
        return ("built-in rule (nothing measured on this CPU yet: 'jitdigest tune' times every "
                "batch kernel; a large batch times those already compiled)")
    counts = [f"{how} for {n} algorithm{'s' if n != 1 else ''}"
              for how in ("tuned", "measured automatically")
              for n in [list(found.values()).count(how)] if n]
    return f"{', '.join(counts)}, built-in rule for the rest: {path()}"


# --- measuring --------------------------------------------------------------------------------

def reread():
    """This CPU's table with the entries another process stored since it was read (those it
    holds win: see ``store``)."""
    algos = table()
    for name, entry in _read(path(), warn=False).items():
        algos.setdefault(name, entry)
    return algos


def store(entries, automatic=False):
    """Add {algorithm: entry} to this CPU's table and write it; returns the table and
    whether it could be stored. The file is read again first, so that entries another process
    stored meanwhile are kept; ``automatic`` entries never replace a tuned one."""
    algos = dict(table())
    algos.update(_read(path(), warn=False))
    for name, entry in entries.items():
        if not (automatic and name in algos and not algos[name].get("auto")):
            algos[name] = entry
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
