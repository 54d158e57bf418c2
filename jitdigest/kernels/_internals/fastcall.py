"""Section 19 of ``_internals``: a compiled entry (``oneshot``, HMAC's ``hmac_bytes``,
``update``) called as a CPython builtin function (``METH_FASTCALL``) that takes its arguments'
storage straight from the objects, instead of through Numba's compiled wrapper (which parses an
argument tuple and unboxes each argument through numpy's C API or the buffer protocol, most of
a short digest's call). The builtin is a few lines of LLVM IR (``_build``); it checks each
argument's exact type as the compiled function's signature says, reads data pointers and
lengths from CPython's ``PyBytesObject`` and numpy's ``PyArrayObject_fields``, calls the
compiled function in Numba's calling convention (``CPUCallConv.call_function``) and returns
its int64 result as an ``int``, or else its last argument, the output written in place.

The layouts are read off probes on first use (``layout()``), each confirmed against what Python
reports; where one does not match there is no builtin (``None``) and callers keep Numba's
wrapper. The code goes through Numba's code generator (``JITCodeLibrary.add_ir_module``).
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
_NPY_WRITEABLE = 0x0400


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
        read_only = np.arange(9, dtype=np.uint8)
        read_only.flags.writeable = False
        for array in (np.arange(5, dtype=np.uint32), np.zeros((3, 4), np.uint64)[:, 1],
                      read_only):
            at = id(array)
            if (type(array) is not np.ndarray
                    or _word_at(at + found["array_data"]) != array.ctypes.data
                    or ctypes.c_int.from_address(at + found["array_nd"]).value != array.ndim
                    or _word_at(_word_at(at + found["array_dims"])) != array.shape[0]
                    or _word_at(at + found["array_descr"]) != id(array.dtype)):
                return None
            flags = ctypes.c_int.from_address(at + found["array_flags"]).value
            wanted = _NPY_C_CONTIGUOUS | _NPY_ALIGNED
            if (((flags & wanted) == wanted) != (array.flags.c_contiguous and array.flags.aligned)
                    or bool(flags & _NPY_WRITEABLE) != array.flags.writeable):
                return None
    except Exception:
        return None
    return found


def bytes_entry(compiled, name):
    """A builtin function ``name`` running the compiled function ``compiled`` (a dispatcher's
    ``CompileResult``) on the arguments its signature takes (``_kind``): ``oneshot``'s ``(iv,
    message, digest)`` as ``_dispatch._signatures`` gives it, HMAC's ``(iv, key, message,
    digest)``, ``update``'s ``(state, buf, buflen, data)``. It returns the function's int64
    result as an ``int``; a function with none writes into its last argument, a ``bytes``
    object the caller has just made and nobody else has seen, and the builtin returns that.
    None where ``layout()`` finds none; ValueError for a signature it does not take."""
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
    # the compiled function's type in Numba's calling convention, as Numba declares it
    declared = context.declare_function(ir.Module(symbol + "_declared"), fndesc)
    kernel = ir.Function(module, declared.function_type, symbol + "_kernel")
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


def _kind(numba_type):
    """How the builtin takes an argument of the compiled function's ``numba_type``: "bytes" (a
    ``bytes`` object: ``Bytes``, ``ByteArray`` and read-only uint8 arrays, which Numba stores
    alike), "array" (an ndarray: the other arrays), "int" (a Python int: int64)."""
    from numba.core import types
    if isinstance(numba_type, (types.Bytes, types.ByteArray)):
        return "bytes"
    if isinstance(numba_type, types.Array) and numba_type.ndim == 1 and numba_type.layout == "C":
        return "bytes" if numba_type.dtype == types.uint8 and not numba_type.mutable else "array"
    if numba_type == types.int64:
        return "int"
    raise ValueError(f"no builtin takes a {numba_type}")


def _build(context, module, symbol, name, kernel, fndesc, offsets):
    """The builtin's function ``symbol(self, args, nargs)`` in ``module``. It takes ``bytes``
    where the compiled function takes ``bytes``, a ``bytearray`` or a read-only uint8 array
    (Numba stores all three alike); an ndarray of the array's dtype, 1-d, C-contiguous, aligned
    and, where the function writes it, writable; an ``int`` for an int64, not negative
    (``PyLong_AsSsize_t``: OverflowError past it). Arguments of any other type raise TypeError
    before the kernel runs (Numba's compiled entry, called without its dispatcher, checks none);
    array lengths and the output's size are the caller's, as they are through Numba's wrapper.
    The compiled kernel is reached by its address, registered under a name of this module's
    (``llvmlite.binding.add_symbol``); both stay loaded for the process's life."""
    from numba.core import types
    kinds = [_kind(t) for t in fndesc.argtypes]
    returns_int = fndesc.restype == types.int64
    if not returns_int and (fndesc.restype != types.none or kinds[-1] != "bytes"):
        raise ValueError("the builtin returns an int64 result, or its last (bytes) argument")
    function = ir.Function(module, ir.FunctionType(_PTR, [_PTR, _PTR.as_pointer(), _I64]),
                           symbol)
    _, args, nargs = function.args
    builder = ir.IRBuilder(function.append_basic_block("entry"))
    bad = function.append_basic_block("bad_arguments")
    failed = function.append_basic_block("kernel_failed")
    negative = function.append_basic_block("negative_int")
    null = ir.Constant(_PTR, None)

    def const(value):
        return ir.Constant(_I64, value)

    def field(obj, offset, kind=_I64):
        at = builder.gep(obj, [const(offset)])
        return builder.load(builder.bitcast(at, kind.as_pointer()))

    def require(condition):
        ok = function.append_basic_block()
        builder.cbranch(condition, ok, bad)
        builder.position_at_end(ok)

    def call(fname, result, params, values):
        fn = module.globals.get(fname)
        if fn is None:
            fn = ir.Function(module, ir.FunctionType(result, params), fname)
        return builder.call(fn, values)

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

    require(builder.icmp_unsigned("==", nargs, const(len(kinds))))
    objects = [builder.load(builder.gep(args, [const(i)])) for i in range(len(kinds))]
    for obj, kind in zip(objects, kinds):          # every type first, then any conversion
        wanted_type = {"bytes": bytes, "array": np.ndarray, "int": int}[kind]
        require(builder.icmp_unsigned("==", field(obj, offsets["type"]), const(id(wanted_type))))
    values, described = [], []
    for obj, kind, numba_type in zip(objects, kinds, fndesc.argtypes):
        if kind == "bytes":
            values.append(array(numba_type, builder.gep(obj, [const(offsets["bytes_data"])]),
                                field(obj, offsets["size"]), 1))
            described.append("bytes")
        elif kind == "array":
            word = np.dtype(numba_type.dtype.name)
            require(builder.icmp_unsigned("==", field(obj, offsets["array_descr"]),
                                          const(id(word))))
            require(builder.icmp_signed("==", field(obj, offsets["array_nd"], _I32),
                                        ir.Constant(_I32, 1)))
            flags = _NPY_C_CONTIGUOUS | _NPY_ALIGNED | (_NPY_WRITEABLE if numba_type.mutable
                                                        else 0)
            wanted = ir.Constant(_I32, flags)
            require(builder.icmp_unsigned(
                "==", builder.and_(field(obj, offsets["array_flags"], _I32), wanted), wanted))
            length = builder.load(builder.bitcast(field(obj, offsets["array_dims"], _PTR),
                                                  _I64.as_pointer()))
            values.append(array(numba_type, field(obj, offsets["array_data"], _PTR), length,
                                word.itemsize))
            described.append(f"a 1-d C-contiguous{' writable' if numba_type.mutable else ''} "
                             f"ndarray of {word.name}")
        else:
            number = call("PyLong_AsSsize_t", _I64, [_PTR], [obj])
            with builder.if_then(builder.icmp_signed("==", number, const(-1)), likely=False):
                raised = call("PyErr_Occurred", _PTR, [], [])
                with builder.if_then(builder.icmp_unsigned("!=", raised, null)):
                    builder.ret(null)                   # OverflowError, as hashlib's
            ok = function.append_basic_block()
            builder.cbranch(builder.icmp_signed(">=", number, const(0)), ok, negative)
            builder.position_at_end(ok)
            values.append(number)
            described.append("int")
    status, result = context.call_conv.call_function(builder, kernel, fndesc.restype,
                                                     fndesc.argtypes, values)
    done = function.append_basic_block("done")
    builder.cbranch(status.is_error, failed, done)
    builder.position_at_end(done)
    if returns_int:
        builder.ret(call("PyLong_FromSsize_t", _PTR, [_I64], [result]))
    else:
        # Py_INCREF(out): the low 32 bits of the count, as CPython 3.12+ does (its immortal
        # objects have them negative and are left alone; out, just made, is never one)
        out = objects[-1]
        count = builder.bitcast(builder.gep(out, [const(offsets["refcount"])]),
                                _I32.as_pointer())
        value = builder.load(count)
        with builder.if_then(builder.icmp_signed(">=", value, ir.Constant(_I32, 0)),
                             likely=True):
            builder.store(builder.add(value, ir.Constant(_I32, 1)), count)
        builder.ret(out)

    for block, exception, text in (
            (bad, TypeError, f"{name}() takes {', '.join(described)}"),
            (negative, ValueError, f"{name}() takes no negative int"),
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
