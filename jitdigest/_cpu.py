"""The only place that asks what the CPU and Numba's compile target can do, and which
hardware paths the user switched off (``JITDIGEST_DISABLE``, read once at import).

A hardware kernel may be compiled only when ``usable(feature, switch)`` says so: its intrinsics
need ``feature`` in the *compile target*, and LLVM aborts the process (it does not raise) when
asked to select them for a target without it. Nothing here compiles anything, and importing it
imports no Numba: the llvmlite and Numba queries (Numba's target through
``kernels._internals``) run on first use and are cached for the life of the process (neither
the CPU nor Numba's target can change while it runs).

On aarch64 the host's SHA features come from the kernel (``_arm``: HWCAP on Linux, sysctl on
macOS), not from LLVM, and ``sane_numba_environment`` gives Numba's target the features LLVM
failed to see (emulators); the ARM switches (``ARM_SWITCHES``) never enable anything elsewhere,
and ``sha3`` is off unless ``JITDIGEST_ENABLE`` names it, as HotSpot's ``UseSHA3Intrinsics``.

Public: ``ARCH``, ``SWITCHES``, ``ARM_SWITCHES``, ``OFF_BY_DEFAULT``, ``ENV_DISABLED``,
``DISABLED``, ``ENABLED``, ``host_features()``, ``host_cpu_name()``, ``target_cpu_name()``,
``target_features()``, ``features_of()``, ``jit_enabled()``, ``usable()``, ``set_disabled()``,
``disabled()``, ``describe()``.
"""
import contextlib
import functools
import os
import sys

from . import _arm, _fork
from ._stdlib import real_modules

# The instruction set this process runs ("x86_64", "aarch64", ...).
ARCH = _arm.machine()

# Every name JITDIGEST_DISABLE understands; "all" switches off every hardware path. The ARM
# ones (HotSpot's UseSHA1/SHA256/SHA512/SHA3Intrinsics) mean something on aarch64 only.
X86_SWITCHES = ("sha_ni", "avx2", "avx512")
ARM_SWITCHES = _arm.SWITCHES
SWITCHES = X86_SWITCHES + ARM_SWITCHES

# Switches that are off unless JITDIGEST_ENABLE names them (SHA-3 instructions are slower than
# the portable Keccak on some cores: JDK-8292894).
OFF_BY_DEFAULT = ("sha3",)

# Features worth showing in an info command (LLVM's spelling; on aarch64 HWCAP's).
INTERESTING = (_arm.INTERESTING if ARCH == "aarch64" else
               ("sha", "ssse3", "sse4.1", "avx2", "avx512f", "avx512bw", "avx512vl", "bmi2"))


def _unknown(names):
    """The names among ``names`` that are neither a switch nor "all", sorted."""
    return sorted(set(names) - set(SWITCHES) - {"all"})


def _listed():
    """The switches an error message lists: this machine's."""
    return ARM_SWITCHES if ARCH == "aarch64" else X86_SWITCHES


def _switch_names(variable, text, unknown, known):
    """The comma-separated switch names in ``text`` (lower case); those ``unknown(names)``
    returns are ignored with one warning that lists ``known``."""
    names = {part.strip().lower() for part in text.split(",") if part.strip()}
    ignored = unknown(names)
    if ignored:
        import warnings
        warnings.warn(f"jitdigest: {variable}: unknown switch(es) {', '.join(ignored)} "
                      f"ignored (known: {', '.join(known)})", RuntimeWarning, stacklevel=3)
    return names


def _parse_disable(text):
    names = _switch_names("JITDIGEST_DISABLE", text, _unknown, _listed() + ("all",))
    if "all" in names:
        return frozenset(SWITCHES)
    return frozenset(names & set(SWITCHES))


def _parse_enable(text):
    names = _switch_names("JITDIGEST_ENABLE", text,
                          lambda names: sorted(names - set(OFF_BY_DEFAULT)), OFF_BY_DEFAULT)
    return frozenset(names & set(OFF_BY_DEFAULT))


# What the environment asked for, fixed at import.
ENV_DISABLED = _parse_disable(os.environ.get("JITDIGEST_DISABLE", ""))

# The OFF_BY_DEFAULT switches turned on (JITDIGEST_ENABLE); JITDIGEST_DISABLE still wins.
ENABLED = _parse_enable(os.environ.get("JITDIGEST_ENABLE", ""))

# The switches dispatch sees now: ENV_DISABLED unless changed with set_disabled()/disabled().
# Read it as ``_cpu.DISABLED`` (module attribute), not ``from ._cpu import DISABLED``.
DISABLED = ENV_DISABLED


# --- host and target ----------------------------------------------------------------------

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


@functools.lru_cache(maxsize=None)
def _numba_config():
    return import_numba().core.config


def _numba_target():
    """``(cpu_name, features)`` Numba's JIT compiles for (``kernels._internals.jit_target``,
    which imports Numba: imported here, on first use)."""
    from .kernels import _internals
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


def jit_enabled():
    """False under ``NUMBA_DISABLE_JIT=1``: kernels run interpreted, no hardware path exists."""
    return not _numba_config().DISABLE_JIT


def usable(feature, switch):
    """May a kernel built on ``feature`` (an LLVM feature name, or a tuple of names that are all
    required) be compiled and used now? True only if the JIT is on, the host CPU and Numba's
    compile target both have it, and ``switch`` (one of ``SWITCHES``) is not disabled."""
    if switch not in SWITCHES:
        raise ValueError("unknown switch %r (expected one of %s)" % (switch, ", ".join(SWITCHES)))
    if switch in DISABLED or not jit_enabled():
        return False
    if switch in ARM_SWITCHES and ARCH != "aarch64":
        return False        # an ARMv8 kernel's intrinsics exist for no other target
    if switch in OFF_BY_DEFAULT and switch not in ENABLED:
        return False
    needed = (feature,) if isinstance(feature, str) else tuple(feature)
    host, target = host_features(), target_features()
    return all(f in host and f in target for f in needed)


# --- run-time override (tests, benchmarks) ------------------------------------------------

def _check_names(names):
    names = {str(n).strip().lower() for n in names}
    unknown = _unknown(names)
    if unknown:
        raise ValueError("unknown switch(es) %s (expected %s or 'all')"
                         % (", ".join(unknown), ", ".join(_listed())))
    return frozenset(SWITCHES) if "all" in names else frozenset(names)


def set_disabled(names=None):
    """Replace the set of disabled switches seen by dispatch (``None`` restores the
    environment's ``JITDIGEST_DISABLE``); returns the previous set.

    This affects kernel choices made afterwards only: a hash object that already picked its
    kernel (and anything cached from an earlier choice) keeps it."""
    global DISABLED
    previous = DISABLED
    DISABLED = ENV_DISABLED if names is None else _check_names(names)
    return previous


@contextlib.contextmanager
def disabled(*names):
    """``with disabled("sha_ni"): ...`` -- the named switches (or "all") are off inside the block
    in addition to those already off; the previous set is restored on exit. Same caveat as
    ``set_disabled``: objects that already chose a kernel keep it."""
    previous = set_disabled(DISABLED | _check_names(names))
    try:
        yield
    finally:
        set_disabled(previous)


# --- info ---------------------------------------------------------------------------------

def describe():
    """What an info command shows::

        {"host_cpu": str, "target_cpu": str, "jit": bool, "disabled": [switch, ...],
         "features": {name: {"host": bool, "target": bool}, ...}}   # for INTERESTING
    """
    host, target = host_features(), target_features()
    return {
        "host_cpu": host_cpu_name(),
        "target_cpu": target_cpu_name(),
        "jit": jit_enabled(),
        "disabled": sorted(DISABLED),
        "features": {f: {"host": f in host, "target": f in target} for f in INTERESTING},
    }
