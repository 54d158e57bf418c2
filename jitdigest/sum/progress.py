"""The progress line of ``jitdigest sum`` on a terminal's stderr: a bar of fixed width, done and
total (bytes and files), rate and time left, drawn from a daemon thread once a run has lasted a
second; cleared before other output. With -r the totals come from a second walk on a thread
(``count``), shown once it is done. A run that showed the line ends it with a full bar. It owns
the terminal line (``notice.own_line``): while kernels compile it shows the compile line in
place of the bar, and the rate leaves the compile out."""
import os
import shutil
import sys
import threading
import time

from ..engine import notice as _notice
from ..engine.notice import isatty
from .walk import FILE as _FILE

BAR, BAR_MIN = 20, 10            # cells in the bar (fewer on a narrow terminal), whatever the
_BESIDE_BAR = 69                # numbers beside it; those take about this many columns


def wanted(args):
    """Whether this run shows it: stderr is a terminal and --no-progress is not given."""
    return not args.no_progress and isatty(sys.stderr)


class Progress:
    """A one-line progress display on stderr (a TTY): bytes, rate, files; a bar when the total
    is known. Drawn by a daemon thread, only once the run has lasted ``delay`` seconds (or a
    compile shows). On ``sys.stderr`` it owns the line the compile notice would draw."""

    def __init__(self, stream, total=None, delay=1.0, interval=0.25):
        self._time = time.monotonic
        self._stream = stream
        self.total = total
        self.total_files = None
        self.bytes = 0
        self.files = 0
        self._counter = None
        self._bar = None
        self.lock = threading.Lock()
        self._drawn = False
        self._shown = False         # drawn at least once
        self._start = self._time()
        self._stop = threading.Event()
        self._delay = delay
        self._interval = interval
        self._compile = None        # (algorithm, start) while a compile shows
        self._compiled = 0.0        # seconds spent compiling, left out of the rate
        self._owner = stream is sys.stderr
        if self._owner:
            _notice.own_line(self)
        self._thread = threading.Thread(target=self._loop, name="jitdigest-progress",
                                        daemon=True)
        self._thread.start()

    def add(self, n):
        with self.lock:
            self.bytes += n

    def compiling(self, name):
        """Called by the compile notice: ``name`` compiles from now on (None: it is done)."""
        with self.lock:
            now = self._time()
            if self._compile is not None:
                self._compiled += now - self._compile[1]
            self._compile = None if name is None else (name, now)
        if name is not None or now - self._start >= self._delay:
            self.draw()
        else:
            self.clear()

    def _loop(self):
        while not self._stop.wait(self._interval):
            if self._compile is not None or self._time() - self._start >= self._delay:
                self.draw()

    def count(self, items):
        """Sum the sizes of the files among ``items`` (a second walk of the run's operands) on
        a daemon thread; the totals show once it is done."""
        def counting():
            total = files = 0
            for item in items:
                if self._stop.is_set():
                    return
                if item.kind == _FILE:
                    try:
                        total += os.stat(item.path).st_size
                    except OSError:
                        continue
                    files += 1
            with self.lock:
                self.total, self.total_files = total, files

        self._counter = threading.Thread(target=counting, name="jitdigest-count", daemon=True)
        self._counter.start()

    def line(self, width, final=False):
        now = self._time()
        compile_ = self._compile
        if compile_ is not None and not final:
            name, since = compile_
            frame = _notice._FRAMES[int((now - since) / self._interval) % 4]
            text = f"{_notice.message(name)} {frame} {now - since:.0f} s"
            return text[:max(width - 1, 0)]
        elapsed = max(now - self._start, 1e-9)
        done = self.bytes
        hashing = elapsed - self._compiled
        rate = f"{_human(done / hashing)}/s" if done and hashing > 0 else ""
        total, total_files = self.total, self.total_files
        if not total:
            text = f"{_human(done):>10} {rate:>12}  {self.files} files  {_clock(elapsed)}"
            return text[:max(width - 1, 0)]
        frac = min(done / total, 1.0)
        if total_files:                     # small files cost per file as much as per byte
            frac = (frac + min(self.files / total_files, 1.0)) / 2
        if final:
            frac = 1.0
        if total_files:
            files = f"{self.files:>{len(str(total_files))}}/{total_files} files"
        else:
            files = f"{self.files} files"
        if final:
            when = f"in {_clock(elapsed)}"
        elif 0 < frac < 1:
            when = "ETA " + _clock((hashing if hashing > 0 else elapsed) * (1 - frac) / frac)
        else:
            when = "ETA --:--"
        if self._bar is None:               # chosen once: the line keeps its shape
            self._bar = max(BAR_MIN, min(BAR, width - 1 - _BESIDE_BAR))
        bar = self._bar
        filled = int(frac * bar)
        # the most wanted first: the rate only where it fits, a narrow terminal cuts the rest
        text = (f"{frac * 100:3.0f}% [{'#' * filled}{'.' * (bar - filled)}] "
                f"{_human(done):>9}/{_human(total):<9} {when:<9}  {files}")
        if len(text) + 13 < width:
            text += f"  {rate:>11}"
        return text[:max(width - 1, 0)]

    def draw(self):
        width = shutil.get_terminal_size((80, 24)).columns
        with self.lock:
            if self._stop.is_set():
                return
            self._write("\r" + self.line(width) + "\x1b[K")
            self._drawn = self._shown = True

    def clear(self):
        """Erase the line (before other output reaches the terminal); the next tick redraws."""
        if self._drawn:
            with self.lock:
                self._write("\r\x1b[K")
                self._drawn = False

    def _write(self, text):
        try:
            self._stream.write(text)
            self._stream.flush()
        except (OSError, ValueError):
            pass

    def close(self, complete=True):
        """Stop drawing; ``complete``: the run got to its end (a full bar is its last frame)."""
        if self._owner:
            _notice.release_line(self)
        self._stop.set()
        self._thread.join()
        if self._shown and complete and self.total:
            # the last frame: the bar full, the time taken; left on the screen
            width = shutil.get_terminal_size((80, 24)).columns
            with self.lock:
                self._write("\r" + self.line(width, final=True) + "\x1b[K\n")
                self._drawn = False
        self.clear()


def _clock(seconds):
    seconds = int(seconds)
    if seconds >= 3600:
        return f"{seconds // 3600}:{seconds // 60 % 60:02d}:{seconds % 60:02d}"
    return f"{seconds // 60}:{seconds % 60:02d}"


def _human(n):
    for unit in ("B", "KiB", "MiB", "GiB", "TiB"):
        if n < 1024 or unit == "TiB":
            return f"{n:.0f} {unit}" if unit == "B" else f"{n:.1f} {unit}"
        n /= 1024
