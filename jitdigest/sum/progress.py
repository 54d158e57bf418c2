"""The progress line of ``jitdigest sum`` on a terminal's stderr: bytes, rate, files and a bar,
drawn from a daemon thread once a run has lasted a second; cleared before other output."""
import shutil
import sys
import threading
import time

from ..engine.notice import isatty


def wanted(args):
    """Whether this run shows it: stderr is a terminal and --no-progress is not given."""
    return not args.no_progress and isatty(sys.stderr)


class Progress:
    """A one-line progress display on stderr (a TTY): bytes, rate, files; a bar when the total
    is known. Drawn by a daemon thread, only once the run has lasted ``delay`` seconds."""

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
        self._thread = threading.Thread(target=self._loop, name="jitdigest-progress",
                                        daemon=True)
        self._thread.start()

    def add(self, n):
        with self.lock:
            self.bytes += n

    def _loop(self):
        if self._stop.wait(self._delay):
            return
        while not self._stop.is_set():
            self.draw()
            self._stop.wait(self._interval)

    def line(self, width):
        elapsed = max(self._time() - self._start, 1e-9)
        done = self.bytes
        text = f"{_human(done)}  {_human(done / elapsed)}/s  {self.files} files  {elapsed:.0f}s"
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
        self._stop.set()
        self._thread.join()
        self.clear()


def _human(n):
    for unit in ("B", "KiB", "MiB", "GiB", "TiB"):
        if n < 1024 or unit == "TiB":
            return f"{n:.0f} {unit}" if unit == "B" else f"{n:.1f} {unit}"
        n /= 1024
