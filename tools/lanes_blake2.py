"""BLAKE2b and BLAKE2s (unkeyed) for the lanes-kernel generator (tools/gen_lanes.py): the
family table (``Blake2``), the round statements, the kernel (``blake2_kernel``) and the
variants generated (``BLAKE2``)."""
from lanes_common import (W32, W64, block_function, finish, preamble, prefetch_ahead,
                          prefetch_next_row, store_bytes, wrap)

# The IVs and SIGMA from the tables that own them (lanes_common, imported first, put the
# repository on sys.path).
from jitdigest._algorithms import SPECS
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


def blake2_kernel(alg, prefix, lw, wide):
    """Source lines of the block function and ``<prefix>hash_rows`` for BLAKE2b or BLAKE2s
    with ``lw`` lanes."""
    W, wb, bs = alg.W, alg.wb, alg.block
    dt = W.np
    nl = lw
    L = []

    def add(indent, text):
        L.extend(wrap(" " * (4 * indent) + text))

    add(0, "@kernel")
    add(0, "def %shash_rows(values, starts, lengths, rows, iv, out):" % prefix)
    add(1, '"""%s, %d lanes: the digest of each message ``values[starts[r]:starts[r] +'
        % (alg.name.upper(), nl))
    add(1, "lengths[r]]``, ``r`` in ``rows``, into ``out[r]``; ``iv``: h[0..7] (parameter block")
    add(1, "applied), counter t0, t1, last-node flag f1 (no key: a keyed hash never comes")
    add(1, 'here)."""')
    if wide:
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
    add(1, "while True:")
    add(2, "for lane in range(%d):" % nl)
    add(3, "if blk[lane] == nfull[lane] + 1:")
    add(4, "r = row[lane]")
    add(4, "if r >= 0:  # finished: write the digest, free the lane")
    add(5, "for i in range(nout // %d):" % wb)
    add(6, "v = buf[i * %d + lane]" % nl)
    store_bytes(add, 6, "%d * i" % wb, "v", [8 * k for k in range(wb)], W.c(0xFF))
    add(5, "for i in range(nout - nout %% %d, nout):" % wb)
    add(6, "out[r, i] = np.uint8((buf[(i // %d) * %d + lane] >> (8 * (i %% %d))) & %s)"
        % (wb, nl, wb, W.c(0xFF)))
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
    add(5, "for j in range(16):")
    add(6, "buf[%d + j * %d + lane] = _word(values, q + np.uint64(%d * j))" % (12 * nl, nl, wb))
    add(5, "f0 = %s" % W.c(0))
    add(5, "f1 = %s" % W.c(0))
    add(4, "else:  # the final block: 0..%d bytes, zero-padded" % bs)
    add(5, "t = length_of(lengths, r)")
    add(5, "count = t - b * %d" % bs)
    add(5, "nd = count // %d" % wb)
    add(5, "for j in range(16):")
    add(6, "buf[%d + j * %d + lane] = 0" % (12 * nl, nl))
    add(5, "for j in range(nd):")
    add(6, "buf[%d + j * %d + lane] = _word(values, q + np.uint64(%d * j))" % (12 * nl, nl, wb))
    add(5, "q += np.uint64(%d * nd)" % wb)
    add(5, "v = %s" % W.c(0))
    add(5, "for k in range(count - %d * nd):" % wb)
    add(6, "v |= %s(values[q + np.uint64(k)]) << %s(8 * k)" % (dt, dt))
    add(5, "if nd < 16:")
    add(6, "buf[%d + nd * %d + lane] = v" % (12 * nl, nl))
    add(5, "f0 = %s" % W.c(W.bits and (1 << W.bits) - 1))
    add(5, "f1 = iv[10]")
    if wb == 8:
        add(4, "t0 = iv[8] + np.uint64(t)")
        add(4, "t1 = iv[9] + np.uint64(1 if t0 < np.uint64(t) else 0)")
    else:
        add(4, "count = count0 + np.uint64(t)")
        add(4, "t0 = np.uint32(count & np.uint64(0xffffffff))")
        add(4, "t1 = np.uint32(count >> np.uint64(32))")
    add(4, "buf[%d + lane] = %s ^ t0" % (8 * nl, W.c(alg.iv[4])))
    add(4, "buf[%d + lane] = %s ^ t1" % (9 * nl, W.c(alg.iv[5])))
    add(4, "buf[%d + lane] = %s ^ f0" % (10 * nl, W.c(alg.iv[6])))
    add(4, "buf[%d + lane] = %s ^ f1" % (11 * nl, W.c(alg.iv[7])))
    add(2, "if busy == 0:")
    add(3, "break")
    add(2, "%s_block(buf)" % prefix)
    L.append("")
    L.append("")
    B, badd = block_function(prefix + "_block", wide, [
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


# (algorithm, lanes): wide
BLAKE2 = {(BLAKE2B, 8): True, (BLAKE2B, 4): False, (BLAKE2S, 16): True, (BLAKE2S, 8): False}


def render_blake2():
    files = {}
    for (alg, lw), wide in BLAKE2.items():
        name = "BLAKE2b" if alg is BLAKE2B else "BLAKE2s"
        loaders = {"_word": "le64", "_word32": "le32"} if alg is BLAKE2S else {"_word": "le64"}
        L = preamble("%s (RFC 7693), unkeyed" % name, lw, 1, wide, alg.W.np[3:], loaders)
        lines = blake2_kernel(alg, "", lw, wide)
        if alg.wb == 4:
            lines = [line.replace("_word(", "_word32(") for line in lines]
        L.extend(lines)
        files["jitdigest/kernels/%s/lanes%d.py" % (alg.name, lw)] = finish(L)
    return files
