"""``jitdigest sum --update MANIFEST FILE|DIR...``: a manifest brought up to date in place, in
its own format, as ``rhash -u`` does: files new to it are added, files gone are dropped,
changed ones re-hashed, the rest copied from it unread. The result is what a fresh run over
the same operands would print (in that order), written to a temporary file beside MANIFEST,
synced and renamed over it: a run that stops midway leaves the old manifest as it was.

A plain manifest records no file times, so "changed" is judged against the manifest's own
modification time, which each update sets to the moment it started: a file whose mtime or
ctime is later, less the racy window (``SUM_CACHE_RACY_NS``, as --cache uses), is read again.
With --cache the database decides instead. A file that cannot be read keeps its old line;
the manifest itself (and its new copy) is never listed."""
import argparse
import errno
import os
import tempfile
import time

from ..base import config as _config
from . import algos, b3sum, manifest as _manifest
from .output import write_sums
from .quote import quotef
from .walk import FILE, Item


class _ToFile:
    """An Output whose lines go to the new manifest; messages still go to stderr."""

    def __init__(self, f, out):
        self._f = f
        self._out = out
        self.progress = out.progress

    def line(self, data):
        self._f.write(data)

    def error(self, message):
        self._out.error(message)

    def file_error(self, name, exc):
        self._out.file_error(name, exc)


def update(path, inputs, args, algo, explicit, hashed, out, cached):
    """Rewrite the manifest at ``path`` for the Items ``inputs``; True if every file was read.
    ``algo``: -a's; ``explicit``: whether -a was given (else tagged and --json manifests keep
    their own algorithm); ``cached``: --cache decides what changed."""
    start_ns = time.time_ns()
    b3 = isinstance(algo, algos.Keyed)
    try:
        st = os.stat(path)
    except FileNotFoundError:
        st = None
    if st is None or st.st_size == 0:
        known = _manifest.Manifest()
        known.format = _manifest.B3SUM if b3 else _manifest.PLAIN
    else:
        known = _manifest.read(path, out, algo, strict=explicit or b3, b3=b3)
        if known is None:
            return False
        if not explicit and known.format in (_manifest.TAG, _manifest.JSON):
            algo = next(iter(known.entries.values())).algo
    entries = known.entries
    counts = dict.fromkeys(("added", "removed", "changed", "unchanged"), 0)
    failed = []
    reference = None if cached or st is None else st.st_mtime_ns - _config.SUM_CACHE_RACY_NS

    folder, base = os.path.split(os.path.abspath(path))
    fd, temp = tempfile.mkstemp(prefix=b"." + base + b".", suffix=b".tmp", dir=folder)
    ours = {os.path.join(folder, base), temp}

    def unread(items):
        """Files the manifest holds that have not changed since: its digest, not read. The
        manifest and its new copy are left out (a walk of the folder holding them)."""
        for item in items:
            if item.kind == FILE and os.path.abspath(item.path) in ours:
                continue
            if item.kind == FILE and reference is not None:
                entry = entries.get(_manifest.norm(item.name))
                if entry is not None and entry.algo == algo:
                    try:
                        fst = os.stat(item.path)
                    except OSError:
                        fst = None
                    if fst is not None and max(fst.st_mtime_ns, fst.st_ctime_ns) < reference \
                            and entry.size in (None, fst.st_size):
                        item.digest = entry.digest
                        item.size = fst.st_size
            yield item

    def counted(items):
        for item in hashed(unread(items)):
            entry = entries.get(_manifest.norm(item.name)) if item.kind == FILE else None
            if item.error is not None:
                failed.append(item)
                if entry is not None and item.error.errno != errno.ENOENT:
                    out.file_error(item.name, item.error)     # kept as it was
                    entry.seen = True
                    item.error = None
                    item.digest = entry.digest
                    item.size = entry.size or 0
                    item.algo = entry.algo
                    counts["unchanged"] += 1
                yield item
                continue
            if entry is None:
                counts["added"] += 1
            else:
                entry.seen = True
                counts["unchanged" if entry.digest == item.digest else "changed"] += 1
            yield item
        if failed:          # a directory that could not be listed: its files stay listed
            for entry in entries.values():
                if not entry.seen and os.path.lexists(entry.name):
                    entry.seen = True
                    counts["unchanged"] += 1
                    kept = Item(FILE, entry.name, entry.name, algo=entry.algo)
                    kept.digest, kept.size = entry.digest, entry.size or 0
                    yield kept

    fmt = argparse.Namespace(**vars(args))
    fmt.tag = known.format == _manifest.TAG
    fmt.json = known.format == _manifest.JSON
    fmt.binary = 1 if known.binary or fmt.tag else None
    fmt.zero = False
    fmt.raw = fmt.no_names = False
    try:
        with os.fdopen(fd, "wb") as f:
            target = _ToFile(f, out)
            if known.format == _manifest.B3SUM:
                ok = b3sum.write_sums(_with(inputs, algo), algo, fmt, counted, target)
            else:
                ok = write_sums(inputs, fmt, algo, counted, target)
            f.flush()
            os.fsync(f.fileno())
        os.chmod(temp, st.st_mode & 0o7777 if st is not None else 0o666 & ~_umask())
        os.utime(temp, ns=(start_ns, start_ns))     # the moment this snapshot began
        os.replace(temp, path)
    except BaseException:
        try:
            os.unlink(temp)
        except OSError:
            pass
        raise
    _sync_folder(folder)
    counts["removed"] = sum(not e.seen for e in entries.values())
    out.error(quotef(path) + b": " + ", ".join(f"{n} {k}" for k, n in counts.items()).encode())
    return ok and not failed


def _with(items, algo):
    for item in items:
        item.algo = algo
        yield item


def _umask():
    mask = os.umask(0)
    os.umask(mask)
    return mask


def _sync_folder(folder):
    """The rename itself made durable (where the system lets a directory be synced)."""
    try:
        fd = os.open(folder, os.O_RDONLY | getattr(os, "O_DIRECTORY", 0))
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)
