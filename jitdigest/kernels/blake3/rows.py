"""BLAKE3's compression function for one block: ``compress_words``, the loop form (G a
function, rounds in a loop: what runs interpreted), and its compiled form, the state's four
rows as 4-word vectors in LLVM IR (``_rows``), as BLAKE3's own SSE/NEON kernels do: each G step
works on four columns (then four diagonals) at once, the diagonals lined up by rotating rows
b, c and d by one, two and three words, each round's message words picked out of one 16-word
vector by shuffles. Plain LLVM vector IR: legal on every target (x86-64 SSE2 up, arm64), the
rotations one instruction where the CPU has one (AVX-512VL ``vprord``). ``load_block`` reads a
block's 16 words with one vector load (LLVM turned the word-by-word loader into byte inserts).
"""
import sys

import numpy as np
from llvmlite import ir
from numba.core import cgutils, types
from numba.extending import intrinsic

from ...base.algorithms import SPECS
from .._jit import const_words, cpu_overload, load_le32, u32
# BLAKE3's quarter-round is BLAKE2s's G (the BLAKE3 paper, section 2.2): one function
from ..blake2s.portable import _g32 as _g

ROUNDS = 7
# The message permutation applied between rounds: word i of the next round is word
# MSG_PERMUTATION[i] of this one.
MSG_PERMUTATION = (2, 6, 3, 10, 7, 0, 4, 13, 1, 11, 12, 5, 9, 14, 15, 8)
IV_WORDS = SPECS["sha256"].iv          # BLAKE3's IV is SHA-256's initial state (as BLAKE2s's)
IV = const_words(IV_WORDS, np.uint32)


def _schedule():
    """The message word each round reads at each of its 16 places, rounds flattened: the
    permutation applied r times for round r (the kernels never move the words themselves)."""
    order, rows = list(range(16)), []
    for _ in range(ROUNDS):
        rows += order
        order = [order[p] for p in MSG_PERMUTATION]
    return rows


SCHEDULE = const_words(_schedule(), np.intp)


def compress_words(cv, m, t0, t1, block_len, flags, out, wide):
    """One compression of the 16 message words ``m`` under the chaining value ``cv[0:8]``, with
    the counter ``t1:t0`` (two words, low first), ``block_len`` and ``flags``. ``out[0:8]`` gets
    the new chaining value and, if ``wide``, ``out[8:16]`` the rest of a 64-byte output block;
    ``out`` may be ``cv``. (The loop form; compiled code gets ``_rows``.)"""
    h = [u32(cv[i]) for i in range(8)]
    v = h + [u32(IV[0]), u32(IV[1]), u32(IV[2]), u32(IV[3]), u32(t0), u32(t1), u32(block_len),
             u32(flags)]
    for r in range(ROUNDS):
        s = 16 * r
        for k, (a, b, c, d) in enumerate(((0, 4, 8, 12), (1, 5, 9, 13), (2, 6, 10, 14),
                                          (3, 7, 11, 15), (0, 5, 10, 15), (1, 6, 11, 12),
                                          (2, 7, 8, 13), (3, 4, 9, 14))):
            v[a], v[b], v[c], v[d] = _g(v[a], v[b], v[c], v[d], m[SCHEDULE[s + 2 * k]],
                                        m[SCHEDULE[s + 2 * k + 1]])
    for i in range(8):
        out[i] = v[i] ^ v[i + 8]
    if wide:
        for i in range(8):
            out[8 + i] = v[8 + i] ^ h[i]


# where each row's words move to line the diagonals up as columns, and back
_DIAGONAL = ((1, 2, 3, 0), (2, 3, 0, 1), (3, 0, 1, 2))
_UNDIAGONAL = ((3, 0, 1, 2), (2, 3, 0, 1), (1, 2, 3, 0))


def _word_array(ty):
    return isinstance(ty, types.Array) and ty.ndim == 1 and ty.dtype == types.uint32


@intrinsic
def _rows(typingctx, cv, m, t0, t1, block_len, flags, out, wide):
    """``compress_words`` on 4-word vectors: ``cv``, ``m`` and ``out`` contiguous uint32
    arrays (read whole before ``out`` is written, so ``out`` may be ``cv``)."""
    if not (_word_array(cv) and _word_array(m) and _word_array(out)):
        return None
    schedule = _schedule()

    def codegen(context, builder, signature, args):
        i32, i64 = ir.IntType(32), ir.IntType(64)
        v4, v16 = ir.VectorType(i32, 4), ir.VectorType(i32, 16)
        module = builder.module
        fshr = cgutils.get_or_insert_function(module, ir.FunctionType(v4, [v4, v4, v4]),
                                              "llvm.fshr.v4i32")

        def data(k):
            return context.make_array(signature.args[k])(context, builder, value=args[k]).data

        def at(pointer, word, vector):
            return builder.bitcast(builder.gep(pointer, [ir.Constant(i64, word)]),
                                   vector.as_pointer())

        def word(k):
            return context.cast(builder, args[k], signature.args[k], types.uint32)

        def splat(n):
            return ir.Constant(v4, [ir.Constant(i32, n)] * 4)

        def rotr(x, n):
            return builder.call(fshr, [x, x, splat(n)])

        def pick(vector, lanes):
            return builder.shuffle_vector(vector, vector,
                                          ir.Constant(ir.VectorType(i32, len(lanes)),
                                                      [ir.Constant(i32, x) for x in lanes]))

        def g(a, b, c, d, mx, my):
            a = builder.add(builder.add(a, mx), b)
            d = rotr(builder.xor(d, a), 16)
            c = builder.add(c, d)
            b = rotr(builder.xor(b, c), 12)
            a = builder.add(builder.add(a, my), b)
            d = rotr(builder.xor(d, a), 8)
            c = builder.add(c, d)
            b = rotr(builder.xor(b, c), 7)
            return a, b, c, d

        cvp, outp = data(0), data(6)
        h0 = builder.load(at(cvp, 0, v4), align=4)
        h1 = builder.load(at(cvp, 4, v4), align=4)
        msg = builder.load(at(data(1), 0, v16), align=4)
        last = ir.Constant(v4, ir.Undefined)
        for lane, k in enumerate((2, 3, 4, 5)):
            last = builder.insert_element(last, word(k), ir.Constant(i32, lane))
        a, b, c, d = h0, h1, ir.Constant(v4, [ir.Constant(i32, x) for x in IV_WORDS[:4]]), last
        for r in range(ROUNDS):
            s = schedule[16 * r:16 * r + 16]
            a, b, c, d = g(a, b, c, d, pick(msg, s[0:8:2]), pick(msg, s[1:8:2]))
            b, c, d = (pick(x, p) for x, p in zip((b, c, d), _DIAGONAL))
            a, b, c, d = g(a, b, c, d, pick(msg, s[8:16:2]), pick(msg, s[9:16:2]))
            b, c, d = (pick(x, p) for x, p in zip((b, c, d), _UNDIAGONAL))
        builder.store(builder.xor(a, c), at(outp, 0, v4), align=4)
        builder.store(builder.xor(b, d), at(outp, 4, v4), align=4)
        wide_type = signature.args[7]
        if isinstance(wide_type, types.BooleanLiteral):
            if wide_type.literal_value:
                builder.store(builder.xor(c, h0), at(outp, 8, v4), align=4)
                builder.store(builder.xor(d, h1), at(outp, 12, v4), align=4)
        else:
            flag = context.cast(builder, args[7], wide_type, types.boolean)
            with builder.if_then(flag):
                builder.store(builder.xor(c, h0), at(outp, 8, v4), align=4)
                builder.store(builder.xor(d, h1), at(outp, 12, v4), align=4)
        return context.get_dummy_value()
    return types.none(cv, m, t0, t1, block_len, flags, out, wide), codegen


@cpu_overload(compress_words)
def _compress_words(cv, m, t0, t1, block_len, flags, out, wide):
    def impl(cv, m, t0, t1, block_len, flags, out, wide):
        _rows(cv, m, t0, t1, block_len, flags, out, wide)
    return impl


def load_block(data, pos, m):
    """The 16 little-endian words of the 64 bytes ``data[pos:pos + 64]`` into ``m``."""
    load_le32(data, pos, m, 16)


@intrinsic
def _load_block(typingctx, data, pos, m):
    if not (isinstance(data, (types.Array, types.Bytes)) and data.ndim == 1
            and data.dtype == types.uint8 and _word_array(m)):
        return None

    def codegen(context, builder, signature, args):
        v16 = ir.VectorType(ir.IntType(32), 16)
        source = context.make_array(signature.args[0])(context, builder, value=args[0]).data
        offset = context.cast(builder, args[1], signature.args[1], types.intp)
        words = builder.load(builder.bitcast(builder.gep(source, [offset]), v16.as_pointer()),
                             align=1)
        if sys.byteorder == "big":
            swap = cgutils.get_or_insert_function(builder.module, ir.FunctionType(v16, [v16]),
                                                  "llvm.bswap.v16i32")
            words = builder.call(swap, [words])
        target = context.make_array(signature.args[2])(context, builder, value=args[2]).data
        builder.store(words, builder.bitcast(target, v16.as_pointer()), align=4)
        return context.get_dummy_value()
    return types.none(data, pos, m), codegen


@cpu_overload(load_block)
def _load_block_impl(data, pos, m):
    def impl(data, pos, m):
        _load_block(data, pos, m)
    return impl
