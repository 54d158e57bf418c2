"""Every use of Numba's and llvmlite's private internals, each with a test in
tests/test_internals.py.

Nothing outside this module touches them: a Numba or llvmlite upgrade that moves one breaks
this file and its test, loudly, instead of silently costing speed or aborting the process. The
seams, one section each:

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
6. ``launched_layer()``, ``launch_threading_layer()``, ``compiler_lock()``: Numba's threading
   layer set-up (``numba.np.ufunc.parallel``) and its global compiler lock, for
   ``jitdigest._parallel``;
7. ``local_words()`` / ``local_scratch()`` / ``local_copy()``: section 2's arrays, zeroed or
   copied, for CUDA device code (which may not return an array from a device function, so
   ``_jit``'s scratch helpers become these in ``_jit_cuda``);
8. ``address_of()`` / ``word_at()``: an array's data address, and the native word at a byte
   offset of a uint8 array (CUDA loaders read aligned message words whole); ``read_only()``:
   a uint8 array, ``bytes`` or ``bytearray`` as a read-only uint8 array (Numba stores all three
   in one struct, ``ArrayModel``), so a block function is compiled for one input type;
9. ``ptx_without_gpu()``: CUDA kernels compiled to PTX on a machine with no GPU (numba-cuda's
   ``CUDADispatcher.compile_device`` asks the current device for its compute capability);
10. ``stmt_index()``: Numba's SSA reconstruction finds a statement's position in its block by a
   linear scan (``numba.core.ssa._FixSSAVars._stmt_index``), quadratic in a block's length;
   the generated kernels' blocks are thousands of statements long. Replaced, on import, by a
   lookup with the same results;
11. ``call_type()``: Numba types every ``a + b`` by trying operator.add's templates in turn
   (its own memo lasts one function's typing, ``BaseFunction.get_call_type``); for an operator
   on scalar numbers the answer is remembered, once per typing context and target.

``REQUIRED`` lists every private name used here and ``missing()`` says which of them this
Numba/llvmlite lacks. Importing this module imports Numba (``jitdigest._cpu`` imports it lazily,
from its functions).
"""
import glob
import inspect
import os
import pickle

from .. import _cpu

_cpu.import_numba()
import llvmlite.binding as ll  # noqa: E402
import numba  # noqa: E402
from llvmlite import ir  # noqa: E402
from numba.core import caching, cgutils, codegen, errors, types  # noqa: E402
from numba.core.imputils import impl_ret_borrowed  # noqa: E402
from numba.extending import intrinsic  # noqa: E402

# --- 1. 512-bit vectors -------------------------------------------------------------------

# LLVM's X86 tuning for most AVX-512 Intel cores ("prefer-256-bit") makes the vectoriser use
# 256-bit vectors even where 512-bit ones are legal; a 16-lane loop then runs as two 8-lane
# halves. The function attribute below asks for 512-bit vectors, as clang's
# -mprefer-vector-width=512 does (measured: SHA-256 x16 +20%). Target-independent and harmless
# without AVX-512 (the vector types then are not legal and are split). llvmlite accepts only the
# attributes in its ``_known`` set, so the instance's set is widened first.
PREFER_512 = '"prefer-vector-width"="512"'


def _prefer_wide_vectors(function):
    """Give the LLVM function ``function`` the attribute ``PREFER_512``; False (and the target's
    default width) if llvmlite refuses it."""
    attrs = function.attributes
    try:
        attrs._known = attrs._known | {PREFER_512}
        attrs.add(PREFER_512)
    except (AttributeError, TypeError, ValueError):
        return False
    return True


@intrinsic
def wide_vectors(typingctx):
    """Called first in a kernel (no arguments, no result): the enclosing compiled function
    prefers 512-bit vectors. If llvmlite ever refuses the attribute the kernel is simply
    compiled with the target's default width (``tests/test_internals.py`` then fails)."""
    def codegen(context, builder, signature, args):
        _prefer_wide_vectors(builder.function)
        return context.get_dummy_value()
    return types.none(), codegen


# --- 2. arrays on the stack ---------------------------------------------------------------

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
        context.populate_array(array, data=data, shape=[intp(cap.literal_value)],
                               strides=[intp(size)], itemsize=intp(size), meminfo=None)
        return array._getvalue()
    return array_type(cap, dtype), codegen


# --- 3. the GIL ---------------------------------------------------------------------------

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


# --- 4. Numba's JIT target ----------------------------------------------------------------

def jit_target():
    """``(cpu_name, features)``: the CPU model and the LLVM feature string (``"+sse2,-avx,..."``)
    Numba's JIT hands LLVM, decided as ``numba.core.codegen.JITCPUCodegen`` does
    (``_get_host_cpu_name``, ``_get_host_cpu_features``) without building a code generator:
    ``NUMBA_CPU_NAME`` or the host's model; ``NUMBA_CPU_FEATURES`` when set (``NUMBA_CPU_NAME=
    generic`` sets it to ""), else every host feature, ``avx*`` off under
    ``NUMBA_ENABLE_AVX=0``. The features override what the model implies."""
    config = numba.core.config
    name = ll.get_host_cpu_name() if config.CPU_NAME is None else config.CPU_NAME
    if config.CPU_FEATURES is not None:
        return name, config.CPU_FEATURES
    return name, codegen.get_host_cpu_features()


def compiled_target():
    """``(cpu_name, features)`` as Numba's JIT code generator actually has them (builds the CPU
    target context if no kernel did yet): what ``jit_target()`` must agree with."""
    from numba.core.registry import cpu_target
    _, name, features = cpu_target.target_context.codegen().magic_tuple()
    return name, features


# --- 5. the on-disk cache -----------------------------------------------------------------

def _runtime_ready(target_context):
    """What loading a cached kernel needs of Numba's CPU target: its runtime (NRT) initialised,
    so the kernel's references to the allocator resolve. Numba's own load calls
    ``target_context.refresh()``, which also imports and registers every lowering
    implementation (~0.25 s, a third of a first digest's process), needed only to compile; any
    compile refreshes the context itself first (``CompilerBase.__init__``)."""
    from numba.core.runtime import rtsys
    rtsys.initialize(target_context)


def _locator_for(cache_class):
    """Numba's one cache locator for ``cache_class``: its ``directory()`` and
    ``source_stamp()``, entries told apart by the function's package and first line (Numba
    names files after the module's file name alone, and every family has a ``portable.py``)."""
    class Locator(caching._CacheLocator):
        def __init__(self, py_func, py_file):
            self._py_file = py_file
            package = (getattr(py_func, "__module__", None) or "").rpartition(".")[0]
            self._where = "%s-%d" % (package.rpartition(".")[2] or "top",
                                     py_func.__code__.co_firstlineno)

        def get_cache_path(self):
            return cache_class.directory()

        def get_source_stamp(self):
            return cache_class.source_stamp()

        def get_disambiguator(self):
            return self._where

        @classmethod
        def from_function(cls, py_func, py_file):
            return cls(py_func, py_file)
    return Locator


class _DataFiles(caching.IndexDataCacheFile):
    """Numba's index + data files; each data file's bytes are ``seal(payload)`` of the owning
    cache class, read back through its ``unseal``. Writes go to a temporary name renamed into
    place (``_open_for_write``)."""

    def __init__(self, cache_class, cache_path, filename_base, source_stamp):
        super().__init__(cache_path, filename_base, source_stamp)
        self._cache_class = cache_class

    def _save_data(self, name, data):
        blob = self._cache_class.seal(self._dump(data))
        with self._open_for_write(self._data_path(name)) as f:
            f.write(blob)

    def _load_data(self, name):
        with open(self._data_path(name), "rb") as f:
            blob = f.read()
        return pickle.loads(self._cache_class.unseal(blob))


class KernelCache(caching.FunctionCache):
    """Numba's cache of one function's compiled overloads, with every choice left to a subclass
    through public names (no Numba internals needed there):

    * ``directory()``, ``source_stamp()`` (static): the folder, and the stamp whose change
      makes its entries stale;
    * ``seal(payload) -> bytes``, ``unseal(bytes) -> payload`` (static): a data file's format
      (``unseal`` raises on a damaged file);
    * ``load(sig, target_context)``, ``save(sig, data)``: what Numba's dispatcher calls, for the
      subclass to wrap in its policy around ``load_entry`` / ``save_entry``.

    ``folder``, ``entry_name``, ``index_path`` and ``entry_files()`` say where the entry is."""

    def __init_subclass__(cls, **kwargs):
        super().__init_subclass__(**kwargs)
        cls._impl_class = type(cls.__name__ + "Impl", (caching.CompileResultCacheImpl,),
                               {"_locator_classes": [_locator_for(cls)]})

    def __init__(self, py_func):
        super().__init__(py_func)
        self._cache_file = _DataFiles(type(self), self._cache_path, self._impl.filename_base,
                                      self._impl.locator.get_source_stamp())

    # the subclass's choices
    @staticmethod
    def directory():
        raise NotImplementedError

    @staticmethod
    def source_stamp():
        raise NotImplementedError

    @staticmethod
    def seal(payload):
        return payload

    @staticmethod
    def unseal(blob):
        return blob

    def load(self, sig, target_context):
        return self.load_entry(sig, target_context)

    def save(self, sig, data):
        self.save_entry(sig, data)

    # the raw operations
    def load_entry(self, sig, target_context):
        """The cached overload for ``sig``, or None when there is none (raises what reading
        or rebuilding it raised)."""
        _runtime_ready(target_context)
        return self._load_overload(sig, target_context)

    def save_entry(self, sig, data):
        """Write the compile result ``data`` for ``sig`` (raises what writing raised)."""
        self._save_overload(sig, data)

    @property
    def folder(self):
        return self._cache_path

    @property
    def entry_name(self):
        """The common start of the entry's file names (function, line, Python version)."""
        return self._impl.filename_base

    @property
    def index_path(self):
        return self._cache_file._index_path

    def entry_files(self):
        """Paths of the entry's index and data files that exist now."""
        base = os.path.join(self.folder, glob.escape(self.entry_name))
        return glob.glob(base + ".nbi") + glob.glob(base + ".*.nbc")

    # Numba's interface (numba.core.caching._Cache)
    def load_overload(self, sig, target_context):
        return self.load(sig, target_context)

    def save_overload(self, sig, data):
        self.save(sig, data)


def set_cache(dispatcher, cache):
    """Make ``cache`` the on-disk cache of ``dispatcher`` (made with ``cache=False``)."""
    dispatcher._cache = cache
    return dispatcher


def cache_of(dispatcher):
    """The cache object of ``dispatcher`` (Numba's ``NullCache`` when it has none)."""
    return getattr(dispatcher, "_cache", None)


# --- 6. the threading layer and the compiler lock -----------------------------------------

def launched_layer():
    """The threading layer Numba has loaded in this process, or None before its first parallel
    region (``numba.np.ufunc.parallel._is_initialized``; ``numba.threading_layer()`` raises
    then)."""
    from numba.np.ufunc import parallel
    if not parallel._is_initialized:
        return None
    return numba.threading_layer()


def launch_threading_layer():
    """Load Numba's threading layer now, as its first parallel region would
    (``numba.np.ufunc.parallel._launch_threads``), and return its name."""
    from numba.np.ufunc import parallel
    parallel._launch_threads()
    return numba.threading_layer()


def compiler_lock():
    """Numba's global compiler lock (a ``threading.RLock``), held while a kernel compiles or
    loads from the cache (``numba.core.compiler_lock.global_compiler_lock._lock``)."""
    from numba.core.compiler_lock import global_compiler_lock
    return global_compiler_lock._lock


# --- 7. thread-local words for CUDA device code ------------------------------------------

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
        cgutils.memset(builder, data, builder.mul(n, intp(size)), 0)
    else:
        cgutils.raw_memcpy(builder, data, source, n, size)
    array_type = types.Array(word, 1, "C")
    array = context.make_array(array_type)(context, builder)
    context.populate_array(array, data=data, shape=[n], strides=[intp(size)],
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


# --- 8. whole words from byte arrays --------------------------------------------------------

@intrinsic
def address_of(typingctx, arr):
    """The address of ``arr``'s first element, an intp."""
    if not isinstance(arr, types.Array):
        return None

    def codegen(context, builder, signature, args):
        data = context.make_array(arr)(context, builder, args[0]).data
        return builder.ptrtoint(data, context.get_value_type(types.intp))
    return types.intp(arr), codegen


_READ_ONLY = types.Array(types.uint8, 1, "C", readonly=True)


@intrinsic
def read_only(typingctx, data):
    """``data`` (a C-contiguous 1-D uint8 array, mutable or not, ``bytes`` or ``bytearray``)
    typed as a read-only uint8 array: the same struct, the same memory, no copy."""
    if not (isinstance(data, (types.Array, types.Bytes, types.ByteArray)) and data.ndim == 1
            and data.layout == "C" and data.dtype == types.uint8):
        return None

    def codegen(context, builder, signature, args):
        if context.get_value_type(data) != context.get_value_type(_READ_ONLY):
            raise errors.NumbaError(f"{data} is not stored as a uint8 array")
        return impl_ret_borrowed(context, builder, _READ_ONLY, args[0])
    return _READ_ONLY(data), codegen


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


# --- 9. PTX without a GPU --------------------------------------------------------------

def ptx_without_gpu(kernel, signature, cc):
    """The PTX of the Python function ``kernel`` for argument types ``signature`` and compute
    capability ``cc``, its device functions compiled for ``cc`` too (``numba.cuda.compile_ptx``
    alone asks a GPU for theirs): for tests of the CUDA lowering on a machine without one."""
    import sys
    from types import SimpleNamespace

    from numba import cuda
    module = sys.modules[type(cuda.jit(device=True)(lambda: None)).__module__]
    with compiler_lock():
        saved = module.get_current_device
        module.get_current_device = lambda: SimpleNamespace(compute_capability=cc)
        try:
            return cuda.compile_ptx(kernel, signature, cc=cc)[0]
        finally:
            module.get_current_device = saved


# --- 10. Numba's SSA pass in long blocks ------------------------------------------------------

# Measured (BLAKE2b lanes4 ``hash_rows``, a fresh cache, AMD EPYC znver1): 42 s to compile, 48 s
# of them (profiled) in 189,000 scans of one block's statement list; with the lookup below the
# same compile takes 24 s. The replacement returns exactly what Numba's scan returns (tests
# compare the two): the index of ``defstmt`` in ``block.body`` if it is found among the
# positions ``range(len(body))[:stop]``, else ``len(body)``. Each handler (one per variable
# being fixed) keeps the index of the block it last looked in; blocks are not changed while a
# handler reads them (``_run_block_rewrite`` builds new ones), and a changed body or length is
# indexed again.
from numba.core import ssa as _ssa  # noqa: E402

NUMBA_STMT_INDEX = getattr(getattr(_ssa, "_FixSSAVars", None), "_stmt_index", None)


def stmt_index(self, defstmt, block, stop=-1):
    body = block.body
    seen = getattr(self, "_jitdigest_positions", None)
    if seen is None or seen[0] is not body or seen[1] != len(body):
        positions = {}
        for i, stmt in enumerate(body):
            positions.setdefault(id(stmt), i)
        seen = self._jitdigest_positions = (body, len(body), positions)
    i = seen[2].get(id(defstmt))
    if i is not None and i in range(seen[1])[:stop]:
        return i
    return seen[1]


if NUMBA_STMT_INDEX is not None:
    _ssa._FixSSAVars._stmt_index = stmt_index


# --- 11. an operator on scalars, typed once ---------------------------------------------------

# The kernels are mostly ``a + b``, ``a ^ b``, ``a >> 7`` on uint32/uint64 scalars, thousands of
# times over; Numba types each by running operator.add's templates in turn (NumPy's ufunc rules
# among them), with a memo that lasts one function's typing. Measured (a fresh cache, AMD EPYC
# znver1, with section 10): SHA-256 lanes8 ``hash_rows`` 30.4 -> 17.0 s, MD5 lanes8 13.3 ->
# 8.6 s, SHA3 lanes4 7.0 -> 5.1 s, SHA-1 portable one-shot 13.6 -> 11.6 s. Those templates give
# the same answer for the same argument types: the answer (a signature; a failure raises and is
# not remembered) is kept per function type (a new overload of an operator makes a new one,
# ``BaseFunction.augment``), typing context and target, for operators only and only when every
# argument is a scalar number (integer, boolean, float, literal or not) and no keywords.
import operator as _operator  # noqa: E402

from numba.core.target_extension import get_local_target as _local_target  # noqa: E402
from numba.core.types import functions as _functions  # noqa: E402

NUMBA_GET_CALL_TYPE = _functions.BaseFunction.get_call_type
_OPERATORS = frozenset(getattr(_operator, name) for name in dir(_operator)
                       if not name.startswith("_"))
_SCALARS = (types.Integer, types.Boolean, types.Float)
_typed = {}


def call_type(self, context, args, kws):
    try:
        known = (not kws and self.typing_key in _OPERATORS
                 and all(isinstance(a, _SCALARS) for a in args))
    except TypeError:                       # an unhashable typing key: not an operator
        known = False
    if not known:
        return NUMBA_GET_CALL_TYPE(self, context, args, kws)
    key = (self, context, _local_target(context), tuple(args))
    sig = _typed.get(key)
    if sig is None:
        sig = NUMBA_GET_CALL_TYPE(self, context, args, kws)
        if sig is not None:
            _typed[key] = sig
    return sig


_functions.BaseFunction.get_call_type = call_type


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
    "numba.core.ssa:_FixSSAVars._stmt_index",
    "numba.core.ssa:_run_block_rewrite",
    "numba.core.types.functions:BaseFunction.get_call_type",
    "numba.core.types.functions:BaseFunction.augment",
    "numba.core.target_extension:get_local_target",
)

# Keyword parameters of the private functions called with keywords.
_PARAMETERS = {
    "numba.np.arrayobj:populate_array": ("data", "shape", "strides", "itemsize", "meminfo"),
    "numba.core.caching:IndexDataCacheFile.__init__": ("cache_path", "filename_base",
                                                      "source_stamp"),
    "jitdigest.kernels._internals:NUMBA_STMT_INDEX": ("self", "defstmt", "block", "stop"),
    "jitdigest.kernels._internals:NUMBA_GET_CALL_TYPE": ("self", "context", "args", "kws"),
}

# What the compiled code calls by name, resolved in this process once Numba's JIT is set up.
SYMBOLS = ("PyEval_SaveThread", "PyEval_RestoreThread", "PyGILState_Check")


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
