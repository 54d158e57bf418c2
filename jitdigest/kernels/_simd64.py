"""A 128-bit vector of two uint64 lanes (``u64x2``) for Numba kernels, and the few operations
SHA-512's message schedule is written with.

Why: SHA-512's rounds are a serial chain of 64-bit scalar operations that fill the integer
ports; its message schedule is not on that chain and, two words at a time (W[t + 1] needs
W[t - 1], not W[t]), runs in vector registers on the other ports, as OpenSSL's SHA-512 does.
LLVM does not vectorise it from scalar code, so it is written here explicitly.

The Numba type ``u64x2`` is lowered as LLVM ``<2 x i64>``; every operation is generic LLVM IR
(no target intrinsic), which any target can lower -- a rotation is one ``vprorq`` where the
target has AVX-512VL, two shifts and an OR elsewhere. Lane 0 is the low lane (the first word in
memory). Shift and rotation counts must be literal numbers at the call site. Only compiled use is
possible (there is no interpreted fallback): every function here is a Numba ``@intrinsic``.
"""
from llvmlite import ir
from numba.core import types
from numba.extending import intrinsic, models, register_model

from ._simd import (_literal, vector_binary, vector_lane, vector_load, vector_load_bytes,
                    vector_store)

_I32 = ir.IntType(32)
_I64 = ir.IntType(64)
_V2 = ir.VectorType(_I64, 2)


class U64x2Type(types.Type):
    """Two uint64 lanes in one 128-bit register (LLVM ``<2 x i64>``)."""

    def __init__(self):
        super().__init__(name="u64x2")


u64x2 = U64x2Type()


@register_model(U64x2Type)
class _U64x2Model(models.PrimitiveModel):
    def __init__(self, dmm, fe_type):
        super().__init__(dmm, fe_type, _V2)


def _splat(n):
    return ir.Constant(_V2, [ir.Constant(_I64, n)] * 2)


# --- construct, load, store ---------------------------------------------------------------

@intrinsic
def u64x2_set(typingctx, a, b):
    """Vector from two integers (lane 0 = ``a``), each taken as 64 bits."""
    if not all(isinstance(x, types.Integer) for x in (a, b)):
        return None

    def codegen(context, builder, sig, args):
        v = ir.Constant(_V2, ir.Undefined)
        for lane, (val, ty) in enumerate(zip(args, sig.args)):
            x = context.cast(builder, val, ty, types.int64 if ty.signed else types.uint64)
            v = builder.insert_element(v, x, ir.Constant(_I32, lane))
        return v
    return u64x2(a, b), codegen


u64x2_load = vector_load(
    "u64x2_load", u64x2, _V2, types.uint64,
    "``words[index:index+2]`` of a contiguous uint64 array (unaligned load, no bounds check).")
u64x2_store = vector_store(
    "u64x2_store", u64x2, _V2, types.uint64,
    "``words[index:index+2] = v`` for a contiguous uint64 array (no bounds check).")
u64x2_load_be = vector_load_bytes(
    "u64x2_load_be", u64x2, _V2, types.uint64,
    "Two big-endian 64-bit words from bytes ``data[offset:offset+16]`` of a contiguous uint8 "
    "array or bytes-like buffer (lane 0 = the first word; unaligned load + byte shuffle, no "
    "bounds check).", big_endian=True)
u64x2_lane = vector_lane("u64x2_lane", u64x2, _V2, types.uint64,
                         "Lane ``lane`` (a literal 0 or 1) of ``v`` as a uint64.")


# --- lane arithmetic and shuffles ---------------------------------------------------------

u64x2_add = vector_binary("u64x2_add", u64x2, "add", "Lane-wise ``a + b`` mod 2**64 (paddq).")
u64x2_xor = vector_binary("u64x2_xor", u64x2, "xor", "Bitwise ``a ^ b`` (pxor).")
u64x2_and = vector_binary("u64x2_and", u64x2, "and_", "Bitwise ``a & b`` (pand).")
u64x2_or = vector_binary("u64x2_or", u64x2, "or_", "Bitwise ``a | b`` (por).")


@intrinsic(prefer_literal=True)
def u64x2_shr(typingctx, v, n):
    """Lane-wise ``v >> n`` (logical), ``n`` a literal 1..63."""
    if v != u64x2:
        return None
    k = _literal(n, "u64x2_shr count", 1, 63)

    def codegen(context, builder, sig, args):
        return builder.lshr(args[0], _splat(k))
    return u64x2(v, n), codegen


@intrinsic(prefer_literal=True)
def u64x2_rotr(typingctx, v, n):
    """Lane-wise rotation right by ``n``, a literal 1..63 (``vprorq`` with AVX-512VL)."""
    if v != u64x2:
        return None
    k = _literal(n, "u64x2_rotr count", 1, 63)

    def codegen(context, builder, sig, args):
        return builder.or_(builder.lshr(args[0], _splat(k)), builder.shl(args[0], _splat(64 - k)))
    return u64x2(v, n), codegen


@intrinsic
def u64x2_alignr(typingctx, a, b):
    """``_mm_alignr_epi8(a, b, 8)``: lane 0 is lane 1 of ``b``, lane 1 is lane 0 of ``a`` (the
    two words that straddle ``b``, ``a`` when ``b`` holds the earlier two)."""
    if a != u64x2 or b != u64x2:
        return None

    def codegen(context, builder, sig, args):
        mask = ir.Constant(ir.VectorType(_I32, 2), [ir.Constant(_I32, 1), ir.Constant(_I32, 2)])
        return builder.shuffle_vector(args[1], args[0], mask)
    return u64x2(a, b), codegen
