"""Write jitdigest/kernels/sha256/ni_x2.py and sha1/ni_x4.py: batch kernels that run the SHA-NI
rounds of two (four) messages interleaved, instruction by instruction, in one loop.

One SHA-NI stream is bound by the latency of ``sha256rnds2`` / ``sha1rnds4``, not by their
throughput: the next round group needs the state the previous one produced. Independent
messages have independent states, so their round instructions can issue back to back and the
core overlaps them (Linux's ``sha256_finup_2x`` does this for two messages). The per-message
round sequence is the one tools/gen_x86_sha.py writes for ``x86.py``; this generator takes its
lines, renames every vector variable per message slot and emits each statement once per slot.

    python tools/gen_sha_ni_batch.py          # rewrite the files
    python tools/gen_sha_ni_batch.py --check  # exit 1 if a file is stale
"""
import importlib.util
import pathlib
import re
import sys

ROOT = pathlib.Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tools"))
import emit  # noqa: E402
# Messages interleaved per family: what won, one core of an AMD EPYC (Zen, 16 XMM registers for
# the legacy-SSE SHA instructions). SHA-256 x4 spills ~30 vectors a block and lost to x2 at
# 256 B-16 KiB (16 KiB: x2 1.83x a hashlib loop, x4 1.56x, per-message 1.11x); SHA-1 keeps
# fewer vectors a message and x4 won at 256 B-16 KiB (16 KiB: x4 2.40x, x2 1.70x, 1.04x).
# The generator writes any count; each written one is a registered backend.
WAYS = {"sha1": (4,), "sha256": (2,)}
# Families whose rows of one length ending in a block of padding only (a length that is a
# multiple of 64, or 56-63 past one: 2-D batches of 64-byte rows, Merkle-tree nodes) run that
# block four rows at a time (``pad_rounds_x4``): its message schedule is the same for all of
# them, made once per length, so four rows' rounds hold only their states and fit the
# registers. SHA-256 rounds with W + K from memory, four streams: 11.8 ns a block and stream
# against 23-29 ns for two interleaved with their schedule (one core, AMD EPYC, Zen 3).
PAD4 = ("sha256",)
# Four-way families whose groups of four rows of one length ending in a block of padding only
# run that block with its message words made once per length (``pad_rounds_x4``): with no
# schedule the four rows' rounds hold only their states and fit the registers. SHA-1, four
# streams: 15.3 ns a block and stream, 36-38 in a ``compress_x4`` call of one block with its
# schedule; ``hash_many`` of 64-byte rows (one data block and that one), one core, medians of
# alternated runs: 43.1 ns a row against 45.8 (AMD EPYC, Zen 3).
PAD_ROUNDS = ("sha1",)
WORDS = {"sha1": 5, "sha256": 8}
TITLES = {"sha1": "SHA-1", "sha256": "SHA-224/SHA-256"}


def _x86_generator():
    spec = importlib.util.spec_from_file_location("gen_x86_sha", ROOT / "tools" / "gen_x86_sha.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


X86 = _x86_generator()
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


HEADER = '''\
# generated by tools/gen_sha_ni_batch.py -- do not edit
"""{title} batch kernel on SHA-NI: {ways} messages hashed at once, their rounds interleaved.

Entry ``hash_rows(values, starts, lengths, rows, iv, out)``, as every
batch backend: the digest of ``values[starts[r]:starts[r] + lengths[r]]`` into ``out[r]`` for
each ``r`` in ``rows``. Rows are taken {ways} at a time; their whole blocks run through
``compress_x{ways}`` while all of them have one (the batch driver sorts rows by length, so that is
nearly all of them), a longer row's extra blocks through the per-message ``compress``, then the
padded tails (built here, one or two blocks each) interleaved again. A last group of fewer than
{ways} rows goes one by one.{pad4}

SAFETY: as ``x86.py`` -- nothing here may be called unless ``jitdigest.engine.cpu.usable(FEATURE,
SWITCH)`` returned True (LLVM aborts the process compiling ``llvm.x86.sha*`` for a target
without ``sha``). Importing this module compiles nothing.
"""
import numpy as np

{jit}
from .._lanes import PF_MIN, prefetch
from .._rows import length_of, row_at, row_count, start_of
from .._contract import Backend, TIERS
from .x86 import compress
{simd}

NAME = "sha_ni_x{ways}"      # the backend's name in info() and jitdigest.backend()
FEATURE = "sha"          # the CPU feature the host and Numba's target must both have
SWITCH = "sha_ni"        # JITDIGEST_DISABLE=sha_ni turns it off
LANES = {ways}  # messages in flight together
IN_FLIGHT = {in_flight}  # messages hashed at once per call
BY_DEFAULT = False  # served where the calibration table (tune, warmup) picks it, or forced
'''

PAD4_NOTE = """

Rows of one length whose last block is padding only (a length that is a multiple of 64, or
56-63 past one: 2-D batches of 64-byte rows, Merkle-tree nodes) go four at a time: their other
blocks two by two as above, the last one through ``pad_rounds_x4``, the four rows' rounds
interleaved with W + K words made once per length (``pad_schedule``). So the rows are taken
four at a time, two pairs where their lengths differ, and a last group of fewer than four
rows goes two by two, then one by one. Runs of 64-byte rows (one data block each) go through
``rows64_x4``, which also runs their data blocks four at a time, software-pipelined."""

PAD_ROUNDS_NOTE = """

Four rows of one length whose last block is padding only (a length that is a multiple of 64,
or 56-63 past one: 2-D batches of 64-byte rows) run their other blocks as above and that one
through ``pad_rounds_x4``: the four rows' rounds interleaved, with the block's message words
made once per length (``pad_schedule``)."""

SIMD = {"sha1": "clear_upper_vectors, pshufd, sha1msg1, sha1msg2, sha1nexte, sha1rnds4, "
                "u32x4_add, u32x4_lane, u32x4_load, u32x4_load_be, u32x4_set, u32x4_store, "
                "u32x4_xor",
        "sha256": "alignr, blend, clear_upper_vectors, pshufd, sha256msg1, sha256msg2, "
                  "sha256rnds2, u32x4_add, u32x4_load, u32x4_load_be, u32x4_set, u32x4_store"}

# what the helpers below use, for every family
HELPER_SIMD = ("KEEP_BYTES", "PAD_MARK", "u32x4_and", "u32x4_load", "u32x4_load_bytes", "u32x4_or",
               "u32x4_set", "u32x4_store", "u32x4_store_be", "u32x4_store_bytes")

HELPERS = '''

@inline_kernel
def bswap32(x):
    """The low 32 bits of ``x`` with their bytes reversed."""
    x &= 0xFFFFFFFF
    return ((x & 0xFF) << 24) | ((x & 0xFF00) << 8) | ((x >> 8) & 0xFF00) | (x >> 24)


@inline_kernel
def stage_tail(values, q, rest, n, pad):
    """The last ``rest`` (< 64) bytes of an ``n``-byte message, from ``values[q]``, padded into
    ``pad`` (128 bytes): the 0x80 byte, zeros, the bit length big-endian. Returns its blocks.
    Written 16 bytes at a time, as compress reads them: a vector load of bytes stored one by
    one waits for those stores to retire."""
    chunks = 4 if rest < 56 else 8
    bits = n << 3
    length = u32x4_set(0, 0, bswap32(bits >> 32), bswap32(bits))  # the last 8 bytes
    full = rest // 16  # 16 bytes of data each
    m = rest - 16 * full  # data bytes in the chunk that takes the 0x80 byte
    for j in range(chunks):
        if j < full:
            v = u32x4_load_bytes(values, q + 16 * j)
        elif j == full:
            if q + 16 * j + 16 <= values.shape[0]:  # 16 bytes to read: the rest masked off
                v = u32x4_load_bytes(values, q + 16 * j)
            else:  # the end of the buffer: byte by byte
                for k in range(m):
                    pad[16 * j + k] = values[q + 16 * j + k]
                v = u32x4_load_bytes(pad, 16 * j)
            v = u32x4_or(u32x4_and(v, u32x4_load_bytes(KEEP_BYTES, 16 - m)),
                         u32x4_load_bytes(PAD_MARK, 16 - m))
        else:
            v = u32x4_set(0, 0, 0, 0)
        if j == chunks - 1:
            v = u32x4_or(v, length)
        u32x4_store_bytes(pad, 16 * j, v)
    return chunks // 4


@piece(6, 7)
def start_row(values, starts, lengths, r, iv, pre, state, pad, staged):
    """Load ``iv`` into ``state`` and stage row ``r``'s tail in ``pad`` (its length counted
    from ``pre`` bytes hashed before it), unless ``pad`` holds it already (``staged``: the
    length of the last message staged there whose tail was padding only, -1 for none; ``pre``
    is one per call); returns (first byte, whole blocks, tail blocks, the new ``staged``).
    A piece: typed and lowered once, however many calls ``hash_rows`` makes, and inlined by
    LLVM."""
    inline_in_callers()
{iv_copy}
    s = start_of(starts, r)
    n = length_of(lengths, r)
    nf = n // 64
    rest = n - 64 * nf
    if rest == 0 and n == staged:  # the same padding block: equal lengths, a multiple of 64
        return s, nf, 1, n
    return s, nf, stage_tail(values, s + 64 * nf, rest, n + pre, pad), n if rest == 0 else -1


@piece()
def put_digest(state, out, r):
    """The first ``out.shape[1]`` bytes of ``state`` (big-endian words) into ``out[r]``."""
    inline_in_callers()
    nout = min(out.shape[1], {bytes})
    row = out[r]
    whole = nout - nout % 16
    for i in range(0, whole, 16):  # whole vectors: byte-swapped, one store each
        u32x4_store_be(row, i, u32x4_load(state, i // 4))
    store_words(state[whole // 4:], False, row[whole:nout])  # the rest
'''


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


def hash_rows_pad4(family, ways):
    """hash_rows of a two-way family that runs a block of padding only four rows at a time
    (``PAD4``): rows go four at a time; four of one length whose last block is padding only
    hash their other blocks two by two and that one in ``pad_rounds_x4``, any others two by
    two as ``hash_rows`` does."""
    assert ways == 2
    W = WORDS[family]
    ks = range(4)
    a = _rows_head(family, ks, "%s, 2 messages interleaved, the last block of 4 rows of one"
                   " length at once\n    where it holds padding only" % TITLES[family])
    a.append("    padwk = new_words(64, np.uint32)  # W + K of a block of padding only ...")
    a.append("    padwk_for = -1  # ... that ends a message of this many bytes (-1: none yet)")
    a.append("    wk_a = new_words(256, np.uint32)  # rows64_x4's W + K of four data blocks, ...")
    a.append("    wk_b = new_words(256, np.uint32)  # ... and of the next four")
    a += _rows_setup(W, ks)
    a.append("    g = 0")
    a.append("    while g < whole:")
    a.append("        e = g  # a run of groups of 64-byte rows: rows64_x4")
    a.append("        while e < whole and (%s):" % "\n                             and ".join(
        "length_of(lengths, row_at(rows, e + %d)) == 64" % k for k in ks).replace("e + 0", "e"))
    a.append("            e += 4")
    a.append("        if e > g:")
    a.append("            if 64 + pre != padwk_for:")
    a.append("                pad_schedule(64 + pre, padwk)")
    a.append("                padwk_for = 64 + pre")
    a += _call("rows64_x4(", "values, starts, rows, g, e, iv, padwk, wk_a, wk_b, %s, out)"
               % ", ".join("state_%d" % k for k in ks), " " * 12)
    a.append("            g = e")
    a.append("            continue")
    a.append("        if pf and g + 8 <= nrows:  # the first block of each row of the next group")
    a.append("            for k in range(4):")
    a.append("                prefetch(values, start_of(starts, row_at(rows, g + 4 + k)))")
    for k in ks:
        a.append("        r_%d = row_at(rows, g + %d)" % (k, k))
        a += _start(k, 8)
    a += _padding_only_head("padwk")
    a.append("            if nf_0 + before > 0:  # the blocks before the last, two by two")
    for pair in ((0, 1), (2, 3)):
        a += _call("compress_x2(", ", ".join("state_%d, values, s_%d, pad_%d" % (k, k, k)
                                             for k in pair) + ", nf_0, before)", " " * 16)
    a.append("            pad_rounds_x4(state_0, state_1, state_2, state_3, padwk)")
    a.append("        else:")
    a += _pair((0, 1), 12)
    a += _pair((2, 3), 12)
    for k in ks:
        a.append("        put_digest(state_%d, out, r_%d)" % (k, k))
    a.append("        g += 4")
    a.append("    for g in range(whole, nrows - 1, 2):  # the last rows, fewer than 4: two by two")
    for k in (0, 1):
        a.append("        r_%d = row_at(rows, g + %d)" % (k, k))
        a += _start(k, 8)
    a += _pair((0, 1), 8)
    for k in (0, 1):
        a.append("        put_digest(state_%d, out, r_%d)" % (k, k))
    a.append("    if nrows % 2:  # and one alone")
    a.append("        r = row_at(rows, nrows - 1)")
    a += _one_row()
    return a


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


def rows64_lines(family):
    """``rows64_x4``: runs of 64-byte rows (one data block and one of padding only each), four
    at a time and software-pipelined."""
    prologue, _, epilogue = _sections(family)
    ks = range(4)
    states = ", ".join("state_%d" % k for k in ks)
    a = ["", "", "@typed_kernel()"]
    a += _call("def rows64_x4(", "values, starts, rows, g0, g1, iv, padwk, wk_a, wk_b, %s, out):"
               % states, "")
    a += ['    """The rows ``rows[g0:g1]`` (``g1 - g0`` a multiple of 4), each 64 bytes long: one',
          "    data block and one of padding only (W + K in ``padwk``, the same for all), four",
          "    rows at a time and software-pipelined: a group's data blocks' rounds read their",
          "    W + K back from ``wk_cur``, then its padding blocks' rounds run with the message",
          "    schedule of the next group's data blocks made between them (into ``wk_nxt``): the",
          "    schedule's instructions fill the latency of the ``sha256rnds2`` chains, and each",
          "    row's rounds hold only its two state vectors (four rows fit the 16 XMM",
          "    registers). The states pass through ``state_k`` to ``put_digest``. 64-byte rows",
          "    (two 32-byte digests: a Merkle tree's nodes) took 48-52 ns a row through",
          "    ``compress_x2`` and ``pad_rounds_x4``, 39-40 here (``hash_many``, one core, AMD",
          "    EPYC, Zen 3).",
          '    """',
          "    clear_upper_vectors()  # no AVX-SSE transitions in the SHA rounds",
          "    wk_cur = wk_a",
          "    wk_nxt = wk_b"]
    # the IV, shuffled as compress's prologue shuffles a state, once
    a += [line.split("#")[0].rstrip().replace("state0", "iv0").replace("state1", "iv1")
          .replace("u32x4_load(state,", "u32x4_load(iv,") for line in prologue]
    w = lambda k: (lambda j: "w%d_%d" % (j % 4, k))            # noqa: E731
    for k in ks:
        a.append("    p_%d = start_of(starts, row_at(rows, g0%s))" % (k, _plus(k)))
    for j in range(16):                 # the first group's schedule
        for k in ks:
            a += _schedule(j, w(k), "wk_cur", 64 * k, "    ", lambda j, k=k: _load_be(k, j))
    a.append("    for g in range(g0, g1, 4):")
    a.append("        nx = g + 4 if g + 4 < g1 else g  # the next group (after the last: this"
             " one, unused)")
    for k in ks:
        a.append("        p_%d = start_of(starts, row_at(rows, nx%s))" % (k, _plus(k)))
    for k in ks:
        a.append("        state0_%d = iv0" % k)
        a.append("        state1_%d = iv1" % k)
    for j in range(16):                 # the data blocks
        for k in ks:
            a.append("        msg_%d = u32x4_load(wk_cur, %d)" % (k, 64 * k + 4 * j))
            a.append("        state1_%d = sha256rnds2(state1_%d, state0_%d, msg_%d)"
                     % (k, k, k, k))
        for k in ks:
            a.append("        msg_%d = pshufd(msg_%d, 0x0E)" % (k, k))
            a.append("        state0_%d = sha256rnds2(state0_%d, state1_%d, msg_%d)"
                     % (k, k, k, k))
    for k in ks:
        a.append("        state0_%d = u32x4_add(state0_%d, iv0)" % (k, k))
        a.append("        state1_%d = u32x4_add(state1_%d, iv1)" % (k, k))
        a.append("        abef_save_%d = state0_%d" % (k, k))
        a.append("        cdgh_save_%d = state1_%d" % (k, k))
    for j in range(16):                 # the padding blocks, the next group's schedule between
        a.append("        msg = u32x4_load(padwk, %d)" % (4 * j))
        for k in ks:
            a.append("        state1_%d = sha256rnds2(state1_%d, state0_%d, msg)" % (k, k, k))
        slot, first = divmod(4 * j, 16)
        for jj in range(first, first + 4):
            a += _schedule(jj, w(slot), "wk_nxt", 64 * slot, "        ",
                           lambda jj, slot=slot: _load_be(slot, jj))
        a.append("        msg = pshufd(msg, 0x0E)")
        for k in ks:
            a.append("        state0_%d = sha256rnds2(state0_%d, state1_%d, msg)" % (k, k, k))
    for k in ks:
        a.append("        state0_%d = u32x4_add(state0_%d, abef_save_%d)" % (k, k, k))
        a.append("        state1_%d = u32x4_add(state1_%d, cdgh_save_%d)" % (k, k, k))
    a += ["    " + line for line in _interleave(epilogue, 4) if line.strip()]
    for k in ks:
        a.append("        put_digest(state_%d, out, row_at(rows, g%s))" % (k, _plus(k)))
    a.append("        wk_cur, wk_nxt = wk_nxt, wk_cur")
    return a


def hash_rows(family, ways):
    W = WORDS[family]
    ks = range(ways)
    a = _rows_head(family, ks, "%s, %d messages interleaved" % (TITLES[family], ways))
    if family in PAD_ROUNDS:
        a.append("    padw = new_words(80, np.uint32)  # message words of a block of padding only"
                 " ...")
        a.append("    padw_for = -1  # ... that ends a message of this many bytes (-1: none yet)")
    a += _rows_setup(W, ks)
    a.append("    for g in range(0, whole, %d):" % ways)
    a.append("        if pf and g + %d <= nrows:  # the first block of each row of the next group"
             % (2 * ways))
    a.append("            for k in range(%d):" % ways)
    a.append("                prefetch(values, start_of(starts, row_at(rows, g + %d + k)))" % ways)
    for k in ks:
        a.append("        r_%d = row_at(rows, g + %d)" % (k, k))
        a += _call("s_%d, nf_%d, nt_%d, staged_%d = start_row(" % (k, k, k, k),
                   "values, starts, lengths, r_%d, iv, pre, state_%d, pad_%d, staged_%d)"
                   % (k, k, k, k), " " * 8)
    if family not in PAD_ROUNDS:
        a += _group(ks, 8)
    else:
        assert ways == 4
        a += _padding_only_head("padw")
        a.append("            if nf_0 + before > 0:")
        a += _call("compress_x4(", ", ".join("state_%d, values, s_%d, pad_%d" % (k, k, k)
                                             for k in ks) + ", nf_0, before)", " " * 16)
        a.append("            pad_rounds_x4(state_0, state_1, state_2, state_3, padw)")
        a.append("        else:")
        a += _group(ks, 12)
    for k in ks:
        a.append("        put_digest(state_%d, out, r_%d)" % (k, k))
    a.append("    for i in range(whole, nrows):  # the last rows, fewer than %d" % ways)
    a.append("        r = row_at(rows, i)")
    a += _one_row()
    return a


def _call(head, args, indent):
    """``head + args`` as lines of at most 99 characters, continued under the open bracket."""
    import textwrap
    return textwrap.wrap(head + args, 99, initial_indent=indent,
                         subsequent_indent=indent + " " * len(head), break_on_hyphens=False)


def _wrap(names, head="from .._simd import ("):
    import textwrap
    return textwrap.fill(names + ")", 99, initial_indent=head,
                         subsequent_indent=" " * len(head), break_on_hyphens=False)


def render():
    """{path relative to the repository root: source} for every file."""
    files = {}
    for family in ("sha1", "sha256"):
        for ways in WAYS[family]:
            text = "".join([
                HEADER.format(title=TITLES[family], ways=ways, simd=_wrap(", ".join(sorted(
                    set(SIMD[family].split(", ")) | set(HELPER_SIMD)))),
                    pad4=PAD4_NOTE if family in PAD4 else
                    PAD_ROUNDS_NOTE if family in PAD_ROUNDS else "",
                    jit=_wrap(", ".join(["block_function", "inline_in_callers",
                                         "inline_kernel", "kernel", "new_words", "piece",
                                         "store_words"]
                                        + (["typed_kernel"] if family in PAD4 else [])),
                              "from .._jit import ("),
                    in_flight=4 if family in PAD4 else ways),
                HELPERS.format(iv_copy=_iv_copy(WORDS[family]), bytes=4 * WORDS[family]),
                "\n\n" + "\n".join(compress_xn(family, ways)) + "\n",
                "\n".join(pad_helpers(family) + rows64_lines(family) + pair_lines()) + "\n"
                if family in PAD4 else
                "\n".join(pad_rounds_lines(family)) + "\n" if family in PAD_ROUNDS else "",
                "\n\n" + "\n".join((hash_rows_pad4 if family in PAD4 else hash_rows)(
                    family, ways)) + "\n",
                '\n\nBACKEND = Backend("%s", NAME, TIERS["sha_ni"], __name__, lanes=LANES, '
                "in_flight=IN_FLIGHT,\n                  by_default=BY_DEFAULT, "
                "hash_rows=hash_rows)\n" % family])
            files["jitdigest/kernels/%s/ni_x%d.py" % (family, ways)] = text
    return files


def main(argv):
    return emit.write_or_check(render(), argv, "gen_sha_ni_batch.py")


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
