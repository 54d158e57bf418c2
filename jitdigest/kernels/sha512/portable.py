"""Portable SHA-384/SHA-512/SHA-512/t (FIPS 180-4): one source for interpreted and compiled mode.

``compress`` is the generic block function (128-byte blocks, 64-bit words) shared by every
SHA-512 variant, which differ only in their initial state and digest length. ``block`` is one
block on words: the 16-word message schedule is a rolling window of locals (no W[80] in
memory), 16 rounds per pass with the names rotating, so compiled it stays in registers.
``block`` is a kernel of its own, not inlined into ``compress`` by Numba: inlined it was a
little faster but each entry took nearly twice as long to compile (benchmarks/results/kernel_notes.md, "SHA-512").
``_round`` is shared with the ``avx2`` backend.
"""
from .._jit import (add64, be64, block_function, const_words, inline_kernel, kernel,
                   rotr64, shr64, u64)
from .._contract import TIERS
from .._md_backend import md_backend
import numpy as np

K512 = const_words([
    0x428a2f98d728ae22, 0x7137449123ef65cd, 0xb5c0fbcfec4d3b2f, 0xe9b5dba58189dbbc,
    0x3956c25bf348b538, 0x59f111f1b605d019, 0x923f82a4af194f9b, 0xab1c5ed5da6d8118,
    0xd807aa98a3030242, 0x12835b0145706fbe, 0x243185be4ee4b28c, 0x550c7dc3d5ffb4e2,
    0x72be5d74f27b896f, 0x80deb1fe3b1696b1, 0x9bdc06a725c71235, 0xc19bf174cf692694,
    0xe49b69c19ef14ad2, 0xefbe4786384f25e3, 0x0fc19dc68b8cd5b5, 0x240ca1cc77ac9c65,
    0x2de92c6f592b0275, 0x4a7484aa6ea6e483, 0x5cb0a9dcbd41fbd4, 0x76f988da831153b5,
    0x983e5152ee66dfab, 0xa831c66d2db43210, 0xb00327c898fb213f, 0xbf597fc7beef0ee4,
    0xc6e00bf33da88fc2, 0xd5a79147930aa725, 0x06ca6351e003826f, 0x142929670a0e6e70,
    0x27b70a8546d22ffc, 0x2e1b21385c26c926, 0x4d2c6dfc5ac42aed, 0x53380d139d95b3df,
    0x650a73548baf63de, 0x766a0abb3c77b2a8, 0x81c2c92e47edaee6, 0x92722c851482353b,
    0xa2bfe8a14cf10364, 0xa81a664bbc423001, 0xc24b8b70d0f89791, 0xc76c51a30654be30,
    0xd192e819d6ef5218, 0xd69906245565a910, 0xf40e35855771202a, 0x106aa07032bbd1b8,
    0x19a4c116b8d2d0c8, 0x1e376c085141ab53, 0x2748774cdf8eeb99, 0x34b0bcb5e19b48a8,
    0x391c0cb3c5c95a63, 0x4ed8aa4ae3418acb, 0x5b9cca4f7763e373, 0x682e6ff3d6b2b8a3,
    0x748f82ee5defb2fc, 0x78a5636f43172f60, 0x84c87814a1f0ab72, 0x8cc702081a6439ec,
    0x90befffa23631e28, 0xa4506cebde82bde9, 0xbef9a3f7b2c67915, 0xc67178f2e372532b,
    0xca273eceea26619c, 0xd186b8c721c0c207, 0xeada7dd6cde0eb1e, 0xf57d4f7fee6ed178,
    0x06f067aa72176fba, 0x0a637dc5a2c898a6, 0x113f9804bef90dae, 0x1b710b35131c471b,
    0x28db77f523047d84, 0x32caab7b40c72493, 0x3c9ebe0a15c9bebc, 0x431d67c49c100d4c,
    0x4cc5d4becb3e42b6, 0x597f299cfc657e2a, 0x5fcb6fab3ad6faec, 0x6c44198c4a475817,
], np.uint64)


@kernel
def _round(a, b, c, d, e, f, g, h, kw, bc):
    """One round (``kw``: K[t] + W[t]); returns the new (d, h) and a ^ b, which is the next
    round's b ^ c."""
    s1 = rotr64(e, 14) ^ rotr64(e, 18) ^ rotr64(e, 41)
    ch = g ^ (e & (f ^ g))
    t1 = add64(h, s1, ch, kw)
    s0 = rotr64(a, 28) ^ rotr64(a, 34) ^ rotr64(a, 39)
    ab = a ^ b
    maj = b ^ (ab & bc)
    return add64(d, t1), add64(t1, s0, maj), ab


@kernel
def _schedule(w16, w15, w7, w2):
    """Message word W[t] from W[t-16], W[t-15], W[t-7] and W[t-2]."""
    s0 = rotr64(w15, 1) ^ rotr64(w15, 8) ^ shr64(w15, 7)
    s1 = rotr64(w2, 19) ^ rotr64(w2, 61) ^ shr64(w2, 6)
    return add64(w16, s0, w7, s1)


@inline_kernel
def _rounds16(t, a, b, c, d, e, f, g, h, bc, w0, w1, w2, w3, w4, w5, w6, w7, w8, w9, w10, w11,
              w12, w13, w14, w15):
    """Rounds t to t + 15 over message words W[t..t+15]: names rotate, values stay."""
    d, h, bc = _round(a, b, c, d, e, f, g, h, add64(K512[t], w0), bc)
    c, g, bc = _round(h, a, b, c, d, e, f, g, add64(K512[t + 1], w1), bc)
    b, f, bc = _round(g, h, a, b, c, d, e, f, add64(K512[t + 2], w2), bc)
    a, e, bc = _round(f, g, h, a, b, c, d, e, add64(K512[t + 3], w3), bc)
    h, d, bc = _round(e, f, g, h, a, b, c, d, add64(K512[t + 4], w4), bc)
    g, c, bc = _round(d, e, f, g, h, a, b, c, add64(K512[t + 5], w5), bc)
    f, b, bc = _round(c, d, e, f, g, h, a, b, add64(K512[t + 6], w6), bc)
    e, a, bc = _round(b, c, d, e, f, g, h, a, add64(K512[t + 7], w7), bc)
    d, h, bc = _round(a, b, c, d, e, f, g, h, add64(K512[t + 8], w8), bc)
    c, g, bc = _round(h, a, b, c, d, e, f, g, add64(K512[t + 9], w9), bc)
    b, f, bc = _round(g, h, a, b, c, d, e, f, add64(K512[t + 10], w10), bc)
    a, e, bc = _round(f, g, h, a, b, c, d, e, add64(K512[t + 11], w11), bc)
    h, d, bc = _round(e, f, g, h, a, b, c, d, add64(K512[t + 12], w12), bc)
    g, c, bc = _round(d, e, f, g, h, a, b, c, add64(K512[t + 13], w13), bc)
    f, b, bc = _round(c, d, e, f, g, h, a, b, add64(K512[t + 14], w14), bc)
    e, a, bc = _round(b, c, d, e, f, g, h, a, add64(K512[t + 15], w15), bc)
    return a, b, c, d, e, f, g, h, bc


@kernel
def block(h0, h1, h2, h3, h4, h5, h6, h7, w0, w1, w2, w3, w4, w5, w6, w7, w8, w9, w10, w11, w12,
          w13, w14, w15):
    """The state after one block: ``h0..h7`` the state words, ``w0..w15`` the block's message
    words. The schedule is a rolling window of 16 words in locals (W[t] replaces W[t-16] in
    place, in order), so the compiled form keeps it in registers, with no W[80] in memory."""
    a, b, c, d, e, f, g, h, bc = h0, h1, h2, h3, h4, h5, h6, h7, h1 ^ h2
    for t in range(0, 80, 16):
        if t > 0:                                # W[t..t+15] in place of W[t-16..t-1]
            w0 = _schedule(w0, w1, w9, w14)
            w1 = _schedule(w1, w2, w10, w15)
            w2 = _schedule(w2, w3, w11, w0)
            w3 = _schedule(w3, w4, w12, w1)
            w4 = _schedule(w4, w5, w13, w2)
            w5 = _schedule(w5, w6, w14, w3)
            w6 = _schedule(w6, w7, w15, w4)
            w7 = _schedule(w7, w8, w0, w5)
            w8 = _schedule(w8, w9, w1, w6)
            w9 = _schedule(w9, w10, w2, w7)
            w10 = _schedule(w10, w11, w3, w8)
            w11 = _schedule(w11, w12, w4, w9)
            w12 = _schedule(w12, w13, w5, w10)
            w13 = _schedule(w13, w14, w6, w11)
            w14 = _schedule(w14, w15, w7, w12)
            w15 = _schedule(w15, w0, w8, w13)
        a, b, c, d, e, f, g, h, bc = _rounds16(t, a, b, c, d, e, f, g, h, bc, w0, w1, w2, w3, w4,
                                               w5, w6, w7, w8, w9, w10, w11, w12, w13, w14,
                                               w15)
    return (add64(h0, a), add64(h1, b), add64(h2, c), add64(h3, d),
            add64(h4, e), add64(h5, f), add64(h6, g), add64(h7, h))


@block_function
def compress(state, data, offset, nblocks):
    """Compress ``nblocks`` 128-byte blocks of ``data`` from byte ``offset`` into ``state``
    (8 x uint64)."""
    h0 = u64(state[0])
    h1 = u64(state[1])
    h2 = u64(state[2])
    h3 = u64(state[3])
    h4 = u64(state[4])
    h5 = u64(state[5])
    h6 = u64(state[6])
    h7 = u64(state[7])
    for blk in range(nblocks):
        p = offset + 128 * blk
        m = data[p:p + 128]                     # a block view: indices provably >= 0
        h0, h1, h2, h3, h4, h5, h6, h7 = block(
            h0, h1, h2, h3, h4, h5, h6, h7,
            be64(m, 0), be64(m, 8), be64(m, 16), be64(m, 24),
            be64(m, 32), be64(m, 40), be64(m, 48), be64(m, 56),
            be64(m, 64), be64(m, 72), be64(m, 80), be64(m, 88),
            be64(m, 96), be64(m, 104), be64(m, 112), be64(m, 120))
    state[0] = h0
    state[1] = h1
    state[2] = h2
    state[3] = h3
    state[4] = h4
    state[5] = h5
    state[6] = h6
    state[7] = h7



# --- the backend record: the entry points (kernels/_md_backend.py) on this block function ---
BACKEND = md_backend("sha512", "portable", TIERS["portable"], __name__, compress)
