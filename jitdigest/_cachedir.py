"""Where compiled kernels are kept, and what ``jitdigest cache info|clear`` shows and removes.

Kernels are cached per user, never inside the installed package (so installing, upgrading,
uninstalling or ``pip install -e`` over an earlier install leave nothing behind):

* ``JITDIGEST_CACHE_DIR`` if set, else ``$NUMBA_CACHE_DIR/jitdigest`` if that is set, else the
  platform's user cache directory (``$XDG_CACHE_HOME`` or ``~/.cache`` on Linux,
  ``~/Library/Caches`` on macOS, ``%LOCALAPPDATA%`` on Windows) + ``/jitdigest``;
* below it one folder per jitdigest version *and* contents of the kernel sources
  (``0.1.0-<16 hex digits>``): a new version never loads an old kernel, and editing any file a
  kernel is built from (``kernels/_jit.py`` too, not only the kernel's own file) in a checkout
  moves to a fresh folder.

Nothing here imports Numba: the command line lists and clears the cache without it.
"""
import functools
import os
import sys
import threading

from ._stdlib import hashlib

ENV = "JITDIGEST_CACHE_DIR"


class CacheWarning(UserWarning):
    """The kernel cache could not be used as it is (not writable, or a damaged entry that was
    discarded); hashing goes on, compiling what it needs."""


KERNELS = os.path.join(os.path.dirname(os.path.abspath(__file__)), "kernels")


def _user_cache_home():
    if sys.platform == "win32":
        return os.environ.get("LOCALAPPDATA") or os.path.expanduser(r"~\AppData\Local")
    if sys.platform == "darwin":
        return os.path.expanduser("~/Library/Caches")
    xdg = os.environ.get("XDG_CACHE_HOME", "")
    return xdg if os.path.isabs(xdg) else os.path.expanduser("~/.cache")


def root():
    """The folder holding every version's kernels."""
    settings = _settings()
    found = _ROOTS.get(settings)
    if found is None:
        explicit, numba_dir = (os.environ.get(ENV), os.environ.get("NUMBA_CACHE_DIR"))
        found = _root(explicit, numba_dir)
        if all(os.path.isabs(s) for s in (explicit, numba_dir) if s):
            _ROOTS[settings] = found        # (a relative setting follows the working directory)
    return found


# every setting root()'s answer depends on -> that answer: working it out (home directory, path
# joins) was 13 us, on every batch call (the calibration table's path). On Windows the home
# directory comes from USERPROFILE, or HOMEDRIVE and HOMEPATH (os.path.expanduser).
_ROOTS = {}
_SETTINGS = (ENV, "NUMBA_CACHE_DIR", "XDG_CACHE_HOME", "HOME") + (
    ("LOCALAPPDATA", "USERPROFILE", "HOMEDRIVE", "HOMEPATH") if sys.platform == "win32" else ())
# os.environ's own dict (bytes keys on POSIX), read directly: four os.environ.get() calls were
# 7 us, half of what batch dispatch still cost. Where it is not such a dict: os.environ.get.
_ENV_DATA = getattr(os.environ, "_data", None)
_ENCODED = None
if type(_ENV_DATA) is dict and os.name == "posix":
    try:
        _ENCODED = tuple(os.environ.encodekey(name) for name in _SETTINGS)
    except AttributeError:
        _ENCODED = None


def _settings():
    if _ENCODED is not None:
        get = _ENV_DATA.get
        return tuple([get(key) for key in _ENCODED])
    return tuple([os.environ.get(name) for name in _SETTINGS])


def _root(explicit, numba_dir):
    if explicit:
        return os.path.abspath(explicit)
    if numba_dir:
        return os.path.join(os.path.abspath(numba_dir), "jitdigest")
    return os.path.join(_user_cache_home(), "jitdigest")


@functools.lru_cache(maxsize=None)
def source_key():
    """A digest of every kernel source file's path and bytes: ``jitdigest/kernels`` and its
    family packages, and ``_algorithms.py`` and ``_config.py``, the modules outside it the
    kernels read constants from."""
    h = hashlib.sha256()
    files = [os.path.join(os.path.dirname(KERNELS), n) for n in ("_algorithms.py", "_config.py")]
    for folder, dirs, names in os.walk(KERNELS):
        dirs[:] = sorted(d for d in dirs if d != "__pycache__")
        files.extend(os.path.join(folder, n) for n in sorted(names) if n.endswith(".py"))
    for path in files:
        with open(path, "rb") as f:
            data = f.read()
        name = os.path.relpath(path, os.path.dirname(KERNELS)).replace(os.sep, "/")
        h.update(b"%s\0%d\0" % (name.encode(), len(data)))
        h.update(data)
    return h.hexdigest()[:16]


def source_stamp(py_file):
    """The stamp of the cached kernels defined in ``py_file``: ``source_key()`` (the folder's
    name has it too), and for a file outside the package's kernel sources (a notebook's kernel
    module, a user's own) a digest of that file as well, so that editing it is never met with
    the kernels compiled from its old text."""
    key = source_key()
    path = os.path.abspath(py_file)
    if path.startswith(KERNELS + os.sep):
        return key
    try:
        with open(path, "rb") as f:
            return key + "-" + hashlib.sha256(f.read()).hexdigest()[:16]
    except OSError:
        return key


def _ours(name):
    """Whether ``name`` is a folder ``directory()`` names: ``<version>-<key>``, the version
    without "-" or "/", the key 16 lowercase hex digits."""
    version, dash, key = name.rpartition("-")
    return (bool(dash and version) and "/" not in version and "-" not in version
            and len(key) == 16 and all(c in "0123456789abcdef" for c in key))


def directory():
    """The folder this installation's kernels are loaded from and saved to."""
    from . import __version__
    return os.path.join(root(), f"{__version__}-{source_key()}")


def write_whole(path, data):
    """Write the bytes ``data`` to ``path`` whole or not at all (a temporary name in the same
    folder, made if missing, then a rename), so a reader in another process never sees half a
    file; OSError if it cannot be written."""
    os.makedirs(os.path.dirname(path), exist_ok=True)
    temporary = f"{path}.{os.getpid()}.{threading.get_ident()}.tmp"
    try:
        with open(temporary, "wb") as f:
            f.write(data)
        os.replace(temporary, path)
    finally:
        if os.path.exists(temporary):
            os.unlink(temporary)


def _size(path):
    total = files = 0
    for base, _, names in os.walk(path):
        for name in names:
            try:
                total += os.lstat(os.path.join(base, name)).st_size
            except OSError:
                continue
            files += 1
    return files, total


def describe():
    """{"root", "directory", "entries": [{"name", "files", "bytes", "current"}]}."""
    top, mine = root(), directory()
    entries = []
    try:
        names = sorted(os.listdir(top))
    except OSError:
        names = []
    for name in names:
        path = os.path.join(top, name)
        if os.path.isdir(path) and not os.path.islink(path):
            files, size = _size(path)
            entries.append({"name": name, "files": files, "bytes": size,
                            "current": path == mine})
    return {"root": top, "directory": mine, "entries": entries}


def clear():
    """Remove every version's kernels under ``root()``; returns (folders, bytes) removed.
    Only folders this module names (``<version>-<key>``) are touched, so pointing
    ``JITDIGEST_CACHE_DIR`` at a folder with other contents never deletes them."""
    removed = size = 0
    top = root()
    for entry in describe()["entries"]:
        name = entry["name"]
        if not _ours(name):
            continue
        import shutil
        shutil.rmtree(os.path.join(top, name), ignore_errors=True)
        removed += 1
        size += entry["bytes"]
    return removed, size
