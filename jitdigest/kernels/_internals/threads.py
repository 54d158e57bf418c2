"""Section 6 of ``_internals``: Numba's threading layer set-up (``numba.np.ufunc.parallel``), for
``jitdigest.engine.parallel``, and the locks a fork must not cut (Numba's global compiler lock,
llvmlite's lock around every LLVM call), for ``jitdigest.base.fork``.

Part of the one package that touches Numba's and llvmlite's private internals (see
``__init__``); tested in tests/test_internals.py."""
import numba


def launched_layer():
    """The threading layer Numba has loaded in this process, or None before its first parallel
    region (``numba.threading_layer()`` raises ValueError then)."""
    try:
        return numba.threading_layer()
    except ValueError:
        return None


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


def llvm_lock():
    """llvmlite's lock around every call into LLVM (a ``threading.RLock``:
    ``llvmlite.binding.ffi.lib._lock._lock``), taken inside the compiler lock by a compile and
    alone by other LLVM calls (host features, linking object code)."""
    from llvmlite.binding import ffi
    return ffi.lib._lock._lock
