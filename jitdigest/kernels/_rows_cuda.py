"""The CUDA batch kernels: one thread per message, each hashing its row through its family's
own ``hash_rows`` (the CPU source, compiled as a device function by ``_jit_cuda.device``) on
the one-row grid ``(r, r + 1)``: padding and length in thread-local words, digests written
straight into ``out[r]``. Under Numba's CUDA simulator (``NUMBA_ENABLE_CUDASIM=1``) the device
function is ``hash_rows``'s pure-Python form instead (``simulated``), whatever
``NUMBA_DISABLE_JIT`` says.

Like the CPU kernels they trust their arguments: ``jitdigest.cuda`` proves every row's bytes lie
inside ``values`` before a launch.
"""
from types import CellType, FunctionType

import numpy as np
from numba import config, cuda
from numba.core.dispatcher import Dispatcher

from . import _jit, blake2b, blake2s, keccak, md5, sha1, sha256, sha512
from ._jit_cuda import _hashable, _names, device, source_of

# The kernel families with a CUDA batch kernel (one thread a message: no tree hash).
FAMILIES = ("md5", "sha1", "sha256", "sha512", "keccak", "blake2b", "blake2s")
_PACKAGES = {"md5": md5, "sha1": sha1, "sha256": sha256, "sha512": sha512, "keccak": keccak,
             "blake2b": blake2b, "blake2s": blake2s}

_KERNELS = {}


def rows_kernel(family):
    """The CUDA kernel ``hash_each(values, starts, lengths, n, iv, out)`` of ``family``: thread
    ``r < n`` hashes row ``r`` (``starts``/``lengths`` int64 arrays, or one int each: rows of
    ``lengths`` bytes every ``starts`` bytes) from the initial state ``iv`` into ``out[r]``.
    Compiled on first launch, once per argument types."""
    found = _KERNELS.get(family)
    if found is None:
        entry = portable(family).hash_rows
        hash_rows = simulated(entry) if config.ENABLE_CUDASIM else device(entry)

        def hash_each(values, starts, lengths, n, iv, out):
            r = cuda.grid(1)
            if r < n:
                hash_rows(values, starts, lengths, (r, r + 1), iv, out)
        found = _KERNELS[family] = cuda.jit(hash_each)
    return found


def portable(family):
    """The ``portable`` backend record of ``family`` (its package's ``backends()``)."""
    return next(m.BACKEND for m in _PACKAGES[family].backends() if m.BACKEND.name == "portable")


# --- the CUDA simulator: the kernels' pure-Python forms ------------------------------------

# Under Numba's CUDA simulator (``NUMBA_ENABLE_CUDASIM=1``) a kernel runs as Python, one thread
# per CUDA thread, and calls its device functions as Python functions with the simulator's
# objects: a compiled CPU kernel cannot take them (the grid rows ``(r, r + 1)`` are a tuple, its
# helpers are CPU-only overloads). So a device function is its kernel's own source interpreted,
# as ``NUMBA_DISABLE_JIT=1`` runs it on the CPU: every Numba kernel it names (or holds in its
# closure) replaced by that kernel's Python form (recursively), the helpers whose interpreted
# form differs from the compiled one by that form, and the constant tables (``const_words``:
# a numpy array when compiled) by tuples of Python ints, so that word arithmetic stays in
# Python ints as the interpreted helpers expect.

def _no_inlining():
    """``_jit.inline_in_callers`` interpreted: nothing to inline."""
    return None


def _word_list(n, dtype):
    """``_jit.new_words`` interpreted: ``n`` zeroed words as a list of Python ints."""
    return [0] * n


_INTERPRETED_HELPERS = {_jit.inline_in_callers: _no_inlining, _jit.new_words: _word_list}
_PYTHON = {}


def simulated(kernel):
    """The simulator's device function for the kernel ``kernel``: its Python form
    (``interpreted``), called with the simulator's arrays as numpy arrays."""
    return cuda.jit(device=True)(_with_host_arrays(interpreted(kernel)))


def interpreted(kernel):
    """The pure-Python form of the kernel ``kernel`` (a Numba dispatcher or, with the JIT off,
    its Python function): what it computes with ``NUMBA_DISABLE_JIT=1``, whatever the JIT's
    setting in this process."""
    func = source_of(kernel)
    found = _PYTHON.get(func)
    if found is None:
        names = dict(func.__globals__)
        for name in _names(func.__code__) & names.keys():
            names[name] = _interpreted_value(names[name])
        closure = func.__closure__
        if closure:
            closure = tuple(CellType(_interpreted_value(c.cell_contents)) for c in closure)
        found = FunctionType(func.__code__, names, func.__name__, func.__defaults__, closure)
        found.__qualname__ = func.__qualname__
        found.__kwdefaults__ = func.__kwdefaults__
        _PYTHON[func] = found
    return found


def _interpreted_value(value):
    """What a kernel's interpreted form names in place of ``value`` (a global or a closure
    cell's contents)."""
    if _hashable(value) and value in _INTERPRETED_HELPERS:
        return _INTERPRETED_HELPERS[value]
    if isinstance(value, Dispatcher):
        return interpreted(value)
    if isinstance(value, np.ndarray) and value.ndim == 1 and value.dtype.kind in "iu":
        return tuple(int(v) for v in value)             # a ``const_words`` table
    return value


def _with_host_arrays(kernel):
    """``kernel`` called with the simulator's in-kernel arrays as the numpy arrays they wrap
    (through ``__array_interface__``, no copy): the kernels' loaders read buffers."""
    def run(*args):
        return kernel(*(a if isinstance(a, (np.ndarray, np.generic, int, tuple)) else
                        np.asarray(a) for a in args))
    run.__name__ = getattr(kernel, "__name__", "kernel")
    return run
