"""What keeps a child forked at any instant able to hash: jitdigest's first-use work runs under one
lock that a fork waits for, and a forked child forgets what the parent's other threads left
unfinished.

A forked child has only the thread that called ``fork``. Whatever another thread of the parent
held at that instant stays held in the child, by a thread that does not exist there: a lock of
Python's import system while ``import numba`` ran, Numba's compiler lock while a kernel compiled
or loaded from the cache, a lock of jitdigest's own. The child's first digest would wait on it
forever (``multiprocessing``'s fork start method, Dask's nannies and gunicorn all fork).

So: the gate (``loading()``) keeps forks out of first-use work; ``_before_fork`` also waits for
imports in flight, and a child drops one cut all the same (``_forget_cut_imports``); ``lock()``
makes jitdigest's other module-level locks anew in the child. The hooks are registered when this
module is imported (``_before_fork`` says why after ``logging``).
"""
import logging  # noqa: F401  (first: see _before_fork)
import os
import sys
import threading
import time

from . import config as _config

# The packages whose imports a fork waits for (top-level names): jitdigest's and what its
# kernels import lazily.
WATCHED = ("jitdigest", "numba", "llvmlite", "numpy")

_gate = threading.RLock()
_held = []            # what the forking thread took before the fork, to release after it
_RENEWED = []         # (a module's globals, a name): a lock made anew in a forked child


def lock(module_globals, name):
    """A new ``threading.Lock``, for ``name = lock(globals(), "name")``: the module's global
    ``name`` is made anew in a forked child (held by another thread at the fork, it would stay
    held there: the child lacks that thread). Users read the global at each use (``with
    _lock:``), so the child's is the new one."""
    _RENEWED.append((module_globals, name))
    module_globals[name] = threading.Lock()
    return module_globals[name]


def loading():
    """``with loading():`` runs the block (first-use work: an import, a link) where no fork
    can land.

    The gate, a re-entrant lock, is held around jitdigest's first-use work: importing Numba
    (``_cpu.import_numba``), importing a family's kernel modules (``_dispatch.backends``),
    linking stored kernels (``_native``). Before a fork, the forking thread takes the gate, then
    Numba's compiler lock, then llvmlite's lock around LLVM calls (in the order a thread may
    nest them: the gate's work compiles, a compile calls LLVM), waiting at most
    ``_config.FORK_WAIT`` in all; all are released on both sides after the fork. A fork thus
    lands between two pieces of such work, never inside one: it waits for the work in flight,
    once per process, where the child would otherwise hang."""
    return _gate


class cached_property:
    """``functools.cached_property`` without its lock: the value is computed on first access
    and kept in the instance's ``__dict__``. On Python 3.11 functools' holds one lock for all
    instances while it computes, and a fork while another thread held it would leave the child
    waiting for ever at its first digest. Two threads may compute a value at once; each gets
    the same answer."""

    def __init__(self, func):
        self.func = func
        self.name = func.__name__
        self.__doc__ = func.__doc__

    def __set_name__(self, owner, name):
        self.name = name

    def __get__(self, instance, owner=None):
        if instance is None:
            return self
        value = instance.__dict__[self.name] = self.func(instance)
        return value


def _kernel_locks():
    """Numba's compiler lock, then llvmlite's lock around LLVM calls (a compile takes them in
    that order), if jitdigest's kernels could hold them here (their seam is loaded), else
    nothing. No import: a hook that imported could wait on an import lock held by a thread
    that waits on the gate."""
    threads = sys.modules.get("jitdigest.kernels._internals.threads")
    if threads is None or getattr(threads.__spec__, "_initializing", False):
        return ()
    return threads.compiler_lock(), threads.llvm_lock()


def _module_locks():
    """The import system's module locks: name -> weak reference to the lock of an import in
    progress (``importlib._bootstrap._module_locks``)."""
    return getattr(sys.modules.get("_frozen_importlib"), "_module_locks", None) or {}


def _cut_by_a_fork(packages):
    """The modules of ``packages`` (top-level names) that a thread other than this one is
    importing now: their module locks name it."""
    me = threading.get_ident()
    return [name for name, ref in list(_module_locks().items())
            if name.partition(".")[0] in packages
            and getattr(ref(), "owner", None) not in (None, me)]


def _importing_elsewhere():
    return bool(_cut_by_a_fork(WATCHED))


def _before_fork():
    """Take the gate and the kernel locks (``loading()``) once no other thread is importing a
    module of ``WATCHED``.

    An import that another thread has begun can never finish in the child: its module lock
    names a thread that is gone, and every later import of that name waits on it. Kernel
    modules import parts of Numba lazily, outside the gate (``from numba import prange`` in a
    generated module, a public module's lazy submodule on first access). So a fork also waits until no
    other thread is importing a module of jitdigest, Numba, llvmlite or numpy (their module
    locks, ``importlib._bootstrap._module_locks``), checked again once it holds the gate.

    The hooks are registered after ``logging`` is imported (first, for that: Numba logs while it
    imports and compiles). Before-fork hooks run in reverse order of registration, so this one
    runs before ``logging``'s, which takes logging's lock: a thread that this hook waits for and
    that logs (creates a logger while importing, logs while compiling) is never left waiting
    for a lock the forking thread already took."""
    deadline = time.monotonic() + _config.FORK_WAIT
    while True:
        while _importing_elsewhere() and time.monotonic() < deadline:
            time.sleep(0.002)
        if not _gate.acquire(timeout=max(deadline - time.monotonic(), 0)):
            break
        if not _importing_elsewhere() or time.monotonic() >= deadline:
            _held.append(_gate)
            break
        _gate.release()                   # an import began meanwhile (outside the gate)
    for lock in _kernel_locks():
        if lock.acquire(timeout=max(deadline - time.monotonic(), 0)):
            _held.append(lock)


def _after_fork_in_parent():
    while _held:
        _held.pop().release()


# Whose half-made modules a forked child drops: jitdigest's, and numpy's lazily imported
# submodules (``np.unique`` imports ``numpy.ma`` on first use). Numba's and llvmlite's are
# imported under the gate.
FORGOTTEN = ("jitdigest", "numpy")


def _forget_cut_imports():
    """In a forked child, drop the modules of ``FORGOTTEN`` whose import another thread was
    running at the fork: the module lock of each is owned by a thread this process does not
    have, and would block every later import of that name.

    ``_before_fork`` waits for such imports, but a thread may start one in the instant between
    its last check and the fork (rare: tools/fork_trials.py caught ``np.unique``'s first import
    of ``numpy.ma`` there). The child drops the half-made modules and their locks, so that its
    first use imports them anew, as a fresh process would."""
    locks = _module_locks()
    for name in _cut_by_a_fork(FORGOTTEN):
        locks.pop(name, None)
        module = sys.modules.get(name)
        if getattr(getattr(module, "__spec__", None), "_initializing", False):
            del sys.modules[name]


def _after_fork_in_child():
    _after_fork_in_parent()               # the child's one thread is the one that took them
    for module_globals, name in _RENEWED:
        module_globals[name] = threading.Lock()
    _forget_cut_imports()


if hasattr(os, "register_at_fork"):
    os.register_at_fork(before=_before_fork, after_in_parent=_after_fork_in_parent,
                        after_in_child=_after_fork_in_child)
