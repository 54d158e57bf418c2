"""HMAC (RFC 2104) and PBKDF2-HMAC (RFC 8018) as single kernel calls, for the Merkle-Damgard
families (MD5, SHA-1, SHA-2) on their portable and SHA-NI block functions.

Why a kernel and not hash objects: HMAC of a short message is four compressions, and PBKDF2 is
two per iteration. Driven from Python (as hashlib's ``hmac`` module and OpenSSL's PBKDF2 loop
do) the calls around them cost more than the compressions; here the key blocks are compressed
once per call, and every PBKDF2 iteration is two compressions of one prepared block from the
two keyed states, with the digest written straight back into that block.
"""
# The drivers here (``inline_kernel``, like ``_md``'s) take the backend's pieces as their first
# arguments: ``_md.finish_piece``'s padded last block and ``keyed_pieces``' key blocks and hash
# after them, each compiled once per backend and called by every keyed entry (inlined at
# Numba-IR level into each entry instead, their typing was most of an entry's compile: benchmarks/results/kernel_notes.md,
# "HMAC"); ``md_pbkdf2`` also takes ``compress`` and the
# padding parameters, for its iterations. Every Merkle-Damgard backend module
# (``md5/portable.py``, ``sha256/sha_ni.py``, ...) exports them as ``hmac(iv, key, msg, out)``
# (``out``: a bytearray of the digest size), ``hmac_states(iv, key, ds, states)`` (the keyed inner
# and outer states), ``hmac_final(state, buf, buflen, total, ostate, out)`` (an HMAC object's
# digest from its inner hash object's fields), ``hmac_rows(values, starts, lengths, rows,
# states, out)`` (batch HMAC in ``hash_rows``' layouts) and ``pbkdf2(iv, password, salt,
# iterations, ds, out)`` (``ds``: the digest size; ``out``: a bytearray of ``dklen`` bytes);
# ``jitdigest.engine.keyed`` compiles each for one signature.
import numpy as np

from ._jit import (GIL_MINSIZE, inline_in_callers, inline_kernel, piece, reacquire_gil,
                   release_gil_if, scratch, scratch_copy, store_words)
from ._rows import length_of, row_at, row_count, start_of


@inline_kernel
def put_digest(little, state, out, n):
    """out[0:n] = the first n digest bytes of ``state`` (the family's byte order)."""
    store_words(state, little, out[:n])


def keyed_pieces(compress, finish, block_size):
    """A backend's ``(states, after_key)``, compiled once per backend (``piece``s, like
    ``finish``, its ``_md.finish_piece``): ``states(iv, key, istate, ostate, ds)`` the keyed
    states (``keyed_states``); ``after_key(state, src, start, n, out)`` a message's hash after
    the key block (``after_key_block``)."""
    @piece()
    def states(iv, key, istate, ostate, ds):
        inline_in_callers()
        keyed_states(compress, finish, block_size, iv, key, istate, ostate, ds)

    @piece(4)
    def after_key(state, src, start, n, out):
        inline_in_callers()
        after_key_block(compress, finish, block_size, state, src, start, n, out)
    return states, after_key


@inline_kernel
def keyed_states(compress, finish, block_size, iv, key, istate, ostate, ds):
    """istate, ostate = the states after the key block XOR ipad, XOR opad (RFC 2104; a key
    longer than a block is hashed first, to ``ds`` bytes)."""
    block = scratch(block_size, np.uint8, 128)
    n = len(key)
    if n > block_size:
        state = scratch_copy(iv, 8)
        nblocks = n // block_size
        compress(state, key, 0, nblocks)
        done = nblocks * block_size
        finish(state, key, done, n - done, n, block[:ds])
    else:
        for i in range(n):
            block[i] = key[i]
    for i in range(block_size):
        block[i] ^= 0x36
    for k in range(iv.shape[0]):
        istate[k] = iv[k]
    compress(istate, block, 0, 1)
    for i in range(block_size):
        block[i] ^= 0x36 ^ 0x5C
    for k in range(iv.shape[0]):
        ostate[k] = iv[k]
    compress(ostate, block, 0, 1)


@inline_kernel
def after_key_block(compress, finish, block_size, state, src, start, n, out):
    """out = the hash of ``src[start:start + n]`` following a key block, from the keyed
    ``state`` (modified): whole blocks (GIL released from hashlib's threshold, when held),
    then the padded tail, whose length field counts the key block."""
    nblocks = n // block_size
    if nblocks > 0:
        token = release_gil_if(n >= GIL_MINSIZE)
        compress(state, src, start, nblocks)
        reacquire_gil(token)
    done = nblocks * block_size
    finish(state, src, start + done, n - done, n + block_size, out)


@inline_kernel
def md_hmac(finish, states, after_key, block_size, iv, key, msg, out):
    """out = HMAC(key, msg), ``len(out)`` the digest size."""
    ds = len(out)
    istate = scratch_copy(iv, 8)
    ostate = scratch_copy(iv, 8)
    states(iv, key, istate, ostate, ds)
    inner = scratch(64, np.uint8, 64)
    after_key(istate, msg, 0, len(msg), inner[:ds])
    finish(ostate, inner, 0, ds, block_size + ds, out)


@inline_kernel
def md_hmac_states(states, iv, key, ds, out):
    """out = the keyed inner state, then the outer one (an HMAC object's start)."""
    ns = iv.shape[0]
    istate = scratch_copy(iv, 8)
    ostate = scratch_copy(iv, 8)
    states(iv, key, istate, ostate, ds)
    for k in range(ns):
        out[k] = istate[k]
        out[ns + k] = ostate[k]


@inline_kernel
def md_hmac_final(finish, block_size, state, buf, buflen, total, ostate, out):
    """out = HMAC of an object's data so far: the inner hash's ``state``, ``buf``, ``buflen``
    and ``total`` (the key block counted) as hash objects keep them, the keyed ``ostate``."""
    ds = len(out)
    inner = scratch(64, np.uint8, 64)
    finish(scratch_copy(state, 8), buf, 0, buflen, total, inner[:ds])
    finish(scratch_copy(ostate, 8), inner, 0, ds, block_size + ds, out)


@inline_kernel
def md_hmac_rows(finish, after_key, block_size, values, starts, lengths, rows, states, out):
    """Batch HMAC, one message at a time (the lane kernels' stand-in): ``out[r]`` = HMAC of
    row ``r`` (``_rows``' layouts), ``states`` the keyed inner state, then the outer one."""
    ns = states.shape[0] // 2
    ds = out.shape[1]
    state = scratch_copy(states, 16)             # the first ns words are the working state
    inner = scratch(64, np.uint8, 64)
    for i in range(row_count(rows)):
        r = row_at(rows, i)
        for k in range(ns):
            state[k] = states[k]
        after_key(state, values, start_of(starts, r), length_of(lengths, r), inner[:ds])
        for k in range(ns):
            state[k] = states[ns + k]
        finish(state, inner, 0, ds, block_size + ds, out[r])


@inline_kernel
def salt_and_index(salt):
    """PBKDF2's first message, ``salt || INT_32_BE(i)``, with room for the block index ``i``
    (``set_index``); made once per call."""
    m = len(salt)
    message = np.empty(m + 4, np.uint8)
    for i in range(m):
        message[i] = salt[i]
    return message


@inline_kernel
def set_index(message, index):
    """The last four bytes of ``message`` = ``index`` (32-bit big-endian)."""
    m = len(message) - 4
    for k in range(4):
        message[m + k] = (index >> (8 * (3 - k))) & 0xFF


@inline_kernel
def md_pbkdf2(compress, states, after_key, block_size, len_bytes, little, iv, password, salt,
              iterations, ds, out):
    """out = PBKDF2-HMAC(password, salt, iterations), ``len(out)`` bytes (RFC 8018 5.2)."""
    istate = scratch_copy(iv, 8)
    ostate = scratch_copy(iv, 8)
    states(iv, password, istate, ostate, ds)
    state = scratch_copy(iv, 8)
    # U_j (ds bytes) padded as the last block of a (block + ds)-byte message: U_j's inner and
    # outer hashes are each one compression of this block from a keyed state.
    ublock = scratch(block_size, np.uint8, 128)
    ublock[ds] = 0x80
    bits = (block_size + ds) * 8
    for k in range(4):
        byte = (bits >> (8 * k)) & 0xFF
        if little:
            ublock[block_size - len_bytes + k] = byte
        else:
            ublock[block_size - 1 - k] = byte
    acc = scratch(64, np.uint8, 64)
    message = salt_and_index(salt)
    dklen = len(out)
    for index in range(1, (dklen + ds - 1) // ds + 1):
        set_index(message, index)
        for k in range(iv.shape[0]):
            state[k] = istate[k]
        after_key(state, message, 0, len(message), ublock[:ds])
        for k in range(iv.shape[0]):
            state[k] = ostate[k]
        compress(state, ublock, 0, 1)
        put_digest(little, state, ublock, ds)
        for i in range(ds):
            acc[i] = ublock[i]
        for _ in range(1, iterations):
            for k in range(iv.shape[0]):
                state[k] = istate[k]
            compress(state, ublock, 0, 1)
            put_digest(little, state, ublock, ds)
            for k in range(iv.shape[0]):
                state[k] = ostate[k]
            compress(state, ublock, 0, 1)
            put_digest(little, state, ublock, ds)
            for i in range(ds):
                acc[i] ^= ublock[i]
        first = (index - 1) * ds
        for i in range(min(ds, dklen - first)):
            out[first + i] = acc[i]
