"""Numba's on-disk kernel cache, kept where ``jitdigest._cachedir`` says and made safe to lose.

Numba finds a cache folder through a list of "locators" (the package's ``__pycache__`` first)
and raises ``RuntimeError: no locator available`` when none is writable; a truncated or damaged
entry then fails every later call with ``UnpicklingError``, ``EOFError`` or an LLVM error until
someone deletes it. Here:

* one folder: ``_cachedir.directory()`` (per user, per version and kernel sources);
* a cache folder that cannot be written: kernels are compiled in memory for this process, with
  one ``CacheWarning``;
* every data file starts with the SHA-256 of its payload; an entry that fails to load for any
  reason but an unreadable file (bad checksum, unpickling, rebuilding) is removed and compiled
  again, with one ``CacheWarning``;
* writes go to a temporary name and are renamed into place, so processes filling one cold
  cache at once never read a half-written file.

This is the policy only: the subclassing of Numba's cache (its private internals) is
``_internals.KernelCache``; ``tests/test_cache.py`` and ``tests/test_internals.py`` fail if it
stops working.
"""
import os
import warnings

from .. import _cachedir
from .._stdlib import hashlib
from ._internals import KernelCache, cache_of, set_cache

_warned = set()


def _warn_once(key, message):
    if key not in _warned:
        _warned.add(key)
        warnings.warn_explicit(message, _cachedir.CacheWarning, "jitdigest", 0,
                               module="jitdigest")


class _Damaged(Exception):
    """A data file whose checksum does not match its contents."""


class SafeCache(KernelCache):
    """A kernel cache that never stops a kernel from being compiled and run."""

    @staticmethod
    def directory():
        return _cachedir.directory()

    @staticmethod
    def source_stamp():
        return _cachedir.source_key()

    @staticmethod
    def seal(payload):
        return hashlib.sha256(payload).digest() + payload

    @staticmethod
    def unseal(blob):
        payload = blob[32:]
        if len(blob) < 32 or hashlib.sha256(payload).digest() != blob[:32]:
            raise _Damaged("checksum mismatch")
        return payload

    def load(self, sig, target_context):
        try:
            return self.load_entry(sig, target_context)
        except OSError:                 # unreadable folder or file: compile, say nothing
            return None
        except Exception as exc:        # damaged entry: remove it, compile again
            self._discard(exc)
            return None

    def save(self, sig, data):
        if "read-only" in _warned:
            return
        for attempt in (1, 2):
            try:
                self.save_entry(sig, data)
                return
            except OSError as exc:
                _warn_once("read-only", f"jitdigest: cannot write compiled kernels to "
                           f"{self.folder} ({exc.strerror or exc}); kernels are compiled in "
                           f"memory for this process (set {_cachedir.ENV} to a writable folder)")
                return
            except Exception as exc:    # a damaged index met while adding to it
                if attempt == 2:
                    raise
                self._discard(exc)

    def _discard(self, exc):
        for path in self.entry_files():
            try:
                os.unlink(path)
            except OSError:
                pass
        _warn_once(("damaged", self.entry_name),
                   f"jitdigest: discarded a damaged cache entry for {self.entry_name} "
                   f"in {self.folder} ({type(exc).__name__}: {exc}); compiling it again")


def on_disk(dispatcher):
    """Whether ``dispatcher`` (a kernel with the safe cache) has an index file in the cache
    folder, i.e. loading it would most likely compile nothing."""
    cache = cache_of(dispatcher)
    return isinstance(cache, SafeCache) and os.path.exists(cache.index_path)


def attach(dispatcher):
    """Give a Numba dispatcher (made with ``cache=False``) the safe cache."""
    return set_cache(dispatcher, SafeCache(dispatcher.py_func))
