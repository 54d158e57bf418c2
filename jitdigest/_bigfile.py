"""How ``jitdigest sum`` and ``jitdigest.hash_files`` read a large file: one stream of large
reads into a few reused buffers, each hashed in place by one ``update`` (no copies, a few Python
steps per block; ``Tee`` feeds several hash objects). For a regular file, on a machine with a
second CPU, a second thread may read the next blocks while the calling thread hashes (reads and
kernels both release the GIL), where that is timed faster (``_measured``); a tree hash (b3sum's
row with --num-threads above 1) splits each block into subtrees on all its threads.

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
import time

from .base.config import SUM_CHUNK

# Bytes per read: blocks that stay in a core's cache while one thread writes and another hashes
# them; for a tree hash on several threads, blocks of several subtrees for each thread.
BLOCK = 4 * SUM_CHUNK
TREE_BLOCK = 16 * SUM_CHUNK
DEPTH = 3                   # buffers: one hashed, one read, one ready
PROBE = 16 << 20            # bytes per turn when the two ways of reading are timed
MARGIN = 0.95               # the reading thread must take this share of the time or less


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
        return _serial(readinto, bufs[0], h, progress)[0]
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
    if first < want or not second_cpu():     # (a file that ends within one block: no thread)
        return first + _serial(readinto, bufs[0], h, progress)[0]
    return first + _measured(readinto, _buffers.get(DEPTH, block), h, progress)


# Why timed: the reading thread moves the copy out of the page cache to another core, but the
# kernel then reads each block from that core's cache. Which wins depends on the kernel's speed
# and the machine (benchmarks/results/bench_b3sum-1gib.txt), so the first large file of each
# kind is read both ways in turns, and the faster way reads the rest of it and later ones.
# (the kind of hash object, the block size) -> whether a reading thread is faster, as timed
_ways = {}


def _kind(h):
    """What the speed of hashing with ``h`` depends on: its type and algorithm (a tree hash's
    threads: the block size, in the caller's key), and for a ``Tee`` each of its objects'."""
    if isinstance(h, Tee):
        return tuple(_kind(one) for one in h.hashes)
    return type(h), getattr(h, "name", None)


def _way(key):
    """True: read with a thread; False: between hashes; None: not timed yet."""
    return _ways.get(key)


def _measured(readinto, bufs, h, progress):
    """Hash the rest in the way timed fastest for ``h``'s kind; where none is timed yet, in
    turns of PROBE bytes each way (serial, thread, serial, thread), then the rest in the way
    whose better turn was faster (a turn can be slowed by what the machine does meanwhile),
    remembered for this process. The bytes read."""
    key = _kind(h), len(bufs[0])
    way = _way(key)
    total = 0
    if way is None:
        best = {}                           # way -> its fastest turn's seconds per byte
        blocks = max(2, PROBE // len(bufs[0]))
        for threaded in (False, True, False, True):
            start = time.perf_counter()
            if threaded:
                n, ended = _overlapped(readinto, bufs, h, progress, blocks)
            else:
                n, ended = _serial(readinto, bufs[0], h, progress, blocks)
            total += n
            if ended:
                return total
            rate = (time.perf_counter() - start) / n
            best[threaded] = min(rate, best.get(threaded, rate))
        way = _ways[key] = best[True] <= MARGIN * best[False]
    if way:
        return total + _overlapped(readinto, bufs, h, progress)[0]
    return total + _serial(readinto, bufs[0], h, progress)[0]


def second_cpu():
    """Whether this process may run on a second CPU, for a reading thread. Whether the thread
    then pays is timed (``_measured``): on a busy machine its turns are the slower ones. (The
    load average is no guide: it counts this process's own hashing a moment before.)"""
    try:
        return len(os.sched_getaffinity(0)) >= 2
    except (AttributeError, OSError):           # not known here: read between hashes
        return False


def _add(h, buf, n, progress):
    with memoryview(buf) as view, view[:n] as part:
        h.update(part)
    if progress is not None:
        progress.add(n)


def _serial(readinto, buf, h, progress, limit=None):
    """Read and hash, one block after the other, to the end or ``limit`` blocks: (bytes read,
    whether the end was found)."""
    total = blocks = 0
    while limit is None or blocks < limit:
        n = readinto(buf)
        if not n:
            return total, True
        _add(h, buf, n, progress)
        total += n
        blocks += 1
    return total, False


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

    def left(self):
        """The blocks read and not yet taken (after ``close``), in order."""
        ready, self._ready = self._ready, []
        return ready


def _overlapped(readinto, bufs, h, progress, limit=None):
    """Hash blocks a _Reader reads ahead, to the end or ``limit`` blocks and the ones it had
    read by then (it stops first): (bytes read, whether the end was found)."""
    reader = _Reader(readinto, bufs)
    total = blocks = 0
    try:
        while limit is None or blocks < limit:
            block = reader.next()
            n = _taken(h, block, progress)
            if n is None:
                return total, True
            total += n
            blocks += 1
            reader.give(block[0])
    finally:
        reader.close()          # a regular file's read returns: the join is short
    for block in reader.left():
        n = _taken(h, block, progress)
        if n is None:
            return total, True
        total += n
    return total, False


def _taken(h, block, progress):
    """Hash a block a _Reader handed over: its length, or None at the end (its error raised)."""
    buf, n = block
    if buf is None:
        if isinstance(n, BaseException):
            raise n
        return None
    _add(h, buf, n, progress)
    return n
