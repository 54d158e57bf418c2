"""Section 6 of ``_internals``: Numba's threading layer set-up (``numba.np.ufunc.parallel``) and its
global compiler lock, for ``jitdigest._parallel``.

Part of the one package that touches Numba's and llvmlite's private internals (see
``__init__``); tested in tests/test_internals.py."""
import numba


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
