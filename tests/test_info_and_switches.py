"""jitdigest.info(), the feature gates and the run-time switches."""
import hashlib

import pytest

import jitdigest
from jitdigest import _algorithms, _cpu, _dispatch, _info


def test_info_lists_every_algorithm_and_the_cpu():
    data = jitdigest.info()
    assert set(data["kernels"]) == set(_algorithms.SPECS)
    assert set(data["batch_kernels"]) == set(_algorithms.SPECS)
    for feature in ("sha", "avx2", "avx512f"):
        assert feature in data["cpu"]["features"]
    assert data["jit"] is True
    text = "\n".join(_info.format_lines(data))
    for name in _algorithms.SPECS:
        assert f"kernel {name} " in text
    assert "UseSHA256Intrinsics = " in text


def test_flags_follow_the_serving_kernel():
    data = jitdigest.info()
    assert data["flags"]["UseSHA256Intrinsics"] == (data["kernels"]["sha256"] == "sha_ni")
    assert data["flags"]["UseSHA1Intrinsics"] == (data["kernels"]["sha1"] == "sha_ni")


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
    for name in _algorithms.SPECS:
        assert f"kernel {name} " in proc.stdout
    assert "feature sha " in proc.stdout and "UseSHA1Intrinsics = " in proc.stdout
