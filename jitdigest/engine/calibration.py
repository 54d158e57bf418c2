"""Which batch kernel serves which message length, measured on the CPU that runs it.

Why: the best kernel for ``hash_many`` (a lane kernel of some width, or a per-message one such
as SHA-NI) depends on the CPU and the message length, and what one development machine
measured is wrong on the next (an AVX2 laptop, an AMD server, a CPU without SHA-NI). So
``jitdigest tune`` (and ``jitdigest warmup``) time every candidate here, on this CPU, and store
the winners in the kernel cache folder, in a file named after the CPU and its features; batch
calls read it. Without a table (or for an algorithm it lacks) dispatch keeps its built-in rule
(``_dispatch.default_batch_kernels``), and a table only replaces that rule's kernel where another
was faster by a margin in every repeat's median (``_config.TUNE_MARGIN``), so noise cannot move
a choice. A table is read only from a folder ``_cachedir.trusted()`` passes: one planted by
another user would steer which kernel runs. (``path()``: the table file and its format;
``choice()``: which entry a batch uses.)
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


def path():
    """The table file for this CPU (model and Numba's target features) in the kernel cache
    folder of this version: JSON ``{"cpu": ..., "features": ..., "made": ..., "algorithms":
    {name: {"lengths": [...], "best": [backend name per length], "seconds": {backend: [median
    per length]}}}}``."""
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
    """The backend name the table picks for ``spec`` at ``mean_length`` bytes, or None: the
    entry of the smallest tuned length >= ``mean_length`` (the largest one beyond the last)."""
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
