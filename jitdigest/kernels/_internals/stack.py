"""Section 2 of ``_internals``: a Numba array over a stack buffer
(``numba.np.arrayobj.populate_array``).

Part of the one package that touches Numba's and llvmlite's private internals (see
``__init__``); tested in tests/test_internals.py."""
from numba.core import cgutils, errors, types
from numba.extending import intrinsic


def populate_array(array, **fields):
    """Numba's ``populate_array`` (what ``BaseContext.populate_array`` forwards to): the array
    module is imported by then, as a compile refreshes the target context first."""
    from numba.np import arrayobj
    return arrayobj.populate_array(array, **fields)


@intrinsic
def stack_array(typingctx, cap, dtype):
    """A 1-d C array of ``cap`` (an integer literal) words of ``dtype`` in the caller's stack
    frame: allocated once in its entry block, uninitialised, no meminfo (so no reference
    counting and no heap). It must not outlive the kernel (never returned or stored)."""
    if not isinstance(cap, types.IntegerLiteral):
        raise errors.RequireLiteralValue(cap)
    if isinstance(dtype, types.DType):
        word = dtype.dtype
    elif isinstance(dtype, types.NumberClass):
        word = dtype.instance_type
    else:
        return None
    array_type = types.Array(word, 1, "C")

    def codegen(context, builder, signature, args):
        llvm_word = context.get_data_type(word)
        size = context.get_abi_sizeof(llvm_word)
        data = cgutils.alloca_once(builder, llvm_word, size=cap.literal_value)
        array = context.make_array(array_type)(context, builder)
        intp = lambda v: context.get_constant(types.intp, v)          # noqa: E731
        populate_array(array, data=data, shape=[intp(cap.literal_value)],
                               strides=[intp(size)], itemsize=intp(size), meminfo=None)
        return array._getvalue()
    return array_type(cap, dtype), codegen
