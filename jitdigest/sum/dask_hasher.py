"""``jitdigest sum --dask ADDRESS``: the Hasher's work done by Dask workers that read the files
from a filesystem they share with the client, and ``jitdigest.dask.hash_files`` on top of it.

The client walks or lists, stats, and cuts the files into tasks of about ``task_bytes`` bytes
or ``task_files`` files; a worker hashes a task through the Hasher itself (so digests and
error messages are those of a run without --dask), and the Items come back to the client in
input order, so that --cache, --check, --audit and every output format work unchanged. A file
of the b3sum-format row alone over ``split_from`` bytes is cut into power-of-two subtrees
(its objects' ``_tree``: a tree hash's pieces) hashed on several workers and merged here; a piece that saw
the file change sends the file back to one worker whole. A worker that dies costs its tasks'
time: Dask runs them again elsewhere (they only read).
"""
import os
from array import array

from ..base import config as _config
from . import algos
from .errors import FatalError, UsageError
from .hasher import Hasher
from .walk import FILE, STDIN, Item

LOCAL = "local:"                    # --dask local:N: a LocalCluster of N worker processes
TASK_BYTES = 64 << 20               # a task's bytes, about (a file larger is a task alone)
SPLIT_FROM = 32 << 20               # files of the tree hash from this size are split
PIECE_BYTES = (4 << 20, 256 << 20)  # the smallest and largest piece of a split file
CONNECT_S = 60                      # seconds to start a local cluster
CLOSE_S = 10                        # seconds to close the client and a cluster started here
AHEAD = 4                           # tasks in flight per worker thread


class DaskHasher:
    """A Hasher (``run``, ``close``, ``progress``, ``through_numba``) whose work runs on a Dask
    cluster: ``address`` is "local:N", a scheduler's address, or a ``distributed.Client``
    (left open at the end). Standard input is read here, in order."""

    def __init__(self, address, progress=None, task_files=_config.SUM_BATCH_FILES,
                 task_bytes=TASK_BYTES, split_from=SPLIT_FROM):
        self.progress = progress
        self.through_numba = set()          # workers compile there, nothing to store here
        self.streamed = set()
        self.task_files = max(1, task_files)
        self.task_bytes = max(1, task_bytes)
        self.split_from = split_from
        try:
            self._client, self._cluster, self._own = _connect(address)
        except ValueError as exc:
            raise UsageError(str(exc)) from None
        except (OSError, RuntimeError) as exc:      # unreachable, refused, failed to start
            raise FatalError(f"--dask {address}: {exc}") from None
        try:                                # no worker at all would be a wait for ever
            self._client.wait_for_workers(1, timeout=CONNECT_S)
        except (OSError, RuntimeError) as exc:
            self.close()
            raise FatalError(f"--dask {address}: no worker: {exc}") from None
        self._here = None                   # a Hasher for standard input
        self._cwd = os.getcwdb()

    def _threads(self):
        try:
            return max(1, sum(self._client.nthreads().values()))
        except Exception:                   # noqa: BLE001 (a scheduler gone: retried later)
            return 1

    # the client's side -------------------------------------------------------------------------
    def run(self, items):
        """Yield every Item hashed (digest and size set, or error set), in input order."""
        from collections import deque
        threads = self._threads()
        limit = AHEAD * threads + 2
        window = deque()                    # slots: [items, future or None, split or None]
        task, task_size = [], 0
        for item in items:
            size = -1
            if item.kind == FILE and item.digest is None:
                size = self._size(item)
            if item.kind == STDIN:
                task, task_size = self._submit(task, window)
                window.append((item, None, "stdin"))
            elif size >= self.split_from and threads > 1 and self._splits(item.algo):
                task, task_size = self._submit(task, window)
                window.append((item, self._split(item, size, threads), "split"))
            elif size >= self.task_bytes:
                task, task_size = self._submit(task, window)
                self._submit([item], window)
            else:
                task.append(item)
                task_size += max(size, 0)
                if task_size >= self.task_bytes or len(task) >= self.task_files:
                    task, task_size = self._submit(task, window)
            while len(window) > limit or window and _done(window[0]):
                yield from self._finish(window.popleft())
        self._submit(task, window)
        while window:
            yield from self._finish(window.popleft())

    def _size(self, item):
        st = item.stat
        if st is None:
            try:
                st = os.stat(item.path)
            except OSError:
                return 0                    # the worker's open says what is wrong
        return st.st_size

    def _path(self, path):
        """The path a worker opens: relative ones from this process's directory."""
        return os.path.join(self._cwd, path)

    def _submit(self, task, window):
        """Send a task's files to the workers (a slot of the window); an empty new task."""
        if task:
            work = [item for item in task if item.kind == FILE and item.digest is None]
            future = None
            if work:
                future = self._client.submit(hash_task, *_entries(work, self._path),
                                             pure=False)
            window.append((task, future, None))
        return [], 0

    def _splits(self, algo):
        return isinstance(algo, algos.Keyed) and algo.length_ok and algo.size > 0

    def _split(self, item, size, threads):
        """The futures of one split file's pieces (each: value, bytes read, stats)."""
        subtree = _tree(item.algo.name)
        piece = subtree.plan(size, threads, *PIECE_BYTES)
        if not piece:
            return None
        mode = _mode(item.algo)
        path = self._path(item.path)
        return (size, piece,
                [self._client.submit(piece_task, path, offset, length, mode, item.algo.name,
                                     pure=False)
                 for offset, length in subtree.pieces(size, piece)])

    def _finish(self, slot):
        """The Items of a slot, hashed, waiting for its work."""
        items, future, kind = slot
        if kind == "stdin":
            if self._here is None:
                self._here = Hasher(1, progress=self.progress)
            yield from self._here.run([items])
            return
        if kind == "split":
            yield self._merged(items, future)
            return
        if future is not None:
            total = _results([item for item in items
                              if item.kind == FILE and item.digest is None], _result(future))
            if self.progress is not None and total:
                self.progress.add(total)
        yield from items

    def _merged(self, item, split):
        """A split file's digest from its pieces, or, where a piece failed or saw the file
        change, the file hashed whole by one worker (its error, or the bytes it read)."""
        subtree = _tree(item.algo.name)
        if split is not None:
            size, piece, futures = split
            results = [_result(f) for f in futures]
            read = [done for _, done, _ in results]
            seen = {stats for _, _, stats in results}
            whole = [length for _, length in subtree.pieces(size, piece)]
            if read == whole and len(seen) == 1 and None not in seen and \
                    next(iter(seen))[0] == size:
                mode = _mode(item.algo)
                item.digest = subtree.merge([value for value, _, _ in results], mode,
                                            item.algo.size)
                item.size = size
                if self.progress is not None:
                    self.progress.add(size)
                return item
        window = []
        self._submit([item], window)
        return next(iter(self._finish(window[0])))

    def close(self, wait=True):
        """Close the client (and the cluster started here); ``wait=False`` (on an exception)
        abandons the work in flight."""
        client, cluster = self._client, self._cluster
        self._client = self._cluster = None
        if client is not None and self._own:
            try:
                client.close(timeout=CLOSE_S)
            except Exception:               # noqa: BLE001 (closing: nothing left to report)
                pass
        if cluster is not None:
            try:
                cluster.close(timeout=CLOSE_S)
            except Exception:               # noqa: BLE001
                pass


def _result(future):
    """A task's result; a task Dask gave up on (its workers died each time it ran, the
    cluster went away) ends the run with FatalError, not a traceback."""
    try:
        return future.result()
    except Exception as exc:        # noqa: BLE001 (KilledWorker, CancelledError, comm errors)
        raise FatalError(f"--dask: a task failed: {type(exc).__name__}: {exc}") from None


def _done(slot):
    future = slot[1]
    if slot[2] == "split":
        return future is None or all(f.done() for f in future[2])
    return slot[2] == "stdin" or future is None or future.done()


def _connect(address):
    """(client, cluster started here or None, whether the client is ours to close)."""
    from distributed import Client
    if not isinstance(address, (str, bytes)):
        return address, None, False
    if isinstance(address, bytes):
        address = os.fsdecode(address)
    if address.startswith(LOCAL):
        n = address[len(LOCAL):]
        if not n.isdigit() or int(n) < 1:
            raise ValueError(f"--dask {LOCAL}N needs a number of workers, not {n!r}")
        import logging
        from distributed import LocalCluster
        cluster = LocalCluster(n_workers=int(n), threads_per_worker=1, processes=True,
                               dashboard_address=":0", silence_logs=logging.CRITICAL,
                               timeout=CONNECT_S)
        try:
            return Client(cluster, timeout=CONNECT_S), cluster, True
        except BaseException:
            cluster.close(timeout=CLOSE_S)
            raise
    return Client(address), None, True      # Dask's connect timeout (its configuration)


# --- algorithms as workers rebuild them ------------------------------------------------------

def _spec(algo):
    """What rebuilds ``algo`` on a worker: a tuple of plain values."""
    parts = getattr(algo, "parts", None)
    if parts is not None:
        return ("several",) + tuple(_spec(part) for part in parts)
    if isinstance(algo, algos.Keyed):
        return ("keyed", algo.size, algo.key, algo.context, algo.length_ok)
    return ("algo", algo.name, algo.bits)


def _rebuilt(spec):
    if spec[0] == "several":
        return algos.Several([_rebuilt(part) for part in spec[1:]])
    if spec[0] == "keyed":
        _, size, key, context, length_ok = spec
        return algos.Keyed(size, key=key, context=context, length_ok=length_ok)
    return algos.get(spec[1], spec[2])


def _entries(work, path_of):
    """(specs, paths, indices) of a task's Items: the paths joined by NUL (no path holds
    one) and each one's spec index as 32-bit words, two bytes objects that Dask passes as they
    are (a list of tuples is a graph it walks, item by item, at every hop)."""
    specs, index, paths, at = [], {}, [], array("I")
    for item in work:
        i = index.get(id(item.algo))
        if i is None:
            i = index[id(item.algo)] = len(specs)
            specs.append(_spec(item.algo))
        paths.append(path_of(item.path))
        at.append(i)
    return specs, b"\0".join(paths), at.tobytes()


def _tree(name):
    """The split-file interface of the row's objects (``plan``, ``pieces``, ``chaining_value``,
    ``merge``, ``mode``: pieces of one input hashed apart, then merged into its digest)."""
    from .._constructors import object_type
    from ..base import algorithms as _algorithms
    return object_type(_algorithms.TABLE[name])._tree


def _mode(algo):
    """The key words and flags of a Keyed's mode, as the pieces and the merge take them."""
    return _tree(algo.name).mode(algo.key, algo.context)


# --- the workers' side -----------------------------------------------------------------------

_WORKER = {}                        # this process's Hasher and rebuilt algorithms


def hash_task(specs, paths, indices):
    """On a worker: the digests, sizes and errors of the paths (``_entries``) through the
    Hasher, packed (``_results`` unpacks them)."""
    from ..engine import dispatch as _dispatch
    hasher = _WORKER.get("hasher")
    if hasher is None:
        hasher = _WORKER["hasher"] = Hasher(1)
    made = []
    for spec in specs:
        algo = _WORKER.get(spec)
        if algo is None:
            algo = _WORKER[spec] = _rebuilt(spec)
        made.append(algo)
    at = array("I")
    at.frombytes(indices)
    items = [Item(FILE, path, path, algo=made[i]) for path, i in
             zip(paths.split(b"\0") if paths else [], at)]
    blob, lengths, sizes, errors = [], array("I"), array("q"), {}
    # as jitdigest sum: the lane kernels when cached, else the per-message ones (no long first
    # compile); put back after, for the worker's other tasks (hash_column's, say)
    compile_batch, _dispatch.COMPILE_BATCH = _dispatch.COMPILE_BATCH, False
    try:
        done = list(hasher.run(items))
    finally:
        _dispatch.COMPILE_BATCH = compile_batch
    for n, item in enumerate(done):
        sizes.append(item.size)
        if item.error is not None:
            errors[n] = item.error
            continue
        for digest in item.digest if isinstance(item.digest, tuple) else (item.digest,):
            blob.append(digest)
            lengths.append(len(digest))
    # bytes, not a list of tuples: a list costs Dask far more per item on the way back
    return b"".join(blob), lengths.tobytes(), sizes.tobytes(), errors


def _results(items, result):
    """Set digest, size and error of the Items ``hash_task`` hashed; their bytes in all."""
    blob, lengths, sizes, errors = result
    at = array("I")
    at.frombytes(lengths)
    size = array("q")
    size.frombytes(sizes)
    pos = k = total = 0
    for n, item in enumerate(items):
        item.size = size[n]
        total += size[n]
        error = errors.get(n)
        if error is not None:
            item.error = error
            continue
        parts = getattr(item.algo, "parts", None)
        digests = []
        for _ in parts or (None,):
            digests.append(blob[pos:pos + at[k]])
            pos += at[k]
            k += 1
        item.digest = tuple(digests) if parts is not None else digests[0]
    return total


def piece_task(path, offset, length, mode, name):
    """On a worker: (chaining value, bytes read, (size, mtime, ctime) after reading) of one
    piece of a split file of row ``name``; (b"", 0, None) if it cannot be read (the whole
    file's task reports why)."""
    subtree = _tree(name)
    try:
        fd = os.open(path, os.O_RDONLY | os.O_CLOEXEC)
    except OSError:
        return b"", 0, None
    try:
        before = _stat_key(os.fstat(fd))
        value, done = subtree.chaining_value(fd, offset, length, mode)
        after = _stat_key(os.fstat(fd))
    except OSError:
        return b"", 0, None
    finally:
        os.close(fd)
    return value, done, after if before == after else None


def _stat_key(st):
    return (st.st_size, st.st_mtime_ns, st.st_ctime_ns, st.st_ino, st.st_dev)


# --- jitdigest.dask.hash_files -----------------------------------------------------------------

def algo_of(names, length):
    """The Algo (a Several for more than one) of canonical ``names`` as ``jitdigest.files``
    checked them; ``length``: bytes of an extendable output (SHAKE's, the b3sum row's)."""
    parts = []
    for name in names:
        if name == algos.B3SUM:
            parts.append(algos.Keyed(algos.B3SUM_OUT_LEN if length is None else length))
        elif name in algos.names() and algos.get(name).xof:
            parts.append(algos.get(name, 8 * length))
        else:
            parts.append(algos.get(name))
    return parts[0] if len(parts) == 1 else algos.Several(parts)


def file_results(paths, algo, client, raising, progress, cache, **tuning):
    """``jitdigest.files.FileDigest`` of each path, in order, hashed by ``client``'s workers;
    ``cache``: a --cache database (path) read and written here."""
    hasher = DaskHasher(client, **tuning)
    store = None
    if cache is not None:
        import warnings
        from .cache import Cache
        store = Cache(os.fsencode(cache), lambda message: warnings.warn(message, stacklevel=3))

    return _yielded(hasher, store, paths, algo, raising, progress)


def _yielded(hasher, store, paths, algo, raising, progress):
    from ..files import FileDigest

    def items():
        for path in paths:
            yield Item(FILE, path, os.fsencode(os.fspath(path)), algo=algo)

    hashed = hasher.run(items()) if store is None else store.run(hasher, items())
    files = total = 0
    try:
        for item in hashed:
            if item.error is not None and raising:
                raise item.error
            files += 1
            total += item.size
            if progress is not None:
                progress(files, total)
            yield FileDigest(item.name, item.digest if item.error is None else None,
                             item.size if item.error is None else 0, item.error)
    finally:
        hasher.close(wait=False)
        if store is not None:
            store.close()
