"""Section 19 of ``_internals``: a compiled entry (``oneshot``, HMAC's ``hmac_bytes``) called
as a CPython builtin function (``METH_FASTCALL``) that takes its arguments' storage straight
from the objects.

Why: ``sha256(data).digest()`` calls the one-shot kernel once, through Numba's compiled
wrapper, which parses an argument tuple and unboxes each argument through numpy's C API or the
buffer protocol: measured on AMD EPYC (znver3), 180 ns of the call's 310 for a 64-byte
SHA-256 (the two compressions take about 90), against 25 ns for calling a builtin; HMAC's
call, with one more argument, saved about 500 ns. The builtin made here is a few lines of
LLVM IR: it checks that its arguments are an ndarray of the kernel's word type (1-d,
C-contiguous, aligned) and ``bytes`` objects, reads their data pointers and lengths from
CPython's ``PyBytesObject`` and numpy's ``PyArrayObject_fields``, calls the compiled function
(Numba's calling convention: ``CPUCallConv.call_function``, the arrays built as Numba's
``ArrayModel`` structs) and returns the output object (its last argument). Arguments of any
other type raise TypeError before the kernel runs (Numba's compiled entry, called without its
dispatcher, checks none); the IV's length and the output's size are the caller's, as they are
through Numba's wrapper.

The layouts are read off probes on first use (``layout()``): the offsets of an object's type
and reference count, a ``bytes`` object's size and first byte, an ndarray's data pointer,
dimension count, shape, dtype and flags, each confirmed against what Python reports for it.
Where one does not match (a debug or free-threaded build, a future numpy) there is no builtin
(``None``) and callers keep Numba's wrapper.

The builtin's code goes through Numba's code generator (``CPUContext.codegen()``,
``JITCodeLibrary.add_ir_module``); the compiled kernel is reached by its address, registered
under a name of this module's (``llvmlite.binding.add_symbol``). Both stay loaded for the
process's life, as Numba's own compiled code does.

Part of the one package that touches Numba's and llvmlite's private internals (see
``__init__``); tested in tests/test_internals.py."""
import ctypes
import functools
import itertools
import re
import struct
import sys
import sysconfig

import llvmlite.binding as ll
import numpy as np
from llvmlite import ir
from numba.core import cgutils
from numba.core.compiler_lock import global_compiler_lock
from numba.core.registry import cpu_target

_I8 = ir.IntType(8)
_I32 = ir.IntType(32)
_I64 = ir.IntType(64)
_PTR = _I8.as_pointer()
METH_FASTCALL = 0x0080
_NPY_C_CONTIGUOUS = 0x0001
_NPY_ALIGNED = 0x0100


class _MethodDef(ctypes.Structure):
    """CPython's ``PyMethodDef``."""
    _fields_ = [("ml_name", ctypes.c_char_p), ("ml_meth", ctypes.c_void_p),
                ("ml_flags", ctypes.c_int), ("ml_doc", ctypes.c_char_p)]


_names = itertools.count()
_alive = []             # (method definition, name bytes, code library) of each builtin made


def _word_at(address):
    return ctypes.c_ssize_t.from_address(address).value


@functools.lru_cache(maxsize=None)
def layout():
    """The byte offsets the builtin reads, as a dict, or None where this Python or numpy does
    not store its objects as probed (every offset is confirmed on a probe object)."""
    if (sys.implementation.name != "cpython" or struct.calcsize("P") != 8
            or sysconfig.get_config_var("Py_GIL_DISABLED")
            or object.__basicsize__ != 16 or sys.byteorder != "little"):
        return None
    found = {"refcount": 0, "type": 8, "size": 16, "bytes_data": bytes.__basicsize__ - 1,
             "array_data": 16, "array_nd": 24, "array_dims": 32, "array_descr": 56,
             "array_flags": 64}
    try:
        probe = bytes(range(7, 40))
        if (_word_at(id(probe) + found["type"]) != id(bytes)
                or _word_at(id(probe) + found["size"]) != len(probe)
                or ctypes.string_at(id(probe) + found["bytes_data"], len(probe)) != probe):
            return None
        before = sys.getrefcount(probe)
        count = ctypes.c_uint32.from_address(id(probe) + found["refcount"])
        count.value += 1
        moved = sys.getrefcount(probe) - before
        count.value -= 1
        if moved != 1:
            return None
        for array in (np.arange(5, dtype=np.uint32), np.zeros((3, 4), np.uint64)[:, 1]):
            at = id(array)
            if (type(array) is not np.ndarray
                    or _word_at(at + found["array_data"]) != array.ctypes.data
                    or ctypes.c_int.from_address(at + found["array_nd"]).value != array.ndim
                    or _word_at(_word_at(at + found["array_dims"])) != array.shape[0]
                    or _word_at(at + found["array_descr"]) != id(array.dtype)):
                return None
            flags = ctypes.c_int.from_address(at + found["array_flags"]).value
            wanted = _NPY_C_CONTIGUOUS | _NPY_ALIGNED
            if ((flags & wanted) == wanted) != (array.flags.c_contiguous and array.flags.aligned):
                return None
    except Exception:
        return None
    return found


def bytes_entry(compiled, name):
    """A builtin ``entry(iv, *data, out) -> out`` running the compiled function ``compiled`` (a
    dispatcher's ``CompileResult`` whose arguments are an array of words then ``bytes`` and
    ``bytearray`` ones: ``oneshot``'s ``(iv, message, digest)`` as ``_dispatch._signatures``
    gives it, HMAC's ``(iv, key, message, digest)``): ``iv`` an ndarray of those words (1-d,
    C-contiguous, aligned), the others exact ``bytes`` objects, the digest written into the
    last one's storage (a ``bytes`` object the caller has just made and nobody else has seen).
    None where ``layout()`` finds none."""
    offsets = layout()
    if offsets is None:
        return None
    context = cpu_target.target_context
    fndesc = compiled.fndesc
    address = compiled.library.get_pointer_to_function(fndesc.llvm_func_name)
    if not address:
        return None
    number = next(_names)                   # (atomic, as the append below: no lock to fork)
    symbol = f"jitdigest_fastcall_{number}_{re.sub(r'[^A-Za-z0-9_]', '_', name)}"
    ll.add_symbol(symbol + "_kernel", address)
    module = ir.Module(symbol)
    kernel = ir.Function(module, context.call_conv.get_function_type(fndesc.restype,
                                                                       fndesc.argtypes),
                         symbol + "_kernel")
    _build(context, module, symbol, name, kernel, fndesc, offsets)
    with global_compiler_lock:
        library = context.codegen().create_library(symbol)
        library.add_ir_module(module)
        library.finalize()
        code = library.get_pointer_to_function(symbol)
    encoded = name.encode()
    method = _MethodDef(encoded, code, METH_FASTCALL, None)
    new = ctypes.pythonapi.PyCFunction_NewEx
    new.restype = ctypes.py_object
    new.argtypes = [ctypes.c_void_p, ctypes.c_void_p, ctypes.c_void_p]
    builtin = new(ctypes.addressof(method), None, None)
    _alive.append((method, encoded, library))
    return builtin


def _build(context, module, symbol, name, kernel, fndesc, offsets):
    """The builtin's function ``symbol(self, args, nargs)`` in ``module``."""
    function = ir.Function(module, ir.FunctionType(_PTR, [_PTR, _PTR.as_pointer(), _I64]),
                           symbol)
    _, args, nargs = function.args
    builder = ir.IRBuilder(function.append_basic_block("entry"))
    bad = function.append_basic_block("bad_arguments")
    failed = function.append_basic_block("kernel_failed")

    def const(value):
        return ir.Constant(_I64, value)

    def field(obj, offset, kind=_I64):
        at = builder.gep(obj, [const(offset)])
        return builder.load(builder.bitcast(at, kind.as_pointer()))

    def require(condition):
        ok = function.append_basic_block()
        builder.cbranch(condition, ok, bad)
        builder.position_at_end(ok)

    iv_type, *buffer_types = fndesc.argtypes
    require(builder.icmp_unsigned("==", nargs, const(len(fndesc.argtypes))))
    iv, *buffers = (builder.load(builder.gep(args, [const(i)]))
                    for i in range(len(fndesc.argtypes)))
    for buffer in buffers:
        require(builder.icmp_unsigned("==", field(buffer, offsets["type"]), const(id(bytes))))
    require(builder.icmp_unsigned("==", field(iv, offsets["type"]), const(id(np.ndarray))))
    word = np.dtype(iv_type.dtype.name)
    require(builder.icmp_unsigned("==", field(iv, offsets["array_descr"]), const(id(word))))
    require(builder.icmp_signed("==", field(iv, offsets["array_nd"], _I32),
                                ir.Constant(_I32, 1)))
    wanted = ir.Constant(_I32, _NPY_C_CONTIGUOUS | _NPY_ALIGNED)
    flags = field(iv, offsets["array_flags"], _I32)
    require(builder.icmp_unsigned("==", builder.and_(flags, wanted), wanted))
    iv_words = builder.load(builder.bitcast(field(iv, offsets["array_dims"], _PTR),
                                            _I64.as_pointer()))

    def array(numba_type, data_pointer, length, itemsize):
        # Numba's ArrayModel struct, field by field (``context.make_array`` would import
        # numba.np.arrayobj, a tenth of a second, into a process whose kernels all came from
        # the cache)
        value = cgutils.create_struct_proxy(numba_type)(context, builder)
        value.meminfo = ir.Constant(value.meminfo.type, None)
        value.parent = ir.Constant(value.parent.type, None)
        value.nitems = length
        value.itemsize = const(itemsize)
        value.data = builder.bitcast(data_pointer, value.data.type)
        value.shape = cgutils.pack_array(builder, [length])
        value.strides = cgutils.pack_array(builder, [const(itemsize)])
        return value._getvalue()

    arrays = [array(iv_type, field(iv, offsets["array_data"], _PTR), iv_words, word.itemsize)]
    arrays += [array(t, builder.gep(b, [const(offsets["bytes_data"])]),
                     field(b, offsets["size"]), 1) for t, b in zip(buffer_types, buffers)]
    status, _ = context.call_conv.call_function(builder, kernel, fndesc.restype,
                                                fndesc.argtypes, arrays)
    done = function.append_basic_block("done")
    builder.cbranch(status.is_error, failed, done)
    builder.position_at_end(done)
    # Py_INCREF(out): the low 32 bits of the count, as CPython 3.12+ does (its immortal
    # objects have them negative and are left alone; out, just made, is never one)
    out = buffers[-1]
    count = builder.bitcast(builder.gep(out, [const(offsets["refcount"])]), _I32.as_pointer())
    value = builder.load(count)
    with builder.if_then(builder.icmp_signed(">=", value, ir.Constant(_I32, 0)), likely=True):
        builder.store(builder.add(value, ir.Constant(_I32, 1)), count)
    builder.ret(out)

    for block, exception, text in (
            (bad, TypeError,
             f"{name}() takes a 1-d C-contiguous ndarray of {word.name} and "
             f"{len(buffers)} bytes objects"),
            (failed, RuntimeError, f"{name}(): the kernel failed")):
        builder.position_at_end(block)
        _raise(builder, module, exception, text)


def _raise(builder, module, exception, text):
    """``PyErr_SetString(exception, text); return NULL``, ``exception`` a built-in exception
    class (a static object: its address is the constant)."""
    set_string = module.globals.get("PyErr_SetString")
    if set_string is None:
        set_string = ir.Function(module, ir.FunctionType(ir.VoidType(), [_PTR, _PTR]),
                                 "PyErr_SetString")
    encoded = bytearray(text.encode() + b"\0")
    message = ir.GlobalVariable(module, ir.ArrayType(_I8, len(encoded)),
                                module.get_unique_name("message"))
    message.global_constant = True
    message.linkage = "internal"
    message.initializer = ir.Constant(ir.ArrayType(_I8, len(encoded)), encoded)
    builder.call(set_string, [ir.Constant(_I64, id(exception)).inttoptr(_PTR),
                              builder.bitcast(message, _PTR)])
    builder.ret(ir.Constant(_PTR, None))
