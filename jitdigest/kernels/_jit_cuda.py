"""The CUDA forms of the word helpers of ``_jit`` and the row helpers of ``_rows``, so that the
CPU kernels' own source compiles as CUDA device functions.
"""
# The CPU forms are CPU-target ``@overload``s inlined at Numba-IR level (``inline="always"``);
# the CUDA target types their omitted and literal arguments wrongly when it inlines them, so each
# helper gets a ``target="cuda"`` overload here, compiled as an ordinary device function that
# LLVM inlines, on a stand-in function that ``device`` calls in place of the CPU one (Numba's
# typing record of a Python function is shared by every target: see ``_cuda``). A helper with no
# CUDA form here gets a stand-in with its CPU form's implementation. The 32-bit word helpers are
# LLVM i32 operations; the block loaders read aligned message words whole (16 bytes a load where
# they can) and ``store_words`` writes a digest as whole words. The GIL helpers do nothing. A
# block function is an ordinary device function, compiled per input type (device code is inlined
# into each kernel: no compile to save). The scratch helpers (``new_words``, ``scratch``,
# ``scratch_copy``) return arrays, which a CUDA device function may not: ``device`` rebinds them
# to frame-local intrinsics (thread-local memory, in registers where LLVM can).
# Importing this module imports Numba's CUDA target (numba-cuda); ``jitdigest.cuda`` does,
# nothing else.
from types import CellType, CodeType, FunctionType

import numpy as np
from llvmlite import ir
from numba import cuda
from numba.core import types
from numba.core.dispatcher import Dispatcher
from numba.extending import intrinsic, overload

from . import _internals, _jit, _rows
from ._internals import address_of, put_word, word_at, words_at


_I32 = ir.IntType(32)

# CPU helper -> the function device code calls instead (see ``device``).
_SUBSTITUTES = {}


def _cuda(pyfunc):
    """Register the decorated impl factory as the CUDA form of ``pyfunc``, on a stand-in: a
    copy of ``pyfunc`` that ``device`` puts where kernels name ``pyfunc``. Numba keeps one
    typing record per Python function for every target (its ``Function`` type maps argument
    types to the implementation last chosen), so an overload of ``pyfunc`` itself would let a
    CPU compile of a kernel make a later CUDA compile of another lower the CPU form."""
    def register(factory):
        _stand_in(pyfunc, factory)
        return factory
    return register


def _stand_in(pyfunc, factory):
    """A copy of the helper ``pyfunc`` with ``factory`` as its CUDA form, recorded as what
    device code calls for ``pyfunc``."""
    stand_in = FunctionType(pyfunc.__code__, pyfunc.__globals__, pyfunc.__name__,
                            pyfunc.__defaults__, pyfunc.__closure__)
    stand_in.__qualname__ = f"{pyfunc.__qualname__} (CUDA)"
    overload(stand_in, target="cuda")(factory)
    _SUBSTITUTES[pyfunc] = stand_in
    return stand_in


def _cuda_only(pyfunc):
    """Register the decorated impl factory as ``pyfunc``'s form, for a helper only device code
    calls (no CPU form to keep apart from)."""
    def register(factory):
        overload(pyfunc, target="cuda")(factory)
        return factory
    return register


def on_cuda(pyfunc):
    """What CUDA device code calls for the CPU helper ``pyfunc``."""
    return _SUBSTITUTES[pyfunc]


# --- 32-bit and 64-bit words --------------------------------------------------------------

# The 32-bit helpers are LLVM i32 operations: Numba widens uint32 arithmetic to 64 bits, and
# NVPTX keeps part of that width (measured on SHA-256: every other round's rotations as 64-bit
# mask-shift-or sequences instead of one funnel shift, and 64-bit adds). Their arguments are
# any integers (cut to 32 bits), constants included.

def _word32(context, builder, value, ty):
    """``value`` of Numba type ``ty`` as an LLVM i32 (an omitted argument: its default)."""
    if isinstance(ty, types.Omitted):
        return ir.Constant(_I32, int(ty.value) & 0xFFFFFFFF)
    return context.cast(builder, value, ty, types.uint32)


def _integers(*tys):
    return all(isinstance(t, types.Integer) or (isinstance(t, types.Omitted)
                                                and isinstance(t.value, int)) for t in tys)


@intrinsic
def _sum32(typingctx, a, b, c, d, e):
    if not _integers(a, b, c, d, e):
        return None

    def codegen(context, builder, signature, args):
        words = [_word32(context, builder, v, t) for v, t in zip(args, signature.args)]
        total = words[0]
        for word in words[1:]:
            total = builder.add(total, word)
        return total
    return types.uint32(a, b, c, d, e), codegen


def _rotation(left):
    @intrinsic
    def rotate(typingctx, x, n):
        if not _integers(x, n):
            return None

        def codegen(context, builder, signature, args):
            value = _word32(context, builder, args[0], signature.args[0])
            k = builder.and_(_word32(context, builder, args[1], signature.args[1]),
                             ir.Constant(_I32, 31))
            back = builder.and_(builder.sub(ir.Constant(_I32, 32), k), ir.Constant(_I32, 31))
            if not left:
                k, back = back, k
            return builder.or_(builder.shl(value, k), builder.lshr(value, back))
        return types.uint32(x, n), codegen
    return rotate


_rotl32_i32 = _rotation(True)
_rotr32_i32 = _rotation(False)


@intrinsic
def _bswap32(typingctx, x):
    """The bytes of a 32-bit word reversed (one PTX ``prmt``)."""
    if not _integers(x):
        return None

    def codegen(context, builder, signature, args):
        return builder.bswap(_word32(context, builder, args[0], signature.args[0]))
    return types.uint32(x), codegen


@_cuda(_jit.u32)
def _u32(x):
    return lambda x: np.uint32(x)


@_cuda(_jit.add32)
def _add32(a, b, c=0, d=0, e=0):
    return lambda a, b, c=0, d=0, e=0: _sum32(a, b, c, d, e)


@_cuda(_jit.rotl32)
def _rotl32(x, n):
    return lambda x, n: _rotl32_i32(x, n)


@_cuda(_jit.rotr32)
def _rotr32(x, n):
    return lambda x, n: _rotr32_i32(x, n)


@_cuda(_jit.not32)
def _not32(x):
    return lambda x: np.uint32(~np.uint32(x))


@_cuda(_jit.u64)
def _u64(x):
    return lambda x: np.uint64(x)


@_cuda(_jit.add64)
def _add64(a, b, c=0, d=0, e=0):
    def impl(a, b, c=0, d=0, e=0):
        return np.uint64(a) + np.uint64(b) + np.uint64(c) + np.uint64(d) + np.uint64(e)
    return impl


@_cuda(_jit.rotr64)
def _rotr64(x, n):
    def impl(x, n):
        y = np.uint64(x)
        return (y >> np.uint64(n)) | (y << np.uint64(64 - n))
    return impl


@_cuda(_jit.rotl64)
def _rotl64(x, n):
    def impl(x, n):
        y = np.uint64(x)
        return (y << np.uint64(n)) | (y >> np.uint64(64 - n))
    return impl


@_cuda(_jit.shr64)
def _shr64(x, n):
    return lambda x, n: np.uint64(x) >> np.uint64(n)


@_cuda(_jit.not64)
def _not64(x):
    return lambda x: ~np.uint64(x)


# --- block loaders ------------------------------------------------------------------------

# Message words are read whole where their address is aligned to their size (2-D rows of a
# multiple of 8 bytes, the padded final blocks), else byte by byte; big-endian ones swapped.

@intrinsic
def _bswap64(typingctx, x):
    """The bytes of a 64-bit word reversed."""
    if not _integers(x):
        return None

    def codegen(context, builder, signature, args):
        return builder.bswap(context.cast(builder, args[0], signature.args[0], types.uint64))
    return types.uint64(x), codegen


def _aligned(data, pos, size):
    return True


@_cuda_only(_aligned)
def _aligned_impl(data, pos, size):
    return lambda data, pos, size: (address_of(data) + pos) % size == 0


@_cuda(_jit.be64)
def _be64(data, pos):
    def impl(data, pos):
        if _aligned(data, pos, 8):
            return _bswap64(word_at(data, pos, np.uint64))
        v = np.uint64(0)
        for j in range(8):
            v = (v << np.uint64(8)) | np.uint64(data[pos + j])
        return v
    return impl


@_cuda(_jit.load_be32)
def _load_be32(data, pos, w, n):
    def impl(data, pos, w, n):
        if n % 4 == 0 and _aligned(data, pos, 16):       # 16 bytes a load
            for i in range(0, n, 4):
                a, b, c, d = words_at(data, pos + 4 * i, np.uint32, 4)
                w[i] = _bswap32(a)
                w[i + 1] = _bswap32(b)
                w[i + 2] = _bswap32(c)
                w[i + 3] = _bswap32(d)
            return
        if _aligned(data, pos, 4):
            for i in range(n):
                w[i] = _bswap32(word_at(data, pos + 4 * i, np.uint32))
            return
        for i in range(n):
            q = pos + 4 * i
            w[i] = ((np.uint32(data[q]) << np.uint32(24))
                    | (np.uint32(data[q + 1]) << np.uint32(16))
                    | (np.uint32(data[q + 2]) << np.uint32(8)) | np.uint32(data[q + 3]))
    return impl


@_cuda(_jit.load_le32)
def _load_le32(data, pos, w, n):
    def impl(data, pos, w, n):
        if n % 4 == 0 and _aligned(data, pos, 16):
            for i in range(0, n, 4):
                a, b, c, d = words_at(data, pos + 4 * i, np.uint32, 4)
                w[i] = a
                w[i + 1] = b
                w[i + 2] = c
                w[i + 3] = d
            return
        if _aligned(data, pos, 4):
            for i in range(n):
                w[i] = word_at(data, pos + 4 * i, np.uint32)
            return
        for i in range(n):
            q = pos + 4 * i
            w[i] = ((np.uint32(data[q + 3]) << np.uint32(24))
                    | (np.uint32(data[q + 2]) << np.uint32(16))
                    | (np.uint32(data[q + 1]) << np.uint32(8)) | np.uint32(data[q]))
    return impl


_be64_cuda = on_cuda(_jit.be64)


@_cuda(_jit.load_be64)
def _load_be64(data, pos, w, n):
    def impl(data, pos, w, n):
        for i in range(n):
            w[i] = _be64_cuda(data, pos + 8 * i)
    return impl


@_cuda(_jit.load_le64)
def _load_le64(data, pos, w, n):
    def impl(data, pos, w, n):
        if _aligned(data, pos, 8):
            for i in range(n):
                w[i] = word_at(data, pos + 8 * i, np.uint64)
            return
        for i in range(n):
            q = pos + 8 * i
            v = np.uint64(0)
            for j in range(8):
                v = (v << np.uint64(8)) | np.uint64(data[q + 7 - j])
            w[i] = v
    return impl


# --- digests: whole words where the digest row is aligned ----------------------------------

@_cuda(_jit.store_words)
def _store_words(state, little, out):
    word = state.dtype
    swap = _bswap32 if word.bitwidth == 32 else _bswap64

    def impl(state, little, out):
        word_bytes = state.itemsize
        n = len(out)
        if n % word_bytes == 0 and _aligned(out, 0, word_bytes):
            if little:
                for i in range(n // word_bytes):
                    put_word(out, i * word_bytes, state[i])
            else:
                for i in range(n // word_bytes):
                    put_word(out, i * word_bytes, swap(state[i]))
            return
        last = (word_bytes - 1) * (1 - int(little))
        for i in range(n):
            out[i] = (int(state[i // word_bytes]) >> (8 * (last ^ (i % word_bytes)))) & 0xFF
    return impl


@_cuda(_jit.release_gil_if)
def _release_gil_if(condition):
    return lambda condition: 0


@_cuda(_jit.reacquire_gil)
def _reacquire_gil(token):
    return lambda token: None


# --- rows: a device kernel hashes one row, the grid form (first, first + 1) ---------------

def _is_grid(rows):
    return isinstance(rows, types.UniTuple)


@_cuda(_rows.row_count)
def _row_count(rows):
    if _is_grid(rows):
        return lambda rows: rows[1] - rows[0]
    return lambda rows: rows.shape[0]


@_cuda(_rows.row_at)
def _row_at(rows, i):
    if _is_grid(rows):
        return lambda rows, i: rows[0] + i
    return lambda rows, i: rows[i]


@_cuda(_rows.start_of)
def _start_of(starts, r):
    if isinstance(starts, types.Integer):
        return lambda starts, r: r * starts
    return lambda starts, r: starts[r]


@_cuda(_rows.length_of)
def _length_of(lengths, r):
    # No exception on the device: the host proved every length before the launch.
    if isinstance(lengths, types.Integer):
        return lambda lengths, r: lengths
    return lambda lengths, r: lengths[r]


# --- CPU kernels as CUDA device functions -------------------------------------------------

@cuda.jit(device=True)
def _inline_in_callers():
    """``_jit.inline_in_callers`` on the device: nothing (device functions are inlined)."""
    return None


# The scratch helpers return arrays, which a CUDA device function may not: in device code they
# are intrinsics that allocate in the caller's frame (``_internals/cuda_words.py``).
_SUBSTITUTES.update({
    _jit.inline_in_callers: _inline_in_callers,
    _jit.new_words: _internals.local_words,
    _jit.scratch: _internals.local_scratch,
    _jit.scratch_copy: _internals.local_copy,
})
_DEVICE = {}


def source_of(kernel):
    """The Python function a CPU kernel was compiled from (itself when the JIT is off)."""
    return getattr(kernel, "py_func", kernel)


def device(kernel):
    """The CUDA device function compiled from ``kernel``'s own source: its Python function with
    the globals it names rebound, every Numba kernel it calls (named or in its closure) to that
    kernel's device function (recursively) and every helper to its device stand-in. Under the
    CUDA simulator the kernels call ``kernel``'s pure-Python form instead
    (``_rows_cuda.simulated``)."""
    func = source_of(kernel)
    found = _DEVICE.get(func)
    if found is None:
        names = dict(func.__globals__)
        for name in _names(func.__code__):
            value = names.get(name)
            if _hashable(value) and value in _SUBSTITUTES:
                names[name] = _SUBSTITUTES[value]
            elif _hashable(value) and value in _jit.CPU_FORMS:     # same form on the device
                names[name] = _stand_in(value, _jit.CPU_FORMS[value])
            elif isinstance(value, Dispatcher):
                names[name] = device(value)
        closure = func.__closure__      # a backend's piece (``_jit.piece``): its compress
        if closure:
            closure = tuple(CellType(device(c.cell_contents))
                            if isinstance(c.cell_contents, Dispatcher) else c for c in closure)
        rebuilt = FunctionType(func.__code__, names, func.__name__, func.__defaults__,
                               closure)
        rebuilt.__qualname__ = func.__qualname__
        found = _DEVICE[func] = cuda.jit(device=True)(rebuilt)
    return found


def _names(code):
    """The global names ``code`` and the code objects nested in it refer to."""
    names = set(code.co_names)
    for const in code.co_consts:
        if isinstance(const, CodeType):
            names |= _names(const)
    return names


def _hashable(value):
    try:
        hash(value)
    except TypeError:
        return False
    return True
