"""BLAKE2b and BLAKE2s (unkeyed) for the lanes-kernel generator (tools/gen_lanes.py): the
family table (``Blake2``), the round statements, the kernel (``blake2_kernel``) and the
variants generated (``BLAKE2``, ``IN_PHASE``: every vector tier's)."""
from lanes_common import (VECTOR, W32, W64, backend_name, block_function, finish, group_loads,
                          loop_head, phase_start, preamble, prefetch_ahead, prefetch_next_row,
                          record, store_bytes, wide_vectors, wrap)

# The IVs and SIGMA from the tables that own them (lanes_common, imported first, put the
# repository on sys.path).
from jitdigest.base.algorithms import SPECS
from jitdigest.kernels._blake2 import SIGMA as _SIGMA


# --- BLAKE2 -----------------------------------------------------------------------------

# BLAKE2b's IV is SHA-512's initial state, BLAKE2s's SHA-256's (RFC 7693, 2.6).
BLAKE2_SIGMA = [[int(v) for v in _SIGMA[16 * r:16 * r + 16]] for r in range(10)]


class Blake2:
    def __init__(self, name, words, rounds, rot):
        self.name, self.W, self.rounds, self.rot = name, words, rounds, rot
        self.wb = words.bits // 8
        self.block = 16 * self.wb
        self.iv = list(SPECS["sha256" if words.bits == 32 else "sha512"].iv)


BLAKE2B = Blake2("blake2b", W64, 12, (32, 24, 16, 63))
BLAKE2S = Blake2("blake2s", W32, 10, (16, 12, 8, 7))


def blake2_rounds(alg, nrounds, msg):
    """Statements of ``nrounds`` BLAKE2 rounds on v0..v15; ``msg(k, i)`` is the expression of
    message word SIGMA[round k][i] (k counted from the first round written)."""
    W = alg.W
    r1, r2, r3, r4 = alg.rot
    st = []
    for rnd in range(nrounds):
        for k, (a, b, c, d) in enumerate([(0, 4, 8, 12), (1, 5, 9, 13), (2, 6, 10, 14),
                                         (3, 7, 11, 15), (0, 5, 10, 15), (1, 6, 11, 12),
                                         (2, 7, 8, 13), (3, 4, 9, 14)]):
            a, b, c, d = ("v%d" % i for i in (a, b, c, d))
            for m, (rd, rb) in ((msg(rnd, 2 * k), (r1, r2)), (msg(rnd, 2 * k + 1), (r3, r4))):
                st.append("%s = %s" % (a, W.add(a, b, m)))
                st.append("t = %s ^ %s" % (d, a))
                st.append("%s = %s" % (d, W.w(W.ror("t", rd)[1:-1])))
                st.append("%s = %s" % (c, W.add(c, d)))
                st.append("t = %s ^ %s" % (b, c))
                st.append("%s = %s" % (b, W.w(W.ror("t", rb)[1:-1])))
    return st


def blake2_kernel(alg, prefix, tier, phase=False):
    """Source lines of the block function and ``<prefix>hash_rows`` for BLAKE2b or BLAKE2s
    with the tier's lanes (``phase``: whole groups of rows of one length in phase, their whole
    words loaded through ``_lanes.load_transposed``)."""
    W, wb, bs = alg.W, alg.wb, alg.block
    dt = W.np
    lw = nl = tier.lanes(W.bits)
    L = []
    shift = [0]     # extra indent: the lanes-on-their-own loop sits under an ``else``

    def add(indent, text):
        L.extend(wrap(" " * (4 * (indent + shift[0])) + text))

    def store_digest(indent):
        """``out[r]`` = the digest in ``lane``'s h words."""
        add(indent, "for i in range(nout // %d):" % wb)
        add(indent + 1, "v = buf[i * %d + lane]" % nl)
        store_bytes(add, indent + 1, "%d * i" % wb, "v", [8 * k for k in range(wb)], W.c(0xFF))
        add(indent, "for i in range(nout - nout %% %d, nout):" % wb)
        add(indent + 1, "out[r, i] = np.uint8((buf[(i // %d) * %d + lane] >> (8 * (i %% %d)))"
            " & %s)" % (wb, nl, wb, W.c(0xFF)))

    def counter_words(indent, t, f0, f1, lane=None):
        """v12..v15 at a block's start: the IV's last words ^ the byte counter ``t`` and the
        flags, for ``lane`` (None: every lane)."""
        if wb == 8:
            add(indent, "t0 = iv[8] + np.uint64(%s)" % t)
            add(indent, "t1 = iv[9] + np.uint64(1 if t0 < np.uint64(%s) else 0)" % t)
        else:
            add(indent, "count = count0 + np.uint64(%s)" % t)
            add(indent, "t0 = np.uint32(count & np.uint64(0xffffffff))")
            add(indent, "t1 = np.uint32(count >> np.uint64(32))")
        words = [(8, "t0"), (9, "t1"), (10, f0), (11, f1)]
        if lane is not None:
            for i, x in words:
                add(indent, "buf[%d + %s] = %s ^ %s" % (i * nl, lane, W.c(alg.iv[i - 4]), x))
            return
        for i, x in words:
            add(indent, "v = %s ^ %s" % (W.c(alg.iv[i - 4]), x))
            add(indent, "for lane in range(%d):" % nl)
            add(indent + 1, "buf[%d + lane] = v" % (i * nl))

    def load_words(indent):
        """``lane``'s whole block at byte ``q`` of values into its column, word by word."""
        add(indent, "for j in range(16):")
        add(indent + 1, "buf[%d + j * %d + lane] = _word(values, q + np.uint64(%d * j))"
            % (12 * nl, nl, wb))

    def final_words(indent, words):
        """``lane``'s final block from byte ``q`` (``count`` bytes, ``nd`` whole words) into
        its column, zeroed already: the whole words ``range(words)``, then the partial one."""
        add(indent, "for j in range(%s):" % words)
        add(indent + 1, "buf[%d + j * %d + lane] = _word(values, q + np.uint64(%d * j))"
            % (12 * nl, nl, wb))
        add(indent, "q += np.uint64(%d * nd)" % wb)
        add(indent, "v = %s" % W.c(0))
        add(indent, "for k in range(count - %d * nd):" % wb)
        add(indent + 1, "v |= %s(values[q + np.uint64(k)]) << %s(8 * k)" % (dt, dt))
        add(indent, "if nd < 16:")
        add(indent + 1, "buf[%d + nd * %d + lane] = v" % (12 * nl, nl))

    def transposed_words(indent, off, count, at="first"):
        """The first ``count`` x ``lw`` words of every lane's block at byte ``off`` past
        ``at[lane]``, ``lw`` words of the ``lw`` lanes at a time."""
        add(indent, "for h in range(%s):" % count)
        add(indent + 1, "_load_transposed(values, %s, 0, %s + h * %d, buf, %d + h * %d, %d, %d,"
            " False)" % (at, off, lw * wb, 12 * nl, lw * nl, nl, lw))

    def phase_top(indent):
        """The loop's top (``lanes_common.phase_start``) and the block count of rows in
        phase."""
        phase_start(add, indent, nl, bs, 8, store_digest)
        i = indent + 2     # under the test that the rows have one length
        add(i, "pnb = max(n - 1, 0) // %d + 1  # blocks in all, the last the final one" % bs)
        add(i, "pb = 0")
        add(i, "nxt += %d" % nl)

    def phase_block(indent):
        """Block ``pb`` of the rows in phase into every lane's column, its counter and flags
        written once for all lanes."""
        add(indent, "b = pb")
        add(indent, "pb = b + 1")
        add(indent, "if b < pnb - 1:")
        i = indent + 1
        add(i, "if pf:")
        add(i + 1, "for lane in range(%d):" % nl)
        add(i + 2, "q = np.uint64(first[lane] + b * %d)" % bs)
        prefetch_ahead(add, i + 2, bs, nfull="pnb - 1")
        transposed_words(i, "b * %d" % bs, 16 // lw)
        counter_words(i, "(b + 1) * %d" % bs, W.c(0), W.c(0))
        add(indent, "else:  # the final block: 0..%d bytes, zero-padded" % bs)
        add(i, "count = pn - b * %d" % bs)
        add(i, "nd = count // %d" % wb)
        add(i, "for j in range(16):")
        add(i + 1, "for lane in range(%d):" % nl)
        add(i + 2, "buf[%d + j * %d + lane] = 0" % (12 * nl, nl))
        transposed_words(i, "b * %d" % bs, "nd // %d" % lw)
        add(i, "for lane in range(%d):" % nl)
        add(i + 1, "q = np.uint64(first[lane] + b * %d)" % bs)
        final_words(i + 1, "nd - nd %% %d, nd" % lw)
        counter_words(i, "pn", W.c((1 << W.bits) - 1), "iv[10]")

    add(0, "@kernel")
    add(0, "def %shash_rows(values, starts, lengths, rows, iv, out):" % prefix)
    add(1, '"""%s, %d lanes: the digest of each message ``values[starts[r]:starts[r] +'
        % (alg.name.upper(), nl))
    add(1, "lengths[r]]``, ``r`` in ``rows``, into ``out[r]``; ``iv``: h[0..7] (parameter block")
    add(1, "applied), counter t0, t1, last-node flag f1 (no key: a keyed hash never comes")
    add(1, 'here)."""')
    if wide_vectors(tier):
        add(1, "_wide_vectors()")
    add(1, "# h0..h7, then v12..v15 at the block's start (IV ^ counter, IV ^ flags), then the")
    add(1, "# message words: word i of lane l at buf[i * %d + l]" % nl)
    add(1, "buf = lane_words(%d, %s, 0)" % (28 * nl, dt))
    add(1, "row = lane_words(%d, np.int64, -1)  # row being hashed per lane, -1: idle" % nl)
    add(1, "nfull = lane_words(%d, np.int64, -1)  # its blocks before the final one" % nl)
    add(1, "blk = lane_words(%d, np.int64, 0)  # blocks loaded so far" % nl)
    add(1, "nrows = row_count(rows)")
    add(1, "pf = values.shape[0] > PF_MIN  # prefetch: the data may not fit in the caches")
    add(1, "nout = min(out.shape[1], %d)" % (8 * wb))
    if wb == 4:
        add(1, "count0 = np.uint64(iv[9]) << np.uint64(32) | np.uint64(iv[8])  # 64-bit counter")
    add(1, "nxt = 0")
    add(1, "busy = 0")
    if phase:
        add(1, "first = lane_words(%d, np.int64, 0)  # rows in phase: their first bytes" % nl)
        add(1, "qoff = lane_words(%d, np.int64, -1)  # each lane's whole block (-1: none)" % nl)
        loop_head(add, shift, phase_top, phase_block, ["pn = 0  # their length"])
        add(2, "qoff[:] = -1")
    else:
        loop_head(add, shift)
    add(2, "for lane in range(%d):" % nl)
    add(3, "if blk[lane] == nfull[lane] + 1:")
    add(4, "r = row[lane]")
    add(4, "if r >= 0:  # finished: write the digest, free the lane")
    store_digest(5)
    add(5, "row[lane] = -1")
    add(5, "busy -= 1")
    add(4, "if nxt < nrows:  # start the next row")
    add(5, "r = row_at(rows, nxt)")
    add(5, "nxt += 1")
    add(5, "busy += 1")
    add(5, "row[lane] = r")
    prefetch_next_row(add, 5, nl, bs)
    add(5, "nfull[lane] = max(length_of(lengths, r) - 1, 0) // %d  # the last 1..%d bytes: final block"
        % (bs, bs))
    add(5, "blk[lane] = 0")
    add(5, "for i in range(8):")
    add(6, "buf[i * %d + lane] = iv[i]" % nl)
    add(3, "r = row[lane]")
    add(3, "if r >= 0:  # load the lane's next block, its counter and flags")
    add(4, "b = blk[lane]")
    add(4, "blk[lane] = b + 1")
    add(4, "q = np.uint64(start_of(starts, r) + b * %d)" % bs)
    add(4, "if b < nfull[lane]:")
    prefetch_ahead(add, 5, bs)
    add(5, "t = (b + 1) * %d" % bs)
    if phase:
        add(5, "qoff[lane] = q  # loaded below, with its group's")
    else:
        load_words(5)
    add(5, "f0 = %s" % W.c(0))
    add(5, "f1 = %s" % W.c(0))
    add(4, "else:  # the final block: 0..%d bytes, zero-padded" % bs)
    add(5, "t = length_of(lengths, r)")
    add(5, "count = t - b * %d" % bs)
    add(5, "nd = count // %d" % wb)
    add(5, "for j in range(16):")
    add(6, "buf[%d + j * %d + lane] = 0" % (12 * nl, nl))
    final_words(5, "nd")
    add(5, "f0 = %s" % W.c(W.bits and (1 << W.bits) - 1))
    add(5, "f1 = iv[10]")
    counter_words(4, "t", "f0", "f1", "lane")
    add(2, "if busy == 0:")
    add(3, "break")
    if phase:       # the lanes' whole blocks: all through the transpose, or word by word
        group_loads(add, 2, 0, nl, lambda i: transposed_words(i, "0", 16 // lw, "qoff"),
                    load_words)
    shift[0] = 0
    add(2, "%s_block(buf)" % prefix)
    L.append("")
    L.append("")
    B, badd = block_function(prefix + "_block", tier, [
        "The block function: each lane's h0..h7 (the first %d words of ``buf``)" % (8 * nl),
        "compressed with its message words, counter and flags, in place."])
    badd(1, "for l in range(%d):" % lw)
    for i in range(8):
        badd(2, "v%d = buf[%d + l]" % (i, i * nl))
    for i in range(4):
        badd(2, "v%d = %s" % (8 + i, W.c(alg.iv[i])))
    for i in range(4):
        badd(2, "v%d = buf[%d + l]" % (12 + i, (8 + i) * nl))
    for j in range(16):
        badd(2, "x%d = buf[%d + l]" % (j, (12 + j) * nl))
    for st in blake2_rounds(alg, alg.rounds,
                            lambda k, i: "x%d" % BLAKE2_SIGMA[k % 10][i]):
        badd(2, st)
    for i in range(8):
        badd(2, "buf[%d + l] = buf[%d + l] ^ v%d ^ v%d" % (i * nl, i * nl, i, i + 8))
    B.extend(["", ""])
    return B + L


BLAKE2 = (BLAKE2B, BLAKE2S)       # one kernel per algorithm and vector tier
# (algorithm name, tier) of the kernels hashing whole groups of rows of one length in phase (as
# lanes_md.IN_PHASE), their whole words loaded through the 256-bit transpose, as are the whole
# blocks of the lanes on their own when all of them load one (benchmarks/results/
# kernel_notes.md, "Lane kernels: rows in phase")
IN_PHASE = {("blake2s", "avx2")}


def render_blake2():
    files = {}
    for alg in BLAKE2:
        for tier in VECTOR:
            files.update(_render(alg, tier))
    return files


def _render(alg, tier):
    name = "BLAKE2b" if alg is BLAKE2B else "BLAKE2s"
    lw = tier.lanes(alg.W.bits)
    loaders = {"_word": "le64", "_word32": "le32"} if alg is BLAKE2S else {"_word": "le64"}
    phase = (alg.name, tier.name) in IN_PHASE
    if phase:
        loaders["_load_transposed"] = "load_transposed"
    L = preamble("%s (RFC 7693), unkeyed" % name, tier, 1, alg.W.bits, loaders)
    lines = blake2_kernel(alg, "", tier, phase)
    if alg.wb == 4:
        lines = [line.replace("_word(", "_word32(") for line in lines]
    L.extend(lines)
    L.extend(record(alg.name, tier, lw))
    return {"jitdigest/kernels/%s/%s.py" % (alg.name, backend_name(tier, lw)): finish(L)}
