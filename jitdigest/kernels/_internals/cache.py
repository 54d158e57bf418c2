"""Section 5 of ``_internals``: Numba's on-disk cache subclassed (``numba.core.caching``,
``rtsys.initialize``, ``Dispatcher._cache``); the policy lives in ``_numba_cache``.

Part of the one package that touches Numba's and llvmlite's private internals (see
``__init__``); tested in tests/test_internals.py."""
import glob
import os
import pickle
import tempfile

from numba.core import caching


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
    ``source_stamp(py_file)``, entries told apart by the function's package and first line
    (Numba names files after the module's file name alone, and every family has a
    ``portable.py``)."""
    class Locator(caching._CacheLocator):
        def __init__(self, py_func, py_file):
            self._py_file = py_file
            package = (getattr(py_func, "__module__", None) or "").rpartition(".")[0]
            self._where = "%s-%d" % (package.rpartition(".")[2] or "top",
                                     py_func.__code__.co_firstlineno)

        def get_cache_path(self):
            return cache_class.directory()

        def ensure_cache_path(self):            # (Numba's, with the subclass's folders)
            path = self.get_cache_path()
            cache_class.make_directory(path)
            tempfile.TemporaryFile(dir=path).close()

        def get_source_stamp(self):
            return cache_class.source_stamp(self._py_file)

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

    * ``directory()``, ``source_stamp(py_file)`` (static): the folder, and the stamp (of the
      functions defined in ``py_file``) whose change makes their entries stale;
    * ``make_directory(path)`` (static): make the folder before the first entry is written;
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
