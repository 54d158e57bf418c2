"""Portable SHA-1 (FIPS 180-4): one source for interpreted and compiled mode.

``compress`` is the generic block function, kept in its own file so that a faster kernel
(SHA-NI, lanes) with the same signature can stand in for it.
"""
from .._jit import (add32, block_function, const_words, inline_kernel, kernel,
                   load_be32, new_words, rotl32, u32)
from .._contract import TIERS
from .._md_backend import md_backend
import numpy as np


# The round constants of rounds 0-19, 20-39, 40-59 and 60-79 (FIPS 180-4, 4.2.1). Passed to
# _parity from a table, not as literals: a literal argument (also an item of a tuple) compiles
# it once per value.
K = const_words([0x5a827999, 0x6ed9eba1, 0x8f1bbcdc, 0xca62c1d6], np.uint32)


# One round each for rounds 0-19 (Ch), 20-39 and 60-79 (Parity) and 40-59 (Maj). Each returns
# the new e and b (= b <<< 30); the caller rotates the five names instead of the values.
@kernel
def _ch(a, b, c, d, e, w):
    return add32(e, rotl32(a, 5), d ^ (b & (c ^ d)), K[0], w), rotl32(b, 30)


@kernel
def _parity(a, b, c, d, e, k, w):
    return add32(e, rotl32(a, 5), b ^ c ^ d, k, w), rotl32(b, 30)


@kernel
def _maj(a, b, c, d, e, w):
    return add32(e, rotl32(a, 5), (b & c) | (d & (b | c)), K[2], w), rotl32(b, 30)


@inline_kernel
def _expand(w, start, stop):
    """Message schedule words w[start:stop]. Inlined by Numba: left to LLVM, a helper with a loop
    may stay a call in ``compress``'s own library, much slower (kernel_notes.md)."""
    for t in range(start, stop):
        w[t] = rotl32(u32(w[t - 3]) ^ u32(w[t - 8]) ^ u32(w[t - 14]) ^ u32(w[t - 16]), 1)


@block_function
def compress(state, data, offset, nblocks):
    """Compress ``nblocks`` 64-byte blocks of ``data`` from byte ``offset`` into ``state`` (5 x u32)."""
    w = new_words(80, np.uint32)
    h0 = u32(state[0])
    h1 = u32(state[1])
    h2 = u32(state[2])
    h3 = u32(state[3])
    h4 = u32(state[4])
    for blk in range(nblocks):
        p = offset + 64 * blk
        load_be32(data[p:p + 64], 0, w, 16)     # a block view: indices provably >= 0
        a, b, c, d, e = h0, h1, h2, h3, h4
        _expand(w, 16, 20)
        for t in range(0, 20, 5):               # 5 rounds per pass: names rotate, values stay
            e, b = _ch(a, b, c, d, e, w[t])
            d, a = _ch(e, a, b, c, d, w[t + 1])
            c, e = _ch(d, e, a, b, c, w[t + 2])
            b, d = _ch(c, d, e, a, b, w[t + 3])
            a, c = _ch(b, c, d, e, a, w[t + 4])
        _expand(w, 20, 40)
        for t in range(20, 40, 5):
            e, b = _parity(a, b, c, d, e, K[1], w[t])
            d, a = _parity(e, a, b, c, d, K[1], w[t + 1])
            c, e = _parity(d, e, a, b, c, K[1], w[t + 2])
            b, d = _parity(c, d, e, a, b, K[1], w[t + 3])
            a, c = _parity(b, c, d, e, a, K[1], w[t + 4])
        _expand(w, 40, 60)
        for t in range(40, 60, 5):
            e, b = _maj(a, b, c, d, e, w[t])
            d, a = _maj(e, a, b, c, d, w[t + 1])
            c, e = _maj(d, e, a, b, c, w[t + 2])
            b, d = _maj(c, d, e, a, b, w[t + 3])
            a, c = _maj(b, c, d, e, a, w[t + 4])
        _expand(w, 60, 80)
        for t in range(60, 80, 5):
            e, b = _parity(a, b, c, d, e, K[3], w[t])
            d, a = _parity(e, a, b, c, d, K[3], w[t + 1])
            c, e = _parity(d, e, a, b, c, K[3], w[t + 2])
            b, d = _parity(c, d, e, a, b, K[3], w[t + 3])
            a, c = _parity(b, c, d, e, a, K[3], w[t + 4])
        h0 = add32(h0, a)
        h1 = add32(h1, b)
        h2 = add32(h2, c)
        h3 = add32(h3, d)
        h4 = add32(h4, e)
    state[0] = h0
    state[1] = h1
    state[2] = h2
    state[3] = h3
    state[4] = h4



# --- the backend record: the entry points (kernels/_md_backend.py) on this block function ---
BACKEND = md_backend("sha1", "portable", TIERS["portable"], __name__, compress)
