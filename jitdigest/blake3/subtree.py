"""BLAKE3 of one input hashed in pieces apart (on other processes or machines), then merged into
exactly the digest of the whole: what lets ``jitdigest sum --dask`` split one huge file.

BLAKE3 is a tree over 1024-byte chunks; a run of 2**k chunks that starts at a multiple of
2**k, with more input after it, is a whole subtree, and its chaining value depends only on its
bytes, its first chunk's index and the mode (key words and flags). ``plan`` cuts an input into
such pieces and a tail, ``chaining_value`` hashes one piece of an open file through the kernels
the objects use (the state array of ``kernels/blake3/layout.py``, its chunk counter set to the
piece's first chunk), finishing its last chunk and its right edge here, and ``merge`` joins the
pieces' values as the stack of the incremental hasher would, the last parent being the root.
"""
import os

import numpy as np

from ..kernels.blake3.layout import (BLOCK_LEN, BLOCKS, CHUNK_END, CHUNK_LEN, CHUNK_START,
                                    COUNTER, CV, DEPTH, FLAGS, KEY, PARAMS, PARENT, ROOT, STACK,
                                    STATE_WORDS)

_MASK = 0xFFFFFFFF
_READ = 1 << 20                 # bytes per read of a piece


def plan(size, workers, smallest, largest):
    """The bytes of each piece for an input of ``size`` bytes hashed by ``workers`` processes:
    a power-of-two number of chunks, about a quarter of ``size / workers`` within
    [``smallest``, ``largest``]; 0 where the input would be one piece (hash it whole). The
    pieces are ``(size - 1) // piece`` whole ones, then a tail of 1..piece bytes."""
    target = min(max(size // (4 * max(workers, 1)), smallest), largest)
    piece = CHUNK_LEN
    while 2 * piece <= target:
        piece *= 2
    return piece if size > piece else 0


def mode(key=None, context=None):
    """The key words and flags of a mode (plain, keyed with ``key``, or key derivation under
    ``context``) as ``chaining_value`` and ``merge`` take them."""
    from . import params
    return tuple(int(w) for w in params(key, context))


def pieces(size, piece):
    """(offset, length) of every piece of an input of ``size`` bytes cut by ``plan``."""
    whole = (size - 1) // piece
    return [(i * piece, piece) for i in range(whole)] + [(whole * piece, size - whole * piece)]


def chaining_value(fd, offset, length, params):
    """(chaining value (32 bytes), bytes read) of bytes ``[offset, offset + length)`` of the
    open file ``fd`` as a non-root node of the whole input's tree, in the mode of ``params``
    (``jitdigest.blake3.params``: key words, flags). ``offset`` must be a multiple of the
    piece size ``plan`` gave, ``length`` that size (or the tail's). Fewer bytes read than
    asked (the file shrank) gives the value of those read: the caller compares the count."""
    from . import _kernels
    if offset < 0 or offset % CHUNK_LEN or length <= 0:
        raise ValueError("a piece starts at a multiple of 1024 bytes and is not empty")
    # A whole subtree: its first chunk's index a multiple of its size in chunks (rounded up to
    # a power of two). The update kernel merges its stack by that index, and from an index
    # that is not so it would pop entries this piece never pushed.
    span = 1 << ((length + CHUNK_LEN - 1) // CHUNK_LEN - 1).bit_length()
    if (offset // CHUNK_LEN) % span:
        raise ValueError("a piece of n chunks starts at a multiple of the power of two "
                         "at least n chunks")
    kernels = _kernels()
    state = np.zeros(STATE_WORDS, np.uint32)
    state[:PARAMS] = params
    chunk = offset // CHUNK_LEN
    state[COUNTER] = chunk & _MASK
    state[COUNTER + 1] = chunk >> 32
    buf = np.zeros(BLOCK_LEN, np.uint8)
    buflen = 0
    data = bytearray(min(_READ, length))
    done = 0
    while done < length:
        n = os.preadv(fd, [memoryview(data)[:min(len(data), length - done)]], offset + done)
        if not n:
            break
        buflen = kernels.update(state, buf, buflen, np.frombuffer(data, np.uint8, n))
        done += n
    if not done:
        return b"", 0
    words = [int(w) for w in state]
    key = words[KEY:KEY + 8]
    mode = words[FLAGS]
    blocks = words[BLOCKS]
    flags = mode | CHUNK_END | (0 if blocks else CHUNK_START)
    cv = words[CV:CV + 8] if blocks else key
    count = words[COUNTER] | words[COUNTER + 1] << 32
    cv = _compress(cv, _block_words(bytes(buf[:buflen])), count, buflen, flags)[:8]
    for depth in reversed(range(words[DEPTH])):
        at = STACK + 8 * depth
        cv = _compress(key, words[at:at + 8] + cv, 0, BLOCK_LEN, mode | PARENT)[:8]
    return _to_bytes(cv), done


def merge(values, params, length):
    """``length`` bytes of the whole input's digest from its pieces' chaining values (32 bytes
    each, in order, the tail's last; at least two): whole pieces pushed as the incremental
    hasher pushes completed subtrees (merged while the count of pieces is even), then the right
    edge merged from the tail up, its last parent the root."""
    if len(values) < 2:
        raise ValueError("merge takes two pieces or more")
    key = [int(w) for w in params[:8]]
    mode = int(params[8])
    parent = mode | PARENT
    stack = []
    for count, value in enumerate(values[:-1], 1):
        cv = _words(value)
        while not count & 1:
            cv = _compress(key, stack.pop() + cv, 0, BLOCK_LEN, parent)[:8]
            count >>= 1
        stack.append(cv)
    cv = _words(values[-1])
    while len(stack) > 1:
        cv = _compress(key, stack.pop() + cv, 0, BLOCK_LEN, parent)[:8]
    block = stack[0] + cv
    out = bytearray()
    counter = 0
    while len(out) < length:
        out += _to_bytes(_compress(key, block, counter, BLOCK_LEN, parent | ROOT))
        counter += 1
    return bytes(out[:length])


# --- the compression function, for the few nodes finished here --------------------------------

def _words(data):
    return [int.from_bytes(data[i:i + 4], "little") for i in range(0, len(data), 4)]


def _block_words(data):
    return _words(data.ljust(BLOCK_LEN, b"\0"))


def _to_bytes(words):
    return b"".join(w.to_bytes(4, "little") for w in words)


_SCHEDULE = []                  # the message word each place of each round reads, flattened


def _schedule():
    if not _SCHEDULE:
        from ..base.algorithms import SPECS
        from ..kernels.blake3.portable import MSG_PERMUTATION, ROUNDS
        order = list(range(16))
        rows = []
        for _ in range(ROUNDS):
            rows.append(order)
            order = [order[p] for p in MSG_PERMUTATION]
        _SCHEDULE[:] = [rows, list(SPECS["sha256"].iv[:4])]   # BLAKE3's IV is SHA-256's
    return _SCHEDULE


def _compress(cv, m, counter, block_len, flags):
    """BLAKE3's compression of the 16 words ``m`` under ``cv``: its 16 output words."""
    rows, iv = _schedule()
    v = list(cv) + iv + [counter & _MASK, counter >> 32 & _MASK, block_len, flags]

    def g(a, b, c, d, x, y):
        va = (v[a] + v[b] + x) & _MASK
        vd = v[d] ^ va
        vd = (vd >> 16 | vd << 16) & _MASK
        vc = (v[c] + vd) & _MASK
        vb = v[b] ^ vc
        vb = (vb >> 12 | vb << 20) & _MASK
        va = (va + vb + y) & _MASK
        vd ^= va
        vd = (vd >> 8 | vd << 24) & _MASK
        vc = (vc + vd) & _MASK
        vb ^= vc
        v[a], v[b], v[c], v[d] = va, (vb >> 7 | vb << 25) & _MASK, vc, vd

    for order in rows:
        w = [m[i] for i in order]
        g(0, 4, 8, 12, w[0], w[1])
        g(1, 5, 9, 13, w[2], w[3])
        g(2, 6, 10, 14, w[4], w[5])
        g(3, 7, 11, 15, w[6], w[7])
        g(0, 5, 10, 15, w[8], w[9])
        g(1, 6, 11, 12, w[10], w[11])
        g(2, 7, 8, 13, w[12], w[13])
        g(3, 4, 9, 14, w[14], w[15])
    return [v[i] ^ v[i + 8] for i in range(8)] + [v[i + 8] ^ cv[i] for i in range(8)]
