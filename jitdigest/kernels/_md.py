"""Merkle-Damgard plumbing shared by MD5, SHA-1 and SHA-2: buffering, padding, length encoding.

Each function takes the family's ``compress(state, data, offset, nblocks)`` as its first
argument, so one copy serves every family and every backend (portable or hardware); the thin
entry points in each algorithm file fix the block size, length-field size and byte order. The
padded last block is a ``piece`` each backend makes once (``finish_piece``): typed once for
all the entries that call it (``final``, ``oneshot``, ``hash_rows``, the keyed ones of
``_hmac``), inlined by LLVM into each.
"""
import numpy as np

from ._jit import (GIL_MINSIZE, inline_in_callers, inline_kernel, piece, reacquire_gil,
                   release_gil_if, scratch, scratch_copy, store_words)
from ._rows import length_of, row_at, row_count, start_of


@inline_kernel
def md_update(compress, block_size, state, buf, buflen, data):
    """Absorb ``data``: fill the partial block in ``buf``, compress whole blocks straight from
    ``data``, keep the tail in ``buf``. Returns the new ``buflen``."""
    n = data.shape[0]
    pos = 0
    if buflen > 0:
        take = min(block_size - buflen, n)
        for i in range(take):
            buf[buflen + i] = data[i]
        buflen += take
        pos = take
        if buflen < block_size:
            return buflen
        compress(state, buf, 0, 1)
    nblocks = (n - pos) // block_size
    if nblocks > 0:
        token = release_gil_if(nblocks * block_size >= GIL_MINSIZE)
        compress(state, data, pos, nblocks)
        reacquire_gil(token)
        pos += nblocks * block_size
    rest = n - pos
    for i in range(rest):
        buf[i] = data[pos + i]
    return rest


@inline_kernel
def md_finish(compress, block_size, len_bytes, little, state, src, start, count, total, out):
    """Pad the last ``count`` bytes ``src[start:start+count]`` of a ``total``-byte message,
    compress the final block(s) into ``state`` and write the first ``len(out)`` digest bytes."""
    pad = scratch(2 * block_size, np.uint8, 256)
    for i in range(count):
        pad[i] = src[start + i]
    pad[count] = 0x80
    end = block_size if count + 1 + len_bytes <= block_size else 2 * block_size
    bits_lo = total << 3                      # total < 2**60: exact in int64
    for k in range(8):
        byte = (bits_lo >> (8 * k)) & 0xFF
        if little:
            pad[end - len_bytes + k] = byte
        else:
            pad[end - 1 - k] = byte
    if len_bytes == 16:
        pad[end - 9] = (total >> 61) & 0xFF
    compress(state, pad, 0, end // block_size)
    store_words(state, little, out)


def finish_piece(compress, block_size, len_bytes, little):
    """A backend's ``finish(state, src, start, count, total, out)``: ``md_finish`` for its
    ``compress`` and padding, compiled once per backend (a ``piece``)."""
    @piece(5)
    def finish(state, src, start, count, total, out):
        inline_in_callers()
        md_finish(compress, block_size, len_bytes, little, state, src, start, count, total, out)
    return finish


@inline_kernel
def md_final(finish, state, buf, buflen, total, out):
    """Digest of the message so far, leaving ``state`` untouched (digest() does not finalise)."""
    finish(scratch_copy(state, 8), buf, 0, buflen, total, out)


@inline_kernel
def md_oneshot(compress, finish, block_size, iv, data, out):
    """Digest of ``data`` (a ``bytes`` object) from the initial state ``iv`` in one call."""
    state = scratch_copy(iv, 8)
    n = len(data)
    nblocks = n // block_size
    if nblocks > 0:
        token = release_gil_if(n >= GIL_MINSIZE)
        compress(state, data, 0, nblocks)
        reacquire_gil(token)
    done = nblocks * block_size
    finish(state, data, done, n - done, n, out)


@inline_kernel
def md_hash_rows(compress, finish, block_size, values, starts, lengths, rows, iv, out):
    """Batch fallback: digest of each message ``values[starts[r]:starts[r]+lengths[r]]`` for
    ``r`` in ``rows`` into ``out[r]``, one message at a time."""
    state = scratch_copy(iv, 8)
    for i in range(row_count(rows)):
        r = row_at(rows, i)
        start = start_of(starts, r)
        n = length_of(lengths, r)
        for k in range(iv.shape[0]):
            state[k] = iv[k]
        nblocks = n // block_size
        if nblocks > 0:
            compress(state, values, start, nblocks)
        done = nblocks * block_size
        finish(state, values, start + done, n - done, n, out[r])
