"""What an aarch64 host has of the ARMv8 SHA extensions, asked of the operating system, and the
compile target Numba needs to use them: the ARM half of ``_cpu``, kept apart so that it can be
tested on any machine from given HWCAP or sysctl values.

Why not LLVM's view: LLVM reads ``/proc/cpuinfo`` on Linux, which an emulator (qemu-user) or
an old kernel may fill with another CPU's lines; it then reports ``generic`` with ``-aes,-sha2``
and Numba, compiling for that, aborts the process on the first SHA intrinsic. The kernel's
auxiliary vector (``getauxval(AT_HWCAP)``) is what HotSpot reads (JDK-8297092) and is right in
every case; on macOS ``sysctl hw.optional.arm.FEAT_*`` (older: ``hw.optional.armv8_2_sha*``).

The names are HotSpot's four, one per switch: ``sha1``, ``sha2`` (SHA-224/256), ``sha512``,
``sha3``; with ``neon`` and ``aes`` beside them for information. LLVM spells the target
features differently: its ``sha2`` feature enables the SHA-1 and SHA-256 instructions and its
``sha3`` feature the SHA-512 and SHA-3 ones, so ``implied()`` adds ``sha1`` / ``sha512`` to a
target feature set that has ``sha2`` / ``sha3``. Importing this module imports no Numba.
"""
import os
import sys

SWITCHES = ("sha1", "sha2", "sha512", "sha3")
INTERESTING = ("neon", "aes") + SWITCHES

# Linux arm64 <asm/hwcap.h>: the bits of getauxval(AT_HWCAP). All four SHA extensions are in
# AT_HWCAP (AT_HWCAP2 holds SVE2's SHA-3/SM bits, which these kernels do not use).
AT_HWCAP, AT_HWCAP2 = 16, 26
HWCAP_BITS = {"neon": 1 << 1, "aes": 1 << 3, "sha1": 1 << 5, "sha2": 1 << 6,
              "sha3": 1 << 17, "sha512": 1 << 21}

# macOS: the sysctl names saying yes (1) for each feature, newest spelling first. Every Apple
# CPU has NEON, AES, SHA-1 and SHA-256.
SYSCTL_NAMES = {"sha1": ("hw.optional.arm.FEAT_SHA1",),
                "sha2": ("hw.optional.arm.FEAT_SHA256",),
                "sha512": ("hw.optional.arm.FEAT_SHA512", "hw.optional.armv8_2_sha512"),
                "sha3": ("hw.optional.arm.FEAT_SHA3", "hw.optional.armv8_2_sha3")}
ALWAYS_ON_MACOS = ("neon", "aes", "sha1", "sha2")

# LLVM's AArch64 target features, and the HotSpot names each one covers.
LLVM_COVERS = {"sha2": ("sha1", "sha2"), "sha3": ("sha512", "sha3")}


def machine(name=None):
    """``"aarch64"`` for any 64-bit ARM (Linux says aarch64, macOS arm64), else
    ``platform.machine()`` as it is ("x86_64" on Linux)."""
    if name is None:
        try:
            name = os.uname().machine       # platform.machine() on POSIX, without its import
        except AttributeError:              # Windows
            import platform
            name = platform.machine()
    return "aarch64" if name.lower() in ("aarch64", "arm64", "armv8", "armv8l") else name


def from_hwcap(hwcap, hwcap2=0):
    """The feature names whose bit is set in ``hwcap`` (``hwcap2`` is accepted for the record:
    none of these features lives there)."""
    return frozenset(name for name, bit in HWCAP_BITS.items() if hwcap & bit)


def from_sysctl(get):
    """The feature names macOS reports; ``get(name)`` returns the sysctl's integer value, or
    None where it does not exist."""
    found = set(ALWAYS_ON_MACOS)
    for feature, names in SYSCTL_NAMES.items():
        for name in names:
            value = get(name)
            if value is not None:
                if value:
                    found.add(feature)
                else:
                    found.discard(feature)
                break
    return frozenset(found)


def _getauxval():
    import ctypes
    libc = ctypes.CDLL(None)
    fn = libc.getauxval
    fn.argtypes, fn.restype = [ctypes.c_ulong], ctypes.c_ulong
    return int(fn(AT_HWCAP)), int(fn(AT_HWCAP2))


def _sysctl(name):
    import ctypes
    libc = ctypes.CDLL(None)
    value, size = ctypes.c_int64(0), ctypes.c_size_t(8)
    if libc.sysctlbyname(name.encode(), ctypes.byref(value), ctypes.byref(size), None, 0):
        return None
    return value.value


def host_features():
    """What the operating system says this aarch64 CPU has, or None where it cannot be asked
    (neither Linux nor macOS)."""
    try:
        if sys.platform.startswith("linux"):
            return from_hwcap(*_getauxval())
        if sys.platform == "darwin":
            return from_sysctl(_sysctl)
    except (OSError, AttributeError):
        pass
    return None


def implied(features):
    """``features`` (LLVM names) with the HotSpot names LLVM's ``sha2``/``sha3`` cover added."""
    found = set(features)
    for llvm_name, names in LLVM_COVERS.items():
        if llvm_name in found:
            found.update(names)
    return frozenset(found)


def corrected(llvm_map, host):
    """LLVM's host features (the map {name: bool}) with the crypto features the operating
    system reports (``host``) switched on: ``aes``, ``sha2`` when it has SHA-1 and SHA-256,
    ``sha3`` when it also has SHA-512 and SHA-3 (LLVM has one feature for each pair)."""
    want = {name: bool(on) for name, on in llvm_map.items()}
    for name in ("neon", "aes"):
        if name in host:
            want[name] = True
    if {"sha1", "sha2"} <= host:
        want["sha2"] = True
        if {"sha512", "sha3"} <= host:
            want["sha3"] = True
    return want


def feature_string(features):
    """The map {name: bool} as LLVM's feature string, ``"+aes,-sha3,..."``."""
    return ",".join(("+" if on else "-") + name for name, on in sorted(features.items()))


def fix_numba_target(environ, host_features, llvm_map):
    """Before Numba's first import: when the user has set neither ``NUMBA_CPU_NAME`` nor
    ``NUMBA_CPU_FEATURES`` and LLVM's host features lack a SHA extension the operating system
    reports (an emulator's ``/proc/cpuinfo``), set ``NUMBA_CPU_FEATURES`` to LLVM's host
    features with those on, so that the compile target is the CPU that runs the code (the model
    name stays the host's; Numba's cache is keyed on both). ``host_features`` and
    ``llvm_map`` are callables (``_cpu``'s). True when it set the variable."""
    if "NUMBA_CPU_NAME" in environ or "NUMBA_CPU_FEATURES" in environ:
        return False
    seen = {name: bool(on) for name, on in llvm_map().items()}
    want = corrected(seen, host_features())
    if want == seen:
        return False
    environ["NUMBA_CPU_FEATURES"] = feature_string(want)
    return True
