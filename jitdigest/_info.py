"""``jitdigest.info()`` and its printed form: what this process runs, in the spirit of
``java -XX:+PrintFlagsFinal | grep SHA``."""
import platform

from .base import algorithms as _algorithms, cachedir as _cachedir
from .engine import (calibration as _calibration, cpu as _cpu, dispatch as _dispatch, gpu as _gpu, parallel as _parallel)
from . import _constructors

# Flag lines: name -> (algorithm family, backend name that makes it true)
FLAGS = {
    "UseSHA1Intrinsics": ("sha1", "sha_ni"),
    "UseSHA256Intrinsics": ("sha256", "sha_ni"),
}
if _cpu.ARCH == "aarch64":      # HotSpot's four on aarch64 (JDK-8297092)
    FLAGS = {"UseSHA1Intrinsics": ("sha1", "armv8"), "UseSHA256Intrinsics": ("sha256", "armv8"),
             "UseSHA512Intrinsics": ("sha512", "armv8"), "UseSHA3Intrinsics": ("keccak", "armv8")}


def _chosen(choose, spec):
    """The name of the backend ``choose`` picks for ``spec``; None inside ``backend(name)``
    for an algorithm that backend does not serve."""
    try:
        return choose(spec).name
    except ValueError:
        return None


def collect():
    """The info dict: versions, jit, threading layer, cpu, disabled switches, kernels, flags."""
    _cpu.import_numba()
    import llvmlite
    import numba
    import numpy

    from . import __version__

    specs = sorted(_algorithms.TABLE.items())
    kernels = {name: _chosen(_dispatch.kernels_for, spec) if spec.hashlib
               else _constructors.object_type(spec)._backend_name()   # chosen by its objects
               for name, spec in specs}
    batch = {name: _chosen(_dispatch.batch_kernels_for, spec) for name, spec in specs}
    by_family = {spec.family: kernels[name] for name, spec in _algorithms.SPECS.items()}
    return {
        "versions": {"jitdigest": __version__, "python": platform.python_version(),
                     "numba": numba.__version__, "llvmlite": llvmlite.__version__,
                     "numpy": numpy.__version__},
        "jit": _cpu.jit_enabled(),
        "threading_layer": numba.config.THREADING_LAYER,     # what was asked of Numba
        "parallel": _parallel.describe() if _cpu.jit_enabled() else "off (interpreted)",
        "cache": _cachedir.directory(),
        "cpu": _cpu.describe(),
        "disabled": sorted(_cpu.DISABLED),
        "forced": _dispatch.forced(),
        "kernels": kernels,
        "batch_kernels": batch,
        "calibration": _calibration.source(),
        # per algorithm in the table: "tuned" or "measured automatically" (else the rule)
        "batch_sources": _calibration.sources(),
        "tuned": {name: dict(zip(entry["lengths"], entry["best"]))
                  for name, entry in sorted(_calibration.table().items())},
        "flags": {flag: by_family.get(family) == backend
                  for flag, (family, backend) in FLAGS.items()},
        "gpu": _gpu.describe(),                              # jitdigest.cuda's device
    }


def format_lines(data=None):
    """The info dict as lines of text, one fact per line."""
    data = collect() if data is None else data
    lines = [f"{k} {v}" for k, v in data["versions"].items()]
    lines.append(f"jit = {'on' if data['jit'] else 'off (NUMBA_DISABLE_JIT=1: interpreted)'}")
    lines.append(f"threading_layer = {data['threading_layer']}")
    lines.append(f"parallel = {data['parallel']}")
    lines.append(f"cache = {data['cache']}")
    cpu = data["cpu"]
    lines.append(f"host_cpu = {cpu['host_cpu']}")
    lines.append(f"target_cpu = {cpu['target_cpu']}")
    for feature, where in cpu["features"].items():
        lines.append(f"feature {feature:<9} host={'yes' if where['host'] else 'no':<3} "
                     f"target={'yes' if where['target'] else 'no'}")
    lines.append(f"JITDIGEST_DISABLE = {','.join(data['disabled']) or '(none)'}")
    if data.get("forced"):
        lines.append(f"backend forced = {data['forced']}")
    for flag, value in data["flags"].items():
        lines.append(f"{flag} = {'true' if value else 'false'}")
    for name, kernel in data["kernels"].items():
        batch = data["batch_kernels"][name]
        lines.append(f"kernel {name:<11} {kernel or '-':<9} batch {batch or '-'}")
    lines.append(f"batch choice = {data['calibration']}")
    lines.append(f"gpu = {data['gpu']}")
    sources = data.get("batch_sources", {})
    for name, by_length in data["tuned"].items():
        how = "measured" if sources.get(name) == "measured automatically" else "tuned"
        lines.append(f"{how:<8} {name:<11} "
                     + " ".join(f"<={n}:{b}" for n, b in by_length.items()))
    return lines
