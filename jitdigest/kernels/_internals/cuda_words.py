"""Section 7 of ``_internals``: thread-local words for CUDA device code (section 2's arrays,
zeroed or copied: a device function may not return an array).

Part of the one package that touches Numba's and llvmlite's private internals (see
``__init__``); tested in tests/test_internals.py."""
from llvmlite import ir
from numba.core import cgutils, types
from numba.extending import intrinsic

from .stack import populate_array


_VOIDPTR = ir.IntType(8).as_pointer()


def _intrinsic(builder, name, pointer, value, size):
    """``name`` (LLVM's ``llvm.memset`` or ``llvm.memcpy``) of ``size`` bytes at ``pointer``."""
    types = [_VOIDPTR, _VOIDPTR, size.type] if name == "llvm.memcpy" else [_VOIDPTR, size.type]
    fn = builder.module.declare_intrinsic(name, types)
    builder.call(fn, [builder.bitcast(pointer, _VOIDPTR), value, size,
                      ir.Constant(ir.IntType(1), 0)])


def _local_array(context, builder, word, cap, n=None, source=None):
    """Section 2's array on ``cap`` words of ``word``, of length ``n`` (an LLVM intp; ``cap``
    when None): its ``n`` words zeroed, or copied from the pointer ``source``."""
    llvm_word = context.get_data_type(word)
    size = context.get_abi_sizeof(llvm_word)
    intp = lambda v: context.get_constant(types.intp, v)          # noqa: E731
    data = cgutils.alloca_once(builder, llvm_word, size=cap)
    data.align = 16                         # 16-byte vectors may be read from it (section 8)
    n = intp(cap) if n is None else n
    if source is None:                      # only its n words: fewer stores than all cap
        _intrinsic(builder, "llvm.memset", data, ir.Constant(ir.IntType(8), 0),
                   builder.mul(n, intp(size)))
    else:
        _intrinsic(builder, "llvm.memcpy", data, builder.bitcast(source, _VOIDPTR),
                   builder.mul(n, intp(size)))
    array_type = types.Array(word, 1, "C")
    array = context.make_array(array_type)(context, builder)
    populate_array(array, data=data, shape=[n], strides=[intp(size)],
                           itemsize=intp(size), meminfo=None)
    return array._getvalue()


def _word_of(dtype):
    if isinstance(dtype, types.DType):
        return dtype.dtype
    return dtype.instance_type if isinstance(dtype, types.NumberClass) else None


@intrinsic
def local_words(typingctx, n, dtype):
    """``n`` (an integer literal) zeroed words of ``dtype`` in the caller's frame."""
    if not isinstance(n, types.IntegerLiteral) or _word_of(dtype) is None:
        return None
    word = _word_of(dtype)

    def codegen(context, builder, signature, args):
        return _local_array(context, builder, word, n.literal_value)
    return types.Array(word, 1, "C")(n, dtype), codegen


@intrinsic
def local_scratch(typingctx, n, dtype, cap):
    """``n`` zeroed words of ``dtype`` on ``cap`` (an integer literal, at least ``n``: the
    caller's bound) in the caller's frame."""
    if not isinstance(cap, types.IntegerLiteral) or _word_of(dtype) is None:
        return None
    word = _word_of(dtype)

    def codegen(context, builder, signature, args):
        count = context.cast(builder, args[0], n, types.intp)
        return _local_array(context, builder, word, cap.literal_value, count)
    return types.Array(word, 1, "C")(n, dtype, cap), codegen


@intrinsic
def local_copy(typingctx, words, cap):
    """A copy of the C-contiguous 1-D array ``words`` (at most ``cap`` words, a literal) in
    the caller's frame."""
    if not (isinstance(cap, types.IntegerLiteral) and isinstance(words, types.Array)
            and words.ndim == 1 and words.layout == "C"):
        return None

    def codegen(context, builder, signature, args):
        src = context.make_array(words)(context, builder, args[0])
        count = builder.extract_value(src.shape, 0)
        return _local_array(context, builder, words.dtype, cap.literal_value, count, src.data)
    return types.Array(words.dtype, 1, "C")(words, cap), codegen
