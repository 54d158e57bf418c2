"""Section 14 of ``_internals``: a compiled batch kernel as machine code that a process can run
without importing Numba (``jitdigest.runtime.native`` loads it with llvmlite alone).

Numba's cache cannot be read without Numba (its entries are pickles of Numba's objects), and
importing Numba is most of a short run's time. So a batch kernel's ``hash_rows`` is also kept
as object files: the kernel's own, as Numba's JIT engine emitted it (``_compiled_object``), and
a C-callable wrapper (``numba.cfunc``) that views its pointer arguments as the kernel's arrays
and calls the kernel by its symbol, loaded side by side. A kernel loaded from Numba's cache has
no object of its own; the wrapper then has it linked in (``CodeLibrary._final_module``).
The objects refer by name to what they do not define (LLVM intrinsics, CPython's C API, a few
helpers of Numba's C runtime on error and reference-count paths); ``declarations()`` and
``kernel_object()`` list them, for the loader to resolve or refuse.

Part of the one package that touches Numba's and llvmlite's private internals (see
``__init__``); tested in tests/test_internals.py."""
from numba import carray, cfunc, njit, types
from numba.core import cgutils
from numba.extending import intrinsic

from .ours import ours


@intrinsic
def read_only(typingctx, arr):
    """The array ``arr`` typed read-only (the same struct: Numba's ``ArrayModel`` does not
    depend on the flag), so that a call matches the kernel's compiled signature."""
    if not isinstance(arr, types.Array):
        return None
    sig = arr.copy(readonly=True)(arr)

    def codegen(context, builder, signature, args):
        return args[0]
    return sig, codegen


def _word_type(word):
    return types.uint32 if word.__name__ == "uint32" else types.uint64


def _declared_call(cres):
    """An intrinsic calling the compiled function ``cres`` by its symbol, declared but not
    linked in (Numba's own call of a compiled function, ``BaseContext.call_internal``, less
    ``add_linking_library``): the caller's object refers to it by name."""
    fndesc = cres.fndesc

    @intrinsic
    def call(typingctx, values, starts, lengths, rows, iv, out):
        def codegen(context, builder, signature, args):
            fn = context.declare_function(builder.module, fndesc)
            status, _ = context.call_conv.call_function(builder, fn, fndesc.restype,
                                                        fndesc.argtypes, args)
            with cgutils.if_unlikely(builder, status.is_error):
                context.call_conv.return_status_propagate(builder, status)
            return context.get_dummy_value()
        return types.none(*fndesc.argtypes), codegen
    return call


def kernel_object(compiled):
    """(object file, the names it uses but does not define, its symbol) of the compiled
    function ``compiled`` (a kernel's entry in ``Dispatcher.overloads``), as Numba's JIT
    engine emitted it (its Python wrapper included), or None where this process has no such
    object (the kernel was loaded from Numba's cache, which keeps none)."""
    code = compiled_object(compiled.library)
    if code is None:
        return None
    functions, variables = _declared(compiled.library._final_module)
    return code, sorted(functions + variables), compiled.fndesc.mangled_name


def rows_entry(kernel, word, compiled=None):
    """A ``numba.cfunc`` running ``kernel`` (a batch ``hash_rows`` dispatcher, compiled for
    ``(data, index, index, index, iv, out)`` as ``_dispatch._signatures`` gives them) on raw
    pointers: ``entry(values, n_values, starts, lengths, rows, n_rows, iv, n_iv, out, out_rows,
    out_cols) -> 0``. Every bound must hold before the call: nothing here checks them.
    The kernel's code is linked into the entry's (Numba's way: optimised and emitted again with
    it, slow for a lane kernel), or, given ``compiled`` (its entry in ``kernel.overloads``),
    called by its symbol, for an object loaded beside ``kernel_object``'s (quick)."""
    w = _word_type(word)
    if compiled is not None:
        kernel = _declared_call(compiled)
    signature = types.int64(types.CPointer(types.uint8), types.int64,
                            types.CPointer(types.int64), types.CPointer(types.int64),
                            types.CPointer(types.int64), types.int64,
                            types.CPointer(w), types.int64,
                            types.CPointer(types.uint8), types.int64, types.int64)

    def entry(values, n_values, starts, lengths, rows, n_rows, iv, n_iv, out, out_rows,
              out_cols):
        kernel(read_only(carray(values, n_values)), read_only(carray(starts, n_rows)),
               read_only(carray(lengths, n_rows)), read_only(carray(rows, n_rows)),
               read_only(carray(iv, n_iv)), carray(out, (out_rows, out_cols)))
        return 0
    with ours():
        return cfunc(signature)(entry)


def stream_entry(update, final, word, seek=False):
    """A ``numba.cfunc`` running a hash object's ``update`` and ``final`` (its kernel set's
    dispatchers, linked in) on raw pointers: ``entry(state, n_state, buf, n_buf, buflen,
    data, n_data, total, out, n_out)``. With ``n_out`` 0 it absorbs ``data`` and returns the
    new ``buflen``; else it writes the digest of the ``total`` bytes absorbed into ``out``
    (``state`` untouched) and returns 0. With ``seek``, ``final`` is a tree hash's
    ``xof_final``, given the output's byte ``total`` as its block and offset. One entry for
    both keeps one symbol per object, as ``rows_entry``'s. Every bound must hold before the
    call (``buf`` one block long, ``buflen`` within it): nothing here checks them."""
    w = _word_type(word)
    u8p = types.CPointer(types.uint8)
    signature = types.int64(types.CPointer(w), types.int64, u8p, types.int64, types.int64,
                            u8p, types.int64, types.int64, u8p, types.int64)

    @njit
    def at_position(state, buf, buflen, position, out):
        final(state, buf, buflen, position >> 6, position & 63, out)
    finish = at_position if seek else final

    def entry(state, n_state, buf, n_buf, buflen, data, n_data, total, out, n_out):
        words = carray(state, n_state)
        block = carray(buf, n_buf)
        if n_out == 0:
            return update(words, block, buflen, read_only(carray(data, n_data)))
        finish(words, block, buflen, total, carray(out, n_out))
        return 0
    with ours():
        return cfunc(signature)(entry)


def object_code(entry):
    """(machine code of ``entry``'s linked module as an object file, the entry's symbol).

    Compiling the ``cfunc`` already made that machine code: Numba's JIT engine hands each
    object it emits to the library (``CodeLibrary._object_compiled_hook``, kept for its own
    cache as ``_compiled_object``): that object, the code Numba itself runs and caches, is the
    one stored. Emitting the module again (``JITCPUCodegen._tm.emit_object``) costs as much as
    compiling a lane kernel's code again, for the same code or code that differs only in register
    choices; it is the fallback where no object was kept."""
    library = entry._library            # finalized: the cfunc took its address when it compiled
    code = compiled_object(library)
    if code is None:
        code = library.codegen._tm.emit_object(library._final_module)
    return code, entry.native_name


def compiled_object(library):
    """The object file Numba's JIT engine emitted for ``library``, or None."""
    try:
        code = library._get_compiled_object()
    except (AttributeError, ValueError, RuntimeError):
        return None
    return bytes(code) if code else None


def declarations(entry):
    """The names ``entry``'s object uses but does not define: (functions, global variables)."""
    return _declared(entry._library._final_module)


def _declared(module):
    return (sorted(f.name for f in module.functions if f.is_declaration),
            sorted(g.name for g in module.global_variables if g.is_declaration))
