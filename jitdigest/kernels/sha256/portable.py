"""Portable SHA-224/SHA-256 (FIPS 180-4): one source for interpreted and compiled mode.

``compress`` is the generic block function, kept in its own file so that a faster kernel
(SHA-NI, lanes) with the same signature can stand in for it.
"""
from .._jit import (add32, block_function, const_words, inline_kernel, kernel,
                   load_be32, new_words, rotr32, u32)
from .._contract import TIERS
from .._md_backend import md_backend
import numpy as np

K256 = const_words([
    0x428a2f98, 0x71374491, 0xb5c0fbcf, 0xe9b5dba5, 0x3956c25b, 0x59f111f1, 0x923f82a4, 0xab1c5ed5,
    0xd807aa98, 0x12835b01, 0x243185be, 0x550c7dc3, 0x72be5d74, 0x80deb1fe, 0x9bdc06a7, 0xc19bf174,
    0xe49b69c1, 0xefbe4786, 0x0fc19dc6, 0x240ca1cc, 0x2de92c6f, 0x4a7484aa, 0x5cb0a9dc, 0x76f988da,
    0x983e5152, 0xa831c66d, 0xb00327c8, 0xbf597fc7, 0xc6e00bf3, 0xd5a79147, 0x06ca6351, 0x14292967,
    0x27b70a85, 0x2e1b2138, 0x4d2c6dfc, 0x53380d13, 0x650a7354, 0x766a0abb, 0x81c2c92e, 0x92722c85,
    0xa2bfe8a1, 0xa81a664b, 0xc24b8b70, 0xc76c51a3, 0xd192e819, 0xd6990624, 0xf40e3585, 0x106aa070,
    0x19a4c116, 0x1e376c08, 0x2748774c, 0x34b0bcb5, 0x391c0cb3, 0x4ed8aa4a, 0x5b9cca4f, 0x682e6ff3,
    0x748f82ee, 0x78a5636f, 0x84c87814, 0x8cc70208, 0x90befffa, 0xa4506ceb, 0xbef9a3f7, 0xc67178f2,
], np.uint32)


@kernel
def _round(a, b, c, d, e, f, g, h, k, w, bc):
    """One round; returns the new (d, h) and a ^ b, which is the next round's b ^ c."""
    s1 = rotr32(e, 6) ^ rotr32(e, 11) ^ rotr32(e, 25)
    ch = g ^ (e & (f ^ g))
    t1 = add32(h, s1, ch, k, w)
    s0 = rotr32(a, 2) ^ rotr32(a, 13) ^ rotr32(a, 22)
    ab = a ^ b
    maj = b ^ (ab & bc)
    return add32(d, t1), add32(t1, s0, maj), ab


@inline_kernel
def _expand(w, start, stop):
    """Message schedule words w[start:stop]. Inlined by Numba, one call per 16 rounds: loops
    short enough for LLVM to unroll, so every index is a constant and ``w`` can live in
    registers (on a GPU: not in thread-local memory)."""
    for i in range(start, stop):
        x = u32(w[i - 15])
        y = u32(w[i - 2])
        s0 = rotr32(x, 7) ^ rotr32(x, 18) ^ (x >> 3)
        s1 = rotr32(y, 17) ^ rotr32(y, 19) ^ (y >> 10)
        w[i] = add32(w[i - 16], s0, w[i - 7], s1)


@inline_kernel
def _rounds(a, b, c, d, e, f, g, h, bc, w, start, stop):
    """Rounds start..stop (a multiple of 8 apart): 8 per pass, names rotate, values stay."""
    for t in range(start, stop, 8):
        d, h, bc = _round(a, b, c, d, e, f, g, h, K256[t], w[t], bc)
        c, g, bc = _round(h, a, b, c, d, e, f, g, K256[t + 1], w[t + 1], bc)
        b, f, bc = _round(g, h, a, b, c, d, e, f, K256[t + 2], w[t + 2], bc)
        a, e, bc = _round(f, g, h, a, b, c, d, e, K256[t + 3], w[t + 3], bc)
        h, d, bc = _round(e, f, g, h, a, b, c, d, K256[t + 4], w[t + 4], bc)
        g, c, bc = _round(d, e, f, g, h, a, b, c, K256[t + 5], w[t + 5], bc)
        f, b, bc = _round(c, d, e, f, g, h, a, b, K256[t + 6], w[t + 6], bc)
        e, a, bc = _round(b, c, d, e, f, g, h, a, K256[t + 7], w[t + 7], bc)
    return a, b, c, d, e, f, g, h, bc


@block_function
def compress(state, data, offset, nblocks):
    """Compress ``nblocks`` 64-byte blocks of ``data`` from byte ``offset`` into ``state`` (8 x u32)."""
    w = new_words(64, np.uint32)
    h0 = u32(state[0])
    h1 = u32(state[1])
    h2 = u32(state[2])
    h3 = u32(state[3])
    h4 = u32(state[4])
    h5 = u32(state[5])
    h6 = u32(state[6])
    h7 = u32(state[7])
    for blk in range(nblocks):
        p = offset + 64 * blk
        load_be32(data[p:p + 64], 0, w, 16)     # a block view: indices provably >= 0
        a, b, c, d, e, f, g, h, bc = _rounds(h0, h1, h2, h3, h4, h5, h6, h7, h1 ^ h2, w, 0, 16)
        _expand(w, 16, 32)
        a, b, c, d, e, f, g, h, bc = _rounds(a, b, c, d, e, f, g, h, bc, w, 16, 32)
        _expand(w, 32, 48)
        a, b, c, d, e, f, g, h, bc = _rounds(a, b, c, d, e, f, g, h, bc, w, 32, 48)
        _expand(w, 48, 64)
        a, b, c, d, e, f, g, h, bc = _rounds(a, b, c, d, e, f, g, h, bc, w, 48, 64)
        h0 = add32(h0, a)
        h1 = add32(h1, b)
        h2 = add32(h2, c)
        h3 = add32(h3, d)
        h4 = add32(h4, e)
        h5 = add32(h5, f)
        h6 = add32(h6, g)
        h7 = add32(h7, h)
    state[0] = h0
    state[1] = h1
    state[2] = h2
    state[3] = h3
    state[4] = h4
    state[5] = h5
    state[6] = h6
    state[7] = h7



# --- the backend record: the entry points (kernels/_md_backend.py) on this block function ---
BACKEND = md_backend("sha256", "portable", TIERS["portable"], __name__, compress)
