"""Portable Keccak-f[1600] and the SHA-3/SHAKE sponge (FIPS 202): one source for interpreted
and compiled mode.

The state array of every Keccak algorithm holds 27 uint64 words: the 25 lanes
(``lane[x + 5*y]``), then the sponge's parameters, ``state[25]`` = rate in bytes and
``state[26]`` = domain byte (0x06 for SHA-3, 0x1F for SHAKE; both include the first padding
bit). SHA3-224..512 and SHAKE128/256 are therefore rows of the algorithm table, not code.

The file has two layers:
"""
# * the permutation, here in loop form: ``permute(a)`` runs the 24 rounds in place on a
# 25-lane array (through ``keccak_f``, which works on a copy with scratch words), and
# ``absorb(lanes, rate, data, offset, nblocks)`` XORs ``nblocks`` whole rate blocks of
# ``data`` into ``lanes`` (each followed by a permutation);
# * the sponge (``sponge_update``, ``sponge_final``, ``sponge_oneshot``): buffering, padding and
# squeezing, written once and taking a form's ``absorb`` and ``permute`` as arguments
# (``inline_kernel``), so the generated straight-line form (``unrolled.py``, made by
# ``tools/gen_keccak.py``) shares it and only supplies its own two kernels.
#
# The sponge keeps a working copy of the lanes made by ``new_words`` (a Python list of ints
# interpreted, a uint64 array compiled), so the permutation never sees numpy scalars.
import numpy as np

from .._contract import Backend, TIERS
from .._jit import (GIL_MINSIZE, _ol, block_function, const_words, gil_kernel, inline_kernel,
                   kernel, load_le64, new_words, not64, reacquire_gil,
                   release_gil_if, rotl64, scratch, u64)
from .._rows import length_of, row_at, row_count, start_of

LANES = 25      # 5 x 5 lanes of 64 bits
ROUNDS = 24     # Keccak-f[1600]: 12 + 2*l rounds with l = 6


def round_constants():
    """The 24 iota constants RC[i], from the degree-8 LFSR of FIPS 202 (algorithm 5)."""
    rcs = []
    lfsr = 1
    for _ in range(ROUNDS):
        rc = 0
        for j in range(7):
            if lfsr & 1:
                rc |= 1 << ((1 << j) - 1)        # bit 2**j - 1 of the lane
            lfsr = ((lfsr << 1) ^ 0x71) & 0xFF if lfsr & 0x80 else lfsr << 1
        rcs.append(rc)
    return rcs


def rho_pi_walk():
    """The 24 steps of the rho/pi walk from lane (1, 0): for step t, the lane index it leaves
    from, the rho rotation ((t+1)(t+2)/2 mod 64) applied to it, and the index pi moves it to
    ((x, y) -> (y, 2*x + 3*y))."""
    steps = []
    x, y = 1, 0
    for t in range(ROUNDS):
        nx, ny = y, (2 * x + 3 * y) % 5
        steps.append((x + 5 * y, ((t + 1) * (t + 2) // 2) % 64, nx + 5 * ny))
        x, y = nx, ny
    return steps


def rho_offsets():
    """rho[x + 5*y]: the rotation of each lane (0 for lane (0, 0))."""
    rho = [0] * LANES
    for src, rot, _ in rho_pi_walk():
        rho[src] = rot
    return rho


RC = const_words(round_constants(), np.uint64)
_WALK = rho_pi_walk()
ROTC = const_words([rot for _, rot, _ in _WALK], np.int64)    # rotation of step t
PILN = const_words([dst for _, _, dst in _WALK], np.int64)    # destination of step t


# --- the sponge's parameter words ----------------------------------------------------------

def param(state, i):
    """Parameter word ``state[i]`` (rate, domain byte) as an index-friendly integer: a Python
    int interpreted, int64 compiled (``int()`` of a uint64 stays uint64 under Numba, and
    uint64 mixed with int64 indices is typed float64)."""
    return int(state[i])


@_ol(param)
def _param(state, i):
    return lambda state, i: np.int64(state[i])


# --- the permutation, loop form -----------------------------------------------------------

SCRATCH = LANES + 5     # words of a working array: the lanes, then 5 scratch words


@kernel
def keccak_f(s):
    """Keccak-f[1600] in place on the lanes ``s[0:25]`` (Python ints or uint64 words), with
    ``s[25:30]`` as scratch (theta's column parities, then chi's current row).

    The scratch sits in the lanes' own array on purpose: compiled, every access is then a
    constant offset from one base once LLVM has unrolled the inner loops, so it keeps all 30
    words in registers across the round loop. With a separate scratch array LLVM must assume
    the two may overlap and goes through memory at every step (half the speed)."""
    for rnd in range(ROUNDS):
        # theta: each lane absorbs the parities of two neighbouring columns
        for x in range(5):
            s[LANES + x] = s[x] ^ s[x + 5] ^ s[x + 10] ^ s[x + 15] ^ s[x + 20]
        for x in range(5):
            d = s[LANES + (x + 4) % 5] ^ rotl64(s[LANES + (x + 1) % 5], 1)
            for y in range(0, LANES, 5):
                s[y + x] ^= d
        # rho and pi: rotate each lane and move it along the 24-step walk
        t = s[1]
        for i in range(24):
            j = PILN[i]
            u = s[j]
            s[j] = rotl64(t, ROTC[i])
            t = u
        # chi: the only non-linear step, along each row
        for y in range(0, LANES, 5):
            for x in range(5):
                s[LANES + x] = s[y + x]
            for x in range(5):
                s[y + x] = s[LANES + x] ^ (not64(s[LANES + (x + 1) % 5])
                                           & s[LANES + (x + 2) % 5])
        # iota
        s[0] ^= RC[rnd]


@kernel
def permute(a):
    """Keccak-f[1600] in place on the 25 lanes ``a[0:25]``."""
    s = new_words(SCRATCH, np.uint64)
    for i in range(LANES):
        s[i] = u64(a[i])
    keccak_f(s)
    for i in range(LANES):
        a[i] = s[i]


@block_function
def absorb(lanes, rate, data, offset, nblocks):
    """XOR ``nblocks`` blocks of ``rate`` bytes of ``data`` from byte ``offset`` into
    ``lanes[0:25]``, permuting after each."""
    s = new_words(SCRATCH, np.uint64)
    for i in range(LANES):
        s[i] = u64(lanes[i])
    w = new_words(LANES, np.uint64)
    nw = rate >> 3
    for blk in range(nblocks):
        p = offset + rate * blk
        load_le64(data[p:p + rate], 0, w, nw)   # a block view: indices provably >= 0
        for i in range(nw):
            s[i] ^= w[i]
        keccak_f(s)
    for i in range(LANES):
        lanes[i] = s[i]


# --- the sponge, shared by every form -----------------------------------------------------

@inline_kernel
def sponge_update(absorb, state, buf, buflen, data):
    """Absorb ``data``: fill the partial block in ``buf``, absorb whole rate blocks straight
    from ``data``, keep the tail in ``buf``. Returns the new ``buflen``."""
    rate = param(state, 25)
    n = data.shape[0]
    pos = 0
    if buflen > 0:
        take = min(rate - buflen, n)
        buf[buflen:buflen + take] = data[0:take]
        buflen += take
        if buflen < rate:
            return buflen
        absorb(state, rate, buf, 0, 1)
        pos = take
    nblocks = (n - pos) // rate
    if nblocks > 0:
        token = release_gil_if(nblocks * rate >= GIL_MINSIZE)
        absorb(state, rate, data, pos, nblocks)
        reacquire_gil(token)
        pos += nblocks * rate
    rest = n - pos
    buf[0:rest] = data[pos:n]
    return rest


@inline_kernel
def sponge_finish(absorb, permute, lanes, rate, dsbyte, src, start, count, out):
    """Pad the last ``count`` (< rate) bytes ``src[start:start+count]`` with the domain byte
    and the final 0x80 (pad10*1), absorb them into ``lanes`` and squeeze ``len(out)`` bytes,
    permuting again after each full rate block of output."""
    pad = scratch(rate, np.uint8, 168)
    for i in range(count):
        pad[i] = src[start + i]
    pad[count] = dsbyte
    pad[rate - 1] = 0x80 | (dsbyte if count == rate - 1 else 0)
    absorb(lanes, rate, pad, 0, 1)
    n = len(out)
    pos = 0
    while pos < n:
        take = min(rate, n - pos)
        for i in range(take):
            out[pos + i] = (lanes[i >> 3] >> (8 * (i & 7))) & 0xFF
        pos += take
        if pos < n:
            permute(lanes)


@inline_kernel
def sponge_final(absorb, permute, state, buf, buflen, out):
    """Output of the message so far, leaving ``state`` untouched (digest() does not finalise)."""
    lanes = new_words(LANES, np.uint64)
    for i in range(LANES):
        lanes[i] = u64(state[i])
    token = release_gil_if(len(out) >= GIL_MINSIZE)       # a long SHAKE output
    sponge_finish(absorb, permute, lanes, param(state, 25), param(state, 26),
                  buf, 0, buflen, out)
    reacquire_gil(token)


@inline_kernel
def sponge_message(absorb, permute, iv, lanes, src, start, n, out):
    """Output for the ``n``-byte message ``src[start:start+n]`` from the initial state ``iv``,
    with ``lanes`` (25 words) as the working state: whole rate blocks absorbed straight from
    ``src``, the tail padded and squeezed by ``sponge_finish``."""
    rate = param(iv, 25)
    for i in range(LANES):
        lanes[i] = u64(iv[i])
    nblocks = n // rate
    if nblocks > 0:
        absorb(lanes, rate, src, start, nblocks)
    done = nblocks * rate
    sponge_finish(absorb, permute, lanes, rate, param(iv, 26), src, start + done, n - done, out)


@inline_kernel
def sponge_oneshot(absorb, permute, iv, data, out):
    """Output for ``data`` (a ``bytes`` object) from the initial state ``iv`` in one call."""
    token = release_gil_if(len(data) >= GIL_MINSIZE or len(out) >= GIL_MINSIZE)
    sponge_message(absorb, permute, iv, new_words(LANES, np.uint64), data, 0, len(data), out)
    reacquire_gil(token)


@inline_kernel
def sponge_hash_rows(absorb, permute, values, starts, lengths, rows, iv, out):
    """Batch: output for each message ``values[starts[r]:starts[r]+lengths[r]]`` for ``r`` in
    ``rows`` into ``out[r]`` (``out.shape[1]`` bytes: a digest, or that many SHAKE bytes), one
    message at a time through the one-shot path."""
    lanes = new_words(LANES, np.uint64)
    for i in range(row_count(rows)):
        r = row_at(rows, i)
        sponge_message(absorb, permute, iv, lanes, values, start_of(starts, r),
                       length_of(lengths, r), out[r])


# --- entry points (signatures in jitdigest.engine.dispatch) ---------------------------------------

@gil_kernel
def update(state, buf, buflen, data):
    return sponge_update(absorb, state, buf, buflen, data)


@gil_kernel
def final(state, buf, buflen, total, out):
    sponge_final(absorb, permute, state, buf, buflen, out)


@gil_kernel
def oneshot(iv, data, out):
    sponge_oneshot(absorb, permute, iv, data, out)


@kernel
def hash_rows(values, starts, lengths, rows, iv, out):
    sponge_hash_rows(absorb, permute, values, starts, lengths, rows, iv, out)


BACKEND = Backend("keccak", "portable", TIERS["portable"], __name__, update=update, final=final,
                  oneshot=oneshot, hash_rows=hash_rows)
