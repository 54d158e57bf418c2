"""Section 14 of ``_internals``: a compiled batch kernel as machine code that a process can run
without importing Numba (``jitdigest._native`` loads it with llvmlite alone).

Numba's cache cannot be read without Numba (its entries are pickles of Numba's objects), and
importing Numba is most of a short run's time: measured on AMD EPYC (znver1), a process
printing one SHA-256 digest took 0.84 s through Numba and 0.15 s from the object code below
through llvmlite and ctypes (the bare interpreter: 0.08 s). So a batch kernel's ``hash_rows``
is also kept as an object file: a C-callable wrapper (``numba.cfunc``) that views its pointer
arguments as the kernel's arrays and calls it, linked by Numba with every function it reaches
(``CodeLibrary._final_module``, as Numba's JIT engine emitted it: ``_compiled_object``).

The object refers by name to what it does not define: LLVM intrinsics, CPython's C API, and a
few helpers of Numba's C runtime that only an error path or a reference count reaching zero
calls (the wrapper's report of an exception, ``NRT_decref`` of an array Numba allocated).
``declarations()`` lists them, for the loader to resolve or refuse.

Part of the one package that touches Numba's and llvmlite's private internals (see
``__init__``); tested in tests/test_internals.py."""
from numba import carray, cfunc, types
from numba.extending import intrinsic


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


def rows_entry(kernel, word):
    """A ``numba.cfunc`` running ``kernel`` (a batch ``hash_rows`` dispatcher, compiled for
    ``(data, index, index, index, iv, out)`` as ``_dispatch._signatures`` gives them) on raw
    pointers: ``entry(values, n_values, starts, lengths, rows, n_rows, iv, n_iv, out, out_rows,
    out_cols) -> 0``. Every bound must hold before the call: nothing here checks them."""
    w = types.uint32 if word.__name__ == "uint32" else types.uint64
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
    return cfunc(signature)(entry)


def object_code(entry):
    """(machine code of ``entry``'s linked module as an object file, the entry's symbol).

    Compiling the ``cfunc`` already made that machine code: Numba's JIT engine hands each
    object it emits to the library (``CodeLibrary._object_compiled_hook``, kept for its own
    cache as ``_compiled_object``): that object, the code Numba itself runs and caches, is the
    one stored. Emitting the module again (``JITCPUCodegen._tm.emit_object``) cost 0.3-0.5 s a
    lane kernel (AMD EPYC, znver3), for the same code or code that differs only in register
    choices; it is the fallback where no object was kept."""
    library = entry._library
    library._ensure_finalized()
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
    module = entry._library._final_module
    return (sorted(f.name for f in module.functions if f.is_declaration),
            sorted(g.name for g in module.global_variables if g.is_declaration))
