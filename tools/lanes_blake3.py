"""BLAKE3 for the lanes-kernel generator (tools/gen_lanes.py): chunk-parallel kernels, the shape
of BLAKE3's own ``hash_many``. Unlike the other families' lanes (one message per lane), these
hash ONE input: lane ``l`` compresses chunk ``l`` of a group of LANES consecutive chunks, the
chaining values of all lanes kept transposed in ``buf`` across a chunk's 16 blocks (word ``i``
of lane ``l`` at ``buf[i * LANES + l]``, as the other lanes kernels keep theirs), then the
parent nodes of the group's subtree are compressed in lanes too (up to LANES parents per pass
from 2 * LANES child values). Everything else -- the chunk in progress, the chaining-value
stack, the root and its output -- is the portable kernel's (``kernels/blake3/portable.py``),
whose state layout the lanes share; the generated ``b3_update`` is the portable one with the
group path added. ``hash_rows`` is the batch entry of
``hash_many`` a message at a time through ``b3_message``, which also serves the long rows of
the across-messages kernels (``lanes_blake3_many.py``)."""
from lanes_common import HEADER, PF_BLOCKS, VECTOR, backend_name, record, wide_vectors, wrap
from lanes_blake2 import BLAKE2S

# The message schedule from the kernel that owns it (lanes_common, imported first, put the
# repository on sys.path).
from jitdigest.kernels.blake3.rows import ROUNDS, _schedule

SCHEDULE = _schedule()
STRIDE = 10         # words per lane in buf: cv (8), counter (2); the message stays in registers
GROUPS = 8          # groups hashed per pass of the parent stage (8 * LANES children)


def g_rounds(msg):
    """Statements of BLAKE3's 7 rounds on v0..v15 (BLAKE2s's G, its rotations as ``_rotr``:
    one funnel shift each); ``msg(k, i)`` is the expression of round k's i-th message word."""
    W = BLAKE2S.W
    st = []
    for rnd in range(ROUNDS):
        for k, (a, b, c, d) in enumerate([(0, 4, 8, 12), (1, 5, 9, 13), (2, 6, 10, 14),
                                         (3, 7, 11, 15), (0, 5, 10, 15), (1, 6, 11, 12),
                                         (2, 7, 8, 13), (3, 4, 9, 14)]):
            a, b, c, d = ("v%d" % i for i in (a, b, c, d))
            for m, (rd, rb) in ((msg(rnd, 2 * k), (16, 12)), (msg(rnd, 2 * k + 1), (8, 7))):
                st.append("%s = %s" % (a, W.add(a, b, m)))
                st.append("%s = _rotr(%s ^ %s, %d)" % (d, d, a, rd))
                st.append("%s = %s" % (c, W.add(c, d)))
                st.append("%s = _rotr(%s ^ %s, %d)" % (b, b, c, rb))
    return st


def lane_loop(add, lw, last_row, msg, paired=True):
    """Source lines (through ``add``) of a ``_compress`` lane loop over ``buf``: each lane's
    chaining value from words ``i * lw + l``, the IV, ``last_row`` (the four expressions of
    v12..v15: counter words, block length, flags), the message words from word ``msg * lw``
    (in pairs, words 2j and 2j + 1 of a lane side by side; else word j of lane l at
    ``(msg + j) * lw + l``), the rounds, and the new chaining value written back in place."""
    add(1, "for l in range(%d):" % lw)
    for i in range(8):
        add(2, "v%d = buf[%d + l]" % (i, i * lw))
    for i in range(4):
        add(2, "v%d = %s" % (8 + i, BLAKE2S.W.c(BLAKE2S.iv[i])))
    for i, expr in enumerate(last_row):
        add(2, "v%d = %s" % (12 + i, expr))
    for j in range(16):
        if paired:
            add(2, "x%d = buf[%d + 2 * l + %d]" % (j, (msg + j - j % 2) * lw, j % 2))
        else:
            add(2, "x%d = buf[%d + l]" % (j, (msg + j) * lw))
    for st in g_rounds(lambda k, i: "x%d" % SCHEDULE[16 * k + i]):
        add(2, st)
    for i in range(8):
        add(2, "buf[%d + l] = v%d ^ v%d" % (i * lw, i, i + 8))


def parent_pass(add, depth, lw):
    """Lines of one pass of parent nodes in the ``lw`` lanes, inside the loop over lane ``l``
    open at ``depth`` (``first[l]`` set: where the lane's two children start in ``values``):
    each lane's chaining value from the key words and its counter at zero, then, after that
    loop, the lanes' compression of their blocks."""
    add(depth, "for i in range(8):")
    add(depth + 1, "buf[i * %d + l] = state[KEY + i]" % lw)
    add(depth, "buf[%d + l] = 0" % (8 * lw))
    add(depth, "buf[%d + l] = 0" % (9 * lw))
    add(depth - 1, "_compress_blocks(buf, %d, np.uint32(BLOCK_LEN), np.uint32(mode | PARENT), "
        "values," % lw)
    add(depth, "first, np.int64(0))")


def blake3_kernel(tier):
    """Source lines of the block function, the group kernel and the entries for ``tier``'s
    lanes of 32-bit words."""
    lw = tier.lanes(32)
    L = []
    level = lw.bit_length() - 1

    def add(indent, text):
        L.extend(wrap(" " * (4 * indent) + text))

    add(0, "@typed_kernel()  # called with a literal ``at``, and with a literal ``keep``")
    add(0, "def _parents(state, cvs, at, n, keep, buf):")
    add(1, '"""Merge the ``n`` chaining values ``cvs[at:at + 8 * n]`` a level at a time, in place')
    add(1, "(parent j of j*2, j*2+1, %d parents a pass), down to the first ``keep`` (``n // keep``"
        % lw)
    add(1, 'a power of two); reads the key words and the mode from ``state``. ``buf``: the lanes\'')
    add(1, "words. A parent's block is its two children's values, 64 bytes side by side in")
    add(1, '``cvs``: loaded and transposed in registers as the chunks\' blocks are."""')
    if wide_vectors(tier):
        add(1, "_wide_vectors()")
    add(1, "mode = np.uint32(state[FLAGS])")
    add(1, "values = cvs.view(np.uint8)")
    add(1, "first = new_words(%d, np.int64)  # where lane l's block starts in values" % lw)
    add(1, "while n > keep:")
    add(2, "n //= 2")
    add(2, "for p0 in range(0, n, %d):" % lw)
    add(3, "for l in range(%d):" % lw)
    add(4, "# lanes past the level's end repeat its last parent")
    add(4, "first[l] = 4 * (at + 16 * min(p0 + l, n - 1))")
    parent_pass(add, 4, lw)
    add(3, "for l in range(min(%d, n - p0)):" % lw)
    add(4, "for i in range(8):")
    add(5, "cvs[at + (p0 + l) * 8 + i] = buf[i * %d + l]" % lw)
    L.append("")
    L.append("")
    add(0, "@kernel")
    add(0, "def chunk_cvs(state, data, pos, nchunks, count, cvs, at):")
    add(1, '"""The chaining values of the ``nchunks`` (1 to %d) whole chunks of ``data`` from'
        % lw)
    add(1, "byte ``pos``, lane l hashing chunk l, the first chunk's counter ``count``, into")
    add(1, "``cvs[at:at + 8 * nchunks]``; reads the key words and the mode from ``state``. The")
    add(1, 'lanes past ``nchunks`` repeat the last chunk, unread."""')
    if wide_vectors(tier):   # benchmarks/results/kernel_notes.md, "BLAKE3 chunk lanes"
        add(1, "_wide_vectors()")
    add(1, "buf = new_words(%d, np.uint32)" % (STRIDE * lw))
    add(1, "first = new_words(%d, np.int64)  # where lane l's chunk starts" % lw)
    add(1, "mode = np.uint32(state[FLAGS])")
    add(1, "for l in range(%d):" % lw)
    add(2, "first[l] = pos + min(l, nchunks - 1) * CHUNK_LEN")
    add(2, "for i in range(8):")
    add(3, "buf[i * %d + l] = state[KEY + i]" % lw)
    add(2, "c = count + np.uint64(l)")
    add(2, "buf[%d + l] = np.uint32(c & np.uint64(0xFFFFFFFF))" % (8 * lw))
    add(2, "buf[%d + l] = np.uint32(c >> np.uint64(32))" % (9 * lw))
    add(1, "for b in range(CHUNK_BLOCKS):")
    add(2, "for l in range(%d):" % lw)
    add(3, "_prefetch(data, np.uint64(first[l] + b * BLOCK_LEN + %d))  # %d blocks ahead: as"
        % (PF_BLOCKS * 64, PF_BLOCKS))
    add(3, "# many streams as lanes, which the hardware prefetchers do not follow")
    add(2, "flags = mode")
    add(2, "if b == 0:")
    add(3, "flags = np.uint32(flags | CHUNK_START)")
    add(2, "if b == CHUNK_BLOCKS - 1:")
    add(3, "flags = np.uint32(flags | CHUNK_END)")
    add(2, "# each lane's block loaded and transposed in registers")
    add(2, "_compress_blocks(buf, %d, np.uint32(BLOCK_LEN), flags, data, first, b * BLOCK_LEN)"
        % lw)
    add(1, "for l in range(nchunks):")
    add(2, "for i in range(8):")
    add(3, "cvs[at + l * 8 + i] = buf[i * %d + l]" % lw)
    L.append("")
    L.append("")
    add(0, "@kernel")
    add(0, "def subtree_cvs(state, data, pos, ngroups, level, count, out, at):")
    add(1, '"""The chaining values of ``ngroups`` subtrees of ``2 ** level`` (at most %d) whole'
        % lw)
    add(1, "chunks of ``data`` from byte ``pos``, the first chunk's counter ``count``, into")
    add(1, "``out[at:at + 8 * ngroups]``; reads the key words and the mode from ``state``."
        " The")
    add(1, 'chunks by ``chunk_cvs``, their parents in lanes (``_parents``)."""')
    add(1, "buf = new_words(%d, np.uint32)" % (STRIDE * lw))
    add(1, "cvs = new_words(%d, np.uint32)  # chaining values, 8 words each, one after another"
        % (8 * GROUPS * lw))
    add(1, "g = 0")
    add(1, "while g < ngroups:")
    add(2, "nb = min(%d, ngroups - g)" % GROUPS)
    add(2, "size = 1 << level")
    add(2, "for h in range(nb):")
    add(3, "chunk_cvs(state, data, pos + (g + h) * size * CHUNK_LEN, size,")
    add(4, "count + np.uint64((g + h) * size), cvs, h * size * 8)")
    add(2, "_parents(state, cvs, 0, nb * size, nb, buf)")
    add(2, "for h in range(8 * nb):")
    add(3, "out[at + 8 * g + h] = cvs[h]")
    add(2, "g += nb")
    L.append("")
    L.append("")
    add(0, "@kernel")
    add(0, "def tail_output(state, data, pos, block_index, skip, out):")
    add(1, '"""The output (``b3_output``\'s) of an input whose last ``len(data) - pos`` bytes,')
    add(1, "more than one chunk and at most %d, follow the subtrees the state holds (no chunk"
        % lw)
    add(1, "begun): their whole chunks in lanes (``chunk_cvs``), a last partial one on its own")
    add(1, "(``chunk_cv``), then their tree's parents a level at a time in lanes, an odd last")
    add(1, 'value carried up, down to the last node (``parent_output``)."""')
    if wide_vectors(tier):
        add(1, "_wide_vectors()")
    add(1, "n = len(data)")
    add(1, "count = np.uint64(state[COUNTER + 1]) << np.uint64(32) | np.uint64(state[COUNTER])")
    add(1, "whole = (n - pos) // CHUNK_LEN")
    add(1, "cvs = new_words(%d, np.uint32)" % (8 * lw))
    add(1, "chunk_cvs(state, data, pos, whole, count, cvs, np.int64(0))")
    add(1, "k = whole")
    add(1, "if pos + whole * CHUNK_LEN < n:")
    add(2, "chunk_cv(state, data, pos + whole * CHUNK_LEN, n, count + np.uint64(whole), cvs,")
    add(3, "8 * whole)")
    add(2, "k += 1")
    add(1, "buf = new_words(%d, np.uint32)" % (STRIDE * lw))
    add(1, "mode = np.uint32(state[FLAGS])")
    add(1, "values = cvs.view(np.uint8)")
    add(1, "first = new_words(%d, np.int64)" % lw)
    add(1, "while k > 2:  # a level: parent j of values 2j, 2j + 1, an odd last one carried up")
    add(2, "half = k // 2")
    add(2, "for l in range(%d):" % lw)
    add(3, "first[l] = 64 * min(l, half - 1)")
    parent_pass(add, 3, lw)
    add(2, "if k % 2:")
    add(3, "for i in range(8):")
    add(4, "cvs[8 * half + i] = cvs[8 * (k - 1) + i]")
    add(2, "for l in range(half):")
    add(3, "for i in range(8):")
    add(4, "cvs[8 * l + i] = buf[i * %d + l]" % lw)
    add(2, "k = half + k % 2")
    add(1, "parent_output(state, cvs, block_index, skip, out)")
    L.append("")
    L.append("")
    add(0, "@kernel")
    add(0, "def groups(state, data, pos, ngroups, level, m):")
    add(1, '"""Hash ``ngroups`` subtrees of ``2 ** level`` whole chunks of ``data`` from byte')
    add(1, "``pos`` (``subtree_cvs``) and push them onto the stack (``push_subtree``): the state")
    add(1, "is at a boundary of such subtrees (no chunk begun) and input follows them. ``m``: 16")
    add(1, 'scratch words."""')
    add(1, "cvs = new_words(%d, np.uint32)" % (8 * GROUPS))
    add(1, "g = 0")
    add(1, "while g < ngroups:")
    add(2, "nb = min(%d, ngroups - g)" % GROUPS)
    add(2, "count = np.uint64(state[COUNTER + 1]) << np.uint64(32) | np.uint64(state[COUNTER])")
    add(2, "subtree_cvs(state, data, pos + g * (CHUNK_LEN << level), nb, level, count, cvs,")
    add(3, "np.int64(0))  # not a literal: parallel_cvs's call types (``count``, a uint64, keeps")
    add(3, "# subtree_cvs from typed_kernel, which types every integer as int64): one compile")
    add(2, "for h in range(nb):")
    add(3, "push_subtree(state, cvs, 8 * h, level, m)")
    add(2, "g += nb")
    L.append("")
    L.append("")
    add(0, "@parallel_kernel")
    add(0, "def parallel_cvs(state, data, pos, ngroups, per, out):")
    add(1, '"""The chaining values of ``ngroups // per`` subtrees of ``per`` (a power of two)')
    add(1, "whole groups of %d chunks each from byte ``pos`` (the state at such a subtree's"
        % lw)
    add(1, "boundary), subtree t's into ``out[8 * per * t:8 * per * t + 8]`` (the rest of")
    add(1, "``out[0:8 * ngroups]`` its groups' values), a subtree per task, the tasks spread over")
    add(1, "cores (a ``prange`` loop), each merging its own groups' values in lanes: pushed")
    add(1, "afterwards by ``push_cvs``; the state is read only (no block held back: ``flush``).")
    add(1, '``ngroups`` is a multiple of ``per``."""')
    add(1, "count = np.uint64(state[COUNTER + 1]) << np.uint64(32) | np.uint64(state[COUNTER])")
    add(1, "for t in prange(ngroups // per):")
    add(2, "g = t * per")
    add(2, "subtree_cvs(state, data, pos + g * %d, per, np.int64(%d), count + np.uint64(g * %d),"
        % (lw * 1024, level, lw))
    add(3, "out, 8 * g)  # groups' call types")
    add(2, "if per > 1:")
    add(3, "buf = new_words(%d, np.uint32)" % (STRIDE * lw))
    add(3, "_parents(state, out, 8 * g, per, 1, buf)")
    L.append("")
    L.append("")
    add(0, "@kernel")
    add(0, "def flush(state, buf, buflen):")
    add(1, '"""Before ``parallel_cvs``: the block held back in ``buf`` (``buflen`` 64, or 0:')
    add(1, 'none) is compressed, input following it. Returns 0, the new ``buflen``."""')
    add(1, "m = new_words(16, np.uint32)")
    add(1, "if buflen > 0:")
    add(2, "_chunk_blocks(state, buf, 0, 1, m)")
    add(1, "return 0")
    L.append("")
    L.append("")
    add(0, "@kernel")
    add(0, "def push_cvs(state, out, ngroups, per):")
    add(1, '"""After ``parallel_cvs``: its subtrees (of ``per`` groups) onto the stack."""')
    add(1, "m = new_words(16, np.uint32)")
    add(1, "level = %d" % level)
    add(1, "while (1 << (level - %d)) < per:" % level)
    add(2, "level += 1")
    add(1, "for t in range(ngroups // per):")
    add(2, "push_subtree(state, out, 8 * per * t, level, m)")
    L.append("")
    L.append("")

    add(0, "@typed_kernel(1)")
    add(0, "def b3_update(state, buf, buflen, data):")
    add(1, '"""``portable.b3_update`` with whole groups of %d chunks (or one of %d or %d), where'
        % (lw, lw // 2, lw // 4))
    add(1, "the state is at a group boundary and input follows them, hashed by ``groups``; the")
    add(1, 'rest (a group\'s head, the tail, the held-back bytes) as there. Returns the new')
    add(1, '``buflen``."""')
    add(1, "n = len(data)")
    add(1, "if n == 0:")
    add(2, "return buflen")
    add(1, "m = new_words(16, np.uint32)")
    add(1, "pos = 0")
    add(1, "if buflen > 0:")
    add(2, "take = min(BLOCK_LEN - buflen, n)")
    add(2, "for i in range(take):")
    add(3, "buf[buflen + i] = data[i]")
    add(2, "buflen += take")
    add(2, "pos = take")
    add(2, "if pos == n:  # a full buffer stays: it may be the last block")
    add(3, "return buflen")
    add(2, "_chunk_blocks(state, buf, 0, 1, m)")
    add(1, "while n - pos > BLOCK_LEN:  # whole blocks with more input after them")
    add(2, "blocks = np.uint32(state[BLOCKS])")
    add(2, "whole = (n - pos - 1) // CHUNK_LEN  # whole chunks with input after them")
    add(2, "if blocks == 0 and whole >= %d:" % (lw // 4))
    add(3, "# the largest subtree that starts here, fits and fills a quarter of the lanes")
    add(3, "level = %d" % level)
    add(3, "while level > %d and ((1 << level) > whole or state[COUNTER] & ((1 << level) - 1)):"
        % (level - 2))
    add(4, "level -= 1")
    add(3, "if (1 << level) <= whole and state[COUNTER] & ((1 << level) - 1) == 0:")
    add(4, "ngroups = whole >> level if level == %d else 1" % level)
    add(4, "groups(state, data, pos, ngroups, level, m)")
    add(4, "pos += (ngroups << level) * CHUNK_LEN")
    add(4, "continue")
    add(2, "count = min(CHUNK_BLOCKS - blocks, (n - pos - 1) // BLOCK_LEN)")
    add(2, "_chunk_blocks(state, data, pos, count, m)")
    add(2, "pos += BLOCK_LEN * count")
    add(1, "rest = n - pos")
    add(1, "for i in range(rest):")
    add(2, "buf[i] = data[pos + i]")
    add(1, "return rest")
    L.append("")
    L.append("")

    add(0, "@gil_kernel")
    add(0, "def update(state, buf, buflen, data):")
    add(1, "token = release_gil_if(len(data) >= GIL_MINSIZE)")
    add(1, "buflen = b3_update(state, buf, buflen, data)")
    add(1, "reacquire_gil(token)")
    add(1, "return buflen")
    L.append("")
    L.append("")

    add(0, "@gil_kernel")
    add(0, "def oneshot_array(params, data, block_index, skip, out):")
    add(1, '"""``oneshot`` for a uint8 array: what ``jitdigest.blake3`` calls for one-shot inputs')
    add(1, "of GROUP_MIN bytes or more. Every whole group before the last (1 to %d chunks) by"
        % lw)
    add(1, "``groups``, the last one's chunks and parents in lanes too (``tail_output``), or,")
    add(1, 'when it is one chunk, as ``update`` and ``final`` would (``b3_update``, compiled')
    add(1, 'once, for arrays, and ``b3_output``)."""')
    add(1, "token = release_gil_if(len(data) + len(out) >= GIL_MINSIZE)")
    add(1, "state = scratch(STATE_WORDS, np.uint32, STATE_WORDS)")
    add(1, "for i in range(PARAMS):")
    add(2, "state[i] = params[i]")
    add(1, "n = len(data)")
    add(1, "head = (n - 1) // %d * %d  # whole groups before the last (1 to %d chunks)"
        % (lw * 1024, lw * 1024, lw))
    add(1, "if head > 0:")
    add(2, "m = new_words(16, np.uint32)")
    add(2, "groups(state, data, np.int64(0), head // %d, np.int64(%d), m)  # b3_update's types"
        % (lw * 1024, level))
    add(1, "if n - head > CHUNK_LEN:")
    add(2, "tail_output(state, data, head, block_index, skip, out)")
    add(1, "else:")
    add(2, "buf = scratch(BLOCK_LEN, np.uint8, BLOCK_LEN)")
    add(2, "buflen = b3_update(state, buf, np.int64(0), data[head:])  # update's types")
    add(2, "b3_output(state, buf, buflen, block_index, skip, out)")
    add(1, "reacquire_gil(token)")
    L.append("")
    L.append("")
    add(0, "@kernel")
    add(0, "def b3_message(params, data, out):")
    add(1, '"""All of ``out`` for the message ``data`` alone, from ``params`` (the tree path of')
    add(1, '``b3_update`` above: ``hash_rows`` here and the across-messages lanes\' long rows)."""')
    add(1, "message_output(b3_update, params, data, out)")
    L.append("")
    L.append("")
    add(0, "@kernel")
    add(0, "def hash_rows(values, starts, lengths, rows, iv, out):")
    add(1, '"""The batch entry, a message at a time (``portable.rows_output``)."""')
    add(1, "rows_output(b3_message, values, starts, lengths, rows, iv, out)")
    return L


def preamble(tier):
    lw = tier.lanes(32)
    L = [HEADER.rstrip("\n")]
    L.append('"""BLAKE3, chunk-parallel: %d chunks of one input side by side, one per SIMD lane'
             % lw)
    L.append("(uint32), then their subtree's parents in lanes too; the tree around the groups is")
    L.append("the portable kernel's. Entries ``update``, ``final``, ``oneshot`` with")
    L.append("``portable``'s signatures (``jitdigest/blake3.py``): ``update`` has the group path,")
    L.append("``final`` and ``oneshot`` are portable's; ``jitdigest.blake3`` streams one-shot")
    L.append("inputs of ``GROUP_MIN`` bytes or more to ``oneshot_array`` (so the lanes compile")
    L.append("once, for arrays). ``hash_rows``: the batch entry, a message at a")
    L.append("time (``b3_message``). Compiled only (plain Numba code that LLVM vectorises). Edit")
    L.append("tools/gen_lanes.py, not this file.")
    L.append('"""')
    L.append("import numpy as np")
    L.append("from numba import prange")
    L.append("")
    L.append("from .._contract import Backend, TIERS")
    L.extend(wrap("from .._jit import (GIL_MINSIZE, gil_kernel, kernel, new_words, "
                  "parallel_kernel, "
                  "reacquire_gil, release_gil_if, scratch, typed_kernel)"))
    L.extend(wrap("from .._lanes import (prefetch as _prefetch%s)"
                  % (", wide_vectors as _wide_vectors" if wide_vectors(tier) else "")))
    L.extend(wrap("from .layout import (BLOCK_LEN, BLOCKS, CHUNK_BLOCKS, CHUNK_END, CHUNK_LEN, "
                  "CHUNK_START, COUNTER, FLAGS, KEY, PARAMS, PARENT, STATE_WORDS)"))
    L.append("from .lanes_ir import compress_blocks as _compress_blocks")
    L.append("from .portable import (_chunk_blocks, b3_output, chunk_cv, final,  # noqa: F401")
    L.append("    message_output, oneshot, parent_output, push_subtree, rows_output)")
    L.append("")
    L.append("# the shortest one-shot input the lanes take part in: two chunks and a byte")
    L.append("GROUP_MIN = 2 * CHUNK_LEN + 1")
    L.append("")
    L.append("")
    return L


def render_blake3():
    files = {}
    for tier in VECTOR:
        lw = tier.lanes(32)
        lines = preamble(tier) + blake3_kernel(tier) + record(
            "blake3", tier, lw, "group_min=GROUP_MIN, update=update, xof_final=final, "
            "xof_oneshot=oneshot, xof_oneshot_array=oneshot_array, flush=flush, "
            "parallel_cvs=parallel_cvs, push_cvs=push_cvs, hash_rows=hash_rows")
        # read by jitdigest.blake3's choice of backend module
        lines += ["FEATURE, SWITCH = BACKEND.feature, BACKEND.switch"]
        name = "%s.py" % backend_name(tier, lw)
        files["jitdigest/kernels/blake3/" + name] = "\n".join(lines) + "\n"
    return files
