"""SHA-224/SHA-256 written the un-streamlined way, one small kernel call per step: a foil for
``jitdigest/kernels/sha256/portable.py`` in the interpreted-vs-JIT notebook, not a backend
(it lives beside the notebooks, outside the package).

It retells OpenJDK's JDK-8256523 ("Streamline Java SHA2 implementation", JDK 16): Java's SHA-2
compress called small helper methods on its fast path (``lf_ch``, ``lf_maj``, ``lf_sigma0``,
``lf_delta0``, ...). Compilers inline them, so compiled code did not care; an interpreter pays
for every call. The change inlined them by hand, taking those calls off the interpreter's path,
and left compiled code as it was (compilers had inlined them already); the notebook measures
what the same change does here.

This file is ``portable.py``'s algorithm, operation for operation (same loader, the schedule
sixteen words at a time before their rounds, same eight-round passes with rotating names,
same ``ch``/``maj`` forms), with every step moved into its own ``@kernel`` function: ``ch``,
``maj``, ``big_sigma0``/``big_sigma1`` (the rounds' Sigma functions), ``small_sigma0``/
``small_sigma1`` (the schedule's sigma functions), ``schedule_word`` (one message schedule
word) and ``round_step`` (one round, built from the helpers). So the difference between the
two is the calls (``portable.py`` makes seven a block, to its 16-word steps; this file a few
hundred): interpreted (``NUMBA_DISABLE_JIT=1``) each is a Python call; compiled, Numba links
the callees into the caller and LLVM inlines them, giving the same machine code.

The entry points (``update``, ``final``, ``oneshot``, ``hash_rows``) are ``portable.py``'s,
over this ``compress``: called with the same arguments, they give SHA-224/SHA-256 digests.
"""
import numpy as np

from jitdigest.base.algorithms import MERKLE_DAMGARD
from jitdigest.kernels._jit import add32, gil_kernel, kernel, load_be32, new_words, rotr32, u32
from jitdigest.kernels._md import finish_piece, md_final, md_hash_rows, md_oneshot, md_update
from jitdigest.kernels.sha256.portable import K256


@kernel
def ch(e, f, g):
    """Choose: f's bit where e has a 1, g's where it has a 0."""
    return g ^ (e & (f ^ g))


@kernel
def maj(ab, b, bc):
    """Majority of a, b, c, given a ^ b and b ^ c (the latter carried from the last round)."""
    return b ^ (ab & bc)


@kernel
def big_sigma0(a):
    return rotr32(a, 2) ^ rotr32(a, 13) ^ rotr32(a, 22)


@kernel
def big_sigma1(e):
    return rotr32(e, 6) ^ rotr32(e, 11) ^ rotr32(e, 25)


@kernel
def small_sigma0(x):
    return rotr32(x, 7) ^ rotr32(x, 18) ^ (x >> 3)


@kernel
def small_sigma1(x):
    return rotr32(x, 17) ^ rotr32(x, 19) ^ (x >> 10)


@kernel
def schedule_word(w, i):
    """Message schedule word ``i`` (16 <= i < 64) from the words before it."""
    return add32(w[i - 16], small_sigma0(u32(w[i - 15])), w[i - 7], small_sigma1(u32(w[i - 2])))


@kernel
def round_step(a, b, c, d, e, f, g, h, k, w, bc):
    """One round; returns the new (d, h) and a ^ b, which is the next round's b ^ c."""
    t1 = add32(h, big_sigma1(e), ch(e, f, g), k, w)
    ab = a ^ b
    return add32(d, t1), add32(t1, big_sigma0(a), maj(ab, b, bc)), ab


@kernel
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
        load_be32(data[p:p + 64], 0, w, 16)
        a, b, c, d, e, f, g, h = h0, h1, h2, h3, h4, h5, h6, h7
        bc = b ^ c
        for t in range(0, 64, 8):
            if t >= 16 and t % 16 == 0:         # sixteen schedule words, then their rounds
                for i in range(t, t + 16):
                    w[i] = schedule_word(w, i)
            d, h, bc = round_step(a, b, c, d, e, f, g, h, K256[t], w[t], bc)
            c, g, bc = round_step(h, a, b, c, d, e, f, g, K256[t + 1], w[t + 1], bc)
            b, f, bc = round_step(g, h, a, b, c, d, e, f, K256[t + 2], w[t + 2], bc)
            a, e, bc = round_step(f, g, h, a, b, c, d, e, K256[t + 3], w[t + 3], bc)
            h, d, bc = round_step(e, f, g, h, a, b, c, d, K256[t + 4], w[t + 4], bc)
            g, c, bc = round_step(d, e, f, g, h, a, b, c, K256[t + 5], w[t + 5], bc)
            f, b, bc = round_step(c, d, e, f, g, h, a, b, K256[t + 6], w[t + 6], bc)
            e, a, bc = round_step(b, c, d, e, f, g, h, a, K256[t + 7], w[t + 7], bc)
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


BLOCK, LENGTH_BYTES, LITTLE = MERKLE_DAMGARD["sha256"]
FINISH = finish_piece(compress, BLOCK, LENGTH_BYTES, LITTLE)


@gil_kernel
def update(state, buf, buflen, data):
    return md_update(compress, BLOCK, state, buf, buflen, data)


@gil_kernel
def final(state, buf, buflen, total, out):
    md_final(FINISH, state, buf, buflen, total, out)


@gil_kernel
def oneshot(iv, data, out):
    md_oneshot(compress, FINISH, BLOCK, iv, data, out)


@kernel
def hash_rows(values, starts, lengths, rows, iv, out):
    md_hash_rows(compress, FINISH, BLOCK, values, starts, lengths, rows, iv, out)
