"""BLAKE3 across messages for the lanes-kernel generator (tools/gen_lanes.py): the batch kernels
behind ``hash_many("blake3", ...)``, one message per SIMD lane, the shape of BLAKE3's own
``hash_many``. A message of at most one chunk (1024 bytes) is one chunk that is also the root:
lane ``l`` walks its message's blocks (CHUNK_START on the first, CHUNK_END | ROOT on the last,
its own block length there), every counter zero, and the root's compression gives the output
(its first 32 bytes; the rest of an extendable output from the last block's inputs kept
aside, one message at a time). Longer
messages go through the chunk-parallel lanes' one-shot tree path (``b3_message`` of
``lanes16``/``lanes8``), one message at a time. The batch driver sorts rows by block count, so
the lanes of a group step through about the same number of blocks."""
from lanes_blake3 import lane_loop
from lanes_common import (HEADER, VECTOR, backend_name, prefetch_ahead, prefetch_next_row, record,
                          store_bytes, wide_vectors, wrap)

# buf (uint32), lanes innermost: the chaining values (8 words), block lengths, flags, the 16
# message words in pairs (words 2j, 2j + 1 of lane l side by side).
CV, BLEN, FLAGS, MSG, STRIDE = 0, 8, 9, 10, 26


def many_kernel(tier):
    """Source lines of ``hash_rows`` for ``tier``'s lanes of 32-bit words."""
    lw = tier.lanes(32)
    L = []

    def add(indent, text):
        L.extend(wrap(" " * (4 * indent) + text))

    add(0, "@kernel")
    add(0, "def hash_rows(values, starts, lengths, rows, iv, out):")
    add(1, '"""BLAKE3, %d lanes: the first ``out.shape[1]`` output bytes of each message' % lw)
    add(1, "``values[starts[r]:starts[r] + lengths[r]]``, ``r`` in ``rows``, into ``out[r]``;")
    add(1, "``iv``: the parameters (key words, then the mode's flag: ``layout.PARAMS`` words).")
    add(1, 'Messages over a chunk go to the tree path (``_long``), one at a time."""')
    if wide_vectors(tier):
        add(1, "_wide_vectors()")
    # the kernel's working arrays in its stack frame (``scratch``): no heap allocation, so the
    # kernel needs nothing of Numba's runtime and is stored as machine code (runtime/native.py)
    add(1, "buf = scratch(%d, np.uint32, %d)" % (STRIDE * lw, STRIDE * lw))
    add(1, "# message words 2j, 2j + 1 of lane l: pairs[%d + %d * j + l]" % (MSG * lw // 2, lw))
    add(1, "pairs = buf.view(np.uint64)")
    add(1, "row = scratch(%d, np.int64, %d)  # row being hashed per lane, -1: idle" % (lw, lw))
    add(1, "nfull = scratch(%d, np.int64, %d)  # its blocks before the last one" % (lw, lw))
    add(1, "row[:] = -1")
    add(1, "nfull[:] = -1")
    add(1, "blk = scratch(%d, np.int64, %d)  # blocks loaded so far" % (lw, lw))
    add(1, "root = scratch(%d, np.uint32, %d)  # extendable output: the root's chaining values"
        % (8 * lw, 8 * lw))
    add(1, "m = scratch(16, np.uint32, 16)")
    add(1, "nrows = row_count(rows)")
    add(1, "pf = values.shape[0] > PF_MIN  # prefetch: the data may not fit in the caches")
    add(1, "nout = out.shape[1]")
    add(1, "nhead = min(nout, KEY_LEN)  # from the lanes' last compression")
    add(1, "mode = np.uint32(iv[FLAGS])")
    add(1, "nxt = 0")
    add(1, "busy = 0")
    add(1, "while True:")
    add(2, "for lane in range(%d):" % lw)
    add(3, "if blk[lane] == nfull[lane] + 1:")
    add(4, "r = row[lane]")
    add(4, "if r >= 0:  # finished: write the output, free the lane")
    add(5, "for i in range(nhead // 4):")
    add(6, "v = buf[i * %d + lane]" % lw)
    store_bytes(add, 6, "4 * i", "v", [8 * k for k in range(4)], "np.uint32(0xFF)")
    add(5, "for i in range(nhead - nhead % 4, nhead):")
    add(6, "v = buf[(i // 4) * %d + lane]" % lw)
    add(6, "out[r, i] = np.uint8((v >> np.uint32(8 * (i % 4))) & np.uint32(0xFF))")
    add(5, "if nout > KEY_LEN:  # the rest: the root's compression again, counter 0, 1, ...")
    add(6, "for j in range(16):")
    add(7, "m[j] = buf[%d + %d * (j // 2) + 2 * lane + j %% 2]" % (MSG * lw, 2 * lw))
    add(6, "_root_bytes(root[8 * lane:8 * lane + 8], m, buf[%d + lane], buf[%d + lane], 0,"
        % (BLEN * lw, FLAGS * lw))
    add(7, "KEY_LEN, out[r, KEY_LEN:])")
    add(5, "row[lane] = -1")
    add(5, "busy -= 1")
    add(4, "while nxt < nrows:  # start the next row of a chunk or less")
    add(5, "r = row_at(rows, nxt)")
    add(5, "nxt += 1")
    add(5, "n = length_of(lengths, r)")
    add(5, "if n > CHUNK_LEN:  # a tree: the one-shot path, here and now")
    add(6, "s = start_of(starts, r)")
    add(6, "_long(iv, values[s:s + n], out[r])")
    add(6, "continue")
    add(5, "busy += 1")
    add(5, "row[lane] = r")
    prefetch_next_row(add, 5, lw, 64)
    add(5, "nfull[lane] = max(n - 1, 0) // BLOCK_LEN  # the last 0..64 bytes: the last block")
    add(5, "blk[lane] = 0")
    add(5, "for i in range(8):")
    add(6, "buf[i * %d + lane] = iv[KEY + i]" % lw)
    add(5, "break")
    add(3, "r = row[lane]")
    add(3, "if r >= 0:  # load the lane's next block, its length and flags")
    add(4, "b = blk[lane]")
    add(4, "blk[lane] = b + 1")
    add(4, "q = np.uint64(start_of(starts, r) + b * BLOCK_LEN)")
    add(4, "flags = mode if b else np.uint32(mode | CHUNK_START)")
    add(4, "count = min(length_of(lengths, r) - b * BLOCK_LEN, BLOCK_LEN)")
    add(4, "if count == BLOCK_LEN:  # a whole block (the last one too, in a whole number)")
    prefetch_ahead(add, 5, 64)
    for j in range(8):
        add(5, "pairs[%d + lane] = _word(values, q + np.uint64(%d))" % (MSG * lw // 2 + j * lw,
                                                                      8 * j))
    add(4, "else:  # the last block: 0..63 bytes, zero-padded")
    add(5, "nd = count // 8")
    for j in range(8):
        add(5, "pairs[%d + lane] = 0" % (MSG * lw // 2 + j * lw))
    add(5, "for j in range(nd):")
    add(6, "pairs[%d + %d * j + lane] = _word(values, q + np.uint64(8 * j))"
        % (MSG * lw // 2, lw))
    add(5, "q += np.uint64(8 * nd)")
    add(5, "v = np.uint64(0)")
    add(5, "for k in range(count - 8 * nd):")
    add(6, "v |= np.uint64(values[q + np.uint64(k)]) << np.uint64(8 * k)")
    add(5, "if nd < 8:")
    add(6, "pairs[%d + %d * nd + lane] = v" % (MSG * lw // 2, lw))
    add(4, "buf[%d + lane] = np.uint32(count)" % (BLEN * lw))
    add(4, "if b == nfull[lane]:  # the root")
    add(5, "flags = np.uint32(flags | CHUNK_END | ROOT)")
    add(5, "if nout > KEY_LEN:")
    add(6, "for i in range(8):")
    add(7, "root[8 * lane + i] = buf[i * %d + lane]" % lw)
    add(4, "buf[%d + lane] = flags" % (FLAGS * lw))
    add(2, "if busy == 0:")
    add(3, "break")
    add(2, "_compress(buf)")
    return L


def compress_kernel(tier):
    """Source lines of ``_compress``: the block function of every lane, in place."""
    lw = tier.lanes(32)
    L = []

    def add(indent, text):
        L.extend(wrap(" " * (4 * indent) + text))

    add(0, "@kernel")
    add(0, "def _compress(buf):")
    add(1, '"""One compression per lane, every counter zero: the chaining values buf[0:%d] (word i'
        % (8 * lw))
    add(1, "of lane l at buf[i * %d + l]), the block lengths and flags after them, then the" % lw)
    add(1, "message words in pairs (words 2j, 2j + 1 of lane l at buf[%d + %d * j + 2 * l]);"
        % (MSG * lw, 2 * lw))
    add(1, "the new chaining values (a root's first 32 output bytes) replace the old. Writing the")
    add(1, "output's words 8..15 as well left the lane loop scalar: ``hash_rows``")
    add(1, 'computes bytes from 32 on again, per message, from the root\'s inputs."""')
    if wide_vectors(tier):
        add(1, "_wide_vectors()")
    lane_loop(add, lw, ("np.uint32(0)", "np.uint32(0)", "buf[%d + l]" % (BLEN * lw),
                        "buf[%d + l]" % (FLAGS * lw)), MSG)
    L.append("")
    L.append("")
    return L


def preamble(tier):
    lw = tier.lanes(32)
    L = [HEADER.rstrip("\n")]
    L.append('"""BLAKE3 across messages: one message per SIMD lane, %d lanes of uint32 (the shape'
             % lw)
    L.append("of BLAKE3's own ``hash_many``), for ``jitdigest.hash_many``.")
    L.append("")
    L.append("Entry ``hash_rows(values, starts, lengths, rows, iv, out)``, signature")
    L.append("``jitdigest.kernels._contract.SIGNATURES['hash_rows']``, ``iv`` the parameters (key")
    L.append("words and mode), ``out``'s width the output length. Messages over a chunk take the")
    L.append("tree path of ``%s`` (chunks of one message across lanes). Compiled only (plain"
             % backend_name(tier, lw))
    L.append("Numba code that LLVM vectorises). Edit tools/gen_lanes.py, not this file.")
    L.append('"""')
    L.append("import numpy as np")
    L.append("")
    L.append("from .._contract import Backend, TIERS")
    L.append("from .._jit import kernel, scratch")
    wide = ", wide_vectors as _wide_vectors" if wide_vectors(tier) else ""
    L.extend(wrap("from .._lanes import (PF_MIN, le64 as _word, prefetch as _prefetch, "
                  "rotr32 as _rotr%s)" % wide))
    L.append("from .._rows import length_of, row_at, row_count, start_of")
    L.append("from .%s import b3_message as _long" % backend_name(tier, lw))
    L.extend(wrap("from .layout import (BLOCK_LEN, CHUNK_END, CHUNK_LEN, CHUNK_START, FLAGS, KEY, "
                  "KEY_LEN, ROOT)"))
    L.append("from .portable import _root_bytes")
    L.append("")
    L.append("")
    return L


def render_blake3_many():
    files = {}
    for tier in VECTOR:
        lw = tier.lanes(32)
        lines = (preamble(tier) + compress_kernel(tier) + many_kernel(tier)
                 + record("blake3", tier, lw))
        name = "many_%s.py" % backend_name(tier, lw)
        files["jitdigest/kernels/blake3/" + name] = "\n".join(lines) + "\n"
    return files
