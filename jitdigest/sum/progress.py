"""The progress line of ``jitdigest sum`` on a terminal's stderr: bytes, rate, files and a bar,
drawn from a daemon thread once a run has lasted a second; cleared before other output. It owns
the terminal line (``notice.own_line``): while kernels compile it shows the compile line in
place of the bar, and the rate leaves the compile out."""
import shutil
import sys
import threading
import time

from ..engine import notice as _notice
from ..engine.notice import isatty


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
        self.bytes = 0
        self.files = 0
        self.lock = threading.Lock()
        self._drawn = False
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

    def line(self, width):
        now = self._time()
        compile_ = self._compile
        if compile_ is not None:
            name, since = compile_
            frame = _notice._FRAMES[int((now - since) / self._interval) % 4]
            text = f"{_notice.message(name)} {frame} {now - since:.0f} s"
            return text[:max(width - 1, 0)]
        elapsed = max(now - self._start, 1e-9)
        done = self.bytes
        hashing = elapsed - self._compiled
        rate = f"  {_human(done / hashing)}/s" if done and hashing > 0 else ""
        text = f"{_human(done)}{rate}  {self.files} files  {elapsed:.0f}s"
        if self.total:
            frac = min(done / self.total, 1.0)
            bar_width = max(10, min(40, width - len(text) - 10))
            filled = int(frac * bar_width)
            text = f"{frac * 100:3.0f}% [{'#' * filled}{'.' * (bar_width - filled)}] {text}"
        return text[:max(width - 1, 0)]

    def draw(self):
        width = shutil.get_terminal_size((80, 24)).columns
        with self.lock:
            if self._stop.is_set():
                return
            self._write("\r" + self.line(width) + "\x1b[K")
            self._drawn = True

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

    def close(self):
        if self._owner:
            _notice.release_line(self)
        self._stop.set()
        self._thread.join()
        self.clear()


def _human(n):
    for unit in ("B", "KiB", "MiB", "GiB", "TiB"):
        if n < 1024 or unit == "TiB":
            return f"{n:.0f} {unit}" if unit == "B" else f"{n:.1f} {unit}"
        n /= 1024
