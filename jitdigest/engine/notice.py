"""The line a first run shows while kernels compile ("compiling sha256 kernels, once per
machine…" and a spinner), on a terminal's stderr only, and only once a compile has taken long
enough to notice (loading a cached kernel takes milliseconds and shows nothing). Off when
stderr is not a terminal, or with ``JITDIGEST_QUIET=1``."""
import contextlib
import os
import sys
import threading
import time

from ..base import config as _config, fork as _fork

_FRAMES = "|/-\\"
_lock = _fork.lock(globals(), "_lock")      # held while a compile line shows


def isatty(stream):
    """Whether ``stream`` is a terminal (False for None, closed or odd streams)."""
    try:
        return stream is not None and stream.isatty()
    except (AttributeError, ValueError):
        return False


def _terminal():
    if os.environ.get("JITDIGEST_QUIET"):
        return None
    return sys.stderr if isatty(sys.stderr) else None


@contextlib.contextmanager
def compiling(what):
    """Show the compile line for ``what`` while the block runs, if it runs past ``_config.NOTICE_DELAY``."""
    stream = _terminal()
    if stream is None or not _lock.acquire(blocking=False):
        yield                           # not a terminal, or another thread already shows it
        return
    done = threading.Event()
    shown = []

    def spin():
        start = time.monotonic()
        if done.wait(_config.NOTICE_DELAY):
            return
        for i in range(1 << 30):
            text = (f"\rjitdigest: compiling {what} kernels, once per machine... "
                    f"{_FRAMES[i % 4]} {time.monotonic() - start:.0f} s")
            try:
                stream.write(text)
                stream.flush()
            except (OSError, ValueError):
                return
            shown.append(len(text))
            if done.wait(0.2):
                return

    thread = threading.Thread(target=spin, name="jitdigest-compile-notice", daemon=True)
    thread.start()
    try:
        yield
    finally:
        done.set()
        thread.join()
        if shown:
            try:
                stream.write("\r" + " " * shown[-1] + "\r")
                stream.flush()
            except (OSError, ValueError):
                pass
        _lock.release()
