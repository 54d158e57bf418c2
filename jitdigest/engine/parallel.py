"""Numba's parallel engine under the batch functions: which threading layer runs their
``prange`` loops, and what keeps it safe from any thread and across ``fork``.

``hash_many`` and ``hmac_many`` hash large batches with a ``prange`` loop over chunks of rows
(``over_chunks`` in ``jitdigest/kernels/_rows.py``) calling the backend's kernel on each. The
loop runs on Numba's threading layer, chosen by Numba as it documents
(``NUMBA_THREADING_LAYER``, default order tbb, omp, workqueue); jitdigest never overrides a
choice, and adds only what Numba leaves to users: TBB made findable (``_load_tbb``), concurrent
calls serialised where the layer needs it (``region``), no parallel regions in a forked child of
an OpenMP parent (``usable``). A fork during a compile is ``_fork``'s: a fork waits for Numba's
compiler lock and for jitdigest's first-use work; this module's locks are made anew in a forked
child.

Importing this module imports no Numba: everything here runs on the first large batch.
"""
import contextlib
import os
import sys

from ..base import fork as _fork

_lock = _fork.lock(globals(), "_lock")          # guards the set-up below
_serial = _fork.lock(globals(), "_serial")      # held around parallel calls on a layer that
                                                # is not thread-safe
_layer = None                     # the layer this process uses, once launched
_forked_off = False               # a forked child of an OpenMP process: no parallel regions

THREAD_SAFE = ("tbb", "omp")


def _tbb_library():
    """The path of the TBB library the ``tbb`` distribution installed, or None."""
    from importlib import metadata
    try:
        files = metadata.files("tbb") or ()
    except metadata.PackageNotFoundError:
        return None
    for f in files:
        if f.name in ("libtbb.so.12", "libtbb.12.dylib", "tbb12.dll"):
            path = f.locate()
            if os.path.exists(path):
                return str(path)
    return None


def _load_tbb():
    """Make an installed TBB loadable by Numba (unless the user asked for another layer).

    pip's ``tbb`` wheel puts ``libtbb.so.12`` in the environment's ``lib/``, which is not on the
    loader's path, so Numba would silently fall back to another layer. It is loaded
    (``RTLD_GLOBAL``) from where the wheel's file list says, before Numba picks a layer."""
    import numba
    choice = str(numba.config.THREADING_LAYER).lower()
    if choice not in ("default", "tbb", "safe", "threadsafe", "forksafe"):
        return
    path = _tbb_library()
    if path is None:
        return
    import ctypes
    try:
        ctypes.CDLL(path, mode=ctypes.RTLD_GLOBAL)
    except OSError:
        pass                      # Numba then picks another layer, as it would have


def layer():
    """The threading layer of this process, set up on first use (loads it and starts its
    threads): "tbb", "omp" or "workqueue"."""
    global _layer
    if _layer is None:
        with _fork.loading(), _lock:         # no fork while Numba starts its layer's threads
            if _layer is None:
                from ..kernels._internals import launch_threading_layer, launched_layer
                if launched_layer() is None:
                    _load_tbb()
                _layer = launch_threading_layer()
    return _layer


def thread_safe():
    """Can several threads run parallel regions at once on this process's layer?"""
    return layer() in THREAD_SAFE


def usable():
    """May this process run parallel regions (False in a forked child of an OpenMP parent)?

    GNU OpenMP is not fork-safe: Numba terminates a forked child that enters a parallel region
    after its parent used one. Such a child hashes on its calling thread. TBB and workqueue
    children use the layer as the parent did."""
    return not _forked_off


def current_threads():
    """``numba.get_num_threads()`` for this thread once Numba's layer runs in this process (so a
    user's ``numba.set_num_threads`` applies), else None (nothing is loaded to ask)."""
    if "numba.np.ufunc.parallel" not in sys.modules:
        return None
    from ..kernels._internals import launched_layer
    if launched_layer() is None:
        return None
    import numba
    return numba.get_num_threads()


def max_threads():
    """The most threads a parallel region may use (``NUMBA_NUM_THREADS``)."""
    import numba
    return numba.config.NUMBA_NUM_THREADS


@contextlib.contextmanager
def region(threads):
    """Run the body's parallel calls on ``threads`` threads (``numba.set_num_threads`` for this
    thread, restored after), serialised with other threads' when the layer needs it.

    TBB and OpenMP take parallel regions from several threads at once; ``workqueue`` aborts the
    process when a second thread enters one, so under it the parallel calls are serialised by
    one process-wide lock (correct; slower only when threads really overlap)."""
    import numba
    guard = contextlib.nullcontext() if thread_safe() else _serial
    with guard:
        before = numba.get_num_threads()
        numba.set_num_threads(max(1, min(threads, max_threads())))
        try:
            yield
        finally:
            numba.set_num_threads(before)


def describe():
    """One line for ``jitdigest info``: the layer and what it allows."""
    if _forked_off:
        return "off in this process (a child forked from an OpenMP process): one thread"
    try:
        name = layer()
    except Exception as exc:              # no layer loads: the batch runs on one thread
        return f"unavailable ({type(exc).__name__}: {exc}); batches run on one thread"
    if name in THREAD_SAFE:
        fork = "fork-safe" if name == "tbb" else "a forked child hashes on one thread"
        return (f"numba prange on {name}, {max_threads()} threads; concurrent calls run at "
                f"once; {fork}")
    return (f"numba prange on {name}, {max_threads()} threads; concurrent calls are serialised "
            "(workqueue is not thread-safe; install tbb for concurrent calls)")


# --- fork -----------------------------------------------------------------------------------

def _after_fork_in_child():
    global _forked_off
    if "numba.np.ufunc.parallel" in sys.modules:
        from ..kernels._internals import launched_layer
        if launched_layer() == "omp":
            _forked_off = True


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_after_fork_in_child)
