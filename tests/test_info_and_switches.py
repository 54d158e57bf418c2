"""jitdigest.info(), the feature gates and the run-time switches."""
import hashlib
import os

import pytest

import jitdigest
from jitdigest.base import algorithms as _algorithms
from jitdigest.engine import cpu as _cpu, dispatch as _dispatch
from jitdigest import _info


# what jitdigest serves: every algorithm hashlib guarantees, SHA-512/224 and SHA-512/256
# (FIPS 180-4) and BLAKE3
SERVED = hashlib.algorithms_guaranteed | {"sha512_224", "sha512_256", "blake3"}


def test_info_lists_every_algorithm_and_the_cpu():
    data = jitdigest.info()
    assert set(data["kernels"]) == SERVED
    assert set(data["batch_kernels"]) == SERVED
    for feature in ("sha", "avx2", "avx512f"):
        assert feature in data["cpu"]["features"]
    assert data["jit"] is True
    text = "\n".join(_info.format_lines(data))
    for name in sorted(SERVED):
        assert f"kernel {name} " in text
    assert "UseSHA256Intrinsics = " in text


def cpuinfo_flags():
    """The x86 feature flags Linux lists in /proc/cpuinfo, or None (not Linux, not x86)."""
    try:
        with open("/proc/cpuinfo", encoding="utf-8", errors="replace") as f:
            for line in f:
                if line.startswith("flags"):
                    return set(line.split(":", 1)[1].split())
    except OSError:
        pass
    return None


# LLVM's feature names (what jitdigest reports) and Linux's spelling of the same feature.
LINUX_NAMES = {"sha": "sha_ni", "ssse3": "ssse3", "sse4.1": "sse4_1", "avx2": "avx2",
               "avx512f": "avx512f", "avx512bw": "avx512bw", "avx512vl": "avx512vl",
               "bmi2": "bmi2"}


def test_host_features_agree_with_proc_cpuinfo():
    flags = cpuinfo_flags()
    if flags is None:
        pytest.skip("no x86 flags line in /proc/cpuinfo")
    features = jitdigest.info()["cpu"]["features"]
    assert set(features) == set(LINUX_NAMES)
    for llvm_name, linux_name in LINUX_NAMES.items():
        assert features[llvm_name]["host"] == (linux_name in flags), llvm_name


def test_flags_follow_the_cpu_and_the_switches():
    """UseSHA1Intrinsics / UseSHA256Intrinsics are true exactly when the CPU has SHA-NI (as
    /proc/cpuinfo says), the JIT is on, Numba compiles for the host, and JITDIGEST_DISABLE does
    not name sha_ni; the sha_ni switch turns both off and gives both algorithms the portable
    kernel, whose digests are still right."""
    import numba
    flags = cpuinfo_flags()
    if flags is None:
        pytest.skip("no x86 flags line in /proc/cpuinfo")
    if os.environ.get("NUMBA_CPU_NAME") or os.environ.get("NUMBA_CPU_FEATURES"):
        pytest.skip("Numba's target is set by the environment, not the host")
    env = os.environ.get("JITDIGEST_DISABLE", "")
    disabled = {part.strip().lower() for part in env.split(",")}
    expect = ("sha_ni" in flags and not numba.config.DISABLE_JIT
              and not disabled & {"sha_ni", "all"})
    data = jitdigest.info()
    assert data["flags"] == {"UseSHA1Intrinsics": expect, "UseSHA256Intrinsics": expect}
    for name in ("sha1", "sha256"):
        assert (data["kernels"][name] == "sha_ni") is expect
        assert (jitdigest.new(name)._kernels.name == "sha_ni") is expect
    with _cpu.disabled("sha_ni"):
        data = jitdigest.info()
        assert data["flags"] == {"UseSHA1Intrinsics": False, "UseSHA256Intrinsics": False}
        for name in ("sha1", "sha256"):
            h = jitdigest.new(name, b"abc" * 50)
            assert h._kernels.name == data["kernels"][name] == "portable"
            assert h.digest() == hashlib.new(name, b"abc" * 50).digest()


@pytest.mark.skipif(not _cpu.usable("sha", "sha_ni"), reason="CPU or Numba target lacks SHA-NI")
def test_disabled_context_switches_new_objects_to_portable():
    data = b"x" * 1000
    assert jitdigest.sha256()._kernels.name == "sha_ni"
    with _cpu.disabled("sha_ni"):
        h = jitdigest.sha256(data)
        assert h._kernels.name == "portable"
        assert jitdigest.info()["flags"]["UseSHA256Intrinsics"] is False
        assert h.digest() == hashlib.sha256(data).digest()
    assert jitdigest.sha256()._kernels.name == "sha_ni"
    h.update(b"y")                                 # an object keeps the kernel it was made with
    assert h._kernels.name == "portable"
    assert h.digest() == hashlib.sha256(data + b"y").digest()


def test_all_switches_off_leaves_portable_kernels_everywhere():
    with _cpu.disabled("all"):
        for spec in _algorithms.SPECS.values():
            assert all(b.feature is None for b in
                       [ks.backend for ks in _dispatch.usable_kernel_sets(spec)])


def test_unknown_switch_is_rejected():
    with pytest.raises(ValueError):
        _cpu.set_disabled({"sha_nope"})


def test_no_hardware_kernel_without_the_target_feature(monkeypatch):
    # The gate asks the target as well as the host: a target without "sha" gets no SHA-NI.
    monkeypatch.setattr(_cpu, "target_features", lambda: frozenset())
    assert not _cpu.usable("sha", "sha_ni")


def test_python_m_jitdigest_info_names_features_and_kernels():
    import subprocess
    import sys
    proc = subprocess.run([sys.executable, "-m", "jitdigest", "info"], capture_output=True,
                          text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr
    for name in sorted(SERVED):
        assert f"kernel {name} " in proc.stdout
    assert "feature sha " in proc.stdout and "UseSHA1Intrinsics = " in proc.stdout
