"""A 128-bit vector of four uint32 lanes (``u32x4``) for Numba kernels, and the few operations
the hardware kernels are written with.

The Numba type ``u32x4`` is lowered as LLVM ``<4 x i32>``, so a kernel's vector variables live in
XMM registers and every operation below is one or two machine instructions. Lane 0 is the low
lane (the first word in memory), as in ``_mm_*`` intrinsics; immediates (shuffle controls,
``sha1rnds4``'s round group, ...) must be compile-time constants and are typed as integer
literals, so write them as literal numbers at the call site.

Only compiled use is possible (there is no interpreted fallback): every function here is a Numba
``@intrinsic``, callable from ``@njit`` code only. The generic operations (load, store, shuffle,
add, xor) need nothing beyond SSE2; the ``sha*`` ones need the CPU feature ``sha`` *in Numba's
compile target* -- LLVM aborts the whole process ("Cannot select") when compiling them for a
target without it, so code that uses them must only be compiled after
``jitdigest.engine.cpu.usable("sha", "sha_ni")`` said yes. Defining them compiles nothing.
"""
import numpy as np
from llvmlite import ir
from numba.core import cgutils, types
from numba.core.errors import TypingError
from numba.extending import intrinsic, models, register_model

from ._jit import cpu_overload

_I8 = ir.IntType(8)
_I32 = ir.IntType(32)
_V4 = ir.VectorType(_I32, 4)
_V16B = ir.VectorType(_I8, 16)


class U32x4Type(types.Type):
    """Four uint32 lanes in one 128-bit register (LLVM ``<4 x i32>``)."""

    def __init__(self):
        super().__init__(name="u32x4")


u32x4 = U32x4Type()


@register_model(U32x4Type)
class _U32x4Model(models.PrimitiveModel):
    def __init__(self, dmm, fe_type):
        super().__init__(dmm, fe_type, _V4)


# --- typing helpers -----------------------------------------------------------------------

def _literal(ty, what, lo, hi):
    """The value of an integer-literal argument, checked to lie in [lo, hi]."""
    if not isinstance(ty, types.IntegerLiteral):
        raise TypingError("%s must be a literal integer constant, got %s" % (what, ty))
    v = ty.literal_value
    if not lo <= v <= hi:
        raise TypingError("%s must be in [%d, %d], got %d" % (what, lo, hi, v))
    return v


def _is_array(ty, dtype):
    """A 1-d buffer of ``dtype``: a numpy array, or bytes / bytearray / memoryview (all share
    Numba's array data model)."""
    return isinstance(ty, types.Buffer) and ty.ndim == 1 and ty.dtype == dtype


def _element_ptr(context, builder, aty, arr, index, index_ty):
    """Address of element ``index`` of the contiguous 1-d array ``arr`` (no bounds check)."""
    ary = context.make_array(aty)(context, builder, value=arr)
    idx = context.cast(builder, index, index_ty, types.intp)
    return builder.gep(ary.data, [idx])


def _shuffle(builder, a, b, lanes):
    """shufflevector: lanes 0..3 pick from ``a``, 4..7 from ``b``."""
    mask = ir.Constant(ir.VectorType(_I32, 4), [ir.Constant(_I32, k) for k in lanes])
    return builder.shuffle_vector(a, b, mask)


def _call(builder, name, ret, args):
    fnty = ir.FunctionType(ret, [a.type for a in args])
    fn = cgutils.get_or_insert_function(builder.module, fnty, name)
    return builder.call(fn, args)


# --- the operations every 128-bit vector type has, made per type ---------------------------
#
# ``vtype`` is the Numba type (``u32x4`` here, ``_simd64.u64x2``), ``vector`` its LLVM type and
# ``word`` its lanes' Numba integer type; each factory returns one ``@intrinsic``.

def _named(name, doc, typer):
    typer.__name__ = typer.__qualname__ = name
    typer.__doc__ = doc
    return intrinsic(typer)


def vector_load(name, vtype, vector, word, doc):
    """``words[index:index + lanes]`` of a contiguous array of ``word`` (unaligned load, no
    bounds check)."""
    def typer(typingctx, words, index):
        if not (_is_array(words, word) and words.layout == "C"
                and isinstance(index, types.Integer)):
            return None

        def codegen(context, builder, sig, args):
            p = _element_ptr(context, builder, sig.args[0], args[0], args[1], sig.args[1])
            return builder.load(builder.bitcast(p, vector.as_pointer()), align=word.bitwidth // 8)
        return vtype(words, index), codegen
    return _named(name, doc, typer)


def vector_store(name, vtype, vector, word, doc):
    """``words[index:index + lanes] = v`` for a contiguous array of ``word`` (no bounds check)."""
    def typer(typingctx, words, index, v):
        if not (_is_array(words, word) and words.layout == "C"
                and isinstance(index, types.Integer) and v == vtype):
            return None

        def codegen(context, builder, sig, args):
            p = _element_ptr(context, builder, sig.args[0], args[0], args[1], sig.args[1])
            builder.store(args[2], builder.bitcast(p, vector.as_pointer()),
                          align=word.bitwidth // 8)
            return context.get_dummy_value()
        return types.none(words, index, v), codegen
    return _named(name, doc, typer)


def _byte_order(word, big_endian):
    """The byte shuffle that reverses each ``word`` of 16 bytes (big-endian words on this
    little-endian CPU), or None for native order."""
    if not big_endian:
        return None
    size = word.bitwidth // 8
    return ir.Constant(ir.VectorType(_I32, 16),
                       [ir.Constant(_I32, size * (k // size) + size - 1 - k % size)
                        for k in range(16)])


def vector_load_bytes(name, vtype, vector, word, doc, big_endian):
    """Words from bytes ``data[offset:offset + 16]`` of a contiguous uint8 array or bytes-like
    buffer, big-endian or in memory order (lane 0 = the first word; unaligned load, + a byte
    shuffle for big-endian; no bounds check)."""
    mask = _byte_order(word, big_endian)

    def typer(typingctx, data, offset):
        if not (_is_array(data, types.uint8) and data.layout == "C"
                and isinstance(offset, types.Integer)):
            return None

        def codegen(context, builder, sig, args):
            p = _element_ptr(context, builder, sig.args[0], args[0], args[1], sig.args[1])
            raw = builder.load(builder.bitcast(p, _V16B.as_pointer()), align=1)
            if mask is not None:
                raw = builder.shuffle_vector(raw, ir.Constant(_V16B, ir.Undefined), mask)
            return builder.bitcast(raw, vector)
        return vtype(data, offset), codegen
    return _named(name, doc, typer)


def vector_store_bytes(name, vtype, vector, word, doc, big_endian):
    """``data[offset:offset + 16] = v``, its words big-endian or in memory order, into a
    contiguous uint8 array (+ a byte shuffle for big-endian; unaligned store, no bounds
    check)."""
    mask = _byte_order(word, big_endian)

    def typer(typingctx, data, offset, v):
        if not (_is_array(data, types.uint8) and data.layout == "C" and data.mutable
                and isinstance(offset, types.Integer) and v == vtype):
            return None

        def codegen(context, builder, sig, args):
            p = _element_ptr(context, builder, sig.args[0], args[0], args[1], sig.args[1])
            raw = builder.bitcast(args[2], _V16B)
            if mask is not None:
                raw = builder.shuffle_vector(raw, ir.Constant(_V16B, ir.Undefined), mask)
            builder.store(raw, builder.bitcast(p, _V16B.as_pointer()), align=1)
            return context.get_dummy_value()
        return types.none(data, offset, v), codegen
    return _named(name, doc, typer)


def vector_lane(name, vtype, vector, word, doc):
    """Lane ``lane`` (a literal) of ``v`` as a ``word``."""
    def typer(typingctx, v, lane):
        if v != vtype:
            return None
        k = _literal(lane, f"{name} index", 0, vector.count - 1)

        def codegen(context, builder, sig, args):
            return builder.extract_element(args[0], ir.Constant(_I32, k))
        return word(v, lane), codegen
    typer.__name__ = typer.__qualname__ = name
    typer.__doc__ = doc
    return intrinsic(prefer_literal=True)(typer)


def vector_binary(name, vtype, op, doc):
    """Lane-wise ``op`` (an ``ir.IRBuilder`` method name) of two vectors of ``vtype``."""
    def typer(typingctx, a, b):
        if a != vtype or b != vtype:
            return None

        def codegen(context, builder, sig, args):
            return getattr(builder, op)(args[0], args[1])
        return vtype(a, b), codegen
    return _named(name, doc, typer)


# --- construct, load, store ---------------------------------------------------------------

@intrinsic
def u32x4_set(typingctx, a, b, c, d):
    """Vector from four integers (lane 0 = ``a``); each is truncated to 32 bits. Constant
    arguments fold into a constant vector."""
    if not all(isinstance(x, types.Integer) for x in (a, b, c, d)):
        return None

    def codegen(context, builder, sig, args):
        v = ir.Constant(_V4, ir.Undefined)
        for lane, (val, ty) in enumerate(zip(args, sig.args)):
            x = context.cast(builder, val, ty, types.uint64 if not ty.signed else types.int64)
            v = builder.insert_element(v, builder.trunc(x, _I32), ir.Constant(_I32, lane))
        return v
    return u32x4(a, b, c, d), codegen


u32x4_load = vector_load(
    "u32x4_load", u32x4, _V4, types.uint32,
    "``words[index:index+4]`` of a contiguous uint32 array (unaligned load, no bounds check).")
u32x4_store = vector_store(
    "u32x4_store", u32x4, _V4, types.uint32,
    "``words[index:index+4] = v`` for a contiguous uint32 array (no bounds check).")
u32x4_load_be = vector_load_bytes(
    "u32x4_load_be", u32x4, _V4, types.uint32,
    "Four big-endian 32-bit words from bytes ``data[offset:offset+16]`` of a contiguous uint8 "
    "array or bytes-like buffer (lane 0 = the first word; unaligned load + pshufb, no bounds "
    "check).", big_endian=True)
u32x4_store_be = vector_store_bytes(
    "u32x4_store_be", u32x4, _V4, types.uint32,
    "``data[offset:offset+16]`` = four big-endian 32-bit words of ``v`` (lane 0 first), into a "
    "contiguous uint8 array (pshufb + unaligned store, no bounds check).", big_endian=True)
u32x4_load_bytes = vector_load_bytes(
    "u32x4_load_bytes", u32x4, _V4, types.uint32,
    "Bytes ``data[offset:offset+16]`` of a contiguous uint8 array or bytes-like buffer as they "
    "lie in memory (unaligned load, no bounds check).", big_endian=False)
u32x4_store_bytes = vector_store_bytes(
    "u32x4_store_bytes", u32x4, _V4, types.uint32,
    "``data[offset:offset+16]`` = the 16 bytes of ``v`` as they lie in a register, into a "
    "contiguous uint8 array (unaligned store, no bounds check).", big_endian=False)
u32x4_lane = vector_lane("u32x4_lane", u32x4, _V4, types.uint32,
                         "Lane ``lane`` (a literal 0..3) of ``v`` as a uint32.")


# Sixteen-byte windows for the block that ends a message: for m = 0..16 data bytes, the window
# ``KEEP_BYTES[16 - m:32 - m]`` has 0xFF in its first m bytes and 0 after (an AND keeps the data),
# ``PAD_MARK[16 - m:32 - m]`` has 0x80 at byte m and 0 elsewhere (an OR adds the padding's 0x80).
KEEP_BYTES = np.array([0xFF] * 16 + [0] * 16, np.uint8)
PAD_MARK = np.array([0] * 16 + [0x80] + [0] * 15, np.uint8)


# --- lane arithmetic and shuffles ---------------------------------------------------------

u32x4_add = vector_binary("u32x4_add", u32x4, "add", "Lane-wise ``a + b`` mod 2**32 (paddd).")
u32x4_xor = vector_binary("u32x4_xor", u32x4, "xor", "Bitwise ``a ^ b`` (pxor).")
u32x4_and = vector_binary("u32x4_and", u32x4, "and_", "Bitwise ``a & b`` (pand).")
u32x4_or = vector_binary("u32x4_or", u32x4, "or_", "Bitwise ``a | b`` (por).")


@intrinsic(prefer_literal=True)
def pshufd(typingctx, a, imm):
    """``_mm_shuffle_epi32(a, imm)``: lane i of the result is lane ``(imm >> 2i) & 3`` of ``a``."""
    if a != u32x4:
        return None
    k = _literal(imm, "pshufd control", 0, 255)
    lanes = [(k >> (2 * i)) & 3 for i in range(4)]

    def codegen(context, builder, sig, args):
        return _shuffle(builder, args[0], ir.Constant(_V4, ir.Undefined), lanes)
    return u32x4(a, imm), codegen


@intrinsic(prefer_literal=True)
def alignr(typingctx, a, b, nbytes):
    """``_mm_alignr_epi8(a, b, nbytes)`` for ``nbytes`` in 0, 4, 8, 12, 16: the 32-byte value
    ``a:b`` (``a`` high) shifted right by ``nbytes`` bytes, low 16 bytes kept."""
    if a != u32x4 or b != u32x4:
        return None
    n = _literal(nbytes, "alignr byte count", 0, 16)
    if n % 4:
        raise TypingError("alignr byte count must be a multiple of 4 for u32x4, got %d" % n)
    lanes = [n // 4 + i for i in range(4)]

    def codegen(context, builder, sig, args):
        return _shuffle(builder, args[1], args[0], lanes)
    return u32x4(a, b, nbytes), codegen


@intrinsic(prefer_literal=True)
def blend(typingctx, a, b, imm):
    """``_mm_blend_epi32(a, b, imm)``: lane i from ``b`` where bit i of the literal ``imm``
    (0..15) is set, else from ``a``. (``_mm_blend_epi16(a, b, 0xF0)`` is ``blend(a, b, 0xC)``.)"""
    if a != u32x4 or b != u32x4:
        return None
    k = _literal(imm, "blend mask", 0, 15)
    lanes = [i + 4 if (k >> i) & 1 else i for i in range(4)]

    def codegen(context, builder, sig, args):
        return _shuffle(builder, args[0], args[1], lanes)
    return u32x4(a, b, imm), codegen


# --- SHA extensions (need the `sha` target feature; see the module docstring) --------------

def _sha_binary(llvm_name, doc):
    def typer(typingctx, a, b):
        if a != u32x4 or b != u32x4:
            return None

        def codegen(context, builder, sig, args):
            return _call(builder, llvm_name, _V4, list(args))
        return u32x4(a, b), codegen
    typer.__name__ = typer.__qualname__ = llvm_name.rsplit(".", 1)[-1]
    typer.__doc__ = doc
    return intrinsic(typer)


sha256msg1 = _sha_binary("llvm.x86.sha256msg1", "``_mm_sha256msg1_epu32(a, b)``")
sha256msg2 = _sha_binary("llvm.x86.sha256msg2", "``_mm_sha256msg2_epu32(a, b)``")
sha1nexte = _sha_binary("llvm.x86.sha1nexte", "``_mm_sha1nexte_epu32(a, b)``")
sha1msg1 = _sha_binary("llvm.x86.sha1msg1", "``_mm_sha1msg1_epu32(a, b)``")
sha1msg2 = _sha_binary("llvm.x86.sha1msg2", "``_mm_sha1msg2_epu32(a, b)``")


@intrinsic
def sha256rnds2(typingctx, cdgh, abef, wk):
    """``_mm_sha256rnds2_epu32(cdgh, abef, wk)``: two SHA-256 rounds with the message+constant
    words in lanes 0 and 1 of ``wk`` (the implicit XMM0 operand); returns the new ABEF."""
    if cdgh != u32x4 or abef != u32x4 or wk != u32x4:
        return None

    def codegen(context, builder, sig, args):
        return _call(builder, "llvm.x86.sha256rnds2", _V4, list(args))
    return u32x4(cdgh, abef, wk), codegen


@intrinsic(prefer_literal=True)
def sha1rnds4(typingctx, abcd, e, func):
    """``_mm_sha1rnds4_epu32(abcd, e, func)``: four SHA-1 rounds; ``func`` (the round group,
    0..3) must be a literal -- LLVM takes it as an ``i8 immarg``."""
    if abcd != u32x4 or e != u32x4:
        return None
    k = _literal(func, "sha1rnds4 function", 0, 3)

    def codegen(context, builder, sig, args):
        return _call(builder, "llvm.x86.sha1rnds4", _V4, [args[0], args[1], ir.Constant(_I8, k)])
    return u32x4(abcd, e, func), codegen


# --- legacy-SSE code after AVX code ------------------------------------------------------

@intrinsic
def clear_upper_vectors(typingctx):
    """``vzeroupper`` when Numba's target has AVX, else nothing. The SHA instructions have no
    VEX form, so they run as legacy SSE; when code LLVM vectorised with 256-bit registers runs
    before them in the same function (a copy loop, a memset, after inlining), every SSE
    instruction then pays an AVX-SSE transition (benchmarks/results/kernel_notes.md, "the AVX-SSE
    transition"). Call it once before the block loop."""
    from ._target import target_features

    def codegen(context, builder, signature, args):
        if "avx" in target_features():
            _call(builder, "llvm.x86.avx.vzeroupper", ir.VoidType(), [])
        return context.get_dummy_value()
    return types.none(), codegen


# --- contiguous input ---------------------------------------------------------------------

def c_blocks(data, offset, nbytes):
    """``(src, pos)`` such that ``src[pos:pos+nbytes]`` is ``data[offset:offset+nbytes]`` in a
    C-contiguous array: ``data`` itself when it already is one, else a copy of that range (the
    vector loads above assume unit stride). Compiled use only."""
    raise NotImplementedError("c_blocks is only available in compiled kernels")


@cpu_overload(c_blocks)
def _c_blocks(data, offset, nbytes):
    if isinstance(data, types.Buffer) and data.layout == "C":
        return lambda data, offset, nbytes: (data, offset)

    def impl(data, offset, nbytes):
        return np.ascontiguousarray(data[offset:offset + nbytes]), 0
    return impl
