"""scrypt's ROMix (RFC 7914 section 5) with BlockMix over the Salsa20/8 core (sections 3 and 4),
one source for interpreted and compiled mode.

Words are little-endian uint32, as RFC 7914 reads them; ``jitdigest/_scrypt.py`` converts the
bytes in and out. Memory is what the caller allocated once for the call (``v``: N blocks of
128 * r bytes, ``y``: one more); nothing here allocates, and every index stays inside those
arrays for the sizes ``_scrypt`` checked: ``b`` holds whole 32 * r-word blocks, ``v`` holds
``n`` of them, ``y`` one, ``n`` is a power of two and at most 2**32 (Integerify's block
number is its first word masked with ``n - 1``; OpenSSL's memory limit, under 2 GiB, keeps
``n`` under 2**24).

The Salsa20/8 state is 16 local words, not an array: the core is straight-line code on
registers, as in OpenSSL's ``salsa208_word_specification``. ``v`` doubles as ROMix's ``X`` in
the first loop: block ``i + 1`` is BlockMix of block ``i``, written in place, so no copy is made.
"""
from .._jit import add32, inline_in_callers, kernel, rotl32, typed_kernel, u32


@kernel
def romix(b, n, r, v, y):
    """ROMix each of the ``b.shape[0] // (32 * r)`` blocks of ``b`` in place (scrypt's p
    parallel blocks, one after another), with ``v`` (at least ``32 * r * n`` words) and ``y``
    (at least ``32 * r``) as scratch."""
    w = 32 * r
    for base in range(0, b.shape[0] - w + 1, w):
        for k in range(w):
            v[k] = b[base + k]
        for i in range(n - 1):                     # V_{i+1} = BlockMix(V_i)
            _block_mix(v, i * w, v, (i + 1) * w, r)
        _block_mix(v, (n - 1) * w, b, base, r)
        last = base + w - 16                       # Integerify: B_{2r-1}'s first words
        for _ in range(n // 2):                    # two steps a turn: X ping-pongs b <-> y
            j = (u32(b[last]) & (n - 1)) * w
            for k in range(w):
                b[base + k] = u32(b[base + k] ^ v[j + k])
            _block_mix(b, base, y, 0, r)
            j = (u32(y[w - 16]) & (n - 1)) * w
            for k in range(w):
                y[k] = u32(y[k] ^ v[j + k])
            _block_mix(y, 0, b, base, r)


@typed_kernel()
def _block_mix(src, s, dst, d, r):
    """BlockMix_{Salsa20/8, r} of the 2r 64-byte blocks at ``src[s:]`` into ``dst[d:]``: even
    blocks' outputs first, then odd ones'. ``dst`` may be ``src`` only at another offset."""
    inline_in_callers()
    last = s + 32 * r - 16
    x0 = u32(src[last])
    x1 = u32(src[last + 1])
    x2 = u32(src[last + 2])
    x3 = u32(src[last + 3])
    x4 = u32(src[last + 4])
    x5 = u32(src[last + 5])
    x6 = u32(src[last + 6])
    x7 = u32(src[last + 7])
    x8 = u32(src[last + 8])
    x9 = u32(src[last + 9])
    x10 = u32(src[last + 10])
    x11 = u32(src[last + 11])
    x12 = u32(src[last + 12])
    x13 = u32(src[last + 13])
    x14 = u32(src[last + 14])
    x15 = u32(src[last + 15])
    for i in range(2 * r):
        p = s + 16 * i
        x0 = u32(x0 ^ src[p])
        x1 = u32(x1 ^ src[p + 1])
        x2 = u32(x2 ^ src[p + 2])
        x3 = u32(x3 ^ src[p + 3])
        x4 = u32(x4 ^ src[p + 4])
        x5 = u32(x5 ^ src[p + 5])
        x6 = u32(x6 ^ src[p + 6])
        x7 = u32(x7 ^ src[p + 7])
        x8 = u32(x8 ^ src[p + 8])
        x9 = u32(x9 ^ src[p + 9])
        x10 = u32(x10 ^ src[p + 10])
        x11 = u32(x11 ^ src[p + 11])
        x12 = u32(x12 ^ src[p + 12])
        x13 = u32(x13 ^ src[p + 13])
        x14 = u32(x14 ^ src[p + 14])
        x15 = u32(x15 ^ src[p + 15])
        (x0, x1, x2, x3, x4, x5, x6, x7, x8, x9, x10, x11, x12, x13, x14,
         x15) = _salsa20_8(x0, x1, x2, x3, x4, x5, x6, x7, x8, x9, x10, x11, x12, x13, x14, x15)
        o = d + 16 * (i // 2) + (16 * r if i % 2 else 0)
        dst[o] = x0
        dst[o + 1] = x1
        dst[o + 2] = x2
        dst[o + 3] = x3
        dst[o + 4] = x4
        dst[o + 5] = x5
        dst[o + 6] = x6
        dst[o + 7] = x7
        dst[o + 8] = x8
        dst[o + 9] = x9
        dst[o + 10] = x10
        dst[o + 11] = x11
        dst[o + 12] = x12
        dst[o + 13] = x13
        dst[o + 14] = x14
        dst[o + 15] = x15


@kernel
def _salsa20_8(x0, x1, x2, x3, x4, x5, x6, x7, x8, x9, x10, x11, x12, x13, x14, x15):
    """The Salsa20/8 core (RFC 7914 section 3): four double rounds, then the input added."""
    inline_in_callers()
    j0, j1, j2, j3, j4, j5, j6, j7 = x0, x1, x2, x3, x4, x5, x6, x7
    j8, j9, j10, j11, j12, j13, j14, j15 = x8, x9, x10, x11, x12, x13, x14, x15
    for _ in range(4):
        # columns
        x4 = u32(x4 ^ rotl32(add32(x0, x12), 7))
        x8 = u32(x8 ^ rotl32(add32(x4, x0), 9))
        x12 = u32(x12 ^ rotl32(add32(x8, x4), 13))
        x0 = u32(x0 ^ rotl32(add32(x12, x8), 18))
        x9 = u32(x9 ^ rotl32(add32(x5, x1), 7))
        x13 = u32(x13 ^ rotl32(add32(x9, x5), 9))
        x1 = u32(x1 ^ rotl32(add32(x13, x9), 13))
        x5 = u32(x5 ^ rotl32(add32(x1, x13), 18))
        x14 = u32(x14 ^ rotl32(add32(x10, x6), 7))
        x2 = u32(x2 ^ rotl32(add32(x14, x10), 9))
        x6 = u32(x6 ^ rotl32(add32(x2, x14), 13))
        x10 = u32(x10 ^ rotl32(add32(x6, x2), 18))
        x3 = u32(x3 ^ rotl32(add32(x15, x11), 7))
        x7 = u32(x7 ^ rotl32(add32(x3, x15), 9))
        x11 = u32(x11 ^ rotl32(add32(x7, x3), 13))
        x15 = u32(x15 ^ rotl32(add32(x11, x7), 18))
        # rows
        x1 = u32(x1 ^ rotl32(add32(x0, x3), 7))
        x2 = u32(x2 ^ rotl32(add32(x1, x0), 9))
        x3 = u32(x3 ^ rotl32(add32(x2, x1), 13))
        x0 = u32(x0 ^ rotl32(add32(x3, x2), 18))
        x6 = u32(x6 ^ rotl32(add32(x5, x4), 7))
        x7 = u32(x7 ^ rotl32(add32(x6, x5), 9))
        x4 = u32(x4 ^ rotl32(add32(x7, x6), 13))
        x5 = u32(x5 ^ rotl32(add32(x4, x7), 18))
        x11 = u32(x11 ^ rotl32(add32(x10, x9), 7))
        x8 = u32(x8 ^ rotl32(add32(x11, x10), 9))
        x9 = u32(x9 ^ rotl32(add32(x8, x11), 13))
        x10 = u32(x10 ^ rotl32(add32(x9, x8), 18))
        x12 = u32(x12 ^ rotl32(add32(x15, x14), 7))
        x13 = u32(x13 ^ rotl32(add32(x12, x15), 9))
        x14 = u32(x14 ^ rotl32(add32(x13, x12), 13))
        x15 = u32(x15 ^ rotl32(add32(x14, x13), 18))
    return (add32(x0, j0), add32(x1, j1), add32(x2, j2), add32(x3, j3), add32(x4, j4),
            add32(x5, j5), add32(x6, j6), add32(x7, j7), add32(x8, j8), add32(x9, j9),
            add32(x10, j10), add32(x11, j11), add32(x12, j12), add32(x13, j13),
            add32(x14, j14), add32(x15, j15))
