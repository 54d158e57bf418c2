"""Keccak (SHA-3, SHAKE) for the lanes-kernel generator (tools/gen_lanes.py): the round
statements, the kernel (``keccak_kernel``) and the rounds per pass (``PER_PASS``)."""
from lanes_common import (VECTOR, W64, backend_name, block_function, finish, preamble,
                          prefetch_ahead, prefetch_next_row, record, store_bytes, wide_vectors,
                          wrap)

# Rotations and round constants from the kernel that owns them (lanes_common, imported first,
# put the repository on sys.path).
from jitdigest.kernels.keccak.portable import rho_offsets, round_constants


# --- Keccak -----------------------------------------------------------------------------

def keccak_rho():
    """rho[x + 5y]: the rotation of each lane (``keccak/portable.py``'s table)."""
    return [int(r) for r in rho_offsets()]


def keccak_rounds(rcs):
    """Statements of Keccak-f rounds on a00..a24 (lane x + 5y), round constants ``rcs``
    (expressions)."""
    W = W64
    rho = keccak_rho()
    st = []
    for rc in rcs:
        for x in range(5):
            st.append("c%d = %s" % (x, " ^ ".join("a%02d" % (x + 5 * y) for y in range(5))))
        for x in range(5):
            st.append("d%d = c%d ^ %s" % (x, (x + 4) % 5, W.rol("c%d" % ((x + 1) % 5), 1)))
        for y in range(5):
            for x in range(5):
                src = x + 5 * y
                dst = y + 5 * ((2 * x + 3 * y) % 5)
                if rho[src]:
                    st.append("t = a%02d ^ d%d" % (src, x))
                    st.append("b%02d = %s" % (dst, W.rol("t", rho[src])[1:-1]))
                else:
                    st.append("b%02d = a%02d ^ d%d" % (dst, src, x))
        for y in range(0, 25, 5):
            for x in range(5):
                st.append("a%02d = b%02d ^ (b%02d ^ M64) & b%02d" % (
                    y + x, y + x, y + (x + 1) % 5, y + (x + 2) % 5))
        st.append("a00 = a00 ^ %s" % rc)
    return st


def keccak_kernel(prefix, tier, per_pass):
    """Source lines of the permutation and ``<prefix>hash_rows`` for Keccak (SHA-3, SHAKE) with
    ``lw`` lanes, ``per_pass`` rounds per pass of the lane loop (the round loop stays a loop
    outside it)."""
    lw = nl = tier.lanes(64)
    L = []

    def add(indent, text):
        L.extend(wrap(" " * (4 * indent) + text))

    add(0, "@kernel")
    add(0, "def %shash_rows(values, starts, lengths, rows, iv, out):" % prefix)
    add(1, '"""Keccak (SHA-3, SHAKE), %d lanes: the first ``out.shape[1]`` output bytes of each'
        % nl)
    add(1, "message ``values[starts[r]:starts[r] + lengths[r]]``, ``r`` in ``rows``, into")
    add(1, "``out[r]``; ``iv``: 25 lanes, then the rate in bytes and the domain byte.\"\"\"")
    if wide_vectors(tier):
        add(1, "_wide_vectors()")
    add(1, "rate = np.int64(iv[25])")
    add(1, "nwr = rate >> 3  # words per block")
    add(1, "ds = iv[26]")
    add(1, "nout = out.shape[1]")
    add(1, "nsq = (nout - 1) // rate if nout > rate else 0  # extra permutations to squeeze")
    add(1, "nrows = row_count(rows)")
    add(1, "pf = values.shape[0] > PF_MIN  # prefetch: the data may not fit in the caches")
    add(1, "buf = lane_words(%d, np.uint64, 0)  # lane word i of message lane l at buf[i * %d + l]"
        % (25 * nl, nl))
    add(1, "row = lane_words(%d, np.int64, -1)  # row being hashed per lane, -1: idle" % nl)
    add(1, "first = lane_words(%d, np.int64, 0)  # its first byte in values" % nl)
    add(1, "nfull = lane_words(%d, np.int64, 0)  # its whole blocks, read from values" % nl)
    add(1, "blk = lane_words(%d, np.int64, 0)  # permutations done" % nl)
    add(1, "nxt = 0")
    add(1, "busy = 0")
    add(1, "while True:")
    add(2, "for lane in range(%d):" % nl)
    add(3, "r = row[lane]")
    add(3, "b = blk[lane]")
    add(3, "if r >= 0 and b > nfull[lane]:  # output block b - 1 - nfull of the row")
    add(4, "o = (b - 1 - nfull[lane]) * rate")
    add(4, "cnt = min(rate, nout - o)")
    add(4, "for i in range(cnt >> 3):")
    add(5, "v = buf[i * %d + lane]" % nl)
    store_bytes(add, 5, "o + 8 * i", "v", [8 * k for k in range(8)], "M8")
    add(4, "for i in range(cnt & -8, cnt):")
    add(5, "out[r, o + i] = np.uint8((buf[(i >> 3) * %d + lane] >> np.uint64(8 * (i & 7))) & M8)"
        % nl)
    add(4, "if b == nfull[lane] + 1 + nsq:  # done: free the lane")
    add(5, "row[lane] = -1")
    add(5, "busy -= 1")
    add(5, "r = -1")
    add(3, "if r < 0:")
    add(4, "if nxt == nrows:")
    add(5, "continue")
    add(4, "r = row_at(rows, nxt)  # start the next row")
    add(4, "nxt += 1")
    add(4, "busy += 1")
    add(4, "row[lane] = r")
    add(4, "first[lane] = start_of(starts, r)")
    prefetch_next_row(add, 4, nl, 192)
    add(4, "nfull[lane] = length_of(lengths, r) // rate")
    add(4, "b = 0")
    add(4, "for i in range(25):")
    add(5, "buf[i * %d + lane] = iv[i]" % nl)
    add(3, "blk[lane] = b + 1")
    add(3, "if b < nfull[lane]:  # absorb a whole block")
    add(4, "q = np.uint64(first[lane] + b * rate)")
    prefetch_ahead(add, 4, "rate")
    add(4, "for j in range(nwr):")
    add(5, "buf[j * %d + lane] ^= _word(values, q + np.uint64(8 * j))" % nl)
    add(3, "elif b == nfull[lane]:  # absorb the padded tail: data, domain byte, final 0x80")
    add(4, "rest = length_of(lengths, r) - b * rate")
    add(4, "q = np.uint64(first[lane] + b * rate)")
    add(4, "nd = rest >> 3")
    add(4, "for j in range(nd):")
    add(5, "buf[j * %d + lane] ^= _word(values, q + np.uint64(8 * j))" % nl)
    add(4, "q += np.uint64(8 * nd)")
    add(4, "v = ds << np.uint64(8 * (rest & 7))")
    add(4, "for k in range(rest & 7):")
    add(5, "v |= np.uint64(values[q + np.uint64(k)]) << np.uint64(8 * k)")
    add(4, "buf[nd * %d + lane] ^= v" % nl)
    add(4, "buf[(nwr - 1) * %d + lane] ^= TOP" % nl)
    add(2, "if busy == 0:")
    add(3, "break")
    add(2, "%s_permute(buf)" % prefix)
    L.append("")
    L.append("")
    B, badd = block_function(prefix + "_permute", tier, [
        "Keccak-f[1600] on each lane's state (the first %d words of ``buf``), in place."
        % (25 * nl)])
    badd(1, "for r0 in range(0, 24, %d):  # %d rounds per pass" % (per_pass, per_pass))
    badd(2, "for l in range(%d):" % lw)
    for i in range(25):
        badd(3, "a%02d = buf[%d + l]" % (i, i * nl))
    for st in keccak_rounds(["RC[r0 + %d]" % k if k else "RC[r0]" for k in range(per_pass)]):
        badd(3, st)
    for i in range(25):
        badd(3, "buf[%d + l] = a%02d" % (i * nl, i))
    B.extend(["", ""])
    return B + L


PER_PASS = 2       # Keccak rounds per pass of the lane loop, every tier


def render_keccak():
    files = {}
    for tier in VECTOR:
        L = preamble("Keccak-f[1600] sponge: SHA-3 and SHAKE (FIPS 202)", tier, 1, 64,
                     {"_word": "le64"})
        L.extend(wrap("RC = np.array([%s], np.uint64)" % ", ".join(
            "0x%016x" % c for c in round_constants())))
        L.append("M64 = np.uint64(0xffffffffffffffff)")
        L.append("M8 = np.uint64(0xff)")
        L.append("TOP = np.uint64(0x8000000000000000)  # the final pad bit, top byte of the last word")
        L.extend(["", ""])
        L.extend(keccak_kernel("", tier, PER_PASS))
        L.extend(record("keccak", tier, tier.lanes(64)))
        files["jitdigest/kernels/keccak/%s.py" % backend_name(tier, tier.lanes(64))] = finish(L)
    return files
