"""What a user sees while kernels compile, once a compile has taken long enough to notice
(loading a cached kernel takes milliseconds and shows nothing): on a terminal's stderr a
spinner line ("compiling sha256 kernels, once per machine..."), or the progress line of
``jitdigest sum`` when one owns the terminal line (``own_line``); in a Jupyter/IPython kernel
one line in the cell's output naming ``jitdigest warmup``; ``JITDIGEST_QUIET=1`` silences
both. The ``jitdigest`` logger gets a record when a compile starts and when it ends, always.
The line names the algorithm asked for (sha384), not only the kernel family (sha512): callers
pass it, or ``asking`` names it for the compiles on its thread."""
import contextlib
import logging
import os
import sys
import threading
import time

from ..base import config as _config, fork as _fork

_FRAMES = "|/-\\"
_lock = _fork.lock(globals(), "_lock")      # held while a compile line shows
_log = logging.getLogger("jitdigest")
_asked = threading.local()                  # .names: the algorithms asked for on this thread
_owners = []                                # who draws the terminal line (``own_line``)
_announced = set()                          # (cell, name) already announced in a notebook


def isatty(stream):
    """Whether ``stream`` is a terminal (False for None, closed or odd streams)."""
    try:
        return stream is not None and stream.isatty()
    except (AttributeError, ValueError):
        return False


def quiet():
    """Whether ``JITDIGEST_QUIET`` silences the terminal and notebook output."""
    return bool(os.environ.get("JITDIGEST_QUIET"))


def _terminal():
    return sys.stderr if isatty(sys.stderr) else None


def ipython_kernel():
    """The running IPython kernel's shell (a notebook, JupyterLab, VS Code...), else None.
    Imports nothing: without ``ipykernel`` already imported there is no kernel."""
    if "ipykernel" not in sys.modules:
        return None
    get = getattr(sys.modules.get("IPython"), "get_ipython", None)
    try:
        shell = get() if get is not None else None
    except Exception:                       # noqa: BLE001 -- a half-started shell
        return None
    return shell if getattr(shell, "kernel", None) is not None else None


def own_line(owner):
    """Hand the terminal line to ``owner`` until ``release_line(owner)``: while a compile
    shows, ``owner.compiling(name)`` is called (then ``owner.compiling(None)``) in place of
    the spinner, and the owner draws it in its own line."""
    _owners.append(owner)


def release_line(owner):
    with contextlib.suppress(ValueError):
        _owners.remove(owner)


@contextlib.contextmanager
def asking(names):
    """Within the block, a compile on this thread of the family of one of ``names``
    (algorithm names, e.g. "sha384") is named after it rather than after the family."""
    before = getattr(_asked, "names", ())
    _asked.names = tuple(names) + before
    try:
        yield
    finally:
        _asked.names = before


def chose(name):
    """Dispatch chose kernels for the algorithm ``name`` on this thread: a compile of its
    family that follows, outside any ``asking`` block, is named after it (``sha384``, not
    ``sha512``). Cheap: one attribute on a thread-local."""
    _asked.last = name


def _family(name):
    from ..base import algorithms as _algorithms
    try:
        return _algorithms.lookup_any(name).family
    except (TypeError, ValueError):
        return None


def label(what, name=None):
    """The name a compile of family ``what`` shows: ``name``, else the algorithm asked for on
    this thread (``asking``) that belongs to ``what``, else ``what``."""
    if name:
        return name
    for asked in getattr(_asked, "names", ()) + (getattr(_asked, "last", None),):
        if asked is not None and (asked == what or _family(asked) == what):
            return asked
    return what


def message(name):
    """The words of the compile line, without spinner or seconds."""
    return f"jitdigest: compiling {name} kernels, once per machine..."


@contextlib.contextmanager
def compiling(what, name=None):
    """Show that ``name`` (an algorithm of the kernel family ``what``; else ``label(what)``)
    compiles while the block runs, if it runs past ``_config.NOTICE_DELAY``."""
    shown = label(what, name)
    start = time.monotonic()
    done = threading.Event()
    slow = []
    thread = threading.Thread(target=_watch, args=(shown, what, start, done, slow),
                              name="jitdigest-compile-notice", daemon=True)
    thread.start()
    try:
        yield
    finally:
        done.set()
        thread.join()
        seconds = time.monotonic() - start
        if slow:
            _log.info("compiled %s kernels (family %s) in %.1f s", shown, what, seconds)
        else:
            _log.debug("%s kernels (family %s) ready in %.3f s", shown, what, seconds)


def _watch(name, family, start, done, slow):
    """The compile's watcher thread: past the delay, log and show; then wait for the end."""
    if done.wait(_config.NOTICE_DELAY):
        return
    slow.append(True)
    _log.info("compiling %s kernels (family %s), once per machine", name, family)
    if quiet():
        return
    if _owners or _terminal() is not None:
        if not _lock.acquire(blocking=False):
            return                          # another thread's compile shows already
        try:
            owner = _owners[-1] if _owners else None
            if owner is not None:
                owner.compiling(name)
                done.wait()
                owner.compiling(None)
            else:
                _spin(_terminal(), name, start, done)
        finally:
            _lock.release()
    elif ipython_kernel() is not None:
        _announce(name)


def _spin(stream, name, start, done):
    shown = 0
    for i in range(1 << 30):
        text = f"\r{message(name)} {_FRAMES[i % 4]} {time.monotonic() - start:.0f} s"
        try:
            stream.write(text)
            stream.flush()
        except (OSError, ValueError):
            return
        shown = len(text)
        if done.wait(0.2):
            break
    try:
        stream.write("\r" + " " * shown + "\r")
        stream.flush()
    except (OSError, ValueError):
        pass


def _announce(name):
    """One line in the running cell's output (the kernel shows a thread's writes there),
    once per cell and algorithm."""
    shell = ipython_kernel()
    key = (getattr(shell, "execution_count", None), name)
    if key in _announced:
        return
    _announced.add(key)
    try:
        sys.stderr.write(f"jitdigest: compiling {name} kernels, once per machine (seconds; "
                         f"`jitdigest warmup {name}` in a terminal compiles them ahead of "
                         "time)\n")
        sys.stderr.flush()
    except (OSError, ValueError, AttributeError):
        pass
