"""Section 3 of ``_internals``: releasing and taking back the GIL from compiled code (CPython's
``PyEval_SaveThread`` / ``PyEval_RestoreThread`` / ``PyGILState_Check`` called from LLVM IR).

Part of the one package that touches Numba's and llvmlite's private internals (see
``__init__``); tested in tests/test_internals.py."""
from llvmlite import ir
from numba.core import cgutils, types
from numba.extending import intrinsic


_PTR = ir.IntType(8).as_pointer()


def _declare(builder, name, result, *params):
    fnty = ir.FunctionType(result, list(params))
    return cgutils.get_or_insert_function(builder.module, fnty, name)


@intrinsic
def save_thread_if(typingctx, condition):
    """Release the GIL if the boolean ``condition`` holds and this thread holds the GIL
    (``PyGILState_Check``; a ``nogil`` kernel does not); returns a token (``voidptr``, null if
    nothing was released) for ``restore_thread``."""
    if not isinstance(condition, types.Boolean):
        return None

    def codegen(context, builder, signature, args):
        (cond,) = args
        token = cgutils.alloca_once_value(builder, _PTR(None))
        gil_check = _declare(builder, "PyGILState_Check", ir.IntType(32))
        with builder.if_then(context.cast(builder, cond, condition, types.boolean)):
            held = builder.icmp_signed("!=", builder.call(gil_check, []), ir.IntType(32)(0))
            with builder.if_then(held):
                save = _declare(builder, "PyEval_SaveThread", _PTR)
                builder.store(builder.call(save, []), token)
        return builder.load(token)
    return types.voidptr(condition), codegen


@intrinsic
def restore_thread(typingctx, token):
    """Take back the GIL released by ``save_thread_if`` (nothing if the token is null)."""
    if token != types.voidptr:
        return None

    def codegen(context, builder, signature, args):
        (state,) = args
        with builder.if_then(cgutils.is_not_null(builder, state)):
            restore = _declare(builder, "PyEval_RestoreThread", ir.VoidType(), _PTR)
            builder.call(restore, [state])
        return context.get_dummy_value()
    return types.none(token), codegen
