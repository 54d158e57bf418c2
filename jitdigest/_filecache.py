"""Digests kept in a SQLite database (``jitdigest sum --cache FILE``, ``hash_files(cache=)``),
so that a file unchanged since it was stored (device, inode, size, mtime and ctime in
nanoseconds, the same algorithm and length) is not read again; with several algorithms, only
when all of them are there. One database serves the command line and the Python calls.

A row holds one directory's entries for one algorithm as three blobs (names, packed stats,
digests): one query and one split read a directory, one insert stores it (a row a file cost
far more SQLite time). Later rows win; past ``_config.SUM_CACHE_ROWS_KEPT`` they are merged.
Racy files are handled as git handles them: a file not older than the run's start (less
``_config.SUM_CACHE_RACY_NS``) could change again within the tick, so its digest is not stored.
The database is only ever a help: one that cannot be opened, is damaged or stays locked past
``_config.SUM_CACHE_BUSY_S`` costs hashing (and at most one warning), never a failed run. Rows
are committed every ``_config.SUM_CACHE_COMMIT_FILES`` files and at the end (WAL mode).
"""
import os
import sqlite3
import struct
import time

from typing import NamedTuple

from .base import config as _config

SCHEMA_VERSION = 3                  # PRAGMA user_version of a database this module made
OLD_VERSIONS = (2,)                 # versions it made before: their tables are replaced

_SCHEMA = ("""
CREATE TABLE IF NOT EXISTS dirs (
    id INTEGER PRIMARY KEY,
    path BLOB NOT NULL UNIQUE
)""", """
CREATE TABLE IF NOT EXISTS digests (
    id INTEGER PRIMARY KEY,
    dir INTEGER NOT NULL,
    algo TEXT NOT NULL,
    names BLOB NOT NULL,
    stats BLOB NOT NULL,
    digests BLOB NOT NULL
)""", "CREATE INDEX IF NOT EXISTS digests_dir ON digests (dir, algo)")
_DROP = ("DROP TABLE IF EXISTS digests", "DROP TABLE IF EXISTS dirs")
# names: joined by NUL (no file name holds one); stats: ``STAT`` each (device, inode, size,
# mtime_ns, ctime_ns); digests: the algorithm's size each; all in the same order
STAT = struct.Struct("<QQQqq")
_SELECT_DIR = ("SELECT names, stats, digests FROM digests "
               "WHERE dir = (SELECT id FROM dirs WHERE path = ?) AND algo = ? ORDER BY id")
_ADD_DIR = "INSERT OR IGNORE INTO dirs (path) VALUES (?)"
_DIR_ID = "SELECT id FROM dirs WHERE path = ?"
_INSERT = "INSERT INTO digests (dir, algo, names, stats, digests) VALUES (?, ?, ?, ?, ?)"
# a directory's rows of one algorithm, by its id (in the commit's transaction)
_COUNT = "SELECT COUNT(*) FROM digests WHERE dir = ? AND algo = ?"
_ROWS = "SELECT names, stats, digests FROM digests WHERE dir = ? AND algo = ? ORDER BY id"
_DELETE = "DELETE FROM digests WHERE dir = ? AND algo = ?"


def algorithm_key(name, bits, mode=""):
    """How a row names an algorithm: its canonical name, a mode (``Keyed``'s key or context;
    empty for the plain algorithm) and the output length in bits, e.g. "blake2b:256"."""
    return f"{name}{mode}:{bits}"


class Output(NamedTuple):
    """One algorithm at one output length, as ``FileCache`` needs it: ``cache_key`` (from
    ``algorithm_key``) and ``size`` (digest bytes). ``jitdigest sum``'s Algo and Keyed offer
    the same two attributes, and several algorithms come as an object with ``parts``."""
    cache_key: str
    size: int


class Several(NamedTuple):
    """Several outputs of one read: a hit needs all of them; digests are tuples in order."""
    parts: tuple


def stat_key(st):
    """What a row stores of ``os.stat``'s result, and what a lookup compares; None for times
    past what 64 bits of nanoseconds hold (years before 1678 or after 2262): not cached."""
    try:
        return STAT.pack(st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns, st.st_ctime_ns)
    except struct.error:
        return None


def decode(rows, size):
    """{name: (stat key, digest)} from a directory's rows (names, stats, digests blobs), in
    order, later ones winning; a row whose blobs disagree (a damaged database) is left out."""
    entries = {}
    width = STAT.size
    for names, stats, digests in rows:
        if not (type(names) is type(stats) is type(digests) is bytes) or not names:
            continue
        names = names.split(b"\0")
        n = len(names)
        if len(stats) != width * n or len(digests) != size * n:
            continue
        entries.update(zip(names, zip([stats[i:i + width] for i in range(0, width * n, width)],
                                      [digests[i:i + size] for i in range(0, size * n, size)])))
    return entries


def encode(entries):
    """The (names, stats, digests) blobs of {name: (stat key, digest)}."""
    values = entries.values()
    return (b"\0".join(entries), b"".join([v[0] for v in values]),
            b"".join([v[1] for v in values]))


def stored_files(path):
    """{algorithm key: how many files have a digest} in the database at ``path``."""
    db = sqlite3.connect(path)
    try:
        files = {}
        for folder, algo, names in db.execute("SELECT dir, algo, names FROM digests"):
            if isinstance(names, bytes):
                files.setdefault(algo, set()).update((folder, n) for n in names.split(b"\0"))
    finally:
        db.close()
    return {algo: len(names) for algo, names in files.items()}


class FileCache:
    """One run's view of the database at ``path``: ``find`` before hashing, ``keep`` after,
    ``close`` at the end. ``warn`` takes a message (str): stderr, or a Python warning. With
    ``read=False`` (--no-cache-read) nothing stored is trusted, but every digest is stored."""

    def __init__(self, path, warn, read=True):
        self.path = path
        self.warn = warn
        self.read = read
        self.start_ns = time.time_ns()
        self.hits = 0
        self._pending = {}                  # (dir, algo key, size): {name: (stat key, digest)}
        self._pending_files = 0
        self._unstored = 0                  # files given up on (locked database)
        self._db = None
        self._cwd = os.getcwdb()
        self._dirs = {}                     # (dir, algo): {name: (stat key, digest)}
        self._folders = {}                  # directory as given: absolute, normalised
        self._here = self._here_algo = None # the directory (as given) and algorithm of the
        self._here_rows = []                # last lookup, and its entries (one per algorithm)
        try:
            self._db = self._open(path)
        except sqlite3.Error as exc:
            self._give_up(exc)

    def _open(self, path):
        db = sqlite3.connect(path, timeout=_config.SUM_CACHE_BUSY_S, isolation_level=None,
                             check_same_thread=False)
        try:
            version = db.execute("PRAGMA user_version").fetchone()[0]
            if version not in (0, SCHEMA_VERSION) + OLD_VERSIONS:
                raise sqlite3.DatabaseError(f"unknown schema version {version}")
            try:
                db.execute("PRAGMA journal_mode=WAL")
            except sqlite3.OperationalError:
                pass                        # locked: the run that holds it set WAL already
            if version != SCHEMA_VERSION:
                # new (tables added), or made by an earlier jitdigest (its tables replaced:
                # they only held digests), in one transaction
                db.execute("BEGIN IMMEDIATE")
                try:
                    version = db.execute("PRAGMA user_version").fetchone()[0]
                    if version != SCHEMA_VERSION:
                        for statement in (_DROP if version else ()) + _SCHEMA:
                            db.execute(statement)
                        db.execute(f"PRAGMA user_version = {SCHEMA_VERSION}")
                    db.execute("COMMIT")
                except BaseException:
                    db.execute("ROLLBACK")
                    raise
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
        self._pending, self._pending_files = {}, 0
        name = os.fsdecode(self.path) if isinstance(self.path, bytes) else str(self.path)
        self.warn(f"{name}: cache not used: {exc}")

    def _split(self, path):
        """(absolute directory, name): runs from other directories share rows."""
        folder, _, name = path.rpartition(b"/")
        return self._full(folder), name

    def _full(self, folder):
        """A directory as given (b"" for the current one), absolute and normalised."""
        full = self._folders.get(folder)
        if full is None:
            full = os.path.normpath(os.path.join(self._cwd, folder or b"."))
            if len(self._folders) >= _config.SUM_CACHE_DIRS_KEPT:
                self._folders.clear()
            self._folders[folder] = full
        return full

    def find(self, path, algo):
        """(stat, digest) of ``path`` (bytes) for ``algo`` (an Output, Several or sum's Algo):
        the digest (a tuple for several) if the database holds it for this very file, with the
        stat taken now; else None and that stat, for ``keep`` once the file is hashed (None
        too where ``os.stat`` fails: opening the file will say what is wrong)."""
        try:
            st = os.stat(path)
        except OSError:
            return None, None
        if not self.read or self._db is None:
            return st, None
        folder, _, name = path.rpartition(b"/")
        parts = getattr(algo, "parts", None)
        if folder != self._here or algo is not self._here_algo:
            # a directory's files come one after another: its entries are looked up once
            full = self._full(folder)
            self._here_rows = [self._entries(full, part) for part in (parts or (algo,))]
            self._here, self._here_algo = folder, algo
        key = None
        digests = []
        for rows in self._here_rows:
            row = rows.get(name)
            if row is None:
                return st, None
            if key is None:
                key = stat_key(st)      # made only for a name the directory holds: a file
                                        # not stored yet has it made once, by ``keep``
            if row[0] != key:
                return st, None
            digests.append(row[1])
        self.hits += 1
        return st, (digests[0] if parts is None else tuple(digests))

    def _entries(self, folder, algo):
        """{name: (stat key, digest)} of a directory's entries for ``algo``."""
        rows = self._dirs.get((folder, algo))
        return self._load(folder, algo) if rows is None else rows

    def _load(self, folder, algo):
        """{name: (stat key, digest)} of a directory's entries for ``algo``, kept for the next
        files of that directory."""
        try:
            rows = self._db.execute(_SELECT_DIR, (folder, algo.cache_key)).fetchall()
        except sqlite3.OperationalError:
            return {}                       # locked or busy: hash them
        except sqlite3.DatabaseError as exc:
            self._give_up(exc)
            return {}
        entries = decode(rows, algo.size)
        if len(self._dirs) >= _config.SUM_CACHE_DIRS_KEPT:
            self._dirs.clear()
        self._dirs[(folder, algo)] = entries
        return entries

    def keep(self, path, algo, st, digest, size):
        """Remember the digest of a file just hashed (``st``: its stat from ``find``, taken
        before it was read; ``size``: the bytes read), for each algorithm; not a racy file
        (changed too close to this run's start to be trusted later) or one that changed while
        it was read."""
        if self._db is None or st is None or digest is None:
            return
        if st.st_size != size:
            return                          # it changed while being read
        if max(st.st_mtime_ns, st.st_ctime_ns) >= self.start_ns - _config.SUM_CACHE_RACY_NS:
            return
        key = stat_key(st)
        if key is None:
            return
        folder, name = self._split(path)
        parts = getattr(algo, "parts", None)
        pairs = [(algo, digest)] if parts is None else zip(parts, digest)
        for one, value in pairs:
            group = (folder, one.cache_key, one.size)
            entries = self._pending.get(group)
            if entries is None:
                entries = self._pending[group] = {}
            entries[name] = (key, bytes(value))
        self._pending_files += 1
        if self._pending_files >= _config.SUM_CACHE_COMMIT_FILES:
            self._commit()

    def _commit(self):
        pending = self._pending
        if not pending or self._db is None:
            return
        db = self._db
        try:
            db.execute("BEGIN IMMEDIATE")
            try:
                for (folder, algo, size), entries in pending.items():
                    db.execute(_ADD_DIR, (folder,))
                    folder_id = db.execute(_DIR_ID, (folder,)).fetchone()[0]
                    db.execute(_INSERT, (folder_id, algo) + encode(entries))
                    self._compact(folder_id, algo, size)
                db.execute("COMMIT")
            except BaseException:
                db.execute("ROLLBACK")
                raise
        except sqlite3.OperationalError:
            # locked by another run past the timeout: keep the entries for the next commit
            if self._pending_files >= 4 * _config.SUM_CACHE_COMMIT_FILES:
                self._unstored += self._pending_files
                self._pending, self._pending_files = {}, 0
            return
        except sqlite3.DatabaseError as exc:
            self._give_up(exc)
            return
        self._pending, self._pending_files = {}, 0

    def _compact(self, folder_id, algo, size):
        """Merge a directory's rows for ``algo`` into one once there are more than
        ``_config.SUM_CACHE_ROWS_KEPT`` (inside the commit's transaction)."""
        db = self._db
        where = (folder_id, algo)
        if db.execute(_COUNT, where).fetchone()[0] <= _config.SUM_CACHE_ROWS_KEPT:
            return
        entries = decode(db.execute(_ROWS, where).fetchall(), size)
        db.execute(_DELETE, where)
        if entries:
            db.execute(_INSERT, (folder_id, algo) + encode(entries))

    def close(self):
        """Commit what is left and close; a database still locked: one warning."""
        if self._db is None:
            return
        self._commit()
        self._unstored += self._pending_files
        self._pending, self._pending_files = {}, 0
        try:
            self._db.close()
        except sqlite3.Error:
            pass
        self._db = None
        if self._unstored:
            name = os.fsdecode(self.path) if isinstance(self.path, bytes) else str(self.path)
            self.warn(f"{name}: database locked, {self._unstored} digests not stored")
