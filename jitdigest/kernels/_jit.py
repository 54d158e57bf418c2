"""The one kernel decorator and the word helpers every kernel is written with.

A kernel is one source for two modes. Compiled, the helpers below are typed casts and wrapping
machine operations (Numba ``@overload``); interpreted (``NUMBA_DISABLE_JIT=1``) they are
Python-int arithmetic with masks, so nothing overflows, nothing warns, and no numpy scalar is
touched in the hot path. Kernels therefore keep every word in a helper's result type: values
read from arrays go through ``u32``/``u64`` (or the block loaders) before any arithmetic.
"""
import struct

from ..base.host import import_numba

import_numba()       # first (a bad NUMBA_NUM_THREADS breaks Numba; jitdigest may be hashlib)
import numba  # noqa: E402
import numpy as np  # noqa: E402
from numba.core import types  # noqa: E402
from numba.extending import intrinsic, overload  # noqa: E402

from ._internals import (ours_dispatcher, restore_thread, save_thread_if, stack_array,  # noqa: E402,E501
                         typed_once)

JIT_ENABLED = not numba.config.DISABLE_JIT

M32 = 0xFFFFFFFF
M64 = 0xFFFFFFFFFFFFFFFF


def ours(dispatcher):
    """A dispatcher that compiles inside ``_internals.ours()``: with jitdigest's compile-speed
    replacements of Numba functions in place, which are Numba's own again once it is done (a
    user's ``@njit`` functions compile on unmodified Numba)."""
    return ours_dispatcher(dispatcher) if JIT_ENABLED else dispatcher


def cached(dispatcher):
    """Give a compiled kernel jitdigest's on-disk cache (``_numba_cache``: outside the package,
    keyed on version and sources, safe when not writable or damaged), compiling inside
    ``_internals.ours()``."""
    if not JIT_ENABLED:
        return dispatcher
    from ._numba_cache import attach
    return attach(ours(dispatcher))


def kernel(func):
    """Compile-on-first-use, cached, GIL-free kernel (a plain function when the JIT is off)."""
    return cached(numba.njit(nogil=True)(func))


def block_function(func):
    """A family's block function (``compress``, ``absorb``): a kernel compiled once, whatever
    its callers hold. Called from compiled code, its input bytes (an array, ``bytes``, a
    scratch block) are typed as a read-only uint8 array and its integers as int64, bools as
    bools (``_internals.typed_once``), so the drivers pass what they have; left to the callers'
    types, ``0`` here and an offset there compiled the unrolled ones up to five times."""
    return typed_kernel()(func)


def typed_kernel(*outputs):
    """A kernel called by compiled kernels that hold different types for its arguments (a
    literal ``0`` in one and an int64 in another, ``bytes`` or an array in, a bytearray or an
    array row out): compiled once for all of them, typed as a block function is
    (``_internals.typed_once``; ``outputs``: the positions of the arguments it writes bytes
    to). Left to its callers' types, such a function is compiled once per distinct set of
    argument types its callers happen to hold."""
    def decorate(func):
        if not JIT_ENABLED:
            return func
        return cached(typed_once(numba.njit(nogil=True)(func), outputs))
    return decorate


# ``inline_in_callers()``, called first in a compiled function (a lane kernel's block function,
# a ``piece``): LLVM inlines the function into every kernel that calls it (the "alwaysinline"
# attribute; Numba links a callee's optimised IR into its caller's module and optimises them
# together). So Numba types and lowers it once for all its callers, and the machine code is as
# if it were written into each (a call left in slows the lane and SHA-NI kernels measurably:
# benchmarks/results/kernel_notes.md). ``tests/test_lanes.py`` checks that no call is left.
@intrinsic
def inline_in_callers(typingctx):
    def codegen(context, builder, signature, args):
        builder.function.attributes.add("alwaysinline")
        return context.get_dummy_value()
    return types.none(), codegen


if not JIT_ENABLED:
    def inline_in_callers():        # interpreted: nothing to inline
        return None


def piece(*outputs):
    """A piece of kernel called by several entries of a backend, which are cached with it
    linked in; not cached itself (made per backend by a factory, e.g. ``_hmac.keyed_pieces``).
    Typed once, as a block function is, whatever its callers hold: the bytes it reads as a
    read-only array, those at the positions ``outputs`` (written) as a writable one, integers
    as int64; its body calls ``inline_in_callers()`` first, so LLVM inlines it into each.
    Inlined at Numba's IR level instead (``inline_kernel``), it would be typed again in every
    caller."""
    def decorate(func):
        if not JIT_ENABLED:
            return func
        return typed_once(numba.njit(nogil=True)(func), outputs)
    return decorate


def parallel_kernel(func):
    """A GIL-free kernel compiled with ``parallel=True``: its ``prange`` loops run on Numba's
    threading layer (``jitdigest.engine.parallel`` chooses and guards it). Interpreted, ``prange`` is
    ``range`` and the loop runs on the calling thread."""
    return cached(numba.njit(parallel=True, nogil=True)(func))


def gil_kernel(func):
    """A kernel whose Python entry keeps the GIL: for entries whose usual input is small
    (``oneshot``, ``final``), where releasing and taking back the GIL is a sixth of the call.
    Those that may get a long input release it themselves around the long part
    (``release_gil_if``), as hashlib does from ``GIL_MINSIZE`` bytes."""
    return cached(numba.njit(nogil=False)(func))


from ..base.config import GIL_MINSIZE  # noqa: E402,F401  (hashlib's HASHLIB_GIL_MINSIZE)


def cpu_overload(pyfunc, **options):
    """``numba.extending.overload`` of ``pyfunc``, inlined at Numba-IR level, for the CPU target
    only: device code calls its own forms (``_jit_cuda``), and one that named a CPU helper by
    mistake fails to type there instead of lowering the CPU form (a generic overload would
    serve CUDA too)."""
    return overload(pyfunc, inline="always", target="cpu", **options)


# Helper -> its compiled form's impl factory (``_jit_cuda`` reuses those that have no CUDA
# form of their own).
CPU_FORMS = {}


def _ol(pyfunc):
    """Register ``impl`` as the compiled form of the interpreted helper ``pyfunc``."""
    def register(impl_factory):
        cpu_overload(pyfunc)(impl_factory)
        CPU_FORMS[pyfunc] = impl_factory
        return pyfunc
    return register


def inline_kernel(func):
    """A generic piece of kernel that takes another kernel as an argument (e.g. ``compress``).

    Inlined into each caller at Numba-IR level, so the function argument becomes a direct call
    and the caller stays cacheable (a first-class function argument left as a call would be
    lowered as a pointer to the dispatcher object, which Numba cannot cache)."""
    return ours(numba.njit(inline="always", nogil=True)(func))


def const_words(values, dtype):
    """A table of constants: a typed numpy array for Numba (frozen into the code), a tuple of
    Python ints for the interpreter (fast to index, no numpy scalars)."""
    if JIT_ENABLED:
        return np.array(values, dtype=dtype)
    return tuple(int(v) for v in values)


def new_words(n, dtype):
    """``n`` (a constant) zeroed scratch words: compiled, an array in the kernel's stack frame
    (no allocation per block, and no array module to import when a cached kernel loads);
    interpreted, a Python list."""
    return np.zeros(n, dtype) if JIT_ENABLED else [0] * n


@cpu_overload(new_words, prefer_literal=True)
def _new_words(n, dtype):
    if not isinstance(n, types.IntegerLiteral):
        return None

    def impl(n, dtype):
        words = stack_array(n, dtype)
        for i in range(n):
            words[i] = 0
        return words
    return impl


def release_gil_if(condition):
    """Release the GIL if ``condition`` holds and this thread holds it; returns a token for
    ``reacquire_gil``. Only for ``gil_kernel`` entries, around code that cannot raise."""
    return None


def reacquire_gil(token):
    """Take back the GIL released by ``release_gil_if`` (nothing if it was not released)."""


@_ol(release_gil_if)
def _release_gil_if_impl(condition):
    return lambda condition: save_thread_if(condition)


@_ol(reacquire_gil)
def _reacquire_gil_impl(token):
    return lambda token: restore_thread(token)


def scratch(n, dtype, cap):
    """``n`` zeroed words of ``dtype`` for one call's work (a padded final block, a copy of the
    state). Compiled, they live in the kernel's stack frame when ``n <= cap`` (``cap`` a
    constant): no heap allocation, which is a fifth of a small one-shot digest. They must not
    outlive the kernel (never returned or stored); ``n`` over ``cap`` raises ValueError."""
    return np.zeros(n, dtype)


def scratch_copy(words, cap):
    """A copy of the 1-D array ``words`` (at most ``cap`` words) in ``scratch`` storage."""
    return words.copy()


@cpu_overload(scratch_copy, prefer_literal=True)
def _scratch_copy(words, cap):
    if not isinstance(cap, types.IntegerLiteral):
        return None

    def impl(words, cap):
        copy = scratch(len(words), words.dtype, cap)
        for i in range(len(words)):
            copy[i] = words[i]
        return copy
    return impl


@cpu_overload(scratch, prefer_literal=True)
def _scratch(n, dtype, cap):
    if not isinstance(cap, types.IntegerLiteral):
        return None

    # No caller asks for more than its cap. A heap fallback (np.zeros) would never run, yet
    # every kernel using scratch would import Numba's array module to load from cache.
    def impl(n, dtype, cap):
        if n > cap:
            raise ValueError("scratch words over their cap")
        words = stack_array(cap, dtype)[:n]
        for i in range(n):
            words[i] = 0
        return words
    return impl


# --- 32-bit words -------------------------------------------------------------------------

def u32(x):
    return int(x) & M32


def add32(a, b, c=0, d=0, e=0):
    return (a + b + c + d + e) & M32


def rotl32(x, n):
    return ((x << n) | (x >> (32 - n))) & M32


def rotr32(x, n):
    return ((x >> n) | (x << (32 - n))) & M32


def not32(x):
    return x ^ M32


@_ol(u32)
def _u32(x):
    return lambda x: np.uint32(x)


@_ol(add32)
def _add32(a, b, c=0, d=0, e=0):
    def impl(a, b, c=0, d=0, e=0):
        return np.uint32(np.uint64(a) + np.uint64(b) + np.uint64(c) + np.uint64(d) + np.uint64(e))
    return impl


@_ol(rotl32)
def _rotl32(x, n):
    def impl(x, n):
        y = np.uint32(x)
        return np.uint32((y << np.uint32(n)) | (y >> np.uint32(32 - n)))
    return impl


@_ol(rotr32)
def _rotr32(x, n):
    def impl(x, n):
        y = np.uint32(x)
        return np.uint32((y >> np.uint32(n)) | (y << np.uint32(32 - n)))
    return impl


@_ol(not32)
def _not32(x):
    return lambda x: np.uint32(~np.uint32(x))


# --- 64-bit words -------------------------------------------------------------------------

def u64(x):
    return int(x) & M64


def add64(a, b, c=0, d=0, e=0):
    return (a + b + c + d + e) & M64


def rotr64(x, n):
    return ((x >> n) | (x << (64 - n))) & M64


def rotl64(x, n):
    return ((x << n) | (x >> (64 - n))) & M64


def shr64(x, n):
    return x >> n


def not64(x):
    return x ^ M64


@_ol(u64)
def _u64(x):
    return lambda x: np.uint64(x)


@_ol(add64)
def _add64(a, b, c=0, d=0, e=0):
    def impl(a, b, c=0, d=0, e=0):
        return np.uint64(a) + np.uint64(b) + np.uint64(c) + np.uint64(d) + np.uint64(e)
    return impl


@_ol(rotr64)
def _rotr64(x, n):
    def impl(x, n):
        y = np.uint64(x)
        return (y >> np.uint64(n)) | (y << np.uint64(64 - n))
    return impl


@_ol(rotl64)
def _rotl64(x, n):
    def impl(x, n):
        y = np.uint64(x)
        return (y << np.uint64(n)) | (y >> np.uint64(64 - n))
    return impl


@_ol(shr64)
def _shr64(x, n):
    return lambda x, n: np.uint64(x) >> np.uint64(n)


@_ol(not64)
def _not64(x):
    return lambda x: ~np.uint64(x)


# --- block loaders: bytes -> words ---------------------------------------------------------

def be64(data, pos):
    """The big-endian 64-bit word at byte ``pos`` of ``data`` (one word, for kernels that keep
    their block in locals)."""
    return struct.unpack_from(">Q", data, pos)[0]


@_ol(be64)
def _be64(data, pos):
    def impl(data, pos):
        v = np.uint64(data[pos]) << np.uint64(56)
        v |= np.uint64(data[pos + 1]) << np.uint64(48)
        v |= np.uint64(data[pos + 2]) << np.uint64(40)
        v |= np.uint64(data[pos + 3]) << np.uint64(32)
        v |= np.uint64(data[pos + 4]) << np.uint64(24)
        v |= np.uint64(data[pos + 5]) << np.uint64(16)
        v |= np.uint64(data[pos + 6]) << np.uint64(8)
        return v | np.uint64(data[pos + 7])
    return impl


def load_be32(data, pos, w, n):
    """w[0:n] = n big-endian 32-bit words of data starting at byte pos."""
    w[0:n] = struct.unpack_from(">%dI" % n, data, pos)


def load_le32(data, pos, w, n):
    w[0:n] = struct.unpack_from("<%dI" % n, data, pos)


def load_be64(data, pos, w, n):
    w[0:n] = struct.unpack_from(">%dQ" % n, data, pos)


def load_le64(data, pos, w, n):
    w[0:n] = struct.unpack_from("<%dQ" % n, data, pos)


def _loader(word_bytes, little):
    dtype = np.uint32 if word_bytes == 4 else np.uint64

    def impl(data, pos, w, n):
        for i in range(n):
            q = pos + word_bytes * i
            v = dtype(0)
            for j in range(word_bytes):
                k = j if little else word_bytes - 1 - j
                v |= dtype(data[q + j]) << dtype(8 * k)
            w[i] = v
    return impl


def _register_loader(pyfunc, word_bytes, little):
    impl = _loader(word_bytes, little)

    def typing(data, pos, w, n):
        return impl
    _ol(pyfunc)(typing)


_register_loader(load_be32, 4, False)
_register_loader(load_le32, 4, True)
_register_loader(load_be64, 8, False)
_register_loader(load_le64, 8, True)


# --- digests: words -> bytes --------------------------------------------------------------

def store_words(state, little, out):
    """out[:] = the first ``len(out)`` bytes of the words of ``state``, each word written
    little-endian if ``little`` else big-endian (a digest from its state)."""
    word_bytes = state.itemsize
    # Byte i of a word is its bits 8 * (last ^ i). Computed without a branch: Numba's inliner
    # loses track of a variable set in branches of an overload inlined into an inlined kernel.
    last = (word_bytes - 1) * (1 - int(little))
    for i in range(len(out)):
        out[i] = (int(state[i // word_bytes]) >> (8 * (last ^ (i % word_bytes)))) & 0xFF


def _word_store(swap):
    """An intrinsic ``store(out, offset, word)``: ``word`` (uint32 or uint64) into bytes
    ``out[offset:offset + its size]`` of a contiguous uint8 buffer in one unaligned store,
    byte-swapped first if ``swap`` (big-endian on this little-endian CPU); no bounds check."""
    from llvmlite import ir

    def typer(typingctx, out, offset, word):
        if not (isinstance(out, types.Buffer) and out.ndim == 1 and out.layout == "C"
                and out.dtype == types.uint8 and isinstance(offset, types.Integer)
                and word in (types.uint32, types.uint64)):
            return None

        def codegen(context, builder, sig, args):
            ary = context.make_array(sig.args[0])(context, builder, value=args[0])
            idx = context.cast(builder, args[1], sig.args[1], types.intp)
            value = args[2]
            if swap:
                fnty = ir.FunctionType(value.type, [value.type])
                name = "llvm.bswap.i%d" % value.type.width
                value = builder.call(builder.module.declare_intrinsic(name, fnty=fnty), [value])
            ptr = builder.bitcast(builder.gep(ary.data, [idx]), value.type.as_pointer())
            builder.store(value, ptr, align=1)
            return context.get_dummy_value()
        return types.none(out, offset, word), codegen
    return intrinsic(typer)


_store_le = _word_store(False)
_store_be = _word_store(True)


@_ol(store_words)
def _store_words(state, little, out):
    if not (isinstance(out, types.Buffer) and out.layout == "C"):
        return store_words              # the same code, compiled
    word_bytes = state.dtype.bitwidth // 8

    def words_then_bytes(state, little, out):
        n = len(out)
        whole = n // word_bytes
        for i in range(whole):          # one store a word
            if little:
                _store_le(out, word_bytes * i, state[i])
            else:
                _store_be(out, word_bytes * i, state[i])
        last = (word_bytes - 1) * (1 - int(little))
        for i in range(whole * word_bytes, n):
            out[i] = (int(state[i // word_bytes]) >> (8 * (last ^ (i % word_bytes)))) & 0xFF
    return words_then_bytes
