"""Numba's on-disk kernel cache, kept where ``jitdigest._cachedir`` says and made safe to lose.

Numba finds a cache folder through a list of "locators" (the package's ``__pycache__`` first)
and raises ``RuntimeError: no locator available`` when none is writable; a truncated or damaged
entry then fails every later call with ``UnpicklingError``, ``EOFError`` or an LLVM error until
someone deletes it. Here:

* one locator: ``_cachedir.directory()`` (per user, per version and kernel sources);
* a cache folder that cannot be written: kernels are compiled in memory for this process, with
  one ``CacheWarning``;
* every data file starts with the SHA-256 of its payload; an entry that fails to load for any
  reason but an unreadable file (bad checksum, unpickling, rebuilding) is removed and compiled
  again, with one ``CacheWarning``;
* writes go to a temporary name and are renamed into place (Numba's own ``_open_for_write``),
  so processes filling one cold cache at once never read a half-written file.

This module and ``_jit.cached`` are the only users of ``numba.core.caching`` internals
(``FunctionCache``, ``CompileResultCacheImpl``, ``IndexDataCacheFile``, ``_CacheLocator``,
``Dispatcher._cache``); ``tests/test_cache.py`` fails if any of them stops working.
"""
import glob
import hashlib
import os
import pickle
import warnings

from numba.core import caching

from .. import _cachedir

_warned = set()


def _warn_once(key, message):
    if key not in _warned:
        _warned.add(key)
        warnings.warn_explicit(message, _cachedir.CacheWarning, "jitdigest", 0,
                               module="jitdigest")


class _Damaged(Exception):
    """A data file whose checksum does not match its contents."""


class _Locator(caching._CacheLocator):
    def __init__(self, py_func, py_file):
        self._py_file = py_file
        self._lineno = py_func.__code__.co_firstlineno

    def get_cache_path(self):
        return _cachedir.directory()

    def get_source_stamp(self):
        return _cachedir.source_key()

    def get_disambiguator(self):
        return str(self._lineno)

    @classmethod
    def from_function(cls, py_func, py_file):
        return cls(py_func, py_file)


class _Impl(caching.CompileResultCacheImpl):
    _locator_classes = [_Locator]


class _CheckedFile(caching.IndexDataCacheFile):
    """Numba's index + data files, each data file prefixed with the SHA-256 of its payload."""

    def _save_data(self, name, data):
        payload = self._dump(data)
        with self._open_for_write(self._data_path(name)) as f:
            f.write(hashlib.sha256(payload).digest())
            f.write(payload)

    def _load_data(self, name):
        with open(self._data_path(name), "rb") as f:
            blob = f.read()
        payload = blob[32:]
        if len(blob) < 32 or hashlib.sha256(payload).digest() != blob[:32]:
            raise _Damaged(f"{name}: checksum mismatch")
        return pickle.loads(payload)


def _prepare_to_load(target_context):
    """What loading a cached kernel needs of Numba's CPU target: its runtime (NRT) initialised,
    so the kernel's references to the allocator resolve. Numba's own load calls
    ``target_context.refresh()``, which also imports and registers every lowering
    implementation (~0.25 s, a third of a first digest's process), needed only to compile; any
    compile refreshes the context itself first (``CompilerBase.__init__``)."""
    from numba.core.runtime import rtsys
    rtsys.initialize(target_context)


class SafeCache(caching.FunctionCache):
    """A ``FunctionCache`` that never stops a kernel from being compiled and run."""

    _impl_class = _Impl

    def __init__(self, py_func):
        super().__init__(py_func)
        self._cache_file = _CheckedFile(self._cache_path, self._impl.filename_base,
                                        self._impl.locator.get_source_stamp())

    def load_overload(self, sig, target_context):
        _prepare_to_load(target_context)
        try:
            return self._load_overload(sig, target_context)
        except OSError:                 # unreadable folder or file: compile, say nothing
            return None
        except Exception as exc:        # damaged entry: remove it, compile again
            self._discard(exc)
            return None

    def save_overload(self, sig, data):
        if "read-only" in _warned:
            return
        for attempt in (1, 2):
            try:
                self._save_overload(sig, data)
                return
            except OSError as exc:
                _warn_once("read-only", f"jitdigest: cannot write compiled kernels to "
                           f"{self._cache_path} ({exc.strerror or exc}); kernels are compiled in "
                           f"memory for this process (set {_cachedir.ENV} to a writable folder)")
                return
            except Exception as exc:    # a damaged index met while adding to it
                if attempt == 2:
                    raise
                self._discard(exc)

    def _discard(self, exc):
        base = os.path.join(self._cache_path, glob.escape(self._impl.filename_base))
        for path in glob.glob(base + ".nbi") + glob.glob(base + ".*.nbc"):
            try:
                os.unlink(path)
            except OSError:
                pass
        _warn_once(("damaged", self._impl.filename_base),
                   f"jitdigest: discarded a damaged cache entry for {self._impl.filename_base} "
                   f"in {self._cache_path} ({type(exc).__name__}: {exc}); compiling it again")


def on_disk(dispatcher):
    """Whether ``dispatcher`` (a kernel with the safe cache) has an index file in the cache
    folder, i.e. loading it would most likely compile nothing."""
    cache = getattr(dispatcher, "_cache", None)
    return isinstance(cache, SafeCache) and os.path.exists(cache._cache_file._index_path)


def attach(dispatcher):
    """Give a Numba dispatcher (made with ``cache=False``) the safe cache."""
    dispatcher._cache = SafeCache(dispatcher.py_func)
    return dispatcher
