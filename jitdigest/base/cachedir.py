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

Nothing is read from or written to a folder another user could have written (``trusted()``);
folders made here are 0o700 (the user's alone); no Numba import (``jitdigest cache`` needs none).
"""
import errno
import functools
import os
import stat
import sys
import threading
import warnings

from .stdlib import hashlib

ENV = "JITDIGEST_CACHE_DIR"


class CacheWarning(UserWarning):
    """The kernel cache could not be used as it is (not writable, or a damaged entry that was
    discarded); hashing goes on, compiling what it needs."""


PACKAGE = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
KERNELS = os.path.join(PACKAGE, "kernels")


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
# joins) on every batch call (the calibration table's path) costs too much there
# (benchmarks/results/tunables.md). On Windows the home directory comes from USERPROFILE, or
# HOMEDRIVE and HOMEPATH (os.path.expanduser).
_ROOTS = {}
_SETTINGS = (ENV, "NUMBA_CACHE_DIR", "XDG_CACHE_HOME", "HOME") + (
    ("LOCALAPPDATA", "USERPROFILE", "HOMEDRIVE", "HOMEPATH") if sys.platform == "win32" else ())
# os.environ's own dict (bytes keys on POSIX), read directly: four os.environ.get() calls are a
# large part of batch dispatch (benchmarks/results/tunables.md). Where it is not such a dict:
# os.environ.get.
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
    family packages, and ``base/algorithms.py`` and ``base/config.py``, the modules outside it
    the kernels read constants from."""
    h = hashlib.sha256()
    files = [os.path.join(PACKAGE, "base", n) for n in ("algorithms.py", "config.py")]
    for folder, dirs, names in os.walk(KERNELS):
        dirs[:] = sorted(d for d in dirs if d != "__pycache__")
        files.extend(os.path.join(folder, n) for n in sorted(names) if n.endswith(".py"))
    for path in files:
        with open(path, "rb") as f:
            data = f.read()
        name = os.path.relpath(path, PACKAGE).replace(os.sep, "/")
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
    from .config import VERSION
    return os.path.join(root(), f"{VERSION}-{source_key()}")


def write_whole(path, data):
    """Write the bytes ``data`` to ``path`` whole or not at all (a temporary name in the same
    folder, made if missing, then a rename), so a reader in another process never sees half a
    file; OSError if it cannot be written, or if its folder is not ``trusted()`` (a link
    planted at the temporary name there would send the bytes elsewhere)."""
    folder = os.path.dirname(path)
    _must_trust(folder)
    makedirs(folder)
    _must_trust(folder)             # (a folder that was missing, and someone else made first)
    temporary = f"{path}.{os.getpid()}.{threading.get_ident()}.tmp"
    try:
        with open(temporary, "wb") as f:
            f.write(data)
        os.replace(temporary, path)
    finally:
        if os.path.exists(temporary):
            os.unlink(temporary)


def _must_trust(folder):
    if not trusted(folder):
        raise PermissionError(errno.EACCES, "not a trusted cache folder", folder)


def makedirs(folder):
    """Make ``folder`` and every missing folder above it, each readable and writable by this
    user alone (``os.makedirs`` gives the folders above the last the default mode, which a
    umask of 0 makes writable by everyone)."""
    if os.path.isdir(folder):
        return
    parent = os.path.dirname(folder)
    if parent != folder:
        makedirs(parent)
    try:
        os.mkdir(folder, 0o700)
    except FileExistsError:
        if not os.path.isdir(folder):
            raise


# --- whether a cache folder may be used --------------------------------------------------
# Stored kernels are machine code linked into the process and Numba's cache files are pickles;
# their SHA-256 digests catch damage, not a writer. Whoever can write a folder they are read from
# (or replace a folder above it) runs code in every process that reads them. The rule, OpenSSH's
# StrictModes for a path: the folder and every folder above it, up to "/", must be owned by this
# user (the effective uid) or root and be writable by neither group nor others. One exception: a
# folder *above* may be writable by everyone if it has the sticky bit (/tmp): others can add
# entries to it but not rename or remove ours, and one they add in our path is theirs, so it fails
# the rule. The cache root itself (``root()``) may not be such a folder: entries others made there
# would be read. Links on the way are followed, each owned by this user or root. Folders that are
# missing pass (nothing can be read from them); the answer is only kept once the whole path
# exists, as no one else can change it then. Another user's folder, even one only they can write,
# fails: sharing a cache means root (or this user) owning it.
# Windows has no POSIX owners and modes to check: every folder passes there.
_CHECKS = os.name == "posix" and hasattr(os, "geteuid")
_TRUSTED = {}           # folder -> whether it may be used (kept once known for good)
_WARNED = set()         # the folders named in a warning already


def trusted(folder):
    """Whether kernels may be read from and written to ``folder``, the cache root or a folder
    below it; where not, one ``CacheWarning`` names the folder at fault and how to fix it."""
    verdict = _TRUSTED.get(folder)
    if verdict is not None:
        return verdict
    if not _CHECKS:
        _TRUSTED[folder] = True
        return True
    top = root()
    if not (folder == top or folder.startswith(top.rstrip(os.sep) + os.sep)):
        top = folder                                    # (a folder outside the root: itself)
    known = True
    for path in (top, folder) if top != folder else (folder,):
        problem, whole = _problem(path)
        if problem is not None:
            _warn(top, *problem)
            _TRUSTED[folder] = False
            return False
        known = known and whole
    if known:
        _TRUSTED[folder] = True
    return True


def _problem(path):
    """((folder at fault, what is wrong, how to fix it) or None, whether every folder on the
    way exists) for ``path`` under the rule above."""
    me = os.geteuid()
    pending = os.path.abspath(path).split(os.sep)[::-1]
    current, links = os.sep, 0
    problem = _fault(current, os.lstat(current), me, above=True)
    while pending and problem is None:
        name = pending.pop()
        if name in ("", "."):
            continue
        if name == "..":                                # (after a link's target)
            current = os.path.dirname(current)
            continue
        step = os.path.join(current, name)
        try:
            st = os.lstat(step)
        except OSError:                                 # missing, or not ours to look into
            return None, False
        if stat.S_ISLNK(st.st_mode):
            links += 1
            if st.st_uid not in (me, 0):
                return (step, f"is a link owned by {_owner(st.st_uid)}",
                        "replace it with a folder"), True
            if links > 40:
                return (step, "has too many links", "replace them with a folder"), True
            target = os.readlink(step)
            if os.path.isabs(target):
                current = os.sep
            pending.extend(target.split(os.sep)[::-1])
            continue
        if not stat.S_ISDIR(st.st_mode):
            return None, False                          # nothing can be kept below a file
        problem = _fault(step, st, me, above=True)
        current = step
    if problem is None:
        problem = _fault(current, os.lstat(current), me, above=False)
    return problem, True


def _fault(folder, st, me, above):
    """(folder, what is wrong, how to fix it) or None: ``st`` is the folder's status."""
    if st.st_uid not in (me, 0):
        return (folder, f"is owned by {_owner(st.st_uid)}, not by you or root",
                "have it owned by you or root")
    mode = st.st_mode
    if mode & 0o022 and not (above and mode & stat.S_ISVTX):
        who = "everyone" if mode & 0o002 else "its group"
        fix = "use a folder of your own in it" if mode & stat.S_ISVTX else f"chmod go-w {folder}"
        return (folder, f"can be written by {who} (mode {stat.S_IMODE(mode):o})", fix)
    return None


def _owner(uid):
    try:
        import pwd
        return f"{pwd.getpwuid(uid).pw_name} (uid {uid})"
    except (ImportError, KeyError):
        return f"uid {uid}"


def _warn(top, folder, what, fix):
    if folder in _WARNED:
        return
    _WARNED.add(folder)
    warnings.warn_explicit(
        f"jitdigest: not using the kernel cache {top}: {folder} {what}, so another user could "
        f"plant code there for this process to run; kernels are compiled in memory for this "
        f"process (to use a cache: {fix}, or set {ENV} to a folder of your own)",
        CacheWarning, "jitdigest", 0, module="jitdigest")


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
