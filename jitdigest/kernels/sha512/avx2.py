"""SHA-384/SHA-512/SHA-512/t (FIPS 180-4) block function with the message schedule in 128-bit
vectors, and its entry points.

Same contract as ``portable.py`` beside it: ``compress(state, data, offset, nblocks)`` (state:
8 x uint64) absorbs ``nblocks`` 128-byte blocks of the uint8 array ``data`` from byte
``offset``; the entries are the Merkle-Damgard drivers of ``_md`` and ``_hmac`` around it, but
``pbkdf2``, whose iterations run on words (below).
"""
# Why: PBKDF2 is one compression after another, each waiting for the last, so the time of one
# compression is what counts, and the portable one fills the integer ports with both rounds and
# schedule. Here the rounds are scalar (``portable._round``, names rotating, values in registers)
# and the schedule runs beside them two words at a time in ``u64x2`` vectors (``_simd64``), 16
# words ahead, handing W[t] + K[t] over through an 80-word array on the stack that the rounds read
# as memory operands (a 16-word ring instead was kept in vector registers by LLVM, one extract per
# round, slower). Measurements: benchmarks/results/kernel_notes.md, "SHA-512". Compiled only (no
# interpreted form), so dispatch offers it only where the host and Numba's target have AVX2.
import numpy as np

from ...base.algorithms import MERKLE_DAMGARD
from .._contract import TIERS
from .._hmac import put_digest, salt_and_index, set_index
from .._internals import stack_array
from .._jit import (add64, block_function, inline_kernel, kernel,
                   scratch, scratch_copy, u64)
from .._md_backend import md_pieces, md_backend
from .._simd import c_blocks
from .._simd64 import (u64x2_add, u64x2_alignr, u64x2_and, u64x2_load, u64x2_load_be, u64x2_or,
                       u64x2_rotr, u64x2_set, u64x2_shr, u64x2_store, u64x2_xor)
from .portable import K512, _round



@inline_kernel
def _step(x0, x1, x4, x5, x7):
    """W[t + 16], W[t + 17] from the window W[t..t+15] held as x0..x7 (two words each)."""
    w15 = u64x2_alignr(x1, x0)                   # W[t + 1], W[t + 2]
    w7 = u64x2_alignr(x5, x4)                    # W[t + 9], W[t + 10]
    s0 = u64x2_xor(u64x2_xor(u64x2_rotr(w15, 1), u64x2_rotr(w15, 8)), u64x2_shr(w15, 7))
    s1 = u64x2_xor(u64x2_xor(u64x2_rotr(x7, 19), u64x2_rotr(x7, 61)), u64x2_shr(x7, 6))
    return u64x2_add(u64x2_add(x0, s0), u64x2_add(w7, s1))


@inline_kernel
def _block(h0, h1, h2, h3, h4, h5, h6, h7, x0, x1, x2, x3, x4, x5, x6, x7, wk):
    """The state after one block: ``h0..h7`` the state words, ``x0..x7`` the block's 16
    message words, two per vector; ``wk`` 80 words of scratch (W[t] + K[t])."""
    u64x2_store(wk, 0, u64x2_add(x0, u64x2_load(K512, 0)))
    u64x2_store(wk, 2, u64x2_add(x1, u64x2_load(K512, 2)))
    u64x2_store(wk, 4, u64x2_add(x2, u64x2_load(K512, 4)))
    u64x2_store(wk, 6, u64x2_add(x3, u64x2_load(K512, 6)))
    u64x2_store(wk, 8, u64x2_add(x4, u64x2_load(K512, 8)))
    u64x2_store(wk, 10, u64x2_add(x5, u64x2_load(K512, 10)))
    u64x2_store(wk, 12, u64x2_add(x6, u64x2_load(K512, 12)))
    u64x2_store(wk, 14, u64x2_add(x7, u64x2_load(K512, 14)))
    a, b, c, d, e, f, g, h = h0, h1, h2, h3, h4, h5, h6, h7
    bc = b ^ c
    for t in range(0, 64, 16):                   # rounds t..t+15; W[t+16..t+31] beside them
        d, h, bc = _round(a, b, c, d, e, f, g, h, wk[t], bc)
        c, g, bc = _round(h, a, b, c, d, e, f, g, wk[t + 1], bc)
        x0 = _step(x0, x1, x4, x5, x7)
        u64x2_store(wk, t + 16, u64x2_add(x0, u64x2_load(K512, t + 16)))
        b, f, bc = _round(g, h, a, b, c, d, e, f, wk[t + 2], bc)
        a, e, bc = _round(f, g, h, a, b, c, d, e, wk[t + 3], bc)
        x1 = _step(x1, x2, x5, x6, x0)
        u64x2_store(wk, t + 18, u64x2_add(x1, u64x2_load(K512, t + 18)))
        h, d, bc = _round(e, f, g, h, a, b, c, d, wk[t + 4], bc)
        g, c, bc = _round(d, e, f, g, h, a, b, c, wk[t + 5], bc)
        x2 = _step(x2, x3, x6, x7, x1)
        u64x2_store(wk, t + 20, u64x2_add(x2, u64x2_load(K512, t + 20)))
        f, b, bc = _round(c, d, e, f, g, h, a, b, wk[t + 6], bc)
        e, a, bc = _round(b, c, d, e, f, g, h, a, wk[t + 7], bc)
        x3 = _step(x3, x4, x7, x0, x2)
        u64x2_store(wk, t + 22, u64x2_add(x3, u64x2_load(K512, t + 22)))
        d, h, bc = _round(a, b, c, d, e, f, g, h, wk[t + 8], bc)
        c, g, bc = _round(h, a, b, c, d, e, f, g, wk[t + 9], bc)
        x4 = _step(x4, x5, x0, x1, x3)
        u64x2_store(wk, t + 24, u64x2_add(x4, u64x2_load(K512, t + 24)))
        b, f, bc = _round(g, h, a, b, c, d, e, f, wk[t + 10], bc)
        a, e, bc = _round(f, g, h, a, b, c, d, e, wk[t + 11], bc)
        x5 = _step(x5, x6, x1, x2, x4)
        u64x2_store(wk, t + 26, u64x2_add(x5, u64x2_load(K512, t + 26)))
        h, d, bc = _round(e, f, g, h, a, b, c, d, wk[t + 12], bc)
        g, c, bc = _round(d, e, f, g, h, a, b, c, wk[t + 13], bc)
        x6 = _step(x6, x7, x2, x3, x5)
        u64x2_store(wk, t + 28, u64x2_add(x6, u64x2_load(K512, t + 28)))
        f, b, bc = _round(c, d, e, f, g, h, a, b, wk[t + 14], bc)
        e, a, bc = _round(b, c, d, e, f, g, h, a, wk[t + 15], bc)
        x7 = _step(x7, x0, x3, x4, x6)
        u64x2_store(wk, t + 30, u64x2_add(x7, u64x2_load(K512, t + 30)))
    d, h, bc = _round(a, b, c, d, e, f, g, h, wk[64], bc)
    c, g, bc = _round(h, a, b, c, d, e, f, g, wk[65], bc)
    b, f, bc = _round(g, h, a, b, c, d, e, f, wk[66], bc)
    a, e, bc = _round(f, g, h, a, b, c, d, e, wk[67], bc)
    h, d, bc = _round(e, f, g, h, a, b, c, d, wk[68], bc)
    g, c, bc = _round(d, e, f, g, h, a, b, c, wk[69], bc)
    f, b, bc = _round(c, d, e, f, g, h, a, b, wk[70], bc)
    e, a, bc = _round(b, c, d, e, f, g, h, a, wk[71], bc)
    d, h, bc = _round(a, b, c, d, e, f, g, h, wk[72], bc)
    c, g, bc = _round(h, a, b, c, d, e, f, g, wk[73], bc)
    b, f, bc = _round(g, h, a, b, c, d, e, f, wk[74], bc)
    a, e, bc = _round(f, g, h, a, b, c, d, e, wk[75], bc)
    h, d, bc = _round(e, f, g, h, a, b, c, d, wk[76], bc)
    g, c, bc = _round(d, e, f, g, h, a, b, c, wk[77], bc)
    f, b, bc = _round(c, d, e, f, g, h, a, b, wk[78], bc)
    e, a, bc = _round(b, c, d, e, f, g, h, a, wk[79], bc)
    return (add64(h0, a), add64(h1, b), add64(h2, c), add64(h3, d),
            add64(h4, e), add64(h5, f), add64(h6, g), add64(h7, h))


@block_function
def compress(state, data, offset, nblocks):
    """Compress ``nblocks`` 128-byte blocks of ``data`` from byte ``offset`` into ``state``
    (8 x uint64)."""
    src, pos = c_blocks(data, offset, 128 * nblocks)
    wk = stack_array(80, np.uint64)              # W[t] + K[t], read by the rounds
    h0 = u64(state[0])
    h1 = u64(state[1])
    h2 = u64(state[2])
    h3 = u64(state[3])
    h4 = u64(state[4])
    h5 = u64(state[5])
    h6 = u64(state[6])
    h7 = u64(state[7])
    for blk in range(nblocks):
        p = pos + 128 * blk
        h0, h1, h2, h3, h4, h5, h6, h7 = _block(
            h0, h1, h2, h3, h4, h5, h6, h7,
            u64x2_load_be(src, p), u64x2_load_be(src, p + 16), u64x2_load_be(src, p + 32),
            u64x2_load_be(src, p + 48), u64x2_load_be(src, p + 64), u64x2_load_be(src, p + 80),
            u64x2_load_be(src, p + 96), u64x2_load_be(src, p + 112), wk)
    state[0] = h0
    state[1] = h1
    state[2] = h2
    state[3] = h3
    state[4] = h4
    state[5] = h5
    state[6] = h6
    state[7] = h7


# --- entry points (signatures in kernels/_contract.py) ----------------------------------
BLOCK, LENGTH_BYTES, LITTLE = MERKLE_DAMGARD["sha512"]
# the padded last block and the keyed entries' steps: compiled once for this compress,
# inlined by LLVM into each entry that calls them (kernels/_md.py, kernels/_hmac.py)
FINISH, KEYED_STATES, AFTER_KEY = md_pieces("sha512", compress)


@kernel
def pbkdf2(iv, password, salt, iterations, ds, out):
    """out = PBKDF2-HMAC(password, salt, iterations), ``len(out)`` bytes (RFC 8018 5.2).

    ``_hmac.md_pbkdf2`` with its iterations on words: U_j's padded block is rebuilt from the
    previous digest's state words in vector registers ((words & mask) | padding, the mask and
    padding read once from the prepared block), never stored as bytes and loaded back."""
    wk = stack_array(80, np.uint64)
    istate = scratch_copy(iv, 8)
    ostate = scratch_copy(iv, 8)
    KEYED_STATES(iv, password, istate, ostate, ds)
    i0, i1, i2, i3, i4, i5, i6, i7 = (istate[0], istate[1], istate[2], istate[3], istate[4],
                                      istate[5], istate[6], istate[7])
    o0, o1, o2, o3, o4, o5, o6, o7 = (ostate[0], ostate[1], ostate[2], ostate[3], ostate[4],
                                      ostate[5], ostate[6], ostate[7])
    # U_j (ds bytes) padded as the last block of a (block + ds)-byte message; digest bytes
    # masked by ``keep``, the rest constant.
    ublock = scratch(BLOCK, np.uint8, 128)
    keep = scratch(64, np.uint8, 64)
    ublock[ds] = 0x80
    bits = (BLOCK + ds) * 8
    ublock[BLOCK - 2] = (bits >> 8) & 0xFF
    ublock[BLOCK - 1] = bits & 0xFF
    for i in range(ds):
        keep[i] = 0xFF
    m0 = u64x2_load_be(keep, 0)
    m1 = u64x2_load_be(keep, 16)
    m2 = u64x2_load_be(keep, 32)
    m3 = u64x2_load_be(keep, 48)
    p0 = u64x2_load_be(ublock, 0)
    p1 = u64x2_load_be(ublock, 16)
    p2 = u64x2_load_be(ublock, 32)
    p3 = u64x2_load_be(ublock, 48)
    p4 = u64x2_load_be(ublock, 64)
    p5 = u64x2_load_be(ublock, 80)
    p6 = u64x2_load_be(ublock, 96)
    p7 = u64x2_load_be(ublock, 112)
    acc = scratch(8, np.uint64, 8)
    tail = scratch(64, np.uint8, 64)
    message = salt_and_index(salt)
    dklen = len(out)
    for index in range(1, (dklen + ds - 1) // ds + 1):
        set_index(message, index)
        state = scratch_copy(istate, 8)
        AFTER_KEY(state, message, 0, len(message), ublock[:ds])
        state = scratch_copy(ostate, 8)
        compress(state, ublock, 0, 1)
        h0, h1, h2, h3, h4, h5, h6, h7 = (state[0], state[1], state[2], state[3], state[4],
                                          state[5], state[6], state[7])
        a0 = u64x2_set(h0, h1)
        a1 = u64x2_set(h2, h3)
        a2 = u64x2_set(h4, h5)
        a3 = u64x2_set(h6, h7)
        # Inner and outer compressions alternate through one inlined copy of the block
        # function: faster to compile, as fast (benchmarks/results/kernel_notes.md).
        for k in range(2 * (iterations - 1)):
            outer = k & 1
            h0, h1, h2, h3, h4, h5, h6, h7 = _block(
                o0 if outer else i0, o1 if outer else i1, o2 if outer else i2,
                o3 if outer else i3, o4 if outer else i4, o5 if outer else i5,
                o6 if outer else i6, o7 if outer else i7,
                u64x2_or(u64x2_and(u64x2_set(h0, h1), m0), p0),
                u64x2_or(u64x2_and(u64x2_set(h2, h3), m1), p1),
                u64x2_or(u64x2_and(u64x2_set(h4, h5), m2), p2),
                u64x2_or(u64x2_and(u64x2_set(h6, h7), m3), p3), p4, p5, p6, p7, wk)
            if outer:
                a0 = u64x2_xor(a0, u64x2_set(h0, h1))
                a1 = u64x2_xor(a1, u64x2_set(h2, h3))
                a2 = u64x2_xor(a2, u64x2_set(h4, h5))
                a3 = u64x2_xor(a3, u64x2_set(h6, h7))
        u64x2_store(acc, 0, a0)
        u64x2_store(acc, 2, a1)
        u64x2_store(acc, 4, a2)
        u64x2_store(acc, 6, a3)
        put_digest(LITTLE, acc, tail, ds)
        first = (index - 1) * ds
        for i in range(min(ds, dklen - first)):
            out[first + i] = tail[i]


# the backend record: the shared entry points (kernels/_md_backend.py) and this PBKDF2
BACKEND = md_backend("sha512", "avx2", TIERS["avx2"], __name__, compress,
                     (FINISH, KEYED_STATES, AFTER_KEY), pbkdf2=pbkdf2)
