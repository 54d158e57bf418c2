"""Portable BLAKE3: the compression function (``rows``: the loop form interpreted, the rows
in vector registers compiled), the chunk state, parent nodes, the chaining-value stack and the
root's extendable output; one source for interpreted and compiled mode.

The state is the uint32 array ``layout`` describes, owned by the caller (``jitdigest.blake3``).
Like BLAKE2, BLAKE3 must know a block is the input's last before compressing it (the last block
of the last chunk may be the root), so ``b3_update`` always holds back 1..64 bytes in ``buf``
once input has arrived; a chunk is closed, and its chaining value pushed onto the stack, only
when input after its sixteenth block has arrived. Completed subtrees are merged as soon as they
are whole (a full subtree with more input after it is never the root), so the stack holds one
value per set bit of the chunk count.
"""
# ``compress`` and ``_chunk_blocks`` are inlined into their callers (left as calls between
# compiled kernels, the chunk loop was much slower): ``_chunk_blocks`` at Numba's IR level
# (``inline_kernel``), ``compress`` by LLVM (compiled once, ``inline_in_callers``: at Numba's IR
# level it was typed again at each call site). Measurements: benchmarks/results/kernel_notes.md.
import numpy as np

from .._contract import Backend, TIERS
from .._jit import (GIL_MINSIZE, add32, gil_kernel, inline_in_callers,
                   inline_kernel, kernel, new_words, reacquire_gil, release_gil_if,
                   scratch, typed_kernel, u32, u64)
from .._rows import length_of, row_at, row_count, start_of
from .layout import (BLOCK_LEN, BLOCKS, CHUNK_BLOCKS, CHUNK_END, CHUNK_LEN, CHUNK_START, COUNTER,
                     CV, DEPTH, FLAGS, KEY, PARAMS, PARENT, ROOT, STACK, STATE_WORDS)
from .rows import (IV, MSG_PERMUTATION, ROUNDS, SCHEDULE, _schedule,  # noqa: F401  (re-exported)
                   compress_words, load_block)


@typed_kernel()
def compress(cv, m, t0, t1, block_len, flags, out, wide):
    """One compression of the 16 message words ``m`` under the chaining value ``cv[0:8]``, with
    the counter ``t1:t0`` (two words, low first), ``block_len`` and ``flags``. ``out[0:8]`` gets
    the new chaining value and, if ``wide``, ``out[8:16]`` the rest of a 64-byte output block;
    ``out`` may be ``cv``. Compiled once (its rows in vector registers: ``rows``) and inlined
    by LLVM into each caller (``wide`` a constant there)."""
    inline_in_callers()
    compress_words(cv, m, t0, t1, block_len, flags, out, wide)


# --- the tree: chunks, parents, the stack --------------------------------------------------

@kernel
def _parent_setup(state, depth, cv, m):
    """Set up the parent of stack entry ``depth`` and ``cv`` without compressing it (it may be
    the root): ``m`` <- both chaining values, ``cv`` <- the key words."""
    at = STACK + 8 * depth
    for i in range(8):
        m[i] = u32(state[at + i])
        m[8 + i] = u32(cv[i])
        cv[i] = u32(state[KEY + i])


@kernel
def _merge_push(state, t0, t1, m):
    """Push the chaining value in ``state[CV:CV + 8]`` (a completed subtree, more input after
    it), merged first with the completed subtrees it makes whole: one per trailing zero bit of
    ``t1:t0``, the new chunk count in units of that subtree's chunks (at least 1)."""
    cv = state[CV:CV + 8]
    depth = u32(state[DEPTH])
    while (t0 & 1) == 0:              # the count is at least 1: some bit is set
        depth = u32(depth - 1)
        _parent_setup(state, depth, cv, m)
        compress(cv, m, 0, 0, BLOCK_LEN, u32(state[FLAGS]) | PARENT, cv, False)
        t0 = u32((t0 >> 1) | (t1 << 31))
        t1 = u32(t1 >> 1)
    at = STACK + 8 * depth
    for i in range(8):
        state[at + i] = cv[i]
    state[DEPTH] = depth + 1


@kernel
def _push_chunk(state, m):
    """The current chunk is complete and more input follows: its chaining value goes onto the
    stack (``_merge_push``) and the next chunk starts empty."""
    t0 = add32(u32(state[COUNTER]), 1)
    t1 = u32(state[COUNTER + 1])
    if t0 == 0:
        t1 = add32(t1, 1)
    state[COUNTER] = t0
    state[COUNTER + 1] = t1
    state[BLOCKS] = 0
    _merge_push(state, t0, t1, m)


@kernel
def push_subtree(state, cvs, at, level, m):
    """A completed subtree of ``2 ** level`` chunks (level 1..31), its chaining value
    ``cvs[at:at + 8]``, starting at the current chunk count (a multiple of its size, no chunk
    begun) and with more input after it: onto the stack as ``_push_chunk`` pushes a chunk."""
    count = (u64(state[COUNTER + 1]) << np.uint64(32) | u64(state[COUNTER])) + \
        (np.uint64(1) << np.uint64(level))
    state[COUNTER] = u32(count & np.uint64(0xFFFFFFFF))
    state[COUNTER + 1] = u32(count >> np.uint64(32))
    state[BLOCKS] = 0
    for i in range(8):
        state[CV + i] = cvs[at + i]
    units = count >> np.uint64(level)
    _merge_push(state, u32(units & np.uint64(0xFFFFFFFF)), u32(units >> np.uint64(32)), m)


@inline_kernel
def _chunk_blocks(state, data, pos, nblocks, m):
    """Compress ``nblocks`` 64-byte blocks of ``data`` from ``pos`` into the current chunk,
    its chaining value in a local meanwhile: blocks more input follows, so never the root's, and
    not past the chunk's end (its sixteenth block closes the chunk)."""
    cv = new_words(8, np.uint32)
    blocks = u32(state[BLOCKS])
    at = KEY if blocks == 0 else CV
    for i in range(8):
        cv[i] = u32(state[at + i])
    base = u32(state[FLAGS])
    t0 = u32(state[COUNTER])
    t1 = u32(state[COUNTER + 1])
    for b in range(nblocks):
        load_block(data, pos + BLOCK_LEN * b, m)
        flags = base
        if blocks == 0:
            flags = u32(flags | CHUNK_START)
        if blocks == CHUNK_BLOCKS - 1:
            flags = u32(flags | CHUNK_END)
        compress(cv, m, t0, t1, BLOCK_LEN, flags, cv, False)
        blocks = u32(blocks + 1)
    for i in range(8):
        state[CV + i] = cv[i]
    if blocks == CHUNK_BLOCKS:
        _push_chunk(state, m)
    else:
        state[BLOCKS] = blocks


@typed_kernel(1)
def b3_update(state, buf, buflen, data):
    """Absorb ``data``, holding back its last 1..64 bytes in ``buf`` (they may be the root's
    block). Returns the new ``buflen``."""
    n = len(data)
    if n == 0:
        return buflen
    m = new_words(16, np.uint32)
    pos = 0
    if buflen > 0:
        take = min(BLOCK_LEN - buflen, n)
        for i in range(take):
            buf[buflen + i] = data[i]
        buflen += take
        pos = take
        if pos == n:                      # a full buffer stays: it may be the last block
            return buflen
        _chunk_blocks(state, buf, 0, 1, m)
    while n - pos > BLOCK_LEN:            # whole blocks with more input after them
        count = min(CHUNK_BLOCKS - u32(state[BLOCKS]), (n - pos - 1) // BLOCK_LEN)
        _chunk_blocks(state, data, pos, count, m)
        pos += BLOCK_LEN * count
    rest = n - pos
    for i in range(rest):
        buf[i] = data[pos + i]
    return rest


@typed_kernel(6)
def _root_bytes(cv, m, block_len, flags, block_index, skip, out):
    """Fill ``out`` with the root's output stream from byte ``64 * block_index + skip``: output
    block k is the root compression with counter k."""
    o = new_words(16, np.uint32)
    t0 = u32(block_index)
    t1 = u32(block_index >> 32)
    n = len(out)
    pos = 0
    first = skip
    while pos < n:
        compress(cv, m, t0, t1, block_len, flags, o, True)
        take = min(BLOCK_LEN - first, n - pos)
        if first == 0:                    # whole words, a word's bytes at a time
            for w in range(take >> 2):
                word = u32(o[w])
                out[pos + 4 * w] = word & 0xFF
                out[pos + 4 * w + 1] = (word >> 8) & 0xFF
                out[pos + 4 * w + 2] = (word >> 16) & 0xFF
                out[pos + 4 * w + 3] = (word >> 24) & 0xFF
            done = take & ~3
        else:
            done = 0
        for k in range(done, take):
            b = first + k
            out[pos + k] = (o[b >> 2] >> (8 * (b & 3))) & 0xFF
        pos += take
        first = 0
        t0 = add32(t0, 1)
        if t0 == 0:
            t1 = add32(t1, 1)


@typed_kernel(5)
def b3_output(state, buf, buflen, block_index, skip, out):
    """``len(out)`` bytes of the output stream, from byte ``64 * block_index + skip``, for the
    input so far (the state and the held-back ``buf[0:buflen]``); the state is left as is."""
    m = new_words(16, np.uint32)
    cv = new_words(8, np.uint32)
    block = scratch(BLOCK_LEN, np.uint8, BLOCK_LEN)      # the last block, zero-padded
    for i in range(buflen):
        block[i] = buf[i]
    load_block(block, 0, m)
    flags = u32(state[FLAGS] | CHUNK_END)
    if u32(state[BLOCKS]) == 0:
        flags = u32(flags | CHUNK_START)
        for i in range(8):
            cv[i] = u32(state[KEY + i])
    else:
        for i in range(8):
            cv[i] = u32(state[CV + i])
    _right_edge(state, cv, m, u32(state[COUNTER]), u32(state[COUNTER + 1]), u32(buflen), flags,
                block_index, skip, out)


@inline_kernel
def _right_edge(state, cv, m, t0, t1, block_len, flags, block_index, skip, out):
    """From the last node, set up in ``cv``, ``m``, ``t0``, ``t1``, ``block_len``, ``flags`` but
    not compressed, up the right edge of the tree through the stack's subtrees to the root, whose
    output stream from byte ``64 * block_index + skip`` fills ``out``."""
    depth = u32(state[DEPTH])
    while depth > 0:                      # the right edge of the tree, bottom up
        depth = u32(depth - 1)
        compress(cv, m, t0, t1, block_len, flags, cv, False)
        _parent_setup(state, depth, cv, m)
        t0 = u32(0)
        t1 = u32(0)
        block_len = u32(BLOCK_LEN)
        flags = u32(state[FLAGS] | PARENT)
    _root_bytes(cv, m, block_len, u32(flags | ROOT), block_index, skip, out)


@kernel
def parent_output(state, cvs, block_index, skip, out):
    """``b3_output`` for an input whose last node is the parent of ``cvs[0:16]`` (two chaining
    values), the stack holding the completed subtrees before it."""
    m = new_words(16, np.uint32)
    cv = new_words(8, np.uint32)
    for i in range(16):
        m[i] = cvs[i]
    for i in range(8):
        cv[i] = u32(state[KEY + i])
    _right_edge(state, cv, m, u32(0), u32(0), u32(BLOCK_LEN), u32(state[FLAGS] | PARENT),
                block_index, skip, out)


@inline_kernel
def _chunk_head(words, data, pos, end, t0, t1, cv, m):
    """Set up the last block of the chunk ``data[pos:end]`` (0 to 1024 bytes), counter
    ``t1:t0``, without compressing it (it may be the root): ``cv`` <- the chaining value before
    it (from the key words ``words[KEY:KEY + 8]`` and the mode ``words[FLAGS]``: a state or
    the parameters), ``m`` <- its words, zero-padded. Returns its length and flags."""
    for i in range(8):
        cv[i] = u32(words[KEY + i])
    mode = u32(words[FLAGS])
    whole = (end - pos - 1) // BLOCK_LEN if end > pos else 0      # blocks before the last
    for b in range(whole):
        load_block(data, pos + BLOCK_LEN * b, m)
        flags = mode
        if b == 0:
            flags = u32(flags | CHUNK_START)
        compress(cv, m, t0, t1, BLOCK_LEN, flags, cv, False)
    block = scratch(BLOCK_LEN, np.uint8, BLOCK_LEN)      # the last block, zero-padded
    last = pos + BLOCK_LEN * whole
    for i in range(end - last):
        block[i] = data[last + i]
    load_block(block, 0, m)
    flags = u32(mode | CHUNK_END)
    if whole == 0:
        flags = u32(flags | CHUNK_START)
    return u32(end - last), flags


@kernel
def chunk_cv(state, data, pos, end, count, cvs, at):
    """The chaining value of the chunk ``data[pos:end]`` (1 to 1024 bytes, not the root), its
    counter ``count`` (a uint64), into ``cvs[at:at + 8]``; the key words and the mode from
    ``state``."""
    m = new_words(16, np.uint32)
    cv = new_words(8, np.uint32)
    t0 = u32(count & np.uint64(0xFFFFFFFF))
    t1 = u32(count >> np.uint64(32))
    block_len, flags = _chunk_head(state, data, pos, end, t0, t1, cv, m)
    compress(cv, m, t0, t1, block_len, flags, cv, False)
    for i in range(8):
        cvs[at + i] = cv[i]


@kernel
def chunk_output(params, data, block_index, skip, out):
    """``oneshot`` for a message of at most one chunk, the root: its blocks with the chaining
    value in locals, no state array."""
    m = new_words(16, np.uint32)
    cv = new_words(8, np.uint32)
    block_len, flags = _chunk_head(params, data, 0, len(data), u32(0), u32(0), cv, m)
    _root_bytes(cv, m, block_len, u32(flags | ROOT), block_index, skip, out)


# --- entry points ----------------------------------------------------------------------------

@gil_kernel
def update(state, buf, buflen, data):
    token = release_gil_if(len(data) >= GIL_MINSIZE)
    buflen = b3_update(state, buf, buflen, data)
    reacquire_gil(token)
    return buflen


@gil_kernel
def final(state, buf, buflen, block_index, skip, out):
    token = release_gil_if(len(out) >= GIL_MINSIZE)
    b3_output(state, buf, buflen, block_index, skip, out)
    reacquire_gil(token)


@gil_kernel
def oneshot(params, data, block_index, skip, out):
    """Output for the message ``data`` alone, from the parameters ``params`` (key words and
    flags), in one call."""
    token = release_gil_if(len(data) + len(out) >= GIL_MINSIZE)
    if len(data) <= CHUNK_LEN:
        chunk_output(params, data, block_index, skip, out)
    else:
        state = scratch(STATE_WORDS, np.uint32, STATE_WORDS)
        for i in range(PARAMS):
            state[i] = params[i]
        buf = scratch(BLOCK_LEN, np.uint8, BLOCK_LEN)
        buflen = b3_update(state, buf, 0, data)
        b3_output(state, buf, buflen, block_index, skip, out)
    reacquire_gil(token)


# --- the batch entries (``jitdigest.hash_many``): a message at a time --------------------------

@inline_kernel
def message_output(update, params, data, out):
    """All of ``out`` for the message ``data`` alone, from ``params`` (key words and flags),
    absorbed by ``update`` (this module's ``b3_update`` or a lane module's)."""
    state = scratch(STATE_WORDS, np.uint32, STATE_WORDS)
    for i in range(PARAMS):
        state[i] = params[i]
    buf = scratch(BLOCK_LEN, np.uint8, BLOCK_LEN)
    buflen = update(state, buf, 0, data)
    b3_output(state, buf, buflen, 0, 0, out)


@inline_kernel
def rows_output(message, values, starts, lengths, rows, iv, out):
    """``message(iv, values[start:start + length], out[r])`` for every row ``r`` of ``rows``
    (``jitdigest/kernels/_rows.py``): ``iv`` the parameters, ``out``'s width the output length."""
    for i in range(row_count(rows)):
        r = row_at(rows, i)
        start = start_of(starts, r)
        message(iv, values[start:start + length_of(lengths, r)], out[r])


@kernel
def b3_message(params, data, out):
    """All of ``out`` for the message ``data`` alone, from ``params``."""
    message_output(b3_update, params, data, out)


@kernel
def hash_rows(values, starts, lengths, rows, iv, out):
    """The batch entry (``_dispatch._signatures``), a message at a time; ``iv``: the
    parameters."""
    rows_output(b3_message, values, starts, lengths, rows, iv, out)


BACKEND = Backend("blake3", "portable", TIERS["portable"], __name__, update=update,
                  xof_final=final, xof_oneshot=oneshot, hash_rows=hash_rows)
