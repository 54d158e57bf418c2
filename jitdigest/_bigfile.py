"""How ``jitdigest sum`` and ``jitdigest.hash_files`` read a large file: one stream of large
reads into a few reused buffers, each hashed in place by one ``update`` (no copies, a few Python
steps per block; ``Tee`` feeds several hash objects). For a regular
file a second thread reads the next blocks while the calling thread hashes (reads and kernels
both release the GIL), so the copy out of the page cache overlaps the hashing, when a core
looks idle; a tree hash (b3sum's row with --num-threads above 1) splits each block into
subtrees on all its threads.

Why reads, not a memory map as b3sum uses: a file that another process truncates while it is
mapped raises SIGBUS at the first access past its new end, inside a kernel, and a Python process
cannot recover from that (the handler runs only after the faulting instruction, which faults
again): the run would die. Reads see a file that shrinks, grows or fails exactly as coreutils
does (to end of file, each error an OSError), and FIFOs, terminals and stdin take the same path
(without the reading thread, which could be left blocked)."""
import io
import os
import stat
import threading

from .base.config import SUM_CHUNK

# Bytes per read: blocks that stay in a core's cache while one thread writes and another hashes
# them; for a tree hash on several threads, blocks of several subtrees for each thread.
BLOCK = 4 * SUM_CHUNK
TREE_BLOCK = 16 * SUM_CHUNK
DEPTH = 3                   # buffers: one hashed, one read, one ready


class Tee:
    """One hash object per algorithm, all fed the same bytes (``hashes``, in order)."""

    __slots__ = ("hashes",)

    def __init__(self, hashes):
        self.hashes = hashes

    def update(self, data):
        for h in self.hashes:
            h.update(data)


def _readinto(fd):
    return io.FileIO(fd, "rb", closefd=False).readinto


class _Buffers(threading.local):
    """Up to DEPTH buffers of one size for each thread that hashes large files, made when
    first needed and kept (the threads are this process's and -j's pool, at most a few per
    CPU); a file that ends within one block makes only the first."""

    def get(self, count, size):
        bufs = self.__dict__.get("bufs")
        if not bufs or len(bufs[0]) != size:
            bufs = self.bufs = []
        while len(bufs) < count:
            bufs.append(bytearray(size))
        return bufs[:count]


_buffers = _Buffers()


def hash_rest(fd, h, progress=None, block=BLOCK):
    """Feed ``h`` (anything with ``update``) the rest of the open file ``fd``, to its end, in
    reads of ``block`` bytes; the number of bytes read. OSError as the read raised it (the
    bytes before it were hashed)."""
    try:
        regular = stat.S_ISREG(os.fstat(fd).st_mode)
    except OSError:
        regular = False
    bufs = _buffers.get(1, block)
    readinto = _readinto(fd)
    if not regular:
        return _serial(readinto, bufs[0], h, progress)
    # The first read ends where a block of the file does, so that every later one starts
    # there: a tree hash's subtrees then never straddle two reads.
    try:
        at = os.lseek(fd, 0, os.SEEK_CUR)
    except OSError:                         # (not seekable after all: nothing to align to)
        at = 0
    with memoryview(bufs[0]) as view, view[:block - at % block] as part:
        want = len(part)
        first = readinto(part)
    if not first:
        return 0
    _add(h, bufs[0], first, progress)
    if first < want or not core_free():     # (a file that ends within one block: no thread)
        return first + _serial(readinto, bufs[0], h, progress)
    return first + _overlapped(readinto, _buffers.get(DEPTH, block), h, progress)


def core_free():
    """Whether a core looks idle for a reading thread: the load average over the last minute
    at most the CPUs this process may use, less the one hashing. Where cores are busy, the
    thread costs more (its hand-overs, and the copy then shares a core with hashing) than
    reading between hashes."""
    try:
        return os.getloadavg()[0] <= len(os.sched_getaffinity(0)) - 1
    except (AttributeError, OSError):           # not known here: read between hashes
        return False


def _add(h, buf, n, progress):
    with memoryview(buf) as view, view[:n] as part:
        h.update(part)
    if progress is not None:
        progress.add(n)


def _serial(readinto, buf, h, progress):
    total = 0
    while True:
        n = readinto(buf)
        if not n:
            return total
        _add(h, buf, n, progress)
        total += n


class _Reader:
    """Reads blocks into the free buffers it is given, in order, until end of file or an
    error; each block is handed over as (buffer, length), the end as (None, 0), an error as
    (None, exception)."""

    def __init__(self, readinto, bufs):
        self._readinto = readinto
        self._free = list(bufs)
        self._ready = []
        self._cond = threading.Condition()
        self._halt = False
        self._thread = threading.Thread(target=self._run, name="jitdigest-read", daemon=True)
        self._thread.start()

    def _run(self):
        cond = self._cond
        while True:
            with cond:
                while not self._free and not self._halt:
                    cond.wait()
                if self._halt:
                    return
                buf = self._free.pop(0)
            try:
                n = self._readinto(buf)
            except BaseException as exc:    # handed to the hashing thread, which raises it
                block = (None, exc)
            else:
                block = (buf, n) if n else (None, 0)
            with cond:
                self._ready.append(block)
                cond.notify_all()
            if block[0] is None:
                return

    def next(self):
        with self._cond:
            while not self._ready:
                self._cond.wait()
            return self._ready.pop(0)

    def give(self, buf):
        with self._cond:
            self._free.append(buf)
            self._cond.notify_all()

    def close(self):
        with self._cond:
            self._halt = True
            self._cond.notify_all()
        self._thread.join()


def _overlapped(readinto, bufs, h, progress):
    reader = _Reader(readinto, bufs)
    total = 0
    try:
        while True:
            buf, n = reader.next()
            if buf is None:
                if isinstance(n, BaseException):
                    raise n
                return total
            _add(h, buf, n, progress)
            total += n
            reader.give(buf)
    finally:
        reader.close()          # a regular file's read returns: the join is short
