"""Portable MD5 (RFC 1321): one source for interpreted and compiled mode.

``compress`` is the generic block function; MD5 differs from SHA in its little-endian words
and length field, which the entry points below pass to the shared Merkle-Damgard driver.
"""
from .._jit import (add32, block_function, const_words, kernel, load_le32, new_words,
                   not32, rotl32, u32)
from .._contract import TIERS
from .._md_backend import md_backend
import numpy as np

# T[i] = floor(2**32 * abs(sin(i + 1))), RFC 1321 section 3.4.
T = const_words([
    0xd76aa478, 0xe8c7b756, 0x242070db, 0xc1bdceee, 0xf57c0faf, 0x4787c62a, 0xa8304613, 0xfd469501,
    0x698098d8, 0x8b44f7af, 0xffff5bb1, 0x895cd7be, 0x6b901122, 0xfd987193, 0xa679438e, 0x49b40821,
    0xf61e2562, 0xc040b340, 0x265e5a51, 0xe9b6c7aa, 0xd62f105d, 0x02441453, 0xd8a1e681, 0xe7d3fbc8,
    0x21e1cde6, 0xc33707d6, 0xf4d50d87, 0x455a14ed, 0xa9e3e905, 0xfcefa3f8, 0x676f02d9, 0x8d2a4c8a,
    0xfffa3942, 0x8771f681, 0x6d9d6122, 0xfde5380c, 0xa4beea44, 0x4bdecfa9, 0xf6bb4b60, 0xbebfbc70,
    0x289b7ec6, 0xeaa127fa, 0xd4ef3085, 0x04881d05, 0xd9d4d039, 0xe6db99e5, 0x1fa27cf8, 0xc4ac5665,
    0xf4292244, 0x432aff97, 0xab9423a7, 0xfc93a039, 0x655b59c3, 0x8f0ccc92, 0xffeff47d, 0x85845dd1,
    0x6fa87e4f, 0xfe2ce6e0, 0xa3014314, 0x4e0811a1, 0xf7537e82, 0xbd3af235, 0x2ad7d2bb, 0xeb86d391,
], np.uint32)


# The rotation amounts of each round's four steps, RFC 1321 section 3.4. Passed from here, not
# written as literals: a literal argument compiles a step function once per value (16
# compiles, not 4; LLVM inlines the steps and folds the amounts either way).
S = ((7, 12, 17, 22), (5, 9, 14, 20), (4, 11, 16, 23), (6, 10, 15, 21))


# The four step functions of RFC 1321: a <- b + ((a + F(b, c, d) + x + t) <<< s).
@kernel
def _ff(a, b, c, d, x, t, s):
    return add32(b, rotl32(add32(a, d ^ (b & (c ^ d)), x, t), s))


@kernel
def _gg(a, b, c, d, x, t, s):
    return add32(b, rotl32(add32(a, c ^ (d & (b ^ c)), x, t), s))


@kernel
def _hh(a, b, c, d, x, t, s):
    return add32(b, rotl32(add32(a, b ^ c ^ d, x, t), s))


@kernel
def _ii(a, b, c, d, x, t, s):
    return add32(b, rotl32(add32(a, c ^ (b | not32(d)), x, t), s))


@block_function
def compress(state, data, offset, nblocks):
    """Compress ``nblocks`` 64-byte blocks of ``data`` from byte ``offset`` into ``state`` (4 x u32)."""
    x = new_words(16, np.uint32)
    h0 = u32(state[0])
    h1 = u32(state[1])
    h2 = u32(state[2])
    h3 = u32(state[3])
    for blk in range(nblocks):
        p = offset + 64 * blk
        load_le32(data[p:p + 64], 0, x, 16)     # a block view: indices provably >= 0
        a, b, c, d = h0, h1, h2, h3
        for i in range(0, 16, 4):               # round 1: word i
            a = _ff(a, b, c, d, x[i], T[i], S[0][0])
            d = _ff(d, a, b, c, x[i + 1], T[i + 1], S[0][1])
            c = _ff(c, d, a, b, x[i + 2], T[i + 2], S[0][2])
            b = _ff(b, c, d, a, x[i + 3], T[i + 3], S[0][3])
        for i in range(16, 32, 4):              # round 2: word 5i + 1
            a = _gg(a, b, c, d, x[(5 * i + 1) & 15], T[i], S[1][0])
            d = _gg(d, a, b, c, x[(5 * i + 6) & 15], T[i + 1], S[1][1])
            c = _gg(c, d, a, b, x[(5 * i + 11) & 15], T[i + 2], S[1][2])
            b = _gg(b, c, d, a, x[5 * i & 15], T[i + 3], S[1][3])
        for i in range(32, 48, 4):              # round 3: word 3i + 5
            a = _hh(a, b, c, d, x[(3 * i + 5) & 15], T[i], S[2][0])
            d = _hh(d, a, b, c, x[(3 * i + 8) & 15], T[i + 1], S[2][1])
            c = _hh(c, d, a, b, x[(3 * i + 11) & 15], T[i + 2], S[2][2])
            b = _hh(b, c, d, a, x[(3 * i + 14) & 15], T[i + 3], S[2][3])
        for i in range(48, 64, 4):              # round 4: word 7i
            a = _ii(a, b, c, d, x[7 * i & 15], T[i], S[3][0])
            d = _ii(d, a, b, c, x[(7 * i + 7) & 15], T[i + 1], S[3][1])
            c = _ii(c, d, a, b, x[(7 * i + 14) & 15], T[i + 2], S[3][2])
            b = _ii(b, c, d, a, x[(7 * i + 5) & 15], T[i + 3], S[3][3])
        h0 = add32(h0, a)
        h1 = add32(h1, b)
        h2 = add32(h2, c)
        h3 = add32(h3, d)
    state[0] = h0
    state[1] = h1
    state[2] = h2
    state[3] = h3



# --- the backend record: the entry points (kernels/_md_backend.py) on this block function ---
BACKEND = md_backend("md5", "portable", TIERS["portable"], __name__, compress)
