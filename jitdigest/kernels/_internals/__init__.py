"""Every use of Numba's and llvmlite's private internals, each with a test in
tests/test_internals.py (tests/test_internals_compile.py: sections 10, 11 and 15-18, which cut
compile time).

Nothing outside this package touches them: a Numba or llvmlite upgrade that moves one breaks
its module and its test, loudly, instead of silently costing speed or aborting the process. The
seams, one module each (``vectors``, ``stack``, ``gil``, ``target``, ``cache``, ``threads``,
``cuda_words``, ``words``, ``ptx``, ``ssa``, ``call_types``, ``typed_once``, ``kernel_address``,
``native``, ``literals``, ``ir_vars``, ``markup``, ``inline_overloads``, ``fastcall``, in
this order), every name re-exported here:

1. ``wide_vectors()``: a function attribute llvmlite does not know (``FunctionAttributes._known``);
2. ``stack_array()``: a Numba array over a stack buffer (``BaseContext.populate_array``);
3. ``save_thread_if()`` / ``restore_thread()``: releasing and taking back the GIL from
   compiled code (CPython's ``PyEval_SaveThread`` / ``PyEval_RestoreThread`` /
   ``PyGILState_Check`` called from LLVM IR);
4. ``jit_target()`` / ``compiled_target()``: the CPU model and features Numba's JIT compiles
   for (``numba.core.codegen.JITCPUCodegen``'s decision; ``jitdigest._cpu`` builds on it);
5. ``KernelCache``, ``set_cache()``, ``cache_of()``: Numba's on-disk cache subclassed
   (``numba.core.caching``, ``rtsys.initialize``, ``Dispatcher._cache``); the policy (where,
   which format, what to do with a damaged entry) lives in ``_numba_cache``;
6. ``launched_layer()``, ``launch_threading_layer()``, ``compiler_lock()``, ``llvm_lock()``:
   Numba's threading layer set-up (``numba.np.ufunc.parallel``), for ``jitdigest._parallel``;
   its global compiler lock and llvmlite's lock around LLVM calls, for ``jitdigest._fork``;
7. ``local_words()`` / ``local_scratch()`` / ``local_copy()``: section 2's arrays, zeroed or
   copied, for CUDA device code (which may not return an array from a device function, so
   ``_jit``'s scratch helpers become these in ``_jit_cuda``);
8. ``address_of()`` / ``word_at()``: an array's data address, and the native word at a byte
   offset of a uint8 array (CUDA loaders read aligned message words whole);
9. ``ptx_without_gpu()``: CUDA kernels compiled to PTX on a machine with no GPU (numba-cuda's
   ``CUDADispatcher.compile_device`` asks the current device for its compute capability);
10. ``stmt_index()``: Numba's SSA reconstruction finds a statement's position in its block by a
   linear scan (``numba.core.ssa._FixSSAVars._stmt_index``), quadratic in a block's length;
   the generated kernels' blocks are thousands of statements long. Replaced, on import, by a
   lookup with the same results;
11. ``call_type()``: Numba types every ``a + b`` by trying operator.add's templates in turn
   (its own memo lasts one function's typing, ``BaseFunction.get_call_type``); for an operator
   on scalar numbers the answer is remembered, once per typing context and target;
12. ``typed_once()``: a block function's (or a backend's ``piece``'s) calls from other compiled
   functions typed with its input as a read-only uint8 array, an output it writes as a writable
   one and its integers as int64 (``Dispatcher.get_call_template``), so each is compiled once
   whatever its callers hold; ``bytes`` and ``bytearray`` cast to those arrays (Numba stores
   all three in one struct, ``ArrayModel``);
13. ``KernelAddress``: a compiled kernel passed as a first-class function argument (the batch
   ``prange`` driver's), its address looked up once
   (``numba.experimental.function_type._get_wrapper_address``) instead of at every call;
14. ``rows_entry()`` / ``object_code()`` / ``declarations()`` / ``kernel_object()``: a batch
   kernel as object files that run without Numba (the kernel's object and a ``cfunc`` wrapper
   calling it by its symbol, ``BaseContext.declare_function`` and the call convention's
   ``call_function``; or one wrapper with the kernel linked in, ``CodeLibrary._final_module``;
   each as Numba's JIT engine emitted it, ``CodeLibrary._get_compiled_object``), for
   ``jitdigest._native``;
15. ``lit_or_omitted()`` / ``maybe_literal()``: Numba asks for the literal type of every binary
   operator's operands while lowering (``numba.core.lowering._lit_or_omitted``) and of every
   global while typing (``types.maybe_literal``), and gets most answers by raising and catching
   an exception; replaced, on import, by functions with the same answers that raise none;
16. ``rec_list_vars()``: the variables of an IR statement (``ir.Inst._rec_list_vars``, under
   every pass's use/def analysis), each value's kind found once per type instead of by up to
   four ``isinstance`` checks; replaced, on import, by a function with the same answers;
17. ``markup()``: Numba's highlighted error text (``errors.HighlightColorScheme._markup``,
   built for every exception raised and caught while typing) without colorama wrapping the
   standard streams for each; replaced, on import, by a function that returns the same text
   (only where colorama is installed: without it, Numba marks nothing up);
18. ``get_jit_decorator()``: an overload of jitdigest's inlined at IR level (``cpu_overload``)
   is not also compiled on its own for each argument types (Numba's ``_build_impl`` does, and
   throws the result away): the dispatcher Numba makes for it may not compile
   (``_OverloadFunctionTemplate._get_jit_decorator``, ``Dispatcher._can_compile``), and its
   IR is built and typed once per argument types instead of at every call
   (``_OverloadFunctionTemplate.generic`` remembered);
19. ``bytes_entry()``: a compiled entry taking arrays, ints and ``bytes`` (``oneshot``, HMAC's
   ``hmac_bytes``, ``update``) as a CPython builtin function (``METH_FASTCALL``) that reads
   its arguments' storage straight from the objects (CPython's ``PyBytesObject``, numpy's
   ``PyArrayObject_fields``, their offsets confirmed on probes by ``fastcall_layout()``) and
   calls the compiled function by its address (Numba's call convention,
   ``CPUCallConv.get_function_type`` / ``call_function``; its code generator,
   ``CPUContext.codegen``), for ``sha256(data).digest()``, ``hmac.digest()`` and
   ``update()``.

``REQUIRED`` lists every private name used in the package and ``missing()`` says which of them
this Numba/llvmlite lacks. Importing it imports Numba (``jitdigest._cpu`` imports it lazily, from
its functions) and installs the replacements of sections 10, 11, 15, 16, 17 and 18.
"""
from ... import _cpu

_cpu.import_numba()
import inspect  # noqa: E402
import llvmlite.binding as ll  # noqa: E402

# Section 6 first: jitdigest._fork finds the locks a fork must wait for here, and the seams
# below may compile (take Numba's compiler lock) while they are imported.
from .threads import launched_layer, launch_threading_layer, compiler_lock, llvm_lock  # noqa: E402,F401,E501
from .vectors import PREFER_512, _prefer_wide_vectors, wide_vectors  # noqa: E402,F401
from .stack import stack_array  # noqa: E402,F401
from .gil import save_thread_if, restore_thread  # noqa: E402,F401
from .target import jit_target, compiled_target  # noqa: E402,F401
from .cache import KernelCache, set_cache, cache_of  # noqa: E402,F401
from .cuda_words import local_words, local_scratch, local_copy  # noqa: E402,F401
from .words import address_of, word_at, words_at, put_word  # noqa: E402,F401
from .ptx import ptx_without_gpu  # noqa: E402,F401
from .ssa import NUMBA_STMT_INDEX, stmt_index  # noqa: E402,F401
from .call_types import NUMBA_GET_CALL_TYPE, call_type  # noqa: E402,F401
from .typed_once import typed_once  # noqa: E402,F401
from .kernel_address import KernelAddress  # noqa: E402,F401
from .native import declarations, kernel_object, object_code, rows_entry  # noqa: E402,F401
from .literals import (NUMBA_LIT_OR_OMITTED, NUMBA_MAYBE_LITERAL, lit_or_omitted,  # noqa: E402,F401
                       maybe_literal)
from .ir_vars import NUMBA_REC_LIST_VARS, rec_list_vars  # noqa: E402,F401
from .markup import NUMBA_MARKUP, markup  # noqa: E402,F401
from .inline_overloads import (NUMBA_GENERIC, NUMBA_GET_JIT_DECORATOR, generic,  # noqa: E402,F401
                               get_jit_decorator)
from .fastcall import bytes_entry, layout as fastcall_layout  # noqa: E402,F401


# --- inventory ----------------------------------------------------------------------------

# Every private (or unadvertised) name the sections above rely on, as "module:attribute.path";
# ``missing()`` checks each, tests/test_internals.py asserts none is missing.
REQUIRED = (
    "llvmlite.ir.values:FunctionAttributes._known",
    "llvmlite.ir.values:FunctionAttributes.add",
    "numba.core.base:BaseContext.populate_array",
    "numba.core.base:BaseContext.make_array",
    "numba.core.cgutils:memset",
    "numba.core.cgutils:raw_memcpy",
    "numba.core.codegen:get_host_cpu_features",
    "numba.core.codegen:JITCPUCodegen._get_host_cpu_name",
    "numba.core.codegen:JITCPUCodegen._get_host_cpu_features",
    "numba.core.codegen:CPUCodegen.magic_tuple",
    "numba.core.config:CPU_NAME",
    "numba.core.config:CPU_FEATURES",
    "numba.core.config:ENABLE_AVX",
    "numba.core.registry:cpu_target",
    "numba.core.runtime:rtsys.initialize",
    "numba.core.caching:_CacheLocator.get_cache_path",
    "numba.core.caching:_CacheLocator.get_source_stamp",
    "numba.core.caching:_CacheLocator.get_disambiguator",
    "numba.core.caching:_CacheLocator.from_function",
    "numba.core.caching:CompileResultCacheImpl._locator_classes",
    "numba.core.caching:CompileResultCacheImpl.filename_base",
    "numba.core.caching:CompileResultCacheImpl.locator",
    "numba.core.caching:IndexDataCacheFile._save_data",
    "numba.core.caching:IndexDataCacheFile._load_data",
    "numba.core.caching:IndexDataCacheFile._dump",
    "numba.core.caching:IndexDataCacheFile._data_path",
    "numba.core.caching:IndexDataCacheFile._open_for_write",
    "numba.core.caching:FunctionCache._impl_class",
    "numba.core.caching:FunctionCache._load_overload",
    "numba.core.caching:FunctionCache._save_overload",
    "numba.core.caching:FunctionCache.load_overload",
    "numba.core.caching:FunctionCache.save_overload",
    "numba.np.ufunc.parallel:_launch_threads",
    "numba.np.ufunc.parallel:_is_initialized",
    "numba.core.compiler_lock:global_compiler_lock._lock",
    "llvmlite.binding.ffi:lib._lock._lock",
    "numba.core.ssa:_FixSSAVars._stmt_index",
    "numba.core.ssa:_run_block_rewrite",
    "numba.core.types.functions:BaseFunction.get_call_type",
    "numba.core.types.functions:BaseFunction.augment",
    "numba.core.target_extension:get_local_target",
    "numba.core.dispatcher:Dispatcher.get_call_template",
    "numba.core.registry:CPUDispatcher",
    "numba.experimental.function_type:_get_wrapper_address",
    "numba.core.codegen:CPUCodeLibrary._ensure_finalized",
    "numba.core.codegen:CPUCodeLibrary._get_compiled_object",
    "numba.core.base:BaseContext.declare_function",
    "numba.core.callconv:CPUCallConv.call_function",
    "numba.core.callconv:CPUCallConv.return_status_propagate",
    "numba.core.compiler:CompileResult.fndesc",
    "numba.core.lowering:_lit_or_omitted",
    "numba.core.types:maybe_literal",
    "numba.core.types.abstract:Literal.ctor_map",
    "numba.core.ir:Inst._rec_list_vars",
    "numba.core.typing.templates:_OverloadFunctionTemplate._get_jit_decorator",
    "numba.core.typing.templates:_OverloadFunctionTemplate._build_impl",
    "numba.core.typing.templates:_OverloadFunctionTemplate.generic",
    "numba.core.targetconfig:ConfigStack.top_or_none",
    "numba.core.cpu:CPUContext.codegen",
    "numba.core.codegen:JITCodeLibrary.add_ir_module",
    "numba.core.codegen:JITCodeLibrary.get_pointer_to_function",
    "numba.core.callconv:CPUCallConv.get_function_type",
    "numba.core.compiler_lock:global_compiler_lock",
)

# Keyword parameters of the private functions called with keywords.
_PARAMETERS = {
    "numba.np.arrayobj:populate_array": ("data", "shape", "strides", "itemsize", "meminfo"),
    "numba.core.caching:IndexDataCacheFile.__init__": ("cache_path", "filename_base",
                                                      "source_stamp"),
    "jitdigest.kernels._internals:NUMBA_STMT_INDEX": ("self", "defstmt", "block", "stop"),
    "jitdigest.kernels._internals:NUMBA_GET_CALL_TYPE": ("self", "context", "args", "kws"),
    "jitdigest.kernels._internals:NUMBA_LIT_OR_OMITTED": ("value",),
    "jitdigest.kernels._internals:NUMBA_MAYBE_LITERAL": ("value",),
    "jitdigest.kernels._internals:NUMBA_REC_LIST_VARS": ("self", "val"),
    "jitdigest.kernels._internals:NUMBA_GET_JIT_DECORATOR": ("self",),
    "jitdigest.kernels._internals:NUMBA_GENERIC": ("self", "args", "kws"),
    "numba.core.dispatcher:Dispatcher.get_call_template": ("self", "args", "kws"),
}

# What the compiled code calls by name, resolved in this process once Numba's JIT is set up.
SYMBOLS = ("PyEval_SaveThread", "PyEval_RestoreThread", "PyGILState_Check", "PyErr_SetString",
           "PyErr_Occurred", "PyLong_AsSsize_t", "PyLong_FromSsize_t")


def _resolve(path):
    import importlib
    module, _, attrs = path.partition(":")
    obj = importlib.import_module(module)
    for attr in attrs.split("."):
        obj = getattr(obj, attr)
    return obj


def missing():
    """What this Numba/llvmlite lacks of what this module relies on: a list of lines such as
    ``"numba.core.caching:IndexDataCacheFile._dump: AttributeError: ..."`` (empty when all is
    there). Instance attributes (``_cache_path``, ``_impl``, ``_cache_file``,
    ``_index_path``, ``Dispatcher._cache``) are checked by using a ``KernelCache``."""
    problems = []
    for path in REQUIRED:
        try:
            _resolve(path)
        except Exception as exc:
            problems.append(f"{path}: {type(exc).__name__}: {exc}")
    for path, names in _PARAMETERS.items():
        try:
            params = inspect.signature(_resolve(path)).parameters
        except Exception as exc:
            problems.append(f"{path}: {type(exc).__name__}: {exc}")
            continue
        lost = [n for n in names if n not in params]
        if lost:
            problems.append(f"{path}: no parameter(s) {', '.join(lost)}")
    from numba.core.registry import cpu_target
    cpu_target.target_context           # Numba's JIT set up: the process's symbols searchable
    for name in SYMBOLS:
        if not ll.address_of_symbol(name):
            problems.append(f"{name}: symbol not found in this process")
    return problems
