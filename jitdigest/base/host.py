"""The host CPU as this process sees it, and the one way jitdigest first imports Numba.

Host features come from LLVM (llvmlite, no Numba) or, on aarch64, from the kernel (``arm``:
HWCAP, sysctl). ``import_numba`` runs ``sane_numba_environment`` first (a bad
``NUMBA_NUM_THREADS``, an emulator's missing SHA features) and binds the standard library's
hashlib and hmac while Numba imports. Everything is cached for the life of the process.
"""
import functools
import os
import sys

from . import arm as _arm, fork as _fork
from .stdlib import real_modules

# The instruction set this process runs ("x86_64", "aarch64", ...).
ARCH = _arm.machine()


@functools.lru_cache(maxsize=None)
def _host_feature_map():
    """LLVM's host feature map as a plain dict {name: bool}; empty if LLVM cannot tell."""
    with _fork.loading():                # an LLVM call: no fork inside it (llvmlite's lock)
        import llvmlite.binding as ll
        try:
            return dict(ll.get_host_cpu_features())
        except RuntimeError:
            return {}


@functools.lru_cache(maxsize=None)
def llvm_host_features():
    """Features LLVM sees on the host CPU (what its host model implies)."""
    return frozenset(k for k, on in _host_feature_map().items() if on)


@functools.lru_cache(maxsize=None)
def host_features():
    """Features the host CPU has (LLVM names: 'sha', 'avx2', 'avx512f', 'sse4.1', ...; on
    aarch64 the kernel's answer: 'neon', 'aes', 'sha1', 'sha2', 'sha512', 'sha3')."""
    if ARCH == "aarch64":
        found = _arm.host_features()
        if found is not None:
            return found
        return _arm.implied(llvm_host_features())
    return llvm_host_features()


@functools.lru_cache(maxsize=None)
def host_cpu_name():
    """LLVM's name for the host CPU model (e.g. 'icelake-server', 'znver3')."""
    with _fork.loading():                # as _host_feature_map
        import llvmlite.binding as ll
        return ll.get_host_cpu_name()


def sane_numba_environment():
    """Called before Numba is first imported: a ``NUMBA_NUM_THREADS`` that is not a positive
    whole number makes ``import numba`` itself raise, deep inside Numba. Drop it with a one-line
    warning instead (Numba then uses one thread per CPU). On aarch64, where LLVM misses a SHA
    extension the kernel reports (an emulator's ``/proc/cpuinfo``), Numba's target is given it
    (``_arm.fix_numba_target``; not when ``NUMBA_CPU_NAME``/``NUMBA_CPU_FEATURES`` is set)."""
    if ARCH == "aarch64":
        _arm.fix_numba_target(os.environ, host_features, _host_feature_map)
    text = os.environ.get("NUMBA_NUM_THREADS")
    if text is None:
        return
    try:
        ok = int(text) >= 1
    except ValueError:
        ok = False
    if not ok:
        import warnings
        del os.environ["NUMBA_NUM_THREADS"]
        warnings.warn(f"jitdigest: NUMBA_NUM_THREADS={text!r} is not a positive whole number; "
                      "ignored (one thread per CPU)", RuntimeWarning, stacklevel=3)


def import_numba():
    """``import numba``, the one way jitdigest first imports it: after
    ``sane_numba_environment()``, and with the standard library's hashlib and hmac in
    ``sys.modules`` while Numba's modules bind them (``_stdlib``: jitdigest may stand in for
    them by then). Later calls find Numba imported. Under ``_fork``'s gate: one thread swaps
    (two would put back each other's), and no fork lands inside the import (a child would wait
    forever on its import lock)."""
    if "numba" not in sys.modules:
        with _fork.loading():
            if "numba" not in sys.modules:
                sane_numba_environment()
                with real_modules():
                    import numba  # noqa: F401
    import numba
    return numba
