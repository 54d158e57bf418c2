"""BLAKE3's compression in ``lanes`` SIMD lanes at once, written as LLVM vector IR: what the
chunk lanes (tools/lanes_blake3.py) run for chunks and parents alike. Each lane's block is
loaded and transposed in registers, and the chaining values and counters sit transposed in
``buf`` (word i of lane l at ``buf[i * lanes + l]``), so that each word of all lanes is one
vector register; the seven rounds are a loop whose body is one round, the message permutation
a renaming of registers between rounds, as in BLAKE3's own ``hash_many`` assembly.
"""
from llvmlite import ir
from numba.core import cgutils, types
from numba.extending import intrinsic

from .._lanes import _transpose, _transpose8x32
from .rows import IV_WORDS, MSG_PERMUTATION

# G's four (a, b, c, d) of a round: the columns, then the diagonals
_G = ((0, 4, 8, 12), (1, 5, 9, 13), (2, 6, 10, 14), (3, 7, 11, 15),
      (0, 5, 10, 15), (1, 6, 11, 12), (2, 7, 8, 13), (3, 4, 9, 14))
CV_AT, COUNTER_AT = 0, 8      # buf's words, in units of ``lanes`` words


def _lanes_args(buf, lanes):
    return (isinstance(buf, types.Array) and buf.dtype == types.uint32
            and isinstance(lanes, types.IntegerLiteral) and lanes.literal_value in (8, 16))


@intrinsic
def compress_blocks(typingctx, buf, lanes, block_len, flags, data, first, off):
    """One compression per lane (``lanes`` a literal, 8 or 16), in place in ``buf`` (a uint32
    array of at least 10 * ``lanes`` words: the chaining values, then the counters' low and
    high words, word i of lane l at ``buf[i * lanes + l]``): the new chaining values over the
    old. Lane l's message is the 64 bytes ``data[first[l] + off:]`` (``data`` a uint8 array,
    ``first`` an int64 array), loaded a block per lane and transposed in registers (as
    BLAKE3's ``hash_many`` does); ``block_len`` and ``flags`` are the same for every lane. The
    caller proves every block lies in ``data``."""
    if not (_lanes_args(buf, lanes) and isinstance(data, types.Array)
            and data.dtype == types.uint8 and isinstance(first, types.Array)
            and first.dtype == types.int64):
        return None
    width = lanes.literal_value

    def codegen(context, builder, signature, args):
        i32, i64 = ir.IntType(32), ir.IntType(64)
        row = ir.VectorType(i32, 16)
        source = context.make_array(signature.args[4])(context, builder, value=args[4]).data
        starts = context.make_array(signature.args[5])(context, builder, value=args[5]).data
        offset = context.cast(builder, args[6], signature.args[6], types.int64)
        rows = []
        for lane in range(width):
            at = builder.add(builder.load(builder.gep(starts, [ir.Constant(i64, lane)])), offset)
            pointer = builder.bitcast(builder.gep(source, [at]), row.as_pointer())
            rows.append(builder.load(pointer, align=1))

        def shuffle(a, b, mask):
            return builder.shuffle_vector(a, b, ir.Constant(ir.VectorType(i32, len(mask)),
                                                            [ir.Constant(i32, x) for x in mask]))
        if width == 16:
            message = _transpose(shuffle, rows)
        else:   # two 8 x 8 transposes: words 0-7, then 8-15, of the 8 lanes
            message = []
            for half in range(2):
                lanes8 = [shuffle(r, r, list(range(8 * half, 8 * half + 8))) for r in rows]
                message += _transpose8x32(shuffle, lanes8)
        return _compress(context, builder, signature, args, width, message)
    return types.none(buf, lanes, block_len, flags, data, first, off), codegen


def _compress(context, builder, signature, args, width, message):
    """The IR of the compressions, ``message`` the 16 message vectors."""
    i32, i64 = ir.IntType(32), ir.IntType(64)
    vec = ir.VectorType(i32, width)
    fshr = cgutils.get_or_insert_function(builder.module, ir.FunctionType(vec, [vec] * 3),
                                          "llvm.fshr.v%di32" % width)
    base = context.make_array(signature.args[0])(context, builder, value=args[0]).data

    def at(word):
        pointer = builder.gep(base, [ir.Constant(i64, word * width)])
        return builder.bitcast(pointer, vec.as_pointer())

    def splat(value):
        return builder.insert_element(ir.Constant(vec, ir.Undefined), value,
                                      ir.Constant(i32, 0))

    def broadcast(value):
        return builder.shuffle_vector(splat(value), ir.Constant(vec, ir.Undefined),
                                      ir.Constant(ir.VectorType(i32, width), [0] * width))

    def rotr(x, n):
        return builder.call(fshr, [x, x, ir.Constant(vec, [ir.Constant(i32, n)] * width)])

    words = [context.cast(builder, args[k], signature.args[k], types.uint32) for k in (2, 3)]
    cv = [builder.load(at(CV_AT + i), align=4) for i in range(8)]
    start = (cv + [ir.Constant(vec, [ir.Constant(i32, w)] * width) for w in IV_WORDS[:4]]
             + [builder.load(at(COUNTER_AT), align=4), builder.load(at(COUNTER_AT + 1),
                                                                    align=4)]
             + [broadcast(w) for w in words])
    entry = builder.block
    body = builder.append_basic_block("blake3_rounds")
    done = builder.append_basic_block("blake3_rounds_done")
    builder.branch(body)
    builder.position_at_end(body)
    r = builder.phi(i32)
    v = [builder.phi(vec) for _ in range(16)]
    x = [builder.phi(vec) for _ in range(16)]
    r.add_incoming(ir.Constant(i32, 0), entry)
    for phi, value in zip(v + x, start + message):
        phi.add_incoming(value, entry)
    s = list(v)
    for k, (a, b, c, d) in enumerate(_G):
        for m, (rd, rb) in ((x[2 * k], (16, 12)), (x[2 * k + 1], (8, 7))):
            s[a] = builder.add(builder.add(s[a], m), s[b])
            s[d] = rotr(builder.xor(s[d], s[a]), rd)
            s[c] = builder.add(s[c], s[d])
            s[b] = rotr(builder.xor(s[b], s[c]), rb)
    following = builder.add(r, ir.Constant(i32, 1))
    latch = builder.block
    for phi, value in zip(v + x, s + [x[p] for p in MSG_PERMUTATION]):
        phi.add_incoming(value, latch)
    r.add_incoming(following, latch)
    builder.cbranch(builder.icmp_unsigned("<", following, ir.Constant(i32, 7)), body, done)
    builder.position_at_end(done)
    for i in range(8):
        builder.store(builder.xor(s[i], s[i + 8]), at(CV_AT + i), align=4)
    return context.get_dummy_value()
