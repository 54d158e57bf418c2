"""The CPU model and features Numba's JIT compiles for, as a set of LLVM feature names.

A hardware kernel's intrinsics need a feature in the compile target (LLVM aborts the process
when asked to select one for a target without it), so kernels and dispatch both ask here.
Importing it imports no Numba; the first call does (``_internals.jit_target``).
"""
import functools

from ..base import arm as _arm
from ..base.host import ARCH, host_cpu_name, llvm_host_features


def _numba_target():
    """``(cpu_name, features)`` Numba's JIT compiles for (``kernels._internals.jit_target``,
    which imports Numba: imported here, on first use)."""
    from . import _internals
    return _internals.jit_target()


@functools.lru_cache(maxsize=None)
def target_cpu_name():
    """The CPU model Numba's JIT compiles for: ``NUMBA_CPU_NAME`` or the host's."""
    return _numba_target()[0]


def _parse_features(text):
    plus, minus = set(), set()
    for item in text.split(","):
        item = item.strip()
        if len(item) > 1 and item[0] in "+-":
            (plus if item[0] == "+" else minus).add(item[1:].lower())
    return plus, minus


def features_of(cpu_name, text):
    """The features a target with model ``cpu_name`` and LLVM feature string ``text`` (which
    overrides the model) has. What a model implies by itself is known only for the host's own
    model; any other name is treated as implying nothing, so then only features listed
    ``+name`` count (conservative: it can only under-report)."""
    plus, minus = _parse_features(text)
    implied = llvm_host_features() if cpu_name in ("host", host_cpu_name()) else ()
    found = frozenset((set(implied) | plus) - minus)
    return _arm.implied(found) if ARCH == "aarch64" else found


@functools.lru_cache(maxsize=None)
def target_features():
    """Features Numba's JIT compiles for: its CPU model (``NUMBA_CPU_NAME``, default the
    host's) and feature string (``NUMBA_CPU_FEATURES`` when set, ``NUMBA_CPU_NAME=generic``
    sets it to "", otherwise the full host list with ``avx*`` switched off under
    ``NUMBA_ENABLE_AVX=0``) as ``kernels._internals.jit_target`` reads Numba's rule, made a
    set by ``features_of``."""
    return features_of(*_numba_target())
