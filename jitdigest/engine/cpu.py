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
"""
# Public: ARCH, SWITCHES, ARM_SWITCHES, OFF_BY_DEFAULT, ENV_DISABLED, DISABLED, ENABLED,
# host_features(), host_cpu_name(), target_cpu_name(), target_features(), features_of(),
# jit_enabled(), usable(), set_disabled(), disabled(), describe().
import contextlib
import functools
import os

from ..base import arm as _arm
# re-exported: what the host is, and what Numba's target is
from ..base.host import ARCH, host_cpu_name, host_features, import_numba, llvm_host_features  # noqa: F401,E501
from ..kernels._contract import TIERS
from ..kernels._target import features_of, target_cpu_name, target_features  # noqa: F401


# Every name JITDIGEST_DISABLE understands; "all" switches off every hardware path. The ARM
# ones (HotSpot's UseSHA1/SHA256/SHA512/SHA3Intrinsics) mean something on aarch64 only.
# the x86 tiers' switches, from the tier table (a new tier brings its switch)
X86_SWITCHES = tuple(dict.fromkeys(t.switch for t in TIERS.values() if t.switch and t.arch is None))
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
def _numba_config():
    return import_numba().core.config


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
