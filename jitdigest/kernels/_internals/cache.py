"""Section 5 of ``_internals``: an on-disk cache of compiled kernels that Numba's dispatcher
uses as its own (``Dispatcher._cache``); the policy lives in ``_numba_cache``.

The index and data files are jitdigest's, in Numba's layout (``<entry>.nbi``,
``<entry>.<n>.nbc``); a compile result goes to disk and back through
``CompileResult._reduce`` / ``_rebuild``, its runtime made ready by ``rtsys.initialize``.

Part of the one package that touches Numba's and llvmlite's private internals (see
``__init__``); tested in tests/test_internals.py."""
import glob
import inspect
import os
import pickle
import sys
import tempfile
import uuid
import warnings

import numba
from numba.core import compiler, errors

from ...base.stdlib import hashlib  # the real one, whatever stands in for it in sys.modules


def _runtime_ready(target_context):
    """What loading a cached kernel needs of Numba's CPU target: its runtime (NRT) initialised,
    so the kernel's references to the allocator resolve. Numba's own load calls
    ``target_context.refresh()``, which also imports and registers every lowering
    implementation, needed only to compile; any compile refreshes the context itself first
    (``CompilerBase.__init__``)."""
    from numba.core.runtime import rtsys
    rtsys.initialize(target_context)


def _entry_name(py_func, py_file):
    """Numba's file name base (module file, qualified name, line, Python version), entries told
    apart by the function's package as well (every family has a ``portable.py``)."""
    package = (getattr(py_func, "__module__", None) or "").rpartition(".")[0]
    where = "%s-%d" % (package.rpartition(".")[2] or "top", py_func.__code__.co_firstlineno)
    qualname = getattr(py_func, "__qualname__", py_func.__name__)
    fullname = "%s.%s" % (os.path.splitext(os.path.basename(py_file))[0], qualname)
    return "%s-%s.py%d%d%s" % (fullname.replace("<", "").replace(">", ""), where,
                               sys.version_info[0], sys.version_info[1],
                               getattr(sys, "abiflags", ""))


def _write(path, blob):
    """``blob`` to ``path`` through a temporary name renamed into place."""
    temporary = "%s.tmp.%s" % (path, uuid.uuid4().hex[:16])
    try:
        with open(temporary, "wb") as f:
            f.write(blob)
        os.replace(temporary, path)
    except BaseException:
        try:
            os.unlink(temporary)
        except OSError:
            pass
        raise


class KernelCache:
    """The on-disk cache of one function's compiled overloads, as Numba's dispatcher calls it
    (``numba.core.caching``'s cache interface), every choice left to a subclass:

    * ``directory()``, ``source_stamp(py_file)`` (static): the folder, and the stamp (of the
      functions defined in ``py_file``) whose change makes their entries stale;
    * ``make_directory(path)`` (static): make the folder before the first entry is written;
    * ``seal(payload) -> bytes``, ``unseal(bytes) -> payload`` (static): an index or data
      file's format (``unseal`` raises on a damaged file);
    * ``load(sig, target_context)``, ``save(sig, data)``: what Numba's dispatcher calls, for the
      subclass to wrap in its policy around ``load_entry`` / ``save_entry``.

    ``folder``, ``entry_name``, ``index_path`` and ``entry_files()`` say where the entry is."""

    def __init__(self, py_func):
        self._py_func = py_func
        py_file = inspect.getfile(py_func)
        self._folder = self.directory()
        self._stamp = self.source_stamp(py_file)
        self._entry_name = _entry_name(py_func, py_file)
        self._enabled = True

    def __repr__(self):
        return "<%s py_func=%r>" % (type(self).__name__, self._py_func)

    # the subclass's choices
    @staticmethod
    def directory():
        raise NotImplementedError

    @staticmethod
    def source_stamp(py_file):
        raise NotImplementedError

    @staticmethod
    def make_directory(path):
        os.makedirs(path, exist_ok=True)

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
        or rebuilding it raised; OSError where a file cannot be read)."""
        if not self._enabled:
            return None
        key = self._key(sig, target_context.codegen())
        if key is None:
            return None
        name = self._index().get(key)
        if name is None:
            return None
        with open(os.path.join(self.folder, name), "rb") as f:
            payload = pickle.loads(self.unseal(f.read()))
        _runtime_ready(target_context)
        return compiler.CompileResult._rebuild(target_context, *payload)

    def save_entry(self, sig, data):
        """Write the compile result ``data`` for ``sig`` (raises what writing raised). One
        that cannot be cached (lifted loops, dynamic globals, a closure or data that does not
        pickle) is left out with a ``NumbaWarning``, as Numba's cache does."""
        if not self._enabled:
            return
        key = self._key(sig, data.target_context.codegen())
        problem = "as its closure does not pickle" if key is None else self._uncachable(data)
        if problem is None:
            try:
                blob = pickle.dumps(data._reduce(), protocol=4)
            except (pickle.PicklingError, TypeError, AttributeError) as exc:
                problem = f"as it does not pickle ({type(exc).__name__}: {exc})"
        if problem is not None:
            warnings.warn_explicit(
                f'Cannot cache compiled function "{self._py_func.__name__}" {problem}',
                errors.NumbaWarning, inspect.getfile(self._py_func),
                self._py_func.__code__.co_firstlineno)
            return
        self.make_directory(self.folder)
        tempfile.TemporaryFile(dir=self.folder).close()     # writable, or OSError now
        overloads = self._index()
        name = overloads.get(key)
        if name is None:
            used = set(overloads.values())
            number = 1
            while "%s.%d.nbc" % (self.entry_name, number) in used:
                number += 1
            name = overloads[key] = "%s.%d.nbc" % (self.entry_name, number)
            self._save_index(overloads)
        _write(os.path.join(self.folder, name), self.seal(blob))

    @staticmethod
    def _uncachable(cres):
        if any(not lifted.can_cache for lifted in cres.lifted):
            return "as it uses lifted code"
        if cres.library.has_dynamic_globals:
            return "as it uses dynamic globals (such as ctypes pointers and large global arrays)"
        return None

    def _key(self, sig, codegen):
        """An overload's key in the index: its signature, the code generator's target, the
        function's bytecode and closure (None when the closure does not pickle)."""
        func = self._py_func
        closure = b""
        if func.__closure__ is not None:
            try:
                closure = pickle.dumps(tuple(c.cell_contents for c in func.__closure__),
                                       protocol=4)
            except Exception:
                return None
        return (sig, codegen.magic_tuple(), (hashlib.sha256(func.__code__.co_code).hexdigest(),
                                             hashlib.sha256(closure).hexdigest()))

    def _index(self):
        """{key: data file name} of the entry's index; empty when there is none, or it was
        written by another Numba or for other sources (its data files are then overwritten)."""
        try:
            with open(self.index_path, "rb") as f:
                blob = f.read()
        except FileNotFoundError:
            return {}
        version, stamp, overloads = pickle.loads(self.unseal(blob))
        if version != numba.__version__ or stamp != self._stamp:
            return {}
        return overloads

    def _save_index(self, overloads):
        _write(self.index_path, self.seal(pickle.dumps((numba.__version__, self._stamp,
                                                        overloads), protocol=4)))

    @property
    def folder(self):
        return self._folder

    @property
    def entry_name(self):
        """The common start of the entry's file names (function, line, Python version)."""
        return self._entry_name

    @property
    def index_path(self):
        return os.path.join(self.folder, self.entry_name + ".nbi")

    def entry_files(self):
        """Paths of the entry's index and data files that exist now."""
        base = os.path.join(self.folder, glob.escape(self.entry_name))
        return glob.glob(base + ".nbi") + glob.glob(base + ".*.nbc")

    # Numba's interface (numba.core.caching._Cache), called by its dispatcher
    @property
    def cache_path(self):
        return self.folder

    def enable(self):
        self._enabled = True

    def disable(self):
        self._enabled = False

    def flush(self):
        try:
            self._save_index({})
        except OSError:
            pass

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
