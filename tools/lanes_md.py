"""MD5, SHA-1 and SHA-2 for the lanes-kernel generator (tools/gen_lanes.py): their round
statements, the Merkle-Damgard family table (``MD``), the kernel (``md_kernel``), the
pad-block schedule SHA-256's and SHA-1's lanes share (``pad_schedule``), and the variants
generated (``FAMILIES``, ``UNIFORM``, ``IN_PHASE``)."""
from lanes_common import (record, W32, W64, block_function, finish, group_loads, interleave,
                          loop_head, phase_start, preamble, prefetch_ahead, prefetch_next_row,
                          store_bytes, wrap)

# Round constants from the kernels that own them (one table each, as gen_keccak reads keccak.py);
# lanes_common, imported first, put the repository on sys.path.
from jitdigest.base.algorithms import MERKLE_DAMGARD
from jitdigest.kernels.md5.portable import S as MD5_S, T as _MD5_T
from jitdigest.kernels.sha1.portable import K as SHA1_K
from jitdigest.kernels.sha256.portable import K256 as _K256
from jitdigest.kernels.sha512.portable import K512 as _K512

# --- constants --------------------------------------------------------------------------

MD5_T = [int(v) for v in _MD5_T]
K256 = [int(v) for v in _K256]
K512 = [int(v) for v in _K512]


# --- block functions: one group's statements ----------------------------------------------
#
# Each takes the group suffix ``g`` (names a_0, x3_0, ...; message words are x0..x15, the
# schedule continues the numbering) and returns (statements, names holding the final working
# state); the driver loads and stores around them.

def md5_rounds(g):
    W = W32
    st = []
    v = ["a" + g, "b" + g, "c" + g, "d" + g]
    t = "t" + g
    for i in range(64):
        a, b, c, d = v
        rnd = i // 16
        if rnd == 0:
            f, k = "%s ^ (%s & (%s ^ %s))" % (d, b, c, d), i
        elif rnd == 1:
            f, k = "%s ^ (%s & (%s ^ %s))" % (c, d, b, c), (5 * i + 1) % 16
        elif rnd == 2:
            f, k = "%s ^ %s ^ %s" % (b, c, d), (3 * i + 5) % 16
        else:
            f, k = "%s ^ (%s | ~%s)" % (c, b, d), (7 * i) % 16
        st.append("%s = %s" % (t, W.add(a, "(%s)" % f, "x%d%s" % (k, g), W.c(MD5_T[i]))))
        st.append("%s = %s" % (a, W.add(b, W.rol(t, MD5_S[rnd][i % 4]))))
        v = [d, a, b, c]
    return st, v


def sha1_rounds(g, kw=None):
    """With ``kw`` (round -> expression of K + W, the same for every lane) no message words
    nor schedule."""
    W = W32
    st = []
    v = ["a" + g, "b" + g, "c" + g, "d" + g, "e" + g]
    for i in range(80):
        x = "x%d%s" % (i, g)
        if i >= 16 and kw is None:
            y = "y" + g
            st.append("%s = %s" % (y, " ^ ".join("x%d%s" % (i - k, g) for k in (3, 8, 14, 16))))
            st.append("%s = %s" % (x, W.w(W.rol(y, 1)[1:-1])))
        a, b, c, d, e = v
        if i < 20:
            f, k = "%s ^ (%s & (%s ^ %s))" % (d, b, c, d), SHA1_K[0]
        elif i < 40:
            f, k = "%s ^ %s ^ %s" % (b, c, d), SHA1_K[1]
        elif i < 60:
            f, k = "(%s & %s) | (%s & (%s | %s))" % (b, c, d, b, c), SHA1_K[2]
        else:
            f, k = "%s ^ %s ^ %s" % (b, c, d), SHA1_K[3]
        kx = (W.c(k), x) if kw is None else (kw(i),)
        st.append("%s = %s" % (e, W.add(e, W.rol(a, 5), "(%s)" % f, *kx)))
        st.append("%s = %s" % (b, W.w(W.rol(b, 30)[1:-1])))
        v = [e, a, b, c, d]
    return st, v


def sha2_rounds(g, W, K, sig, kw=None):
    """SHA-256 (W32, K256, SHA256_SIG) or SHA-512 (W64, K512, SHA512_SIG). With ``kw``
    (round -> expression of K + W, the same for every lane) no message words nor schedule."""
    (S0, S1, s0, s1) = sig
    st = []
    v = [n + g for n in "abcdefgh"]
    s, t = "s" + g, "t" + g
    for i in range(len(K)):
        x = "x%d%s" % (i, g)
        if i >= 16 and kw is None:
            p, q = "x%d%s" % (i - 15, g), "x%d%s" % (i - 2, g)
            st.append("%s = %s" % (s, W.w("%s ^ %s ^ %s >> %d" % (
                W.ror(p, s0[0]), W.ror(p, s0[1]), p, s0[2]))))
            st.append("%s = %s" % (t, W.w("%s ^ %s ^ %s >> %d" % (
                W.ror(q, s1[0]), W.ror(q, s1[1]), q, s1[2]))))
            st.append("%s = %s" % (x, W.add("x%d%s" % (i - 16, g), s, "x%d%s" % (i - 7, g), t)))
        a, b, c, d, e, f, gg, h = v
        st.append("%s = %s" % (s, W.w(" ^ ".join(W.ror(e, n) for n in S1))))
        ch = "(%s ^ (%s & (%s ^ %s)))" % (gg, e, f, gg)
        if kw is None:
            st.append("%s = %s" % (t, W.add(h, s, ch, W.c(K[i]), x)))
        else:
            st.append("%s = %s" % (t, W.add(h, s, ch, kw(i))))
        st.append("%s = %s" % (d, W.add(d, t)))
        st.append("%s = %s" % (s, W.w(" ^ ".join(W.ror(a, n) for n in S0))))
        st.append("%s = %s" % (h, W.add(t, s, "((%s & %s) | (%s & (%s | %s)))" % (a, b, c, a, b))))
        v = [h, a, b, c, d, e, f, gg]
    return st, v


SHA256_SIG = ((2, 13, 22), (6, 11, 25), (7, 18, 3), (17, 19, 10))
SHA512_SIG = ((28, 34, 39), (14, 18, 41), (1, 8, 7), (19, 61, 6))


class MD:
    """A Merkle-Damgard family: block size, word size, state words, byte order, rounds."""

    def __init__(self, name, words, nstate, rounds, doc):
        self.name, self.W, self.nstate, self.rounds, self.doc = name, words, nstate, rounds, doc
        self.block, self.len_bytes, self.little = MERKLE_DAMGARD[name]
        self.wb = words.bits // 8           # bytes per word
        self.nwords = self.block // self.wb      # message words per block (16)


MD5 = MD("md5", W32, 4, md5_rounds, "MD5 (RFC 1321)")
SHA1 = MD("sha1", W32, 5, sha1_rounds, "SHA-1 (FIPS 180-4)")
SHA1.K = [SHA1_K[i // 20] for i in range(80)]
SHA256 = MD("sha256", W32, 8,
            lambda g, kw=None: sha2_rounds(g, W32, K256, SHA256_SIG, kw),
            "SHA-224/SHA-256 (FIPS 180-4)")
SHA256.K, SHA256.sig = K256, SHA256_SIG
SHA512 = MD("sha512", W64, 8,
            lambda g, kw=None: sha2_rounds(g, W64, K512, SHA512_SIG, kw),
            "SHA-384/SHA-512/SHA-512/t (FIPS 180-4)")
SHA512.K, SHA512.sig = K512, SHA512_SIG


def length_words(alg, n):
    """The last two words of an ``n``-byte message's padding, in block order: its bit count
    (< 2**64 bits)."""
    dt = alg.W.np
    if alg.little:
        return ["%s(%s << 3)" % (dt, n), "%s(%s >> 29)" % (dt, n)]
    if alg.W.bits == 32:
        return ["%s(%s >> 29)" % (dt, n), "%s(%s << 3)" % (dt, n)]
    return ["%s(%s >> 61)" % (dt, n), "%s(%s) << %s(3)" % (dt, n, dt)]


def mark_first(alg):
    """The first word of a pad-only block that starts with the 0x80 byte."""
    return alg.W.c(0x80 if alg.little else 0x80 << (alg.W.bits - 8))


def pad_schedule(alg):
    """Source of ``_pad_schedule(w, off, n)``: K + W of every round of the pad-only block that
    ends every n-byte message when n % block is 0 or leaves no room for the length (the same
    block for every lane hashing an n-byte message, so the lanes share one schedule)."""
    W, bs, nw = alg.W, alg.block, alg.nwords
    R = len(alg.K)
    L = ["@inline_kernel", "def _pad_schedule(w, off, n):",
         '    """w[off:off + %d] = K + W of the pad-only block of an n-byte message."""' % R,
         "    for i in range(%d):" % nw,
         "        w[off + i] = 0",
         "    if n %% %d == 0:  # the block starts with the 0x80 byte" % bs,
         "        w[off] = %s" % mark_first(alg)]
    L += ["    w[off + %d] = %s" % (nw - 2 + k, e) for k, e in enumerate(length_words(alg, "n"))]
    L += ["    for i in range(16, %d):" % R]
    if alg is SHA1:
        L += ["        y = w[off + i - 3] ^ w[off + i - 8] ^ w[off + i - 14] ^ w[off + i - 16]",
              "        w[off + i] = %s" % W.w(W.rol("y", 1)[1:-1])]
    else:
        (_, _, s0, s1) = alg.sig
        L += ["        p = w[off + i - 15]",
              "        q = w[off + i - 2]"]
        for name, var, (r1, r2, sh) in (("s", "p", s0), ("t", "q", s1)):
            L += wrap("        %s = %s" % (name, W.w("%s ^ %s ^ %s >> %d" % (
                W.ror(var, r1), W.ror(var, r2), var, sh))))
        L += ["        w[off + i] = %s" % W.add("w[off + i - 16]", "s", "w[off + i - 7]", "t")]
    L += ["    for i in range(%d):" % R,
          "        w[off + i] = %s" % W.add("w[off + i]", "_K[i]")]
    return L


def md_kernel(alg, prefix, lw, groups, wide, uniform=False, phase=False):
    """Source lines of ``<prefix>hash_rows`` for ``alg`` with ``groups`` x ``lw`` lanes, after
    those of the block function(s) it calls (``uniform``: the shared pad-block schedule;
    ``phase``: whole groups of rows of one length hashed in phase)."""
    W, ns, nw, bs, wb = alg.W, alg.nstate, alg.nwords, alg.block, alg.wb
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
        if transposed(alg, lw, wide):
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
    if wide:
        add(1, "_wide_vectors()")
    add(1, "# state words 0..%d, then message words 0..%d: word i of lane l at buf[i * %d + l]"
        % (ns - 1, nw - 1, nl))
    kwo = (ns + nw) * nl            # uniform: K + W of a shared pad-only block from here
    # 512-bit variants store 32-bit words in pairs: words 2k and 2k + 1 of lane l side by side
    # (in the order of one 64-bit load in the family's byte order), one 64-bit store per pair,
    # the vectoriser deinterleaving them (at 1 KiB: MD5 +16%, SHA-1 +11%, SHA-256 +7%; with
    # 256-bit vectors from -7% to +5%, so not there).
    pair = wb == 4 and wide

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
    deferred = phase and transposed(alg, lw, wide)
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
        KW, badd = block_function(prefix + "_block_kw", wide, [
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
    B, badd = block_function(prefix + "_block", wide, [
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


# lanes per vector group LW: (groups G, wide). ``wide`` kernels ask LLVM for 512-bit vectors
# (``_wide_vectors``): they are the AVX-512 variants; the others are the AVX2 ones.
FAMILIES = {
    "md5": (MD5, {16: (2, True), 8: (2, False)}),
    "sha1": (SHA1, {16: (1, True), 8: (1, False)}),
    "sha256": (SHA256, {16: (1, True), 8: (1, False)}),
    "sha512": (SHA512, {8: (1, True), 4: (1, False)}),
}

# variants with the shared pad-block schedule. Measured on Zen 4 (one process, both orders):
# SHA-1 64-byte rows +15-22% (lanes8 and lanes16), 1 KiB even; not SHA-512 (its 64-byte rows
# never reach a pad-only block, and it bought nothing measurable at 1 KiB), nor MD5 (no
# schedule to share: 64-byte rows even, 1 KiB 7-10% slower with the second block function)
UNIFORM = {"sha256": (16,), "sha1": (16, 8)}


# variants that hash rows of one length in phase (``phase_top``: NL rows of one length start
# together, load whole blocks with no test per lane and write the words all lanes share once).
# Measured on Zen 3 (AVX2 lanes8), the old and new kernel in one process, medians of paired
# runs: MD5 64-byte rows -12 to -14%, 120 B -6%, 1 KiB -9%; SHA-1 1 KiB -6%, 64 B and 120 B
# even (its pad-only block is already shared). Not SHA-256 (-2.5% at 64 B) nor SHA-512 (even):
# each kernel with it takes 1.5-3.5 s longer to compile.
IN_PHASE = {"md5": (16, 8), "sha1": (16, 8)}


def transposed(alg, lw, wide):
    """Whether rows in phase load whole blocks a vector of words per lane, transposed in
    vector registers (``_lanes.load_transposed``): the 256-bit variants (8 lanes of 32-bit
    words, 4 of 64-bit)."""
    return not wide and lw * alg.W.bits == 256


def render_md(family):
    alg, variants = FAMILIES[family]
    files = {}
    for lw, (g, wide) in variants.items():
        order = "le" if alg.little else "be"
        loaders = {"_word": "%s%d" % (order, alg.W.bits)}
        if alg.wb == 4 and wide:
            loaders["_dword"] = "%s64" % order
        if lw in IN_PHASE.get(family, ()) and transposed(alg, lw, wide):
            loaders["_load_transposed"] = "load_transposed"
        L = preamble(alg.doc, lw, g, wide, "uint%d" % alg.W.bits, loaders)
        uniform = lw in UNIFORM.get(family, ())
        phase = lw in IN_PHASE.get(family, ())
        if uniform:
            L.extend(wrap("_K = np.array([%s], %s)" % (", ".join("0x%x" % k for k in alg.K),
                                                         alg.W.np)))
            L.extend(["", ""])
            L.extend(pad_schedule(alg))
            L.extend(["", ""])
        L.extend(md_kernel(alg, "", lw, g, wide, uniform, phase))
        L.extend(record(family, wide))
        files["jitdigest/kernels/%s/lanes%d.py" % (family, lw)] = finish(L)
    return files
