"""MD5, SHA-1 and SHA-2 rounds for the lanes-kernel generator (tools/gen_lanes.py; the kernel
around them is lanes_md.py's): their round statements, the Merkle-Damgard family table
(``MD``: ``MD5``, ``SHA1``, ``SHA256``, ``SHA512``), the padding's words and the pad-block
schedule SHA-256's and SHA-1's lanes share (``pad_schedule``)."""
from lanes_common import W32, W64, wrap
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
