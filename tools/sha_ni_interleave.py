"""The statements of the interleaved SHA-NI batch kernels (tools/gen_sha_ni_batch.py writes
the files around them): the per-message round sequence of tools/gen_sha_ni.py with every vector
variable renamed per message slot and each statement emitted once per slot (``compress_xn``),
the rows' start, groups and lone rows of ``hash_rows``, and the schedules of blocks of padding
only (``pad_helpers``, ``pad_rounds_lines``) that rows of one length share."""
import re

import gen_sha_ni as X86  # the per-message generator (tools/ is on sys.path: imported by it)


WORDS = {"sha1": 5, "sha256": 8}
TITLES = {"sha1": "SHA-1", "sha256": "SHA-224/SHA-256"}


BODIES = {"sha1": X86.sha1_body, "sha256": X86.sha256_body}

# the per-message kernel's variables that become one per slot
_VARS = re.compile(r"\b(state[01]?|src|pos|p|tmp|msg[0-3]?|abef_save|cdgh_save|abcd|abcd_save|"
                   r"e[01]|e0_save)\b")


def _slot(line, k):
    line = line.split("#")[0].rstrip()           # alignment comments do not survive renaming
    return _VARS.sub(lambda m: "%s_%d" % (m.group(1), k), line)


def _sections(family):
    """The per-message compress function cut into (prologue, block body, epilogue) lines."""
    lines = BODIES[family]()
    head = lines.index("    clear_upper_vectors()  # no AVX-SSE transitions in the SHA rounds")
    loop = lines.index("    for blk in range(nblocks):")
    body_start = loop + 2                        # after ``p = pos + 64 * blk``
    end = max(i for i, s in enumerate(lines) if s.startswith("        "))
    return lines[head + 1:loop], lines[body_start:end + 1], lines[end + 1:]


def _interleave(lines, ways):
    out = []
    for line in lines:
        if not line.strip() or line.strip().startswith("#"):
            out.append(line)
        else:
            out.extend(_slot(line, k) for k in range(ways))
    return out


def compress_xn(family, ways):
    prologue, body, epilogue = _sections(family)
    args = ", ".join("state_%d, src_%d, pos_%d, pad_%d" % (k, k, k, k) for k in range(ways))
    L = ["@block_function"] + _call("def compress_x%d(" % ways, args + ", nblocks, ntails):",
                                    "") + [
         '    """Compress into each of %d states ``nblocks`` 64-byte blocks of ``src_k`` from byte'
         % ways,
         '    ``pos_k``, then ``ntails`` of ``pad_k`` from byte 0 (slot ``k``), the rounds of the',
         '    slots interleaved; the states stay in registers from the first block to the last."""',
         "    clear_upper_vectors()  # no AVX-SSE transitions in the SHA rounds"]
    L += _interleave(prologue, ways)
    L.append("    for blk in range(nblocks + ntails):")
    L.append("        whole = blk < nblocks")
    for k in range(ways):
        L.append("        in_%d = src_%d if whole else pad_%d" % (k, k, k))
        L.append("        p_%d = pos_%d + 64 * blk if whole else 64 * (blk - nblocks)" % (k, k))
    L += [re.sub(r"\bsrc_(\d)\b", r"in_\1", line) for line in _interleave(body, ways)]
    L += _interleave(epilogue, ways)
    return L


def _iv_copy(words):
    """start_row's copy of the IV into a state: whole vectors, as compress loads them (a vector
    load of words stored one by one waits for the stores to retire instead of taking their
    values), then the words left over."""
    lines = ["    u32x4_store(state, %d, u32x4_load(iv, %d))" % (i, i)
             for i in range(0, words - words % 4, 4)]
    lines += ["    state[%d] = iv[%d]" % (i, i) for i in range(words - words % 4, words)]
    return "\n".join(lines)


def _rows_head(family, ks, title):
    """``hash_rows``' first lines: its header, docstring (``title``: its first words) and
    the slots' states and padding buffers."""
    a = ["@kernel", "def hash_rows(values, starts, lengths, rows, iv, out):",
         '    """%s: the digest of each message' % title,
         "    ``values[starts[r]:starts[r] + lengths[r]]``, ``r`` in ``rows``, into "
         '``out[r]``."""']
    a += ["    state_%d = new_words(%d, np.uint32)" % (k, WORDS[family]) for k in ks]
    a += ["    pad_%d = new_words(128, np.uint8)" % k for k in ks]
    return a


def _rows_setup(W, ks):
    """The row count, the rows in whole groups of ``len(ks)``, the slots' staged lengths, the
    prefetch switch and the bytes hashed before each message."""
    return ["    nrows = row_count(rows)",
            "    whole = nrows - nrows %% %d" % len(ks),
            "    # the length whose padding block each pad holds, if any",
            "    %s = -1" % " = ".join("staged_%d" % k for k in ks),
            "    pf = values.shape[0] > PF_MIN  # prefetch: the data may not fit in the caches",
            "    # bytes hashed before each message (HMAC's key block; a word after the IV's),",
            "    # counted in the length its padding ends with, as the lane kernels count them",
            "    pre = np.int64(iv[%d]) if iv.shape[0] > %d else 0" % (W, W)]


def _one_row():
    """Row ``r`` alone, in slot 0."""
    return (_call("s, nf, nt, staged_0 = start_row(",
                  "values, starts, lengths, r, iv, pre, state_0, pad_0, staged_0)", " " * 8)
            + ["        if nf > 0:",
               "            compress(state_0, values, s, nf)",
               "        compress(state_0, pad_0, 0, nt)",
               "        put_digest(state_0, out, r)"])


def _group(ks, indent):
    """The lines that hash the rows ``r_k`` of slots ``ks``, started (``s_k``, ``nf_k``,
    ``nt_k``), into their states, interleaved."""
    i = " " * indent
    ways = len(ks)
    a = []
    a.append(i + "both = min(%s)" % ", ".join("nf_%d" % k for k in ks))
    a.append(i + "tails = min(%s)" % ", ".join("nt_%d" % k for k in ks))
    same = " and ".join(["nf_%d == both" % k for k in ks] + ["nt_%d == tails" % k for k in ks])
    a.append(i + "# rows of one shape (the driver sorts rows by length): one call")
    a += _call("if (", same + "):", i)
    slots = ", ".join("state_%d, values, s_%d, pad_%d" % (k, k, k) for k in ks)
    a += _call("compress_x%d(" % ways, slots + ", both, tails)", i + " " * 4)
    a.append(i + "else:  # whole blocks side by side, a longer row's others alone, then tails")
    a += _call("compress_x%d(" % ways, slots + ", both, 0)", i + " " * 4)
    for k in ks:
        a.append(i + "    if nf_%d > both:" % k)
        a.append(i + "        compress(state_%d, values, s_%d + 64 * both, nf_%d - both)"
                 % (k, k, k))
    a += _call("compress_x%d(" % ways, slots + ", 0, tails)", i + " " * 4)
    for k in ks:
        a.append(i + "    if nt_%d > tails:" % k)
        a.append(i + "        compress(state_%d, pad_%d, 64, 1)" % (k, k))
    return a


def _start(k, indent):
    """Lines starting row ``r_k`` in slot ``k`` (its IV loaded, its tail staged)."""
    return _call("s_%d, nf_%d, nt_%d, staged_%d = start_row(" % (k, k, k, k),
                 "values, starts, lengths, r_%d, iv, pre, state_%d, pad_%d, staged_%d)"
                 % (k, k, k, k), " " * indent)


def pair_lines():
    """``pair_rows``: ``_group`` for two slots as a piece (typed and lowered once, inlined by
    LLVM into each of ``hash_rows``' three calls)."""
    args = "values, state_0, s_0, nf_0, nt_0, pad_0, state_1, s_1, nf_1, nt_1, pad_1"
    a = ["", "", "@piece(1, 5, 6, 10)"]
    a += _call("def pair_rows(", args + "):", "")
    a += ['    """Two started rows (``s_k``, ``nf_k``, ``nt_k``) into their states,'
          ' interleaved."""', "    inline_in_callers()"]
    a += _group((0, 1), 4)
    return a


def _pair(ks, indent):
    """A call of ``pair_rows`` for slots ``ks``."""
    return _call("pair_rows(", "values, " + ", ".join(
        "state_%d, s_%d, nf_%d, nt_%d, pad_%d" % (k, k, k, k, k) for k in ks) + ")", " " * indent)


def _padding_only_head(words):
    """The test that the four started rows ``r_0``..``r_3`` have one length whose last block is
    padding only, and that branch's first lines: the block's schedule into ``words`` when
    the length is new, ``before`` (the tail blocks before it)."""
    return ["        n = length_of(lengths, r_0)",
            "        rest = n % 64",
            "        if (length_of(lengths, r_1) == n and length_of(lengths, r_2) == n",
            "                and length_of(lengths, r_3) == n and (rest == 0 or rest >= 56)):",
            "            if n + pre != %s_for:  # a new length (rows come sorted by length)" % words,
            "                pad_schedule(n + pre, %s)" % words,
            "                %s_for = n + pre" % words,
            "            before = nt_0 - 1  # tail blocks before the last"]


def _schedule(j, w, wk, offset, indent, load=None):
    """Lines of SHA-256 message-schedule group ``j`` (words 4j..4j+3, ``w(j)``: the name of its
    vector, four live at a time) as ``x86.compress`` makes it, stored with its round constants
    at ``wk[offset + 4 j]``; ``load(j)``: the expression of the first four groups' message
    words (None: ``w(0)``..``w(3)`` are set already)."""
    kv = ", ".join("0x%08X" % x for x in X86.K256[4 * j:4 * j + 4])
    lines = []
    if j >= 4:
        lines.append("%s = sha256msg2(u32x4_add(sha256msg1(%s, %s), alignr(%s, %s, 4)), %s)"
                     % (w(j), w(j), w(j + 1), w(j + 3), w(j + 2), w(j + 3)))
    elif load is not None:
        lines.append("%s = %s" % (w(j), load(j)))
    lines.append("kc = u32x4_set(%s)" % kv)
    lines.append("u32x4_store(%s, %d, u32x4_add(%s, kc))" % (wk, offset + 4 * j, w(j)))
    return [indent + line for line in lines]


def _plus(k):
    return " + %d" % k if k else ""


def _load_be(k, j):
    """Slot ``k``'s message words 4j..4j+3, read from its row (``p_k``: its first byte)."""
    return "u32x4_load_be(values, p_%d%s)" % (k, _plus(16 * j))


def _w(j):
    return "w%d" % (j % 4)


def pad_helpers(family):
    """``pad_schedule`` and ``pad_rounds_x4`` of a ``PAD4`` family (SHA-256)."""
    prologue, _, epilogue = _sections(family)
    a = ["", "", "@inline_kernel", "def pad_schedule(total, wk):",
         '    """W + K, into ``wk`` (64 words), of the last block of a ``total``-byte message'
         " (the",
         "    bytes hashed before it counted) when that block holds no message byte:"
         " ``total % 64`` is 0",
         "    (the 0x80 byte, zeros, the bit length) or 56 and more (zeros, the bit length)."
         " The",
         "    schedule of SHA-NI's rounds (``x86.compress``), made once for every row of that"
         ' length."""',
         "    bits = total << 3",
         "    w0 = u32x4_set(0x80000000 if total % 64 == 0 else 0, 0, 0, 0)",
         "    w1 = u32x4_set(0, 0, 0, 0)",
         "    w2 = u32x4_set(0, 0, 0, 0)",
         "    w3 = u32x4_set(0, 0, (bits >> 32) & 0xFFFFFFFF, bits & 0xFFFFFFFF)"]
    for j in range(16):
        a += _schedule(j, _w, "wk", 0, "    ")
    a += ["", "", "@block_function",
          "def pad_rounds_x4(state_0, state_1, state_2, state_3, wk):",
          '    """Compress into each of 4 states one block whose W + K words are the 64 of ``wk``'
          ' (a',
          "    block of padding only, the same for all four): their rounds interleaved, with no",
          '    message schedule."""',
          "    clear_upper_vectors()  # no AVX-SSE transitions in the SHA rounds"]
    a += _interleave(prologue, 4)
    for k in range(4):
        a.append("    abef_save_%d = state0_%d" % (k, k))
        a.append("    cdgh_save_%d = state1_%d" % (k, k))
    for g in range(16):
        a.append("    msg = u32x4_load(wk, %d)  # rounds %d-%d" % (4 * g, 4 * g, 4 * g + 3))
        for k in range(4):
            a.append("    state1_%d = sha256rnds2(state1_%d, state0_%d, msg)" % (k, k, k))
        a.append("    msg = pshufd(msg, 0x0E)")
        for k in range(4):
            a.append("    state0_%d = sha256rnds2(state0_%d, state1_%d, msg)" % (k, k, k))
    for k in range(4):
        a.append("    state0_%d = u32x4_add(state0_%d, abef_save_%d)" % (k, k, k))
        a.append("    state1_%d = u32x4_add(state1_%d, cdgh_save_%d)" % (k, k, k))
    a += _interleave(epilogue, 4)
    return a


def pad_rounds_lines(family):
    """``pad_schedule`` and ``pad_rounds_x4`` of a ``PAD_ROUNDS`` family (SHA-1)."""
    assert family == "sha1"
    a = ["", "", "@inline_kernel", "def pad_schedule(total, w):",
         '    """The message words, into ``w`` (80 words: each group of four as the rounds take'
         " it,",
         "    last word first), of the last block of a ``total``-byte message (the bytes hashed",
         "    before it counted) when that block holds no message byte: ``total % 64`` is 0 (the",
         "    0x80 byte, zeros, the bit length) or 56 and more (zeros, the bit length). Made once",
         '    for every row of that length."""',
         "    bits = total << 3",
         "    m0 = u32x4_set(0, 0, 0, 0x80000000 if total % 64 == 0 else 0)",
         "    m1 = u32x4_set(0, 0, 0, 0)",
         "    m2 = u32x4_set(0, 0, 0, 0)",
         "    m3 = u32x4_set(bits & 0xFFFFFFFF, (bits >> 32) & 0xFFFFFFFF, 0, 0)"]
    for j in range(20):
        m = "m%d" % (j % 4)
        if j >= 4:
            a.append("    %s = sha1msg2(u32x4_xor(sha1msg1(%s, m%d), m%d), m%d)"
                     % (m, m, (j + 1) % 4, (j + 2) % 4, (j + 3) % 4))
        a.append("    u32x4_store(w, %d, %s)" % (4 * j, m))
    a += ["", "", "@block_function",
          "def pad_rounds_x4(state_0, state_1, state_2, state_3, w):",
          '    """Compress into each of 4 states one block whose message words are the 80 of'
          " ``w`` (a",
          "    block of padding only, the same for all four): their rounds interleaved, with no",
          '    message schedule."""',
          "    clear_upper_vectors()  # no AVX-SSE transitions in the SHA rounds"]
    for k in range(4):
        a.append("    abcd_%d = pshufd(u32x4_load(state_%d, 0), 0x1B)" % (k, k))
        a.append("    e0_%d = u32x4_set(0, 0, 0, state_%d[4])" % (k, k))
    for k in range(4):
        a.append("    abcd_save_%d = abcd_%d" % (k, k))
        a.append("    e0_save_%d = e0_%d" % (k, k))
    for j in range(20):
        cur, nxt = ("e1", "e0") if j % 2 else ("e0", "e1")
        a.append("    msg = u32x4_load(w, %d)  # rounds %d-%d" % (4 * j, 4 * j, 4 * j + 3))
        for k in range(4):
            a.append("    %s_%d = %s" % (cur, k, "u32x4_add(e0_%d, msg)" % k if j == 0
                                         else "sha1nexte(%s_%d, msg)" % (cur, k)))
        for k in range(4):
            a.append("    %s_%d = abcd_%d" % (nxt, k, k))
        for k in range(4):
            a.append("    abcd_%d = sha1rnds4(abcd_%d, %s_%d, %d)" % (k, k, cur, k, j // 5))
    for k in range(4):
        a.append("    e0_%d = sha1nexte(e0_%d, e0_save_%d)" % (k, k, k))
        a.append("    abcd_%d = u32x4_add(abcd_%d, abcd_save_%d)" % (k, k, k))
    for k in range(4):
        a.append("    u32x4_store(state_%d, 0, pshufd(abcd_%d, 0x1B))" % (k, k))
        a.append("    state_%d[4] = u32x4_lane(e0_%d, 3)" % (k, k))
    return a


def _call(head, args, indent):
    """``head + args`` as lines of at most 99 characters, continued under the open bracket."""
    import textwrap
    return textwrap.wrap(head + args, 99, initial_indent=indent,
                         subsequent_indent=indent + " " * len(head), break_on_hyphens=False)
