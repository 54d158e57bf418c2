"""``jitdigest sum --cache FILE``: digests kept in a SQLite database, so that a file unchanged
since a past run is not read again. A file counts as unchanged when its device, inode, size,
mtime and ctime (nanoseconds) all equal the stored ones, for the same algorithm and length.
With several algorithms (-a sha256,md5) each has its own row, and a file is taken from the
database only when all of them are there.

Racy files are handled as git handles them: a file whose mtime or ctime is not older than the
start of the run that stored it (less ``_config.SUM_CACHE_RACY_NS``, for coarse file system
clocks and timestamp granularity) could have changed again within the same tick after it was
read, so its stored digest is never trusted; it is read again, and stored with the new run's
start.

The database is only ever a help: one that cannot be opened, is damaged, is not a database or
is locked by another run for longer than ``_config.SUM_CACHE_BUSY_S`` costs hashing (and at
most one warning), never a failed run. Rows are committed every
``_config.SUM_CACHE_COMMIT_FILES`` files and at the end (WAL mode), so a run that is killed
leaves a usable database with the digests committed so far."""
import os
import sqlite3
import time

from .. import _config
from .walk import FILE

SCHEMA_VERSION = 2                  # PRAGMA user_version of a database this module made

_SCHEMA = """
CREATE TABLE IF NOT EXISTS digests (
    dir BLOB NOT NULL,
    name BLOB NOT NULL,
    algo TEXT NOT NULL,
    dev INTEGER NOT NULL,
    ino INTEGER NOT NULL,
    size INTEGER NOT NULL,
    mtime_ns INTEGER NOT NULL,
    ctime_ns INTEGER NOT NULL,
    run_start_ns INTEGER NOT NULL,
    digest BLOB NOT NULL,
    PRIMARY KEY (dir, algo, name)
) WITHOUT ROWID
"""
# A directory's rows in one query: runs look files up folder by folder, as -r walks them.
_SELECT_DIR = ("SELECT name, dev, ino, size, mtime_ns, ctime_ns, run_start_ns, digest "
               "FROM digests WHERE dir = ? AND algo = ?")
_UPSERT = "INSERT OR REPLACE INTO digests VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)"


class Cache:
    """One run's view of the database: ``lookup`` before hashing, ``store`` after, ``close`` at
    the end. ``warn`` takes a message (str) for stderr. With ``read=False`` (--no-cache-read)
    nothing stored is trusted, but every digest is stored."""

    def __init__(self, path, warn, read=True):
        self.path = path
        self.warn = warn
        self.read = read
        self.start_ns = time.time_ns()
        self.hits = 0
        self._rows = []
        self._unstored = 0                  # rows given up on (locked database)
        self._db = None
        self._cwd = os.getcwdb()
        self._dirs = {}                     # (dir, algo key): {name: row}
        self._folders = {}                  # directory as given: absolute, normalised
        try:
            self._db = self._open(path)
        except sqlite3.Error as exc:
            self._give_up(exc)

    def _open(self, path):
        db = sqlite3.connect(path, timeout=_config.SUM_CACHE_BUSY_S, isolation_level=None,
                             check_same_thread=False)
        try:
            version = db.execute("PRAGMA user_version").fetchone()[0]
            if version not in (0, SCHEMA_VERSION):
                raise sqlite3.DatabaseError(f"unknown schema version {version}")
            try:
                db.execute("PRAGMA journal_mode=WAL")
            except sqlite3.OperationalError:
                pass                        # locked: the run that holds it set WAL already
            if version == 0:
                db.execute(_SCHEMA)
                db.execute(f"PRAGMA user_version = {SCHEMA_VERSION}")
            db.execute("PRAGMA synchronous=NORMAL")
        except BaseException:
            db.close()
            raise
        return db

    def _give_up(self, exc):
        """Run on without the database: one warning."""
        if self._db is not None:
            try:
                self._db.close()
            except sqlite3.Error:
                pass
        self._db = None
        self._rows = []
        name = os.fsdecode(self.path) if isinstance(self.path, bytes) else str(self.path)
        self.warn(f"{name}: cache not used: {exc}")

    def _split(self, path):
        """(absolute directory, name): runs from other directories share rows."""
        folder, _, name = path.rpartition(b"/")
        full = self._folders.get(folder)
        if full is None:
            full = os.path.normpath(os.path.join(self._cwd, folder or b"."))
            if len(self._folders) >= _config.SUM_CACHE_DIRS_KEPT:
                self._folders.clear()
            self._folders[folder] = full
        return full, name

    def lookup(self, item):
        """Fill in ``item``'s digest and size if the database holds them for this very file
        (and they can be trusted; for several algorithms, all of them); remember its stat for
        ``store`` otherwise."""
        try:
            st = os.stat(item.path)
        except OSError:
            return False                    # opening it will say what is wrong
        item.stat = st
        if not self.read or self._db is None:
            return False
        folder, name = self._split(item.path)
        parts = getattr(item.algo, "parts", None)
        if parts is None:
            digest = self._stored(folder, name, st, item.algo)
        else:
            digest = tuple(self._stored(folder, name, st, part) for part in parts)
            if None in digest:
                digest = None
        if digest is None:
            return False
        item.digest = digest
        item.size = st.st_size
        item.stat = None                    # nothing to store
        self.hits += 1
        return True

    def _stored(self, folder, name, st, algo):
        """The stored digest of ``algo`` for the file ``st`` describes, or None."""
        key = (folder, algo.cache_key)
        rows = self._dirs.get(key)
        if rows is None:
            try:
                rows = {r[0]: r[1:] for r in self._db.execute(_SELECT_DIR, key)}
            except sqlite3.OperationalError:
                return None                 # locked or busy: hash it
            except sqlite3.DatabaseError as exc:
                self._give_up(exc)
                return None
            if len(self._dirs) >= _config.SUM_CACHE_DIRS_KEPT:
                self._dirs.clear()
            self._dirs[key] = rows
        row = rows.get(name)
        if row is None:
            return None
        dev, ino, size, mtime_ns, ctime_ns, run_start_ns, digest = row
        if (dev != st.st_dev or ino != st.st_ino or size != st.st_size
                or mtime_ns != st.st_mtime_ns or ctime_ns != st.st_ctime_ns):
            return None
        if max(mtime_ns, ctime_ns) >= run_start_ns - _config.SUM_CACHE_RACY_NS:
            return None                     # racy: it may have changed after it was read
        if len(digest) != algo.size:
            return None
        return digest

    def store(self, item):
        """Remember a freshly hashed item (with the stat taken before it was read): a row for
        each algorithm."""
        st = item.stat
        if self._db is None or st is None or item.error is not None or item.digest is None:
            return
        if st.st_size != item.size:
            return                          # it changed while being read
        folder, name = self._split(item.path)
        parts = getattr(item.algo, "parts", None)
        pairs = [(item.algo, item.digest)] if parts is None else zip(parts, item.digest)
        for algo, digest in pairs:
            self._rows.append((folder, name, algo.cache_key, st.st_dev, st.st_ino,
                               st.st_size, st.st_mtime_ns, st.st_ctime_ns, self.start_ns,
                               bytes(digest)))
        if len(self._rows) >= _config.SUM_CACHE_COMMIT_FILES:
            self._commit()

    def _commit(self):
        rows = self._rows
        if not rows or self._db is None:
            return
        db = self._db
        try:
            db.execute("BEGIN IMMEDIATE")
            try:
                db.executemany(_UPSERT, rows)
                db.execute("COMMIT")
            except BaseException:
                db.execute("ROLLBACK")
                raise
        except sqlite3.OperationalError:
            # locked by another run past the timeout: keep the rows for the next commit
            if len(rows) >= 4 * _config.SUM_CACHE_COMMIT_FILES:
                self._unstored += len(rows)
                self._rows = []
            return
        except sqlite3.DatabaseError as exc:
            self._give_up(exc)
            return
        self._rows = []

    def run(self, hasher, items):
        """``hasher.run(items)`` with the database in front: files it holds come out with
        their stored digests, unread; the others are hashed, then stored."""
        def looked_up():
            for item in items:
                if item.kind == FILE and item.algo is not None:
                    self.lookup(item)
                yield item

        for item in hasher.run(looked_up()):
            if item.stat is not None:
                self.store(item)
            yield item

    def close(self):
        """Commit what is left and close; a database still locked: one warning."""
        if self._db is None:
            return
        self._commit()
        self._unstored += len(self._rows)
        self._rows = []
        try:
            self._db.close()
        except sqlite3.Error:
            pass
        self._db = None
        if self._unstored:
            name = os.fsdecode(self.path) if isinstance(self.path, bytes) else str(self.path)
            self.warn(f"{name}: database locked, {self._unstored} digests not stored")
