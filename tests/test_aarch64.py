"""The ARMv8 SHA tier: detection from given HWCAP / sysctl values, the ARM switches, that its
backends are never chosen on another architecture (on every machine), and on aarch64 the
known answers and differential checks through whichever kernels this CPU and target get.

On aarch64 ``JITDIGEST_AARCH64_MODE`` (set by ``tools/check_aarch64.sh``) names what the run
expects: ``max`` (every SHA extension, SHA-3 forced on), ``a72`` (SHA1 and SHA2 only),
``nosha2`` (Numba's target without ``+sha2``: everything portable). Without it the expectation
is read from the host's HWCAP and the switches.
"""
import hashlib
import hmac
import os
import random
import subprocess
import sys

import pytest

import jitdigest
from jitdigest.base import algorithms as _algorithms, arm as _arm
from jitdigest.engine import cpu as _cpu, dispatch as _dispatch

import vectors

ON_ARM = _cpu.ARCH == "aarch64"
arm_only = pytest.mark.skipif(not ON_ARM, reason="aarch64 only")

# Linux arm64 <uapi/asm/hwcap.h> as published: HWCAP_ASIMD (1 << 1), HWCAP_AES (1 << 3),
# HWCAP_SHA1 (1 << 5), HWCAP_SHA2 (1 << 6), HWCAP_SHA3 (1 << 17), HWCAP_SHA512 (1 << 21); and
# what qemu 7.2 reports (the "Features" of a real Cortex-A72: fp asimd evtstrm aes pmull sha1
# sha2 crc32 cpuid).
A72_HWCAP = 0x1 | 0x2 | 0x4 | 0x8 | 0x10 | 0x20 | 0x40 | 0x80 | 0x800
MAX_EXTRA = (1 << 17) | (1 << 21)

# The algorithm families of the ARMv8 tier and the switch of each (HotSpot's four flags).
FAMILY_SWITCH = {"sha1": "sha1", "sha256": "sha2", "sha512": "sha512", "keccak": "sha3"}


# --- detection, from given values (every machine) -----------------------------------------

def test_hwcap_bits():
    assert _arm.from_hwcap(A72_HWCAP) == {"neon", "aes", "sha1", "sha2"}
    assert _arm.from_hwcap(A72_HWCAP | MAX_EXTRA) == {"neon", "aes", "sha1", "sha2", "sha512",
                                                      "sha3"}
    assert _arm.from_hwcap(0x3) == {"neon"}                 # fp, asimd: a Cortex-A53 without crypto
    assert _arm.from_hwcap(1 << 21, 0xFFFF) == {"sha512"}   # HWCAP2 holds none of these


def test_macos_sysctl():
    m1 = {"hw.optional.arm.FEAT_SHA1": 1, "hw.optional.arm.FEAT_SHA256": 1,
          "hw.optional.arm.FEAT_SHA512": 1, "hw.optional.arm.FEAT_SHA3": 1}
    assert _arm.from_sysctl(m1.get) == {"neon", "aes", "sha1", "sha2", "sha512", "sha3"}
    old = {"hw.optional.armv8_2_sha512": 1, "hw.optional.armv8_2_sha3": 0}   # macOS 11
    assert _arm.from_sysctl(old.get) == {"neon", "aes", "sha1", "sha2", "sha512"}
    assert _arm.from_sysctl({}.get) == {"neon", "aes", "sha1", "sha2"}


def test_llvm_feature_names_cover_the_flags():
    assert _arm.implied({"neon", "sha2"}) == {"neon", "sha1", "sha2"}
    assert _arm.implied({"sha2", "sha3"}) == {"sha1", "sha2", "sha512", "sha3"}


def test_numba_target_fixed_only_when_llvm_misreports():
    emulated = {"neon": True, "aes": False, "sha2": False, "sha3": False, "crc": True}
    env = {}
    assert _arm.fix_numba_target(env, lambda: _arm.from_hwcap(A72_HWCAP | MAX_EXTRA),
                                 lambda: emulated)
    assert env["NUMBA_CPU_FEATURES"] == "+aes,+crc,+neon,+sha2,+sha3"
    env = {}
    assert _arm.fix_numba_target(env, lambda: _arm.from_hwcap(A72_HWCAP), lambda: emulated)
    assert env["NUMBA_CPU_FEATURES"] == "+aes,+crc,+neon,+sha2,-sha3"
    right = {"neon": True, "aes": True, "sha2": True, "sha3": False}
    env = {}
    assert not _arm.fix_numba_target(env, lambda: _arm.from_hwcap(A72_HWCAP), lambda: right)
    assert env == {}
    for user in ({"NUMBA_CPU_NAME": "generic"}, {"NUMBA_CPU_FEATURES": "+neon"}):
        env = dict(user)
        assert not _arm.fix_numba_target(env, lambda: _arm.from_hwcap(A72_HWCAP),
                                         lambda: emulated)
        assert env == user
    assert _arm.machine("arm64") == _arm.machine("aarch64") == "aarch64"
    assert _arm.machine("x86_64") == "x86_64"


# --- switches (every machine) -------------------------------------------------------------

def test_switch_words():
    assert _cpu.ARM_SWITCHES == ("sha1", "sha2", "sha512", "sha3")
    assert _cpu._parse_disable("SHA1, sha512") == {"sha1", "sha512"}
    assert _cpu._parse_disable("all") == set(_cpu.SWITCHES) >= {"sha_ni", "sha2", "sha3"}
    assert _cpu._parse_enable("sha3") == {"sha3"}
    with pytest.warns(RuntimeWarning, match="JITDIGEST_ENABLE: unknown switch.*sha2"):
        assert _cpu._parse_enable("sha2,sha3") == {"sha3"}
    with pytest.warns(RuntimeWarning, match="unknown switch.*sha4"):
        _cpu._parse_disable("sha4")


def _gate(monkeypatch, arch, host, target, disabled=(), enabled=()):
    monkeypatch.setattr(_cpu, "ARCH", arch)
    monkeypatch.setattr(_cpu, "host_features", lambda: frozenset(host))
    monkeypatch.setattr(_cpu, "target_features", lambda: _arm.implied(target))
    monkeypatch.setattr(_cpu, "DISABLED", frozenset(disabled))
    monkeypatch.setattr(_cpu, "ENABLED", frozenset(enabled))
    monkeypatch.setattr(_cpu, "jit_enabled", lambda: True)
    return {s: _cpu.usable(s, s) for s in _cpu.ARM_SWITCHES}


def test_gate(monkeypatch):
    full = _arm.from_hwcap(A72_HWCAP | MAX_EXTRA)
    a72 = _arm.from_hwcap(A72_HWCAP)
    yes = dict.fromkeys(_cpu.ARM_SWITCHES, True)
    no = dict.fromkeys(_cpu.ARM_SWITCHES, False)
    # Every feature everywhere, but not an ARM machine: nothing (an x86 target would abort).
    assert _gate(monkeypatch, "x86_64", full, {"sha2", "sha3"}, enabled={"sha3"}) == no
    assert _gate(monkeypatch, "aarch64", full, {"sha2", "sha3"}) == dict(yes, sha3=False)
    assert _gate(monkeypatch, "aarch64", full, {"sha2", "sha3"}, enabled={"sha3"}) == yes
    assert _gate(monkeypatch, "aarch64", full, {"sha2", "sha3"}, disabled={"sha3"},
                 enabled={"sha3"}) == dict(yes, sha3=False)
    assert _gate(monkeypatch, "aarch64", full, {"sha2", "sha3"}, disabled={"sha1", "sha512"},
                 enabled={"sha3"}) == dict(yes, sha1=False, sha512=False)
    assert _gate(monkeypatch, "aarch64", a72, {"sha2", "sha3"}, enabled={"sha3"}) == dict(
        no, sha1=True, sha2=True)                            # host lacks: target alone is not enough
    assert _gate(monkeypatch, "aarch64", full, {"neon"}, enabled={"sha3"}) == no
    assert _gate(monkeypatch, "aarch64", full, {"sha2"}, enabled={"sha3"}) == dict(
        no, sha1=True, sha2=True)
    # The x86 SHA-NI gate on ARM: no "sha" feature there.
    _gate(monkeypatch, "aarch64", full, {"sha2"})
    assert not _cpu.usable("sha", "sha_ni")


@pytest.mark.skipif(ON_ARM, reason="checks another architecture")
def test_arm_backends_never_chosen_elsewhere():
    import importlib
    for family, switch in FAMILY_SWITCH.items():
        assert "armv8" not in [b.name for b in _dispatch.backends(family)]
        try:
            module = importlib.import_module(f"jitdigest.kernels.{family}.armv8")
        except ImportError:
            continue                                         # not built for this family
        assert module.BACKEND.name == "armv8" and module.BACKEND.switch == switch
        assert not _dispatch.usable(module.BACKEND)
    for name, spec in _algorithms.SPECS.items():
        assert _dispatch.kernels_for(spec).name != "armv8", name
        assert _dispatch.batch_kernels_for(spec).name != "armv8", name
    with pytest.raises(ValueError):
        with jitdigest.backend("armv8"):
            pass
    assert set(jitdigest.info()["flags"]) == {"UseSHA1Intrinsics", "UseSHA256Intrinsics"}


# --- known answers through the kernels this aarch64 machine gets ---------------------------

MODE = os.environ.get("JITDIGEST_AARCH64_MODE", "")


def expected_backend(family):
    """"armv8" where the mode (or, without one, the host and switches) says the ARMv8 kernel
    serves ``family``, else "portable"/None (another backend, not the ARM one)."""
    switch = FAMILY_SWITCH.get(family)
    if switch is None:
        return None
    if MODE == "max":
        ok = switch != "sha3" or "sha3" in _cpu.ENABLED
    elif MODE == "a72":
        ok = switch in ("sha1", "sha2")
    elif MODE == "nosha2":
        ok = False
    else:
        ok = (switch in _cpu.host_features() and switch not in _cpu.DISABLED
              and (switch != "sha3" or "sha3" in _cpu.ENABLED))
    ok = ok and switch not in _cpu.DISABLED
    has_module = family in ("sha1", "sha256", "sha512") or _has_keccak_tier()
    return "armv8" if ok and has_module else "other"


def _has_keccak_tier():
    import importlib.util
    return importlib.util.find_spec("jitdigest.kernels.keccak.armv8") is not None


LENGTHS = (0, 1, 3, 55, 56, 63, 64, 65, 111, 112, 119, 127, 128, 129, 135, 136, 137, 168, 200,
           1000, 4099)


def _message(n, seed):
    return random.Random(seed * 100003 + n).randbytes(n)


# The families whose kernel the mode decides, in every mode; the others (MD5, BLAKE2: the same
# portable kernels whatever the SHA extensions) once, in the max run or on real hardware.
# Every run compiles its kernels afresh (each mode's Numba target differs), slowly under
# emulation, so the lists are kept to what tells the modes apart.
TIER = sorted(n for n, spec in _algorithms.SPECS.items() if spec.family in FAMILY_SWITCH)
OTHERS = sorted(set(_algorithms.SPECS) - set(TIER))
FULL_RUN = MODE in ("", "max")


@arm_only
@pytest.mark.parametrize("name", TIER + (OTHERS if FULL_RUN else []))
def test_one_shot_and_streaming_against_hashlib(name, known_answers):
    spec = _algorithms.SPECS[name]
    want = expected_backend(spec.family)
    chosen = _dispatch.kernels_for(spec).name
    assert (chosen == "armv8") == (want == "armv8"), (name, chosen, MODE)
    checked = 0
    for n in LENGTHS:
        data = _message(n, 1)
        if spec.digest_size:
            assert jitdigest.new(name, data).digest() == hashlib.new(name, data).digest(), n
        else:
            assert (jitdigest.new(name, data).digest(77)
                    == hashlib.new(name, data).digest(77)), n
        checked += 1
    h, ref = jitdigest.new(name), hashlib.new(name)
    for piece in (b"", b"a", _message(63, 2), _message(130, 3), _message(1, 4), _message(777, 5)):
        h.update(piece)
        ref.update(piece)
        checked += 1
    out = (lambda x: x.digest()) if spec.digest_size else (lambda x: x.digest(300))
    assert out(h.copy()) == out(ref)
    assert h._kernels.name == chosen
    known_answers((name, f"hashlib-{chosen}", "hashlib"), checked)


NIST = [n for n in ("sha1", "sha224", "sha256", "sha384", "sha512", "sha512_224", "sha512_256",
                    "sha3_256", "shake_128")]


@arm_only
@pytest.mark.parametrize("name", NIST)
def test_nist_short_messages(name, known_answers):
    spec = _algorithms.SPECS[name]
    records = vectors.messages(name, "ShortMsg")
    for msg, expected, size in records:
        h = jitdigest.new(name, msg)
        assert (h.digest() if spec.digest_size else h.digest(size)) == expected, msg.hex()
    known_answers((name, "ShortMsg-" + _dispatch.kernels_for(spec).name, "NIST CAVP"),
                  len(records))


@arm_only
@pytest.mark.skipif(not FULL_RUN, reason="the same kernels as the one-shot test; max run only")
@pytest.mark.parametrize("name", ["sha1", "sha256", "sha384", "sha3_256"])
def test_batch_hmac_pbkdf2(name, known_answers):
    """hash_many's per-message path, HMAC and PBKDF2 through the same kernels."""
    spec = _algorithms.SPECS[name]
    want = expected_backend(spec.family)
    batch = _dispatch.batch_kernels_for(spec).name
    assert (batch == "armv8") == (want == "armv8"), (name, batch)
    rows = [_message(n, 6) for n in (0, 5, 64, 100, 128, 300)]
    digests = jitdigest.hash_many(name, rows)
    assert [bytes(d) for d in digests] == [hashlib.new(name, r).digest() for r in rows]
    key = b"k" * 70
    assert jitdigest.hmac.digest(key, rows[4], name) == hmac.digest(key, rows[4], name)
    assert (jitdigest.pbkdf2_hmac(name, b"pw", b"salt", 50)
            == hashlib.pbkdf2_hmac(name, b"pw", b"salt", 50))
    known_answers((name, f"batch-{batch}", "hashlib"), len(rows) + 2)


def _info_flags(**env):
    """The ``Use*Intrinsics = true|false`` lines of ``jitdigest info`` in a child process."""
    run_env = {k: v for k, v in os.environ.items() if k not in env}
    run_env.update({k: v for k, v in env.items() if v is not None})
    text = subprocess.run([sys.executable, "-m", "jitdigest", "info"], capture_output=True,
                          text=True, timeout=600, check=True, env=run_env).stdout
    flags = dict(line.split(" = ") for line in text.splitlines()
                 if line.startswith("Use") and " = " in line)
    return flags, text


@arm_only
def test_info_prints_the_four_flags():
    flags, text = _info_flags()
    want = {f: "true" if expected_backend(family) == "armv8" else "false"
            for family, f in (("sha1", "UseSHA1Intrinsics"), ("sha256", "UseSHA256Intrinsics"),
                              ("sha512", "UseSHA512Intrinsics"), ("keccak", "UseSHA3Intrinsics"))}
    assert flags == want, text
    # SHA-3 is off unless asked for; the switches turn the others off one by one.
    flags, text = _info_flags(JITDIGEST_ENABLE=None, JITDIGEST_DISABLE="sha1,sha512")
    assert flags == dict(want, UseSHA1Intrinsics="false", UseSHA512Intrinsics="false",
                         UseSHA3Intrinsics="false"), text


@arm_only
@pytest.mark.skipif("sha512" in _cpu.host_features(), reason="for a CPU without SHA512 (a72)")
def test_target_claiming_what_the_cpu_lacks_stays_portable():
    """A target given every feature on a CPU without some of them (a72: no SHA512/SHA3) never
    runs their kernels: no SIGILL, the right digests (in a child process: a crash is seen)."""
    env = dict(os.environ, NUMBA_CPU_NAME="generic", NUMBA_CPU_FEATURES="+neon,+aes,+sha2,+sha3",
               JITDIGEST_ENABLE="sha3")
    code = ("import hashlib, jitdigest\n"
            "for n in ('sha512', 'sha3_256'):\n"
            "    h = jitdigest.new(n, b'abc' * 50)\n"
            "    assert h.digest() == hashlib.new(n, b'abc' * 50).digest(), n\n"
            "    print(n, h._kernels.name)\n")
    proc = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True,
                          timeout=900)
    assert proc.returncode == 0, (proc.returncode, proc.stderr[-2000:])
    got = dict(line.split() for line in proc.stdout.splitlines())
    assert got == {"sha512": "portable", "sha3_256": "unrolled"}, got
