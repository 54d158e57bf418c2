"""Numba's on-disk kernel cache, kept where ``jitdigest.base.cachedir`` says and made safe to lose.

Numba finds a cache folder through a list of "locators" (the package's ``__pycache__`` first)
and raises when none is writable; a truncated or damaged entry then fails every later call
until someone deletes it. Here: one folder (``_cachedir.directory()``), used only while
``_cachedir.trusted()`` says so; a folder that cannot be written means kernels compiled in
memory, with one ``CacheWarning``; every index and data file starts with the SHA-256 of its
payload, and an entry that fails to load for any reason but an unreadable file is removed and
compiled again, with one ``CacheWarning``; writes are renamed into place; a process about to
compile an entry takes its lock file first and looks again (details below).

This is the policy only: the cache Numba's dispatcher calls (its private internals) is
``_internals.KernelCache``; ``tests/test_cache.py`` and ``tests/test_internals.py`` fail if it
stops working.
"""
import os
import time
import warnings

try:
    import fcntl
except ImportError:                     # Windows: each process compiles for itself
    fcntl = None

from ..base import cachedir as _cachedir, config as _config
from ..base.stdlib import hashlib
from ._internals import KernelCache, cache_of, set_cache

# * one folder: ``_cachedir.directory()`` (per user, per version and kernel sources), made
#   0o700 and used only while ``_cachedir.trusted()`` says so (owned by this user or root, and
#   no one else can write it or a folder above it: the data files are pickles); otherwise
#   kernels are compiled in memory and nothing there is read or written;
# * a cache folder that cannot be written: kernels are compiled in memory for this process,
#   with one ``CacheWarning``;
# * every index and data file starts with the SHA-256 of its payload; an entry that fails to
#   load for any reason but an unreadable file (bad checksum, unpickling, rebuilding) is
#   removed and compiled again, with one ``CacheWarning``;
# * writes go to a temporary name and are renamed into place, so processes filling one cold
#   cache at once never read a half-written file;
# * a process about to compile an entry takes its lock file (``<entry>.lock``, ``flock``)
#   first and looks again: another process that compiled the same kernel meanwhile (Dask or
#   pytest-xdist workers, ``jitdigest warmup -j N``, all meeting one cold cache) has left it to
#   load. A lock that cannot be made (read-only folder, no ``fcntl``) or that is held longer
#   than ``_config.KERNEL_LOCK_WAIT_S`` is not waited for: the process compiles for itself.

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
    def source_stamp(py_file):
        return _cachedir.source_stamp(py_file)

    @staticmethod
    def make_directory(path):
        _cachedir.makedirs(path)
        if not _cachedir.trusted(path):         # made by someone else meanwhile
            raise PermissionError(f"not a trusted cache folder: {path}")

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
        if not _cachedir.trusted(self.folder):
            return None                 # (one warning said so) compiled in memory
        found = self._load(sig, target_context)
        if found is None and _lock(self.lock_path):
            # a compile follows (``save`` unlocks): unless the process that held the lock has
            # just written this entry
            found = self._load(sig, target_context)
            if found is not None:
                _unlock(self.lock_path)
        return found

    def _load(self, sig, target_context):
        try:
            return self.load_entry(sig, target_context)
        except OSError:                 # unreadable folder or file: compile, say nothing
            return None
        except Exception as exc:        # damaged entry: remove it, compile again
            self._discard(exc)
            return None

    @property
    def lock_path(self):
        return os.path.join(self.folder, self.entry_name + ".lock")

    def save(self, sig, data):
        try:
            self._save(sig, data)
        finally:
            _unlock(self.lock_path)

    def _save(self, sig, data):
        if "read-only" in _warned or not _cachedir.trusted(self.folder):
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


# --- one compile per entry across processes ------------------------------------------------

_held = {}                              # lock path -> file descriptor: entries being compiled here


def _lock(path):
    """Hold ``path``'s lock for a compile of its entry, waiting while another process holds it
    (at most ``_config.KERNEL_LOCK_WAIT_S``). True when this process holds it now (it may have
    already: a compile that failed, or one Numba retries with other argument types); False
    when there is no lock to take, or the wait ran out."""
    if path in _held:
        return True
    if fcntl is None:
        return False
    flags = os.O_RDWR | os.O_CREAT | getattr(os, "O_CLOEXEC", 0)
    try:
        try:
            fd = os.open(path, flags, 0o666)
        except FileNotFoundError:       # a cold cache: its folder is made with the first entry
            SafeCache.make_directory(os.path.dirname(path))
            fd = os.open(path, flags, 0o666)
    except OSError:
        return False                    # a read-only or untrusted place: nothing to share
    deadline = time.monotonic() + _config.KERNEL_LOCK_WAIT_S
    while True:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            break
        except BlockingIOError:
            if time.monotonic() > deadline:
                os.close(fd)
                return False
            time.sleep(0.05)
        except OSError:                 # a file system without flock
            os.close(fd)
            return False
    _held[path] = fd
    _release_on_failed_compiles()
    return True


def _unlock(path):
    fd = _held.pop(path, None)
    if fd is not None:
        os.close(fd)                    # closing the only descriptor releases the lock


_listening = []


def _release_on_failed_compiles():
    """A compile that raises never reaches ``save``: release its entry's lock when Numba's
    compile event ends without a compiled signature for the arguments (a compile that worked
    adds it before the event ends, and is saved after). ``Event.is_failed`` is not used: in Numba
    0.68 it says the opposite."""
    if _listening:
        return
    from numba.core import event

    class Releaser(event.Listener):
        def on_start(self, ev):
            pass

        def on_end(self, ev):
            dispatcher = ev.data.get("dispatcher")
            cache = cache_of(dispatcher)
            if (isinstance(cache, SafeCache) and cache.lock_path in _held
                    and tuple(ev.data.get("args", ())) not in dispatcher.signatures):
                _unlock(cache.lock_path)
    event.register("numba:compile", Releaser())
    _listening.append(True)


def _forget_locks_in_child():
    # The parent's compiles, not the child's: closing the inherited descriptors leaves the
    # parent's locks held (flock is per open file, and the parent's stays open).
    for fd in _held.values():
        try:
            os.close(fd)
        except OSError:
            pass
    _held.clear()


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_forget_locks_in_child)


def on_disk(dispatcher):
    """Whether ``dispatcher`` (a kernel with the safe cache) has an index file in the cache
    folder, i.e. loading it would most likely compile nothing."""
    cache = cache_of(dispatcher)
    return (isinstance(cache, SafeCache) and _cachedir.trusted(cache.folder)
            and os.path.exists(cache.index_path))


def attach(dispatcher):
    """Give a Numba dispatcher (made with ``cache=False``) the safe cache."""
    return set_cache(dispatcher, SafeCache(dispatcher.py_func))
