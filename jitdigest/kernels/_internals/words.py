"""Section 8 of ``_internals``: an array's data address and native words at byte offsets of a
uint8 array.

Part of the one package that touches Numba's and llvmlite's private internals (see
``__init__``); tested in tests/test_internals.py."""
from llvmlite import ir
from numba.core import types
from numba.extending import intrinsic
from .cuda_words import _word_of


@intrinsic
def address_of(typingctx, arr):
    """The address of ``arr``'s first element, an intp."""
    if not isinstance(arr, types.Array):
        return None

    def codegen(context, builder, signature, args):
        data = context.make_array(arr)(context, builder, args[0]).data
        return builder.ptrtoint(data, context.get_value_type(types.intp))
    return types.intp(arr), codegen


def _byte_address(context, builder, data_type, data, pos_type, pos):
    """The LLVM pointer to byte ``pos`` of the uint8 array ``data``."""
    base = context.make_array(data_type)(context, builder, data).data
    return builder.gep(base, [context.cast(builder, pos, pos_type, types.intp)])


@intrinsic
def word_at(typingctx, data, pos, dtype):
    """The native-endian word of ``dtype`` at byte ``pos`` of the uint8 array ``data``, read
    whole: the caller proves it aligned to its size and inside ``data``."""
    word = _word_of(dtype)
    if not (isinstance(data, types.Array) and data.dtype == types.uint8 and word is not None):
        return None

    def codegen(context, builder, signature, args):
        at = _byte_address(context, builder, data, args[0], pos, args[1])
        ptr = builder.bitcast(at, context.get_value_type(word).as_pointer())
        return builder.load(ptr, align=context.get_abi_sizeof(context.get_value_type(word)))
    return word(data, pos, dtype), codegen


@intrinsic
def words_at(typingctx, data, pos, dtype, count):
    """``count`` (a literal) native-endian words of ``dtype`` from byte ``pos`` of the uint8
    array ``data``, as a tuple, read as one vector: the caller proves ``pos`` aligned to the
    whole vector's size and the words inside ``data`` (on a GPU, one 16-byte load)."""
    word = _word_of(dtype)
    if not (isinstance(data, types.Array) and data.dtype == types.uint8 and word is not None
            and isinstance(count, types.IntegerLiteral)):
        return None
    n = count.literal_value

    def codegen(context, builder, signature, args):
        at = _byte_address(context, builder, data, args[0], pos, args[1])
        llvm_word = context.get_value_type(word)
        vector = ir.VectorType(llvm_word, n)
        loaded = builder.load(builder.bitcast(at, vector.as_pointer()),
                              align=n * context.get_abi_sizeof(llvm_word))
        return context.make_tuple(builder, types.UniTuple(word, n),
                                  [builder.extract_element(loaded, ir.Constant(ir.IntType(32), i))
                                   for i in range(n)])
    return types.UniTuple(word, n)(data, pos, dtype, count), codegen


@intrinsic
def put_word(typingctx, data, pos, value):
    """Store the integer ``value`` (of its own width) native-endian at byte ``pos`` of the
    uint8 array ``data``, whole: the caller proves it aligned to its size and inside ``data``."""
    if not (isinstance(data, types.Array) and data.dtype == types.uint8
            and isinstance(value, types.Integer)):
        return None

    def codegen(context, builder, signature, args):
        at = _byte_address(context, builder, data, args[0], pos, args[1])
        llvm_word = context.get_value_type(value)
        builder.store(args[2], builder.bitcast(at, llvm_word.as_pointer()),
                      align=context.get_abi_sizeof(llvm_word))
        return context.get_dummy_value()
    return types.none(data, pos, value), codegen
