"""``jitdigest.hash_files``: the digests of many files from Python, in input order, streamed.

Notebooks and scripts that fingerprint a tree had ``file_digest`` (one file, one algorithm) or
the command line. Here files of up to ``SUM_SMALL_FILE`` bytes are read whole and hashed in
runs through ``hash_many`` (as ``jitdigest sum`` batches them), larger ones stream through the
CLI's large-file reads (``_bigfile``), and several algorithms are fed from the same read of each
file. Paths come from
any iterable and results leave as they are made, at most a batch ahead: memory does not grow
with the number of paths. With ``cache=``, the database of ``jitdigest sum --cache`` (one file
serves both) spares reading files unchanged since they were stored.
``jitdigest.dask.hash_files`` is the same call on a Dask cluster.
"""
from __future__ import annotations

import os
import warnings
from collections.abc import Callable, Iterable, Iterator, Sequence
from typing import NamedTuple

from . import _bigfile
from .base import algorithms as _algorithms
from .base.config import SUM_BATCH_BYTES, SUM_BATCH_FILES, SUM_SMALL_FILE

__all__ = ["hash_files", "FileDigest"]

ERRORS = ("raise", "collect")


class FileDigest(NamedTuple):
    """One file's result: the path as given, its digest (bytes; a tuple of them, in order,
    for several algorithms), its size in bytes read, and, with ``errors="collect"``, the
    OSError that stopped it (then ``digest`` is None)."""
    path: object
    digest: bytes | tuple[bytes, ...] | None
    size: int
    error: OSError | None


def algorithm_names(name: str | Sequence[str]) -> list[str]:
    """The canonical names of ``name`` (one name, "sha256,md5", or a sequence of names);
    ValueError for an unknown one or one given twice."""
    names = name.split(",") if isinstance(name, str) else list(name)
    if not names or not all(isinstance(n, str) for n in names):
        raise TypeError("name must be a str or a sequence of str")
    found = [_algorithms.lookup_any(n).name for n in names]
    if len(set(found)) != len(found):
        raise ValueError(f"an algorithm is given twice: {name!r}")
    return found


def check_arguments(name, errors, length):
    """The canonical names, after the checks hash_files makes when it is called."""
    if errors not in ERRORS:
        raise ValueError(f"errors must be 'raise' or 'collect', not {errors!r}")
    names = algorithm_names(name)
    for n in names:
        xof = _algorithms.TABLE[n].digest_size == 0
        if xof and length is None:
            raise TypeError(f"{n} needs length= (bytes of output)")
    if length is not None and (not isinstance(length, int) or length < 0):
        raise ValueError("length must be a non-negative int")
    return names


def hash_files(paths: Iterable[str | bytes | os.PathLike], name: str | Sequence[str] = "sha256",
               *, errors: str = "raise", progress: Callable[[int, int], object] | None = None,
               length: int | None = None,
               cache: str | bytes | os.PathLike | None = None) -> Iterator[FileDigest]:
    """An iterator of ``FileDigest(path, digest, size, error)``, one per path, in order.

    - ``name``: any name ``jitdigest.new`` takes, or several ("sha256,md5" or a
      list): each file is read once and ``digest`` is then a tuple in that order.
    - ``errors``: "raise" (the default) raises a file's OSError when its turn comes (the files
      before it were yielded); "collect" yields it in ``error``, ``digest`` None.
    - ``progress``: called as ``progress(files, bytes)`` after each file, with the totals so far.
    - ``length``: output bytes of the extendable-output algorithms (SHAKE: required; the
      tree hash: default 32); others ignore it.
    - ``cache``: the path of a ``jitdigest sum --cache`` database (made if missing): a file
      unchanged since its digest was stored is not read; the others are stored once hashed.
      A database that cannot be used costs hashing and one warning, never the call.

    The arguments are checked at the call; files are read as the iterator is consumed."""
    names = check_arguments(name, errors, length)
    if cache is not None:
        cache = os.fspath(cache)            # TypeError for what is not a path
    return _results(paths, names, errors == "raise", progress, length, cache)


def _takes_length(name, length):
    """Whether ``length`` sets ``name``'s output here: always for SHAKE, when given for a row
    hashlib lacks (the tree hash); hashlib's fixed-size algorithms ignore it."""
    spec = _algorithms.TABLE[name]
    return spec.digest_size == 0 or (length is not None and not spec.hashlib)


def _size(name, length):
    """The digest bytes ``name`` gives here (as ``_finish`` makes them)."""
    return length if _takes_length(name, length) else _algorithms.TABLE[name].digest_size


def _stored_as(names, length):
    """The algorithms as the database names them (the keys ``jitdigest sum`` uses)."""
    from . import _filecache
    parts = [_filecache.Output(_filecache.algorithm_key(n, 8 * _size(n, length)),
                               _size(n, length)) for n in names]
    return parts[0] if len(parts) == 1 else _filecache.Several(tuple(parts))


def _warn(message):
    warnings.warn(message, stacklevel=4)


def _results(paths, names, raising, progress, length, cache):
    # opened here, at the first result: a generator never started has no finally to close it
    db = stored_as = None
    if cache is not None:
        from ._filecache import FileCache   # imports sqlite3: only for calls that use it
        db = FileCache(os.fsencode(cache), _warn)
        stored_as = _stored_as(names, length)
    try:
        yield from _hashed(paths, names, raising, progress, length, db, stored_as)
    finally:
        if db is not None:
            db.close()


def _hashed(paths, names, raising, progress, length, db, stored_as):
    counts = [0, 0]                     # files and bytes so far, for ``progress``

    def flushed(pending):
        for result in _flush(pending, names, length, raising, db, stored_as):
            counts[0] += 1
            counts[1] += result.size
            if progress is not None:
                progress(counts[0], counts[1])
            yield result

    pending = []                        # [path, content or None, digest, size, error, stat]
    pending_bytes = 0
    for path in paths:
        entry = _read(path, names, length, db, stored_as)
        pending.append(entry)
        if entry[1] is not None:
            pending_bytes += len(entry[1])
        if len(pending) >= SUM_BATCH_FILES or pending_bytes >= SUM_BATCH_BYTES or (
                raising and entry[4] is not None):
            yield from flushed(pending)
            pending, pending_bytes = [], 0
    yield from flushed(pending)


def _read(path, names, length, db, stored_as):
    """[path, content, digest, size, error, stat]: the content of a small file, the digest of
    a large one (streamed) or one the database holds, or the error; ``stat`` (taken before
    reading) when the digest is to be stored."""
    entry = [path, None, None, 0, None, None]
    target = os.fspath(path)
    if db is not None:
        st, digest = db.find(os.fsencode(target), stored_as)
        if digest is not None:
            entry[2], entry[3] = digest, st.st_size
            return entry
        entry[5] = st
    try:
        fd = os.open(target, os.O_RDONLY | os.O_CLOEXEC)
    except OSError as exc:
        entry[4] = exc
        return entry
    try:
        head = _read_head(fd)
        if len(head) <= SUM_SMALL_FILE:
            entry[1] = head
            return entry
        entry[2], entry[3] = _stream(fd, names, length, head)
    except OSError as exc:
        if exc.filename is None:
            exc.filename = target
        entry[4] = exc
    finally:
        os.close(fd)
    return entry


def _read_head(fd):
    """The file's first SUM_SMALL_FILE + 1 bytes (fewer: all of it, a small file); read, not
    seeked back, so that a pipe or FIFO streams as a regular file does."""
    data = b""
    while len(data) <= SUM_SMALL_FILE:
        more = os.read(fd, SUM_SMALL_FILE + 1 - len(data))
        if not more:
            break
        data += more
    return data


def _new(name):
    from . import new
    return new(name)


def _finish(h, name, length):
    return h.digest(length) if _takes_length(name, length) else h.digest()


def _stream(fd, names, length, head):
    """(digest, size) of a file whose first bytes ``head`` were read, the rest read here, each
    algorithm fed from the same reads."""
    hashes = [_new(n) for n in names]
    fed = _bigfile.Tee(hashes)
    fed.update(head)
    size = len(head) + _bigfile.hash_rest(fd, fed)
    digests = tuple(_finish(h, n, length) for h, n in zip(hashes, names))
    return (digests if len(names) > 1 else digests[0]), size


def _flush(pending, names, length, raising, db, stored_as):
    """FileDigests of ``pending`` in order: its small files hashed together, one hash_many
    call per algorithm; fresh digests stored in ``db``."""
    small = [entry for entry in pending if entry[1] is not None]
    if small:
        from . import hash_many
        datas = [entry[1] for entry in small]
        columns = []
        for n in names:
            if len(datas) == 1:
                columns.append([_oneshot(n, datas[0], length)])
                continue
            rows = hash_many(n, datas, length=length if _takes_length(n, length) else None,
                             threads=1)
            columns.append([row.tobytes() for row in rows])
        for i, entry in enumerate(small):
            digests = tuple(column[i] for column in columns)
            entry[2] = digests if len(names) > 1 else digests[0]
            entry[3] = len(entry[1])
            entry[1] = None
    for path, _, digest, size, error, st in pending:
        if error is not None:
            if raising:
                raise error
        elif st is not None:
            db.keep(os.fsencode(os.fspath(path)), stored_as, st, digest, size)
        yield FileDigest(path, digest, size, error)


def _oneshot(name, data, length):
    h = _new(name)
    h.update(data)
    return _finish(h, name, length)
