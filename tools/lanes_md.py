"""MD5, SHA-1 and SHA-2 for the lanes-kernel generator (tools/gen_lanes.py): the kernel
(``md_kernel``) and the variants generated (``FAMILIES``, ``UNIFORM``, ``IN_PHASE``); the round
statements, the family table and the pad-block schedule are lanes_md_rounds.py's."""
from lanes_common import (VECTOR, backend_name, block_function, finish, group_loads, interleave,
                          loop_head, phase_start, preamble, prefetch_ahead, prefetch_next_row,
                          record, store_bytes, wide_vectors, wrap)
from lanes_md_rounds import MD5, SHA1, SHA256, SHA512, length_words, mark_first, pad_schedule


def md_kernel(alg, prefix, tier, groups, uniform=False, phase=False):
    """Source lines of ``<prefix>hash_rows`` for ``alg`` with ``groups`` x ``lw`` lanes, after
    those of the block function(s) it calls (``uniform``: the shared pad-block schedule;
    ``phase``: whole groups of rows of one length hashed in phase)."""
    W, ns, nw, bs, wb = alg.W, alg.nstate, alg.nwords, alg.block, alg.wb
    lw = tier.lanes(alg.W.bits)
    nl = lw * groups
    dt = W.np
    bits = W.bits
    little = alg.little

    def shift_of(k):
        """Bit position of byte ``k`` (0 .. wb-1) of a word."""
        return 8 * k if little else 8 * (wb - 1 - k)

    L = []

    shift = [0]     # extra indent: the lanes-on-their-own loop sits under an ``else``

    def add(indent, text):
        L.extend(wrap(" " * (4 * (indent + shift[0])) + text))

    def pad_block(indent, lane, n):
        """Write the pad-only block of an ``n``-byte message into ``lane``'s column: the 0x80
        byte first if the message fills its last block, zeros, the bit count."""
        add(indent, "for j in range(%d):" % (nw - 2))
        add(indent + 1, "%s = 0" % msg_word("j", lane))
        add(indent, "if %s %% %d == 0:" % (n, bs))
        add(indent + 1, "%s = %s" % (msg_word(0, lane), mark_first(alg)))
        for k, expr in enumerate(length_words(alg, "(%s + pre)" % n)):
            add(indent, "%s = %s" % (msg_word(nw - 2 + k, lane), expr))

    def mark_word(indent, target):
        """``target`` = the word after the ``nd`` whole data words of a ``rest``-byte block at
        byte ``q``: its last bytes and the 0x80 byte."""
        add(indent, "q += np.uint64(nd * %d)" % wb)
        at = ("8 * (rest - nd * %d)" % wb if little
              else "%d - 8 * (rest - nd * %d)" % (bits - 8, wb))
        add(indent, "v = %s(0x80) << %s(%s)" % (dt, dt, at))
        add(indent, "for k in range(rest - nd * %d):  # the word with the 0x80 byte" % wb)
        add(indent + 1, "v |= %s(values[q + np.uint64(k)]) << %s(%s)"
            % (dt, dt, "8 * k" if little else "%d - 8 * k" % (bits - 8)))
        add(indent, "%s = v" % target)

    def tail_block(indent, lane, n, b):
        """Write the last block with data of an ``n``-byte message (block ``b``) straight into
        ``lane``'s column of a paired layout: zeros (a fixed count of 64-bit stores), its whole
        words (in pairs), the word with the 0x80 byte, and the bit count if it fits (else the
        pad-only block follows)."""
        add(indent, "q = np.uint64(first[%s] + %s * %d)" % (lane, b, bs))
        add(indent, "rest = %s - %s * %d  # bytes in the block, 1 .. %d" % (n, b, bs, bs - 1))
        add(indent, "nd = rest // %d  # whole data words" % wb)
        add(indent, "for j in range(%d):" % (nw // 2))
        add(indent + 1, "%s = 0" % msg_pair("j", lane))
        add(indent, "for j in range(nd >> 1):")
        add(indent + 1, "%s = _dword(values, q + np.uint64(8 * j))" % msg_pair("j", lane))
        add(indent, "if nd & 1:")
        add(indent + 1, "%s = _word(values, q + np.uint64(%d * (nd - 1)))"
            % (msg_word("(nd - 1)", lane), wb))
        mark_word(indent, msg_word("nd", lane))
        add(indent, "if rest < %d:  # room for the length" % (bs - alg.len_bytes))
        for k, expr in enumerate(length_words(alg, "(%s + pre)" % n)):
            add(indent + 1, "%s = %s" % (msg_word(nw - 2 + k, lane), expr))

    def store_digest(indent):
        """``out[r]`` = the digest in ``lane``'s state words."""
        add(indent, "for i in range(nout // %d):" % wb)
        add(indent + 1, "v = buf[i * %d + lane]" % nl)
        store_bytes(add, indent + 1, "%d * i" % wb, "v", [shift_of(k) for k in range(wb)],
                    W.c(0xFF))
        add(indent, "for i in range(nout - nout %% %d, nout):" % wb)
        add(indent + 1, "v = buf[(i // %d) * %d + lane]" % (wb, nl))
        add(indent + 1, "out[r, i] = np.uint8((v >> (%s)) & %s)"
            % ("8 * (i %% %d)" % wb if little else "8 * (%d - i %% %d)" % (wb - 1, wb),
               W.c(0xFF)))

    def load_block(indent, lane):
        """``lane``'s whole block at byte ``q`` of values into its column."""
        if pair:    # two words per 64-bit load and store
            add(indent, "for j in range(%d):" % (nw // 2))
            add(indent + 1, "%s = _dword(values, q + np.uint64(8 * j))" % msg_pair("j", lane))
        else:
            add(indent, "for j in range(%d):" % nw)
            add(indent + 1, "buf[%d + j * %d + %s] = _word(values, q + np.uint64(%d * j))"
                % (ns * nl, nl, lane, wb))

    def phase_top(indent):
        """The loop's top (``lanes_common.phase_start``) and the block count of rows in
        phase."""
        phase_start(add, indent, nl, bs, ns, store_digest)
        i = indent + 2     # under the test that the rows have one length
        add(i, "pnf = n // %d  # whole blocks" % bs)
        add(i, "prest = n - pnf * %d  # bytes in the last block with data" % bs)
        add(i, "pnb = pnf + (prest > 0) + (prest == 0 or prest >= %d)  # blocks in all"
            % (bs - alg.len_bytes))
        add(i, "pb = 0")
        add(i, "nxt += %d" % nl)

    def phase_block(indent):
        """Block ``pb`` of the rows in phase into every lane's column: whole blocks with no
        test per lane; the words every lane shares (zeros, the 0x80 byte, the length) written
        for all lanes at once."""
        add(indent, "b = pb")
        add(indent, "pb = b + 1")
        if uniform:
            add(indent, "uni = -1")
        add(indent, "if b < pnf:")
        if transposed(tier):
            add(indent + 1, "if pf:")
            add(indent + 2, "for lane in range(%d):" % nl)
            add(indent + 3, "q = np.uint64(first[lane] + b * %d)" % bs)
            prefetch_ahead(add, indent + 3, bs, nfull="pnf")
            for lo in range(0, nl, lw):
                transposed_block(indent + 1, "first", lo, "b * %d" % bs)
        else:
            add(indent + 1, "for lane in range(%d):" % nl)
            add(indent + 2, "q = np.uint64(first[lane] + b * %d)" % bs)
            prefetch_ahead(add, indent + 2, bs, nfull="pnf")
            load_block(indent + 2, "lane")
        add(indent, "elif b == pnf and prest > 0:  # the last block with data")
        i = indent + 1
        if pair:
            add(i, "for lane in range(%d):" % nl)
            tail_block(i + 1, "lane", "pn", "b")
        else:
            phase_tail(i)
        add(indent, "else:  # the pad-only block")
        if uniform:
            add(i, "uni = pn")
        else:
            add(i, "for j in range(%d):" % nw)
            add(i + 1, "for lane in range(%d):" % nl)
            add(i + 2, "%s = 0" % msg_word("j", "lane"))
            add(i, "if prest == 0:")
            add(i + 1, "for lane in range(%d):" % nl)
            add(i + 2, "%s = %s" % (msg_word(0, "lane"), mark_first(alg)))
            length_all(i, "(pn + pre)")

    def stage_tail(i, at, room, n):
        """``lane``'s last block with data (``rest`` bytes at byte ``at``), the 0x80 byte and,
        if ``room``, the length of an ``n``-byte message, into its staging words (contiguous:
        the word loads and stores vectorise)."""
        add(i, "t0 = lane * %d" % nw)
        add(i, "q = np.uint64(%s)" % at)
        add(i, "nd = rest // %d  # whole data words in the tail" % wb)
        add(i, "for j in range(%d):  # fixed count: vector stores, no memset call" % nw)
        add(i + 1, "tail[t0 + j] = 0")
        add(i, "for j in range(nd):")
        add(i + 1, "tail[t0 + j] = _word(values, q + np.uint64(%d * j))" % wb)
        mark_word(i, "tail[t0 + nd]")
        add(i, "if %s:  # room for the length too" % room)
        for k, expr in enumerate(length_words(alg, "(%s + pre)" % n)):
            add(i + 1, "tail[t0 + %d] = %s" % (nw - 2 + k, expr))

    def copy_tail(i):
        """``lane``'s staged last block into its column."""
        add(i, "for j in range(%d):" % nw)
        add(i + 1, "%s = tail[lane * %d + j]" % (msg_word("j", "lane"), nw))

    def transposed_block(indent, at, lo, base=None):
        """Lanes ``lo`` .. ``lo + lw - 1``'s whole block at byte ``base`` (None: 0) past
        ``at[lane]`` into their columns, ``lw`` words of the ``lw`` lanes at a time."""
        for h in range(nw // lw):
            off = "%d" % (lw * wb * h) if base is None else "%s + %d" % (base, lw * wb * h)
            add(indent, "_load_transposed(values, %s, %d, %s, buf, %d, %d, %d, %s)"
                % (at, lo, off, (ns + lw * h) * nl + lo, nl, lw, not alg.little))

    def phase_tail(i):
        """The last block with data of the rows in phase, word by word: staged, as the lanes on
        their own do (written straight into the columns, SHA-1's 120-byte rows took 6% more
        time), then copied."""
        add(i, "rest = prest")
        add(i, "for lane in range(%d):" % nl)
        stage_tail(i + 1, "first[lane] + b * %d" % bs, "prest < %d" % (bs - alg.len_bytes), "pn")
        copy_tail(i + 1)

    def length_all(indent, n):
        """The bit count of an ``n``-byte message into every lane's last two words."""
        for k, expr in enumerate(length_words(alg, n)):
            add(indent, "v = %s" % expr)
            add(indent, "for lane in range(%d):" % nl)
            add(indent + 1, "%s = v" % msg_word(nw - 2 + k, "lane"))

    add(0, "@kernel")
    add(0, "def %shash_rows(values, starts, lengths, rows, iv, out):" % prefix)
    add(1, '"""%s, %d lanes (%d group%s of %d): the digest of each message'
        % (alg.name.upper(), nl, groups, "s" if groups > 1 else "", lw))
    add(1, '``values[starts[r]:starts[r] + lengths[r]]``, ``r`` in ``rows``, into ``out[r]``."""')
    if wide_vectors(tier):
        add(1, "_wide_vectors()")
    add(1, "# state words 0..%d, then message words 0..%d: word i of lane l at buf[i * %d + l]"
        % (ns - 1, nw - 1, nl))
    kwo = (ns + nw) * nl            # uniform: K + W of a shared pad-only block from here
    # 512-bit variants store 32-bit words in pairs: words 2k and 2k + 1 of lane l side by side
    # (in the order of one 64-bit load in the family's byte order), one 64-bit store per pair,
    # the vectoriser deinterleaving them (at 1 KiB: MD5 +16%, SHA-1 +11%, SHA-256 +7%; with
    # 256-bit vectors from -7% to +5%, so not there).
    pair = wb == 4 and tier.bits >= 512

    def msg_word(j, lane, off=0):
        """``buf[...]`` of message word ``j`` of lane ``lane`` (+ ``off``), j an int or a name."""
        if not pair:
            if isinstance(j, int):
                return "buf[%d + %s]" % ((ns + j) * nl + off, lane)
            return "buf[%d + %s * %d + %s]" % (ns * nl + off, j, nl, lane)
        if isinstance(j, int):
            sel = j & 1 if little else 1 - (j & 1)
            return "buf[%d + 2 * %s]" % (ns * nl + (j >> 1) * 2 * nl + 2 * off + sel, lane)
        sel = "(%s & 1)" % j if little else "1 - (%s & 1)" % j
        return "buf[%d + (%s >> 1) * %d + 2 * %s + %s]" % (ns * nl + 2 * off, j, 2 * nl, lane, sel)

    def msg_pair(j, lane):
        """``buf64[...]`` of message words 2j and 2j + 1 of ``lane`` (paired layout)."""
        return "buf64[%d + %s * %d + %s]" % (ns * nl // 2, j, nl, lane)

    if uniform:
        add(1, "# then K + W of a pad-only block all lanes may share, for messages of kwn bytes")
        add(1, "buf = lane_words(%d, %s, 0)" % (kwo + len(alg.K), dt))
        add(1, "kwn = -1")
        add(1, "late = lane_words(%d, np.int64, -1)  # length of a pad-only block not written"
            % nl)
    else:
        add(1, "buf = lane_words(%d, %s, 0)" % ((ns + nw) * nl, dt))
    if pair:
        add(1, "buf64 = buf.view(np.uint64)  # the same memory, for 2-word stores")
    else:
        add(1, "# each lane's last block with data: %d words from lane * %d" % (nw, nw))
        add(1, "tail = lane_words(%d, %s, 0)" % (nw * nl, dt))
    add(1, "row = lane_words(%d, np.int64, -1)  # row being hashed per lane, -1: idle" % nl)
    add(1, "first = lane_words(%d, np.int64, 0)  # its first byte in values" % nl)
    add(1, "nfull = lane_words(%d, np.int64, 0)  # its whole blocks, read from values" % nl)
    add(1, "nblk = lane_words(%d, np.int64, 0)  # its blocks in all (whole + tail)" % nl)
    add(1, "blk = lane_words(%d, np.int64, 0)  # blocks loaded so far" % nl)
    add(1, "nrows = row_count(rows)")
    add(1, "pf = values.shape[0] > PF_MIN  # prefetch: the data may not fit in the caches")
    add(1, "nout = min(out.shape[1], %d)" % (ns * wb))
    # iv may carry one more word: bytes hashed before each message (whole blocks, e.g. HMAC's
    # key block, whose compression iv already is), which the length field counts
    add(1, "pre = np.int64(iv[%d]) if iv.shape[0] > %d else 0" % (ns, ns))
    add(1, "nxt = 0")
    add(1, "busy = 0")
    # lanes8 of MD5 and SHA-1: whole blocks of the lanes on their own are loaded after the
    # lane loop, a group's at once through the transpose when all its lanes load one
    deferred = phase and transposed(tier)
    if deferred:
        add(1, "qoff = lane_words(%d, np.int64, -1)  # each lane's whole block (-1: none)" % nl)
    if phase:
        loop_head(add, shift, phase_top, phase_block, [
            "pn = pnf = prest = 0  # their length, whole blocks, bytes in the last with data"])
    else:
        loop_head(add, shift)
    if uniform:
        add(2, "uni = -2  # every busy lane's block: the pad-only block of a uni-byte message")
        add(2, "late[:] = -1")
    if deferred:
        add(2, "qoff[:] = -1")
    add(2, "for lane in range(%d):" % nl)
    add(3, "if blk[lane] == nblk[lane]:")
    add(4, "r = row[lane]")
    add(4, "if r >= 0:  # finished: write the digest, free the lane")
    store_digest(5)
    add(5, "row[lane] = -1")
    add(5, "busy -= 1")
    add(4, "if nxt < nrows:  # start the next row: initial state, padded tail")
    add(5, "r = row_at(rows, nxt)")
    add(5, "nxt += 1")
    add(5, "busy += 1")
    add(5, "row[lane] = r")
    add(5, "n = length_of(lengths, r)")
    add(5, "nf = n // %d" % bs)
    add(5, "rest = n - nf * %d  # bytes in the tail" % bs)
    add(5, "nt = %d if rest < %d else %d  # tail words: 1 or 2 blocks"
        % (nw, bs - alg.len_bytes, 2 * nw))
    add(5, "first[lane] = start_of(starts, r)")
    prefetch_next_row(add, 5, nl, bs)
    add(5, "nfull[lane] = nf")
    add(5, "nblk[lane] = nf + nt // %d" % nw)
    add(5, "blk[lane] = 0")
    add(5, "for i in range(%d):" % ns)
    add(6, "buf[i * %d + lane] = iv[i]" % nl)
    # The last block with data: the paired layout writes it into the lane's column when it is
    # loaded (tail_block; 16-55 B rows, two runs: SHA-256 5-10%, SHA-1 3-14%, MD5 2-17% less
    # time; 64 B, 1 KiB and 16 KiB rows even); the word-by-word layouts stage it here in a
    # per-lane buffer (zeroed by vector stores) and copy it at load time, which stayed faster
    # there (built at load time, SHA-512 lanes8 was 5-8% slower at 100-200 B).
    if not pair:
        add(5, "if rest > 0:  # stage the tail block with data, the 0x80 byte (and the length)")
        stage_tail(6, "start_of(starts, r) + nf * %d" % bs, "nt == %d" % nw, "n")
    add(3, "if row[lane] >= 0:  # load the lane's next block into its column")
    add(4, "b = blk[lane]")
    add(4, "blk[lane] = b + 1")
    add(4, "if b < nfull[lane]:")
    if uniform:
        add(5, "uni = -1")
    add(5, "q = np.uint64(first[lane] + b * %d)" % bs)
    prefetch_ahead(add, 5, bs)
    if deferred:
        add(5, "qoff[lane] = first[lane] + b * %d  # loaded below, with its group's" % bs)
    else:
        load_block(5, "lane")
    add(4, "else:")
    add(5, "n = length_of(lengths, row[lane])")
    add(5, "if b > nfull[lane] or n == nfull[lane] * %d:  # a pad-only block" % bs)
    if uniform:
        add(6, "uni = n if uni == -2 or uni == n else -1")
        add(6, "late[lane] = n  # written below only if the lanes' blocks differ")
    else:
        pad_block(6, "lane", "n")
    add(5, "else:")
    if uniform:
        add(6, "uni = -1")
    if pair:
        tail_block(6, "lane", "n", "b")
    else:
        copy_tail(6)
    add(2, "if busy == 0:")
    add(3, "break")
    if deferred:
        for lo in range(0, nl, lw):
            group_loads(add, 2, lo, lw, lambda i, lo=lo: transposed_block(i, "qoff", lo),
                        lambda i: load_block(i, "lane"))
    shift[0] = 0
    ind = 2
    if uniform:
        add(2, "if uni >= 0:  # one message schedule for all lanes")
        add(3, "if uni != kwn:")
        add(4, "_pad_schedule(buf, %d, uni + pre)" % kwo)
        add(4, "kwn = uni")
        add(3, "%s_block_kw(buf)" % prefix)
        add(2, "else:")
        add(3, "for lane in range(%d):" % nl)
        add(4, "if late[lane] >= 0:%s" % ("  # (only ever set by the lanes on their own)"
                                           if phase else ""))
        pad_block(5, "lane", "late[lane]")
        ind = 3
    add(ind, "%s_block(buf)" % prefix)
    L.append("")
    L.append("")

    # The block functions, compiled once for every form of hash_rows and inlined into each by
    # LLVM (written into each form, they were typed again for each).
    KW = []
    if uniform:
        KW, badd = block_function(prefix + "_block_kw", tier, [
            "The block function when every lane's block is the pad-only block of one",
            "length: K + W of that block, shared, from buf[%d:]." % kwo])
        for i in range(len(alg.K)):     # in locals: loads inside the loop stop the vectoriser
            badd(1, "k%d = buf[%d]" % (i, kwo + i))
        badd(1, "for l in range(%d):" % lw)
        for gi in range(groups):
            g = "_%d" % gi if groups > 1 else ""
            off = gi * lw
            for i in range(ns):
                badd(2, "%s%s = buf[%d + l]" % ("abcdefgh"[i], g, i * nl + off))
            body, final = alg.rounds(g, kw=lambda i: "k%d" % i)
            for st in body:
                badd(2, st)
            for i in range(ns):
                badd(2, "buf[%d + l] = %s" % (i * nl + off, W.add("buf[%d + l]" % (i * nl + off),
                                                                   final[i])))
        KW.extend(["", ""])
    B, badd = block_function(prefix + "_block", tier, [
        "The block function: each lane's state words (the first %d words of ``buf``)" % (ns * nl),
        "compressed with its message words, in place."] + (
            ["Lanes l + %d * g of the %d groups g side by side." % (lw, groups)] if groups > 1
            else []))
    badd(1, "for l in range(%d):" % lw)
    sts = []
    for gi in range(groups):
        g = "_%d" % gi if groups > 1 else ""
        off = gi * lw
        names = ["abcdefgh"[i] + g for i in range(ns)]
        load = ["%s = buf[%d + l]" % (names[i], i * nl + off) for i in range(ns)]
        load += ["x%d%s = %s" % (j, g, msg_word(j, "l", off)) for j in range(nw)]
        body, final = alg.rounds(g)
        store = ["buf[%d + l] = %s" % (i * nl + off, W.add("buf[%d + l]" % (i * nl + off),
                                                           final[i])) for i in range(ns)]
        sts.append((load, body, store))
    for part in range(3):
        for st in interleave([x[part] for x in sts]):
            badd(2, st)
    B.extend(["", ""])
    return KW + B + L


# family -> (algorithm, groups G): each tier's kernel runs G interleaved groups of the tier's
# lanes (``Tier.lanes``); MD5, one serial dependency chain per message, runs two.
FAMILIES = {
    "md5": (MD5, 2),
    "sha1": (SHA1, 1),
    "sha256": (SHA256, 1),
    "sha512": (SHA512, 1),
}

# tiers whose kernels have the shared pad-block schedule (benchmarks/results/kernel_notes.md,
# "Lane kernels: the shared pad-block schedule")
UNIFORM = {"sha256": ("avx512",), "sha1": ("avx512", "avx2")}


# tiers whose kernels hash rows of one length in phase (``phase_top``: NL rows of one length
# start together, load whole blocks with no test per lane and write the words all lanes share
# once; benchmarks/results/kernel_notes.md, "Lane kernels: rows in phase")
IN_PHASE = {"md5": ("avx512", "avx2"), "sha1": ("avx512", "avx2")}


def transposed(tier):
    """Whether rows in phase load whole blocks a vector of words per lane, transposed in
    vector registers (``_lanes.load_transposed``): the 256-bit tiers (8 lanes of 32-bit
    words, 4 of 64-bit)."""
    return tier.bits == 256


def render_md(family):
    alg, g = FAMILIES[family]
    files = {}
    for tier in VECTOR:
        lw = tier.lanes(alg.W.bits)
        order = "le" if alg.little else "be"
        loaders = {"_word": "%s%d" % (order, alg.W.bits)}
        if alg.wb == 4 and tier.bits >= 512:
            loaders["_dword"] = "%s64" % order
        uniform = tier.name in UNIFORM.get(family, ())
        phase = tier.name in IN_PHASE.get(family, ())
        if phase and transposed(tier):
            loaders["_load_transposed"] = "load_transposed"
        L = preamble(alg.doc, tier, g, alg.W.bits, loaders)
        if uniform:
            L.extend(wrap("_K = np.array([%s], %s)" % (", ".join("0x%x" % k for k in alg.K),
                                                         alg.W.np)))
            L.extend(["", ""])
            L.extend(pad_schedule(alg))
            L.extend(["", ""])
        L.extend(md_kernel(alg, "", tier, g, uniform, phase))
        L.extend(record(family, tier, lw * g, lanes=lw))
        files["jitdigest/kernels/%s/%s.py" % (family, backend_name(tier, lw * g))] = finish(L)
    return files
