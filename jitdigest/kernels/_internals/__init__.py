"""Every use of Numba's and llvmlite's private internals, each with a test in
tests/test_internals.py (tests/test_internals_compile.py: the compile-speed sections 10, 11,
18 and 20).

Nothing outside this package touches them: a Numba or llvmlite upgrade that moves one breaks
its module and its test, loudly, instead of silently costing speed or aborting the process.
One module per seam (the list below), every name re-exported here. ``REQUIRED`` and
``_PARAMETERS`` list the private names the package relies on; ``missing()`` says which of them
this Numba/llvmlite lacks. Importing the package imports Numba and changes nothing in it.
"""
# One module per seam, every name re-exported below:
# 1. ``vectors``: ``wide_vectors()``, a function attribute llvmlite does not know;
# 2. ``stack``: ``stack_array()``, a Numba array over a stack buffer;
# 3. ``gil``: ``save_thread_if()`` / ``restore_thread()``, the GIL released from compiled code;
# 4. ``target``: ``jit_target()`` / ``compiled_target()``, the CPU model and features Numba's JIT
#    compiles for (``jitdigest``'s CPU detection builds on it);
# 5. ``cache``: ``KernelCache``, ``set_cache()``, ``cache_of()``, an on-disk cache Numba's
#    dispatcher uses as its own; the policy lives in ``_numba_cache``;
# 6. ``threads``: Numba's threading layer set-up, its compiler lock and llvmlite's lock (for
#    the parallel driver and the fork guard);
# 7. ``cuda_words``: section 2's arrays for CUDA device code;
# 8. ``words``: an array's address, and native words read from or written to a uint8 array;
# 9. ``ptx``: ``ptx_without_gpu()``, CUDA kernels compiled to PTX with no GPU present;
# 10. ``ssa``: ``stmt_index()``, Numba's SSA pass's statement lookup without a linear scan;
# 11. ``call_types``: ``call_type()``, an operator on scalar numbers typed once;
# 12. ``typed_once``: a block function compiled for one signature whatever its callers hold;
# 13. ``kernel_address``: ``KernelAddress``, a compiled kernel as a first-class function
#     argument, its address looked up once;
# 14. ``native``: a batch kernel, and a hash object's update and final, as object files that
#     run without Numba;
# 18. ``inline_overloads``: jitdigest's IR-inlined overloads not compiled on their own;
# 19. ``fastcall``: ``bytes_entry()``, a compiled entry as a CPython ``METH_FASTCALL`` builtin;
# 20. ``ours``: ``ours()``, the context in which jitdigest compiles its kernels: Numba's compiler
#     lock held and sections 10, 11 and 18 in place of Numba's functions, which are Numba's own
#     again when it exits (a user's ``@njit`` code compiles on unmodified Numba);
#     ``ours_dispatcher()`` makes a dispatcher compile inside it.

from ...base import host as _host

_host.import_numba()
import inspect  # noqa: E402
import llvmlite.binding as ll  # noqa: E402

# Section 6 first: the fork guard finds the locks a fork must wait for here, and the seams
# below may compile (take Numba's compiler lock) while they are imported.
from .threads import launched_layer, launch_threading_layer, compiler_lock, llvm_lock  # noqa: E402,F401,E501
from .ours import ours, ours_dispatcher, OursDispatcher  # noqa: E402,F401
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
from .native import declarations, kernel_object, object_code, rows_entry, stream_entry  # noqa: E402,F401,E501
from .inline_overloads import (NUMBA_GENERIC, NUMBA_GET_JIT_DECORATOR, generic,  # noqa: E402,F401
                               get_jit_decorator)
from .fastcall import bytes_entry, layout as fastcall_layout  # noqa: E402,F401


# --- inventory ----------------------------------------------------------------------------

# Every private (or unadvertised) name the sections above rely on, as "module:attribute.path",
# each once (here or in ``_PARAMETERS``); ``missing()`` checks each, tests/test_internals.py
# asserts none is missing. Not listed: public names (llvmlite's ``attributes.add`` and
# ``declare_intrinsic``, ``numba.threading_layer()``, ``Dispatcher.compile``), and names a
# docstring gives only as the reason for a design (``JITCPUCodegen._get_host_cpu_*``,
# ``_run_block_rewrite``, ``BaseFunction.augment``, ``_build_impl``): their sections' tests
# pin the behaviour itself.
REQUIRED = (
    "llvmlite.ir.values:FunctionAttributes._known",
    "numba.core.base:BaseContext.make_array",
    "numba.core.codegen:get_host_cpu_features",
    "numba.core.codegen:CPUCodegen.magic_tuple",
    "numba.core.config:CPU_NAME",
    "numba.core.config:CPU_FEATURES",
    "numba.core.registry:cpu_target",
    "numba.core.runtime:rtsys.initialize",
    "numba.core.compiler:CompileResult._reduce",
    "numba.core.compiler:CompileResult._rebuild",
    "numba.np.ufunc.parallel:_launch_threads",
    "numba.core.compiler_lock:global_compiler_lock._lock",
    "llvmlite.binding.ffi:lib._lock._lock",
    "numba.core.registry:CPUDispatcher",
    "numba.core.codegen:CPUCodeLibrary._get_compiled_object",
    "numba.core.base:BaseContext.declare_function",
    "numba.core.callconv:CPUCallConv.call_function",
    "numba.core.callconv:CPUCallConv.return_status_propagate",
    "numba.core.compiler:CompileResult.fndesc",
    "numba.core.targetconfig:ConfigStack.top_or_none",
    "numba.core.cpu:CPUContext.codegen",
    "numba.core.codegen:JITCodeLibrary.add_ir_module",
    "numba.core.codegen:JITCodeLibrary.get_pointer_to_function",
)

# Keyword parameters of the private functions called with keywords, and of those a replacement
# stands in for (section 20 puts it where Numba calls the original with these arguments).
_PARAMETERS = {
    "numba.np.arrayobj:populate_array": ("data", "shape", "strides", "itemsize", "meminfo"),
    "numba.core.ssa:_FixSSAVars._stmt_index": ("self", "defstmt", "block", "stop"),
    "numba.core.types.functions:BaseFunction.get_call_type": ("self", "context", "args", "kws"),
    "numba.core.typing.templates:_OverloadFunctionTemplate._get_jit_decorator": ("self",),
    "numba.core.typing.templates:_OverloadFunctionTemplate.generic": ("self", "args", "kws"),
    "numba.core.dispatcher:Dispatcher.get_call_template": ("self", "args", "kws"),
}

# What the compiled code calls by name, resolved in this process once Numba's JIT is set up.
SYMBOLS = ("PyEval_SaveThread", "PyEval_RestoreThread", "PyGILState_Check", "PyErr_SetString",
           "PyErr_Occurred", "PyLong_AsSsize_t", "PyLong_FromSsize_t")


def _resolve(path):
    """The object a "module:attribute.path" names (the module imported first)."""
    import sys
    module, _, attrs = path.partition(":")
    __import__(module)
    obj = sys.modules[module]
    for attr in attrs.split("."):
        obj = getattr(obj, attr)
    return obj


def missing():
    """What this Numba/llvmlite lacks of what this module relies on: a list of lines such as
    ``"numba.core.caching:IndexDataCacheFile._dump: AttributeError: ..."`` (empty when all is
    there). The instance attribute ``Dispatcher._cache`` is checked by using a
    ``KernelCache`` (tests/test_internals.py)."""
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
