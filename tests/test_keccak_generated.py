"""Keccak kernels: tools/gen_keccak.py --check notices a stale file, and both forms -- loop (kernels/keccak/portable.py) and unrolled (kernels/keccak/unrolled.py), called
directly rather than through the hash objects -- agree with hashlib for all six SHA-3/SHAKE
variants at lengths around the rate, in this process's mode and interpreted in a child process
with warnings as errors; the permutation of both forms gives the Keccak team's published
Keccak-f[1600] of the zero state, and what a reference written here from the specification
gives."""
import hashlib
import importlib
import importlib.util
import os
import pathlib
import subprocess
import sys
from functools import lru_cache

import numpy as np
import pytest

from jitdigest.base.algorithms import SPECS
from jitdigest.engine.dispatch import _signatures
from jitdigest.kernels._jit import JIT_ENABLED

TESTS = pathlib.Path(__file__).resolve().parent
REPO = TESTS.parent
GENERATOR = REPO / "tools" / "gen_keccak.py"
GENERATED = REPO / "jitdigest" / "kernels" / "keccak" / "unrolled.py"

FORMS = ("portable", "unrolled")      # modules of jitdigest/kernels/keccak/
NAMES = ("sha3_224", "sha3_256", "sha3_384", "sha3_512", "shake_128", "shake_256")


def _load_generator():
    spec = importlib.util.spec_from_file_location("gen_keccak", GENERATOR)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


@lru_cache(maxsize=None)
def entries(form):
    """(update, final, oneshot) of a form, compiled for the dispatcher's signatures when the
    JIT is on (as jitdigest.engine.dispatch does), the plain functions when it is off."""
    mod = importlib.import_module("jitdigest.kernels.keccak." + form)
    funcs = (mod.update, mod.final, mod.oneshot)
    if JIT_ENABLED:
        sigs = _signatures(np.uint64)
        funcs = tuple(f.compile(sigs[e]) for f, e in zip(funcs, ("update", "final", "oneshot")))
    return funcs


def message(n):
    return bytes((i * 131 + 7) & 0xFF for i in range(n))


def expected(name, msg, outlen):
    h = hashlib.new(name, msg)
    return h.digest(outlen) if name.startswith("shake") else h.digest()


def boundary_lengths(rate):
    return (0, 1, rate - 1, rate, rate + 1, 2 * rate + 1)


def kernel_outputs(form, name, msg, outlen, chunks):
    """The one-shot output, and the streamed output with ``msg`` fed in pieces of the given
    sizes (the last piece takes the rest); checks that final() leaves state and buffer alone."""
    update, final, oneshot = entries(form)
    spec = SPECS[name]
    out = bytearray(outlen)
    oneshot(spec.initial_state, msg, out)
    whole = bytes(out)

    state = spec.initial_state.copy()
    buf = np.zeros(spec.block_size, np.uint8)
    buflen, pos = 0, 0
    for size in (*chunks, len(msg)):
        piece = np.frombuffer(msg[pos:pos + size], np.uint8)
        buflen = update(state, buf, buflen, piece)
        pos += piece.shape[0]
    assert buflen == len(msg) % spec.block_size
    before = state.copy(), buf.copy()
    out = bytearray(outlen)
    final(state, buf, buflen, len(msg), out)
    assert (state == before[0]).all() and (buf == before[1]).all(), "final() changed the state"
    return whole, bytes(out)


def check(form, name, lengths=None, outlen=None):
    """Failures (as strings) of one form for one algorithm against hashlib."""
    spec = SPECS[name]
    rate = spec.block_size
    outlen = outlen or spec.digest_size or 32
    failures = []
    for n in lengths or boundary_lengths(rate):
        msg = message(n)
        ref = expected(name, msg, outlen)
        # pieces that start a block, finish it exactly and straddle the next boundary
        for chunks in ((), (1,), (rate - 1, 1), (rate - 1, rate + 1)):
            whole, streamed = kernel_outputs(form, name, msg, outlen, chunks)
            if whole != ref:
                failures.append(f"{form} {name} n={n} out={outlen}: oneshot")
            if streamed != ref:
                failures.append(f"{form} {name} n={n} out={outlen}: update {chunks}+final")
    return failures


def check_all():
    failures = []
    for form in FORMS:
        for name in NAMES:
            failures += check(form, name)
        for name in ("shake_128", "shake_256"):
            rate = SPECS[name].block_size
            failures += check(form, name, lengths=(0, rate + 1), outlen=3 * rate + 7)
    return failures


# --- the generated file ---------------------------------------------------------------------

def test_generator_check_flag(tmp_path):
    ok = subprocess.run([sys.executable, str(GENERATOR), "--check"], capture_output=True,
                        text=True)
    assert ok.returncode == 0, ok.stdout + ok.stderr
    stale = tmp_path / "unrolled.py"
    stale.write_text(GENERATED.read_text(encoding="utf-8").replace("b00 = a00 ^ d0", "b00 = a00"),
                     encoding="utf-8")
    bad = subprocess.run([sys.executable, str(GENERATOR), "--check", "--output", str(stale)],
                         capture_output=True, text=True)
    assert bad.returncode != 0
    assert "b00 = a00 ^ d0" in bad.stdout            # the diff shows what changed


# --- both forms against hashlib -------------------------------------------------------------

@pytest.mark.parametrize("form", FORMS, ids=["loop", "unrolled"])
@pytest.mark.parametrize("name", NAMES)
def test_form_matches_hashlib_around_rate(form, name):
    assert check(form, name) == []


@pytest.mark.parametrize("form", FORMS, ids=["loop", "unrolled"])
@pytest.mark.parametrize("name", ["shake_128", "shake_256"])
def test_shake_output_longer_than_a_block(form, name):
    rate = SPECS[name].block_size
    assert check(form, name, lengths=(0, rate + 1), outlen=3 * rate + 7) == []


def test_forms_agree_on_a_long_message():
    msg = message(5000)
    for name in NAMES:
        outs = {form: kernel_outputs(form, name, msg, 200 if "shake" in name else
                                     SPECS[name].digest_size, (333, 1000)) for form in FORMS}
        assert outs["portable"] == outs["unrolled"]
        assert outs["portable"][0] == expected(name, msg, len(outs["portable"][0]))


# --- Keccak-f[1600] against a known answer and an independent reference ---------------------

# The round constants RC[0..23] and rotation offsets r[x][y], as tabulated in the Keccak
# reference (and FIPS 202, Table 2 for the offsets): typed in, not computed by the kernels' code.
REF_RC = (
    0x0000000000000001, 0x0000000000008082, 0x800000000000808A, 0x8000000080008000,
    0x000000000000808B, 0x0000000080000001, 0x8000000080008081, 0x8000000000008009,
    0x000000000000008A, 0x0000000000000088, 0x0000000080008009, 0x000000008000000A,
    0x000000008000808B, 0x800000000000008B, 0x8000000000008089, 0x8000000000008003,
    0x8000000000008002, 0x8000000000000080, 0x000000000000800A, 0x800000008000000A,
    0x8000000080008081, 0x8000000000008080, 0x0000000080000001, 0x8000000080008008,
)
REF_ROT = ((0, 36, 3, 41, 18), (1, 44, 10, 45, 2), (62, 6, 43, 15, 61), (28, 55, 25, 21, 56),
           (27, 20, 39, 8, 14))          # REF_ROT[x][y]
M64 = (1 << 64) - 1

# Keccak-f[1600] of the all-zero state, lane x + 5*y, as published by the Keccak team:
# XKCP, tests/TestVectors/KeccakF-1600-IntermediateValues.txt ("State after permutation").
ZERO_PERMUTED = (
    0xF1258F7940E1DDE7, 0x84D5CCF933C0478A, 0xD598261EA65AA9EE, 0xBD1547306F80494D,
    0x8B284E056253D057, 0xFF97A42D7F8E6FD4, 0x90FEE5A0A44647C4, 0x8C5BDA0CD6192E76,
    0xAD30A6F71B19059C, 0x30935AB7D08FFC64, 0xEB5AA93F2317D635, 0xA9A6E6260D712103,
    0x81A57C16DBCF555F, 0x43B831CD0347C826, 0x01F22F1A11A5569F, 0x05E5635A21D9AE61,
    0x64BEFEF28CC970F2, 0x613670957BC46611, 0xB87C5A554FD00ECB, 0x8C3EE88A1CCF32C8,
    0x940C7922AE3A2614, 0x1841F924A2C509E4, 0x16F53526E70465C2, 0x75F644E97F30A13B,
    0xEAF1FF7B5CECA249,
)


def reference_permute(lanes):
    """Keccak-f[1600] written from the specification's step mappings (theta, rho and pi, chi,
    iota) on 25 Python ints, lane x + 5*y; returns a new list."""
    a = [[lanes[x + 5 * y] for y in range(5)] for x in range(5)]       # a[x][y]
    for rc in REF_RC:
        c = [a[x][0] ^ a[x][1] ^ a[x][2] ^ a[x][3] ^ a[x][4] for x in range(5)]
        d = [c[(x - 1) % 5] ^ (((c[(x + 1) % 5] << 1) | (c[(x + 1) % 5] >> 63)) & M64)
             for x in range(5)]
        a = [[a[x][y] ^ d[x] for y in range(5)] for x in range(5)]
        b = [[0] * 5 for _ in range(5)]
        for x in range(5):
            for y in range(5):
                r = REF_ROT[x][y]
                b[y][(2 * x + 3 * y) % 5] = ((a[x][y] << r) | (a[x][y] >> (64 - r))) & M64 \
                    if r else a[x][y]
        a = [[b[x][y] ^ ((b[(x + 1) % 5][y] ^ M64) & b[(x + 2) % 5][y]) for y in range(5)]
             for x in range(5)]
        a[0][0] ^= rc
    return [a[i % 5][i // 5] for i in range(25)]


def reference_sha3_256(msg):
    """SHA3-256 as a sponge over ``reference_permute`` (rate 136 bytes, domain bits 01 then
    pad10*1): what ties the reference to hashlib."""
    rate = 136
    padded = bytearray(msg) + b"\x06" + bytes(-(len(msg) + 1) % rate)
    padded[-1] |= 0x80
    lanes = [0] * 25
    for off in range(0, len(padded), rate):
        for i in range(rate // 8):
            lanes[i] ^= int.from_bytes(padded[off + 8 * i: off + 8 * i + 8], "little")
        lanes = reference_permute(lanes)
    return b"".join(v.to_bytes(8, "little") for v in lanes[:4])


def test_reference_keccak_is_right():
    """The reference agrees with hashlib's SHA3-256 (empty, one byte, around the rate) and with
    the Keccak team's published permutation of the zero state."""
    for n in (0, 1, 135, 136, 137, 300):
        msg = message(n)
        assert reference_sha3_256(msg) == hashlib.sha3_256(msg).digest(), n
    assert reference_permute([0] * 25) == list(ZERO_PERMUTED)


def test_permutations_match_the_known_answer():
    """Keccak-f[1600] itself, both forms, on a list of Python ints (as the sponge passes it
    interpreted) or a uint64 array (as compiled): the zero state gives the published lanes, and
    twice-permuted and arbitrary states give what the reference gives."""
    from jitdigest.kernels.keccak import portable, unrolled
    lanes = [(i * 0x9E3779B97F4A7C15) & M64 for i in range(25)]
    starts = {"zero": [0] * 25, "zero twice": list(ZERO_PERMUTED), "arbitrary": lanes}
    want = {"zero": list(ZERO_PERMUTED), "zero twice": reference_permute(list(ZERO_PERMUTED)),
            "arbitrary": reference_permute(lanes)}
    for form in (portable, unrolled):
        for what, start in starts.items():
            a = np.array(start, np.uint64) if JIT_ENABLED else list(start)
            form.permute(a)
            assert [int(v) for v in a] == want[what], f"{form.__name__}: {what}"


@pytest.mark.skipif(not JIT_ENABLED, reason="this process already runs interpreted")
def test_interpreted_child_without_warnings():
    env = dict(os.environ, NUMBA_DISABLE_JIT="1")
    env["PYTHONPATH"] = os.pathsep.join([str(TESTS), env.get("PYTHONPATH", "")])
    code = ("import sys, test_keccak_generated as t\n"
            "f = t.check_all(); print('\\n'.join(f)); print('failures:', len(f))\n"
            "t.test_reference_keccak_is_right(); t.test_permutations_match_the_known_answer()\n"
            "t.test_forms_agree_on_a_long_message()\n")
    proc = subprocess.run([sys.executable, "-W", "error", "-c", code], env=env, cwd=TESTS,
                          capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "failures: 0" in proc.stdout, proc.stdout
