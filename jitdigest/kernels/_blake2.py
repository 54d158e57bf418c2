"""BLAKE2 (RFC 7693) drivers shared by BLAKE2b and BLAKE2s and all their backends: buffering,
the final block, batch rows; and the constants both block functions read.

State (one flat array of the family's word type, 11 words): h[0..7], the byte counter t0, t1,
and the last-node flag f1 (0 or all ones). Python builds the initial state from the parameter
block (``jitdigest._blake2``); the kernels never see the parameters.

Every backend's block function has one contract, ``compress(state, data, offset, nblocks, inc,
last)``: absorb ``nblocks`` blocks of ``data`` from byte ``offset``, adding ``inc`` to the
counter before each block; ``last`` marks the final block (f0 = ~0, f1 = the state's flag).
"""
# Unlike Merkle-Damgard, BLAKE2 must know a block is the last before compressing it, so
# ``b2_update`` always leaves 1..block_size bytes in ``buf`` once data has arrived (a full block
# when the data ends on a block boundary) and ``b2_finish`` compresses that tail as the final
# block, counter advanced by its length, zero-padded. The drivers take the compress function as
# an argument (inlined, so callers stay cacheable).
import numpy as np

from ..base.algorithms import SPECS
from ._jit import (GIL_MINSIZE, const_words, inline_kernel, reacquire_gil, release_gil_if,
                   scratch, scratch_copy, store_words)
from ._rows import length_of, row_at, row_count, start_of

# BLAKE2b's IV is SHA-512's initial state, BLAKE2s's is SHA-256's (RFC 7693, 2.6).
IV64 = const_words(SPECS["sha512"].iv, np.uint64)
IV32 = const_words(SPECS["sha256"].iv, np.uint32)

# The message schedule, ten rows of sixteen flattened (BLAKE2b's rounds 10 and 11 reuse rows 0, 1).
SIGMA = const_words([
    0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15,
    14, 10, 4, 8, 9, 15, 13, 6, 1, 12, 0, 2, 11, 7, 5, 3,
    11, 8, 12, 0, 5, 2, 15, 13, 10, 14, 3, 6, 7, 1, 9, 4,
    7, 9, 3, 1, 13, 12, 11, 14, 2, 6, 5, 10, 4, 0, 15, 8,
    9, 0, 5, 7, 2, 4, 10, 15, 14, 1, 11, 12, 6, 8, 3, 13,
    2, 12, 6, 10, 0, 11, 8, 3, 4, 13, 7, 5, 15, 14, 1, 9,
    12, 5, 1, 15, 14, 13, 4, 10, 0, 7, 6, 3, 9, 2, 8, 11,
    13, 11, 7, 14, 12, 1, 3, 9, 5, 0, 15, 4, 8, 6, 2, 10,
    6, 15, 14, 9, 11, 3, 0, 8, 12, 2, 13, 7, 1, 4, 10, 5,
    10, 2, 8, 4, 7, 6, 1, 5, 15, 11, 9, 14, 3, 12, 13, 0,
], np.intp)


# --- the drivers, written once -------------------------------------------------------------

@inline_kernel
def b2_update(compress, block_size, state, buf, buflen, data):
    """Absorb ``data``, holding back the last 1..block_size bytes (they may be the final block).
    Returns the new ``buflen``."""
    n = data.shape[0]
    if n == 0:
        return buflen
    pos = 0
    if buflen > 0:
        take = min(block_size - buflen, n)
        for i in range(take):
            buf[buflen + i] = data[i]
        buflen += take
        pos = take
        if pos == n:                      # a full buffer stays: it may be the last block
            return buflen
        compress(state, buf, 0, 1, block_size, False)
    nblocks = (n - pos - 1) // block_size     # n - pos >= 1: at least one byte is held back
    if nblocks > 0:
        token = release_gil_if(nblocks * block_size >= GIL_MINSIZE)
        compress(state, data, pos, nblocks, block_size, False)
        reacquire_gil(token)
        pos += nblocks * block_size
    rest = n - pos
    for i in range(rest):
        buf[i] = data[pos + i]
    return rest


@inline_kernel
def b2_finish(compress, block_size, state, src, start, count, out):
    """Compress ``src[start:start+count]`` (0..block_size bytes, zero-padded) as the final block
    into ``state`` and write the first ``len(out)`` bytes of h, little-endian, to ``out``."""
    block = scratch(block_size, np.uint8, 128)
    for i in range(count):
        block[i] = src[start + i]
    compress(state, block, 0, 1, count, True)
    store_words(state, True, out)


@inline_kernel
def b2_final(compress, block_size, state, buf, buflen, out):
    """Digest of the data so far, leaving ``state`` untouched (digest() does not finalise)."""
    b2_finish(compress, block_size, scratch_copy(state, 16), buf, 0, buflen, out)


@inline_kernel
def b2_oneshot(compress, block_size, iv, data, out):
    """Digest of ``data`` (a ``bytes`` object) from the initial state ``iv`` in one call."""
    token = release_gil_if(len(data) >= GIL_MINSIZE)
    b2_message(compress, block_size, iv, data, out)
    reacquire_gil(token)


@inline_kernel
def b2_message(compress, block_size, iv, data, out):
    """Digest of the message ``data`` from the initial state ``iv``."""
    state = scratch_copy(iv, 16)
    n = len(data)
    nblocks = max(n - 1, 0) // block_size     # the last 1..block_size bytes are the final block
    if nblocks > 0:
        compress(state, data, 0, nblocks, block_size, False)
    done = nblocks * block_size
    b2_finish(compress, block_size, state, data, done, n - done, out)


@inline_kernel
def b2_hash_rows(compress, block_size, values, starts, lengths, rows, iv, out):
    """Batch fallback: each message ``values[starts[r]:starts[r]+lengths[r]]`` for ``r`` in
    ``rows`` hashed from ``iv`` (default or fixed parameters, no key) into ``out[r]``."""
    for i in range(row_count(rows)):
        r = row_at(rows, i)
        start = start_of(starts, r)
        b2_message(compress, block_size, iv, values[start:start + length_of(lengths, r)], out[r])
