"""The hashing behind ``jitdigest sum``: small files read whole and hashed in batches (through
the batch kernels stored as machine code, ``jitdigest/runtime/native.py``, where they are stored,
else through hash_many), large ones streamed in large blocks (``_bigfile``), -j on a thread
pool. Several algorithms (algos.Several) are fed from the same buffers: each file is read
once."""
import functools
import itertools
import os
from array import array

import jitdigest

from ..base.config import SUM_BATCH_BYTES as BATCH_BYTES, SUM_BATCH_FILES as BATCH_FILES
from ..base.config import SUM_SMALL_FILE as SMALL
from ..engine import notice as _notice
from .. import _bigfile
from ..runtime import stream as _stream
from .walk import FILE, STDIN, Item


class Hasher:
    """Hashes Items in order: runs of small files through jitdigest.hash_many (unless batching
    is off) or one kernel call each; large files streamed (``_bigfile.hash_rest``); with
    jobs > 1, units of work on a thread pool, results in input order. With
    ``overlap`` (several algorithms) and one job, a batch is hashed while the next is read."""

    def __init__(self, jobs=1, batch=True, progress=None, overlap=False):
        self.jobs = max(1, jobs)
        self.overlap = overlap
        self.progress = progress
        self._batched = batch
        self._natives = {}          # algorithm: _native's digests function, or None
        self.through_numba = set()  # hashlib names whose batches went through Numba
        self.streamed = set()       # and those whose large files did, where they need not
        self._pool = None

    # one file
    def _stream(self, item, fd, head):
        """Hash the rest of an open file after its first bytes ``head``."""
        with _notice.asking(_names(item.algo)):    # a compile names the algorithm
            h = item.algo.new_large()
            self.streamed.update(_through_numba(item.algo, h))
            h.update(head)
            block = _bigfile.BLOCK if getattr(item.algo, "threads", 1) == 1 else \
                _bigfile.TREE_BLOCK
            item.size = len(head) + _bigfile.hash_rest(fd, h, self.progress, block)
            item.digest = item.algo.finish(h)

    def _read_small(self, item, fd):
        """The whole content if the file has at most SMALL bytes, else hash it now; None."""
        data = os.read(fd, SMALL + 1)
        if data:
            more = os.read(fd, SMALL + 1 - len(data))
            while more:
                data += more
                if len(data) > SMALL:
                    break
                more = os.read(fd, SMALL + 1 - len(data))
        if len(data) <= SMALL:
            return data
        if self.progress is not None:
            self.progress.add(len(data))
        self._stream(item, fd, data)
        return None

    # runs of items
    def _flush(self, pending):
        """Hash the small files among ``pending`` (grouped by algorithm), then yield all."""
        groups = {}
        for item, data in pending:
            if data is not None:
                groups.setdefault(item.algo, []).append((item, data))
        total = 0
        for algo, members in groups.items():
            datas = [d for _, d in members]
            digests = self._batch(algo, datas)
            for (item, data), digest in zip(members, digests):
                item.digest = digest
                item.size = len(data)
                total += len(data)
        if self.progress is not None and total:
            self.progress.add(total)
        for item, _ in pending:
            yield item

    def _batch(self, algo, datas):
        """The digests of ``datas``: one call of the batch kernel stored as machine code
        (``jitdigest/runtime/native.py``: no Numba to import) where one is stored (by ``jitdigest
        warmup`` or an earlier run), else one hash_many call when it serves this algorithm; for
        several algorithms, each over one joined copy of ``datas``, the digests as tuples."""
        with _notice.asking(_names(algo)):         # a compile names the algorithm
            return self._batch_asked(algo, datas)

    def _batch_asked(self, algo, datas):
        parts = getattr(algo, "parts", None)
        native = self._native(algo, parts)
        if native is not None:
            return native(datas)
        batched = self._batched and len(datas) >= 2
        if parts is None:
            if not batched or algo.batch_name is None:
                return [algo.oneshot(d) for d in datas]
            return self._many(algo, datas)
        if not batched or not any(part.batch_name for part in parts):
            return [algo.oneshot(d) for d in datas]
        joined = _joined(datas)
        return list(zip(*[self._many(part, *joined) if part.batch_name
                          else [part.oneshot(d) for d in datas] for part in parts]))

    def _native(self, algo, parts):
        """A function of ``datas`` giving their digests through the stored kernels, if every
        algorithm asked for has one; else None."""
        if not self._batched:
            return None
        found = self._natives.get(algo, False)
        if found is False:
            kernels = [_native_rows(part) for part in (parts or (algo,))]
            found = None if None in kernels else functools.partial(
                _native_digests, kernels, [part.size for part in (parts or (algo,))],
                parts is not None)
            self._natives[algo] = found
        return found

    def _many(self, algo, messages, offsets=None):
        # One thread: -j alone decides how many run (with -j N the batches are already spread
        # over N workers; hash_many's own threads only contended with them).
        kw = {} if offsets is None else {"offsets": offsets}
        kw.update(algo.batch_kwargs)                # a SHAKE's length; a keyed row's mode, length
        out = jitdigest.hash_many(algo.batch_name, messages, threads=1, **kw)
        if getattr(algo, "native_rows", None) is not None:    # a kernel that could be stored
            self.through_numba.add(algo.batch_name)
        return [row.tobytes() for row in out]

    def _process(self, items):
        """Yield the Items, hashed, in order (one thread)."""
        for pending in self._runs(items):
            yield from self._flush(pending)

    def _process_overlapped(self, items):
        """As _process, but each run's batch is hashed on a second thread while the next run is
        read here (the kernels release the GIL): with several algorithms, hashing is a large
        share of the work (many small files with several algorithms: see benchmarks/)."""
        from concurrent.futures import ThreadPoolExecutor
        with ThreadPoolExecutor(1, thread_name_prefix="jitdigest") as pool:
            work = lambda pending: list(self._flush(pending))   # noqa: E731
            ahead = None
            primed = False
            for pending in self._runs(items):
                if not primed:
                    # Here until a batch was hashed: its kernels load on this thread (see
                    # _prime), and only those the batches need.
                    yield from self._flush(pending)
                    primed = any(data is not None for _, data in pending)
                    continue
                fut = pool.submit(work, pending)
                if ahead is not None:
                    yield from ahead.result()
                ahead = fut
            if ahead is not None:
                yield from ahead.result()

    def _runs(self, items):
        """The Items read, as lists of (Item, content or None) to hash together."""
        pending = []
        pending_bytes = 0
        for item in items:
            kind = item.kind
            if kind == FILE and item.digest is None:
                try:
                    fd = os.open(item.path, os.O_RDONLY | os.O_CLOEXEC)
                except OSError as exc:
                    item.error = exc
                    pending.append((item, None))
                else:
                    try:
                        data = self._read_small(item, fd)
                    except OSError as exc:
                        item.error = exc
                        data = None
                    finally:
                        os.close(fd)
                    if data is None:
                        if item.digest is not None and pending:
                            # a large file was hashed: the small ones before it go out first
                            yield pending
                            pending = []
                            pending_bytes = 0
                        pending.append((item, None))
                    else:
                        pending.append((item, data))
                        pending_bytes += len(data)
            elif kind == STDIN:
                yield pending
                pending = []
                pending_bytes = 0
                try:
                    self._stream(item, 0, b"")
                except OSError as exc:
                    item.error = exc
                pending.append((item, None))
            else:
                pending.append((item, None))
            if len(pending) >= BATCH_FILES or pending_bytes >= BATCH_BYTES:
                yield pending
                pending = []
                pending_bytes = 0
        yield pending

    def run(self, items):
        """Yield every Item hashed (digest and size set, or error set), in input order."""
        if self.jobs == 1:
            return self._process_overlapped(items) if self.overlap else self._process(items)
        return self._run_parallel(items)

    def _units(self, items):
        """Lists of Items for the pool: each large file alone, small ones grouped; stdin and
        a large file hashed on several threads alone, as an Item (done on the calling
        thread)."""
        unit = []
        unit_bytes = 0
        for item in items:
            if item.kind == FILE and item.digest is not None:
                pass                            # from --cache: nothing to read
            elif item.kind == FILE:
                try:
                    size = item.stat.st_size if item.stat else os.stat(item.path).st_size
                except OSError:
                    size = 0
                if size > SMALL:
                    if unit:
                        yield unit
                        unit, unit_bytes = [], 0
                    # a tree hash on several threads runs here, one file at a time (as b3sum
                    # hashes files): its threads are all the cores, not one pool worker's share
                    yield item if getattr(item.algo, "threads", 1) != 1 else [item]
                    continue
                unit_bytes += size
            elif item.kind == STDIN:
                if unit:
                    yield unit
                    unit, unit_bytes = [], 0
                yield item
                continue
            unit.append(item)
            if len(unit) >= BATCH_FILES or unit_bytes >= BATCH_BYTES:
                yield unit
                unit, unit_bytes = [], 0
        if unit:
            yield unit

    def _run_parallel(self, items):
        from collections import deque
        from concurrent.futures import Future, ThreadPoolExecutor
        if self._pool is None:
            self._pool = ThreadPoolExecutor(self.jobs, thread_name_prefix="jitdigest")
        window = deque()
        limit = 2 * self.jobs + 2
        work = lambda unit: list(self._process(unit))   # noqa: E731
        primed = False
        for unit in self._units(items):
            if isinstance(unit, Item):          # here, in order with other stdin reads (the
                fut = Future()                  # workers' units in flight need no kernel
                fut.set_result(work([unit]))    # if nothing was primed yet)
            else:
                if not primed:
                    primed = self._prime(unit)
                fut = self._pool.submit(work, unit)
            window.append(fut)
            while len(window) >= limit or window and window[0].done():
                yield from window.popleft().result()
        while window:
            yield from window.popleft().result()

    @staticmethod
    def _prime(unit):
        """Load the first kernel a unit needs here, before the workers do: the first import
        of Numba's modules from several threads at once can fail half-initialised. False if
        the unit needs no kernel (its files all came from --cache)."""
        for item in unit:
            if item.kind == FILE and item.digest is None and item.algo is not None:
                with _notice.asking(_names(item.algo)):
                    item.algo.oneshot(b"")
                return True
        return False

    def close(self, wait=True):
        """Stop the pool; ``wait=False`` (on an exception) abandons the work in flight."""
        if self._pool is not None:
            self._pool.shutdown(wait=wait, cancel_futures=not wait)
            self._pool = None


def _names(algo):
    """The algorithm names an Algo, Keyed or Several hashes with (for the compile notice)."""
    return [part.name for part in getattr(algo, "parts", None) or (algo,)
            if isinstance(getattr(part, "name", None), str)]


def _through_numba(algo, h):
    """The names of the algorithms among ``algo``'s whose hash object ``h`` (a Tee's, for
    several) is Numba's though an entry stored as machine code could serve them."""
    parts = zip(algo.parts, h.hashes) if isinstance(h, _bigfile.Tee) else [(algo, h)]
    return {part.name for part, one in parts
            if getattr(part, "streams", False) and not isinstance(one, _stream.Stream)}


def _native_rows(algo):
    """The stored batch kernel of an algorithm at its output length and mode, or None."""
    find = getattr(algo, "native_rows", None)
    return None if find is None else find()


def _native_digests(kernels, sizes, several, datas):
    """The digests of ``datas`` through ``kernels`` (``_native.Rows``, one per algorithm, of
    ``sizes`` bytes each): a list of bytes, or of tuples for several algorithms."""
    if not datas:
        return []
    values = b"".join(datas)
    lengths = array("q", map(len, datas))
    columns = []
    for kernel, size in zip(kernels, sizes):
        out = kernel.hash(values, lengths, size)
        columns.append([out[i:i + size] for i in range(0, len(out), size)])
    return list(zip(*columns)) if several else columns[0]


def _joined(datas):
    """``datas`` as one bytes object and the offsets of each (n + 1 of them)."""
    import numpy as np
    offsets = np.fromiter(itertools.accumulate(map(len, datas), initial=0), np.int64,
                          len(datas) + 1)
    return b"".join(datas), offsets

