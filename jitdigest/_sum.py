"""The checksum logic behind ``jitdigest sum``: coreutils' output and ``--check`` rules, byte
for byte, plus what coreutils lacks (recursion, JSON lines, parallel and batched hashing).

cli.py parses the arguments; ``run(args)`` here does the work and returns the exit status.
Names are bytes from end to end (``os.fsencode`` of argv, ``sys.stdout.buffer`` for output),
so file names that are not UTF-8 come out exactly as they went in. The reference is GNU
coreutils 9.1 (``sha256sum``, ``md5sum``, ``b2sum`` ...); its quirks are noted where copied.
"""
import binascii
import errno
import os
import re
import sys

SMALL = 64 * 1024            # files up to this size are read whole and hashed in batches
CHUNK = 256 * 1024           # larger files: readinto one reused buffer of this size per thread
BATCH_FILES = 256            # a batch is flushed at this many files ...
BATCH_BYTES = 4 * 1024 * 1024  # ... or this many bytes of file contents
SHAKE_DEFAULT_BITS = {"shake_128": 256, "shake_256": 512}   # full strength: 2x security level
SHAKE_MAX_BITS = 1 << 20

# BSD-tag names (``--tag`` output, ``--check`` input). coreutils' own: MD5 ... SHA512, BLAKE2b
# (with "-BITS" when shorter than 512). The rest follow the same TAG[-BITS] pattern.
_FIXED_TAGS = {
    "md5": "MD5", "sha1": "SHA1", "sha224": "SHA224", "sha256": "SHA256", "sha384": "SHA384",
    "sha512": "SHA512", "sha512_224": "SHA512-224", "sha512_256": "SHA512-256",
    "sha3_224": "SHA3-224", "sha3_256": "SHA3-256", "sha3_384": "SHA3-384",
    "sha3_512": "SHA3-512",
}
_VARIABLE_TAGS = {"blake2b": "BLAKE2b", "blake2s": "BLAKE2s",
                  "shake_128": "SHAKE128", "shake_256": "SHAKE256"}
_BLAKE2_MAX_BITS = {"blake2b": 512, "blake2s": 256}
_TAG_RE = re.compile(rb"(BLAKE2b|BLAKE2s|SHAKE128|SHAKE256|SHA224|SHA256|SHA384|SHA512|SHA1|"
                     rb"SHA3|MD5)(?:-([0-9]+))?")
_TAG_BASES = {b"MD5": "md5", b"SHA1": "sha1", b"SHA224": "sha224", b"SHA256": "sha256",
              b"SHA384": "sha384", b"SHA512": "sha512", b"BLAKE2b": "blake2b",
              b"BLAKE2s": "blake2s", b"SHAKE128": "shake_128", b"SHAKE256": "shake_256"}
_HEX = frozenset(b"0123456789abcdefABCDEF")


class UsageError(Exception):
    """Bad options: message, then "Try 'jitdigest sum --help'", exit 1 (coreutils' usage())."""


class FatalError(Exception):
    """A message (possibly several lines) and exit 1, as coreutils' error (EXIT_FAILURE, ...)."""


# --- messages -----------------------------------------------------------------------------------

def _utf8_locale():
    for var in ("LC_ALL", "LC_CTYPE", "LANG"):
        value = os.environ.get(var)
        if value:
            return "utf-8" in value.lower() or "utf8" in value.lower()
    return False


_UTF8 = _utf8_locale()
_SAFE = frozenset(b"%+,-./0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZ]_abcdefghijklmnopqrstuvwxyz@")
_C_COMPAT = _SAFE | frozenset(b": '")    # also fine inside "...": allows the "it's" form
_C_ESCAPES = {7: b"a", 8: b"b", 9: b"t", 10: b"n", 11: b"v", 12: b"f", 13: b"r"}


def _pieces(name):
    """(bytes, printable) per character, split as the locale's mbrtoc32 would split them."""
    if not _UTF8:
        return [(bytes((c,)), 32 <= c < 127) for c in name]
    out = []
    for ch in name.decode("utf-8", "surrogateescape"):
        o = ord(ch)
        if 0xDC80 <= o <= 0xDCFF:
            out.append((bytes((o - 0xDC00,)), False))
        elif o < 128:
            out.append((bytes((o,)), 32 <= o < 127))
        else:
            out.append((ch.encode(), ch.isprintable()))
    return out


def quotef(name):
    """A file name for an error message, quoted as coreutils' ``quotef`` does (gnulib quotearg,
    shell-escape style, ':' quoted too): bare when harmless, else '...' with $'\\n' escapes."""
    pieces = _pieces(name)
    if name and name[:1] not in (b"#", b"~") and name not in (b"{", b"}"):
        for piece, printable in pieces:
            c = piece[0]
            if len(piece) == 1 and c < 128:
                if c not in _SAFE and c not in b"{}#~":
                    break
            elif not printable:
                break
        else:
            return name
    out = bytearray(b"'")
    pending = False            # inside a $'...' run
    compat = True              # every character also fine inside "..."
    quote_seen = False
    for index, (piece, printable) in enumerate(pieces):
        c = piece[0]
        if len(piece) == 1 and c < 128 and c in _C_ESCAPES or not printable:
            if not pending:
                out += b"'$'"
                pending = True
            if c in _C_ESCAPES and len(piece) == 1:
                out += b"\\" + _C_ESCAPES[c]
            else:
                for b in piece:
                    out += b"\\%03o" % b
            compat = False
            continue
        if c == 39:            # '
            out += b"'\\''"
            pending = False
            quote_seen = True
            continue
        if pending:
            out += b"''"
            pending = False
        out += piece
        if len(piece) == 1 and not (c in _C_COMPAT or c in b"#~" and index == 0
                                    or c in b"{}" and len(name) == 1):
            compat = False
    if quote_seen and compat:
        return b'"' + name + b'"'
    out += b"'"
    return bytes(out)


def quote(text):
    """A value in a message, as coreutils' ``quote`` prints it: 'x', or curly quotes in UTF-8."""
    return f"\u2018{text}\u2019" if _UTF8 else f"'{text}'"


def _needs_escape(name):
    return b"\\" in name or b"\n" in name or b"\r" in name


def escape_name(name):
    """coreutils' print_filename with escaping: backslash, newline and CR as \\\\, \\n, \\r."""
    return name.replace(b"\\", b"\\\\").replace(b"\n", b"\\n").replace(b"\r", b"\\r")


def unescape_name(name):
    """The inverse, as coreutils' filename_unescape; None for an invalid escape or a NUL."""
    if b"\0" in name:
        return None
    if b"\\" not in name:
        return name
    out = bytearray()
    i = 0
    while True:
        j = name.find(b"\\", i)
        if j < 0:
            out += name[i:]
            return bytes(out)
        out += name[i:j]
        nxt = name[j + 1:j + 2]
        if nxt == b"n":
            out += b"\n"
        elif nxt == b"r":
            out += b"\r"
        elif nxt == b"\\":
            out += b"\\"
        else:
            return None
        i = j + 2


# --- algorithms -----------------------------------------------------------------------------

class Algo:
    """One algorithm at one output length: how to hash, how to print its tag."""

    def __init__(self, name, bits, ctor, xof, batch):
        self.name = name
        self.bits = bits
        self.size = bits // 8
        self.xof = xof
        self._ctor = ctor
        self.batch_name = batch                 # name for hash_many, or None
        if name in _FIXED_TAGS:
            tag = _FIXED_TAGS[name]
        elif name in _BLAKE2_MAX_BITS:
            tag = _VARIABLE_TAGS[name]
            if bits != _BLAKE2_MAX_BITS[name]:
                tag += f"-{bits}"
        else:
            tag = f"{_VARIABLE_TAGS[name]}-{bits}"
        self.tag = tag.encode()

    def new(self, data=b""):
        return self._ctor(data)

    def finish(self, h):
        return h.digest(self.size) if self.xof else h.digest()

    def oneshot(self, data):
        return self.finish(self._ctor(data))


class Algorithms:
    """Algo objects by (name, bits), made once; the public constructors found once."""

    def __init__(self):
        import jitdigest
        from . import _algorithms
        self._jd = jitdigest
        self._lookup = _algorithms.lookup
        self._specs = _algorithms.SPECS
        self._cache = {}

    def names(self):
        return sorted(self._specs)

    def _blake2_class(self, name):
        cls = getattr(self._jd, name, None)
        if cls is None:                         # not exported yet: the module behind it
            try:
                from . import _blake2
            except ImportError:
                raise FatalError(f"{name} is not available in this jitdigest") from None
            cls = _blake2.CONSTRUCTORS[name]
        return cls

    def get(self, name, bits=None):
        key = (name, bits)
        algo = self._cache.get(key)
        if algo is not None:
            return algo
        spec = self._specs[name]
        if name in _BLAKE2_MAX_BITS:
            cls = self._blake2_class(name)
            full = _BLAKE2_MAX_BITS[name]
            bits = bits or full
            size = bits // 8
            algo = Algo(name, bits, lambda data=b"": cls(data, digest_size=size), False,
                        name if bits == full else None)
        elif spec.digest_size == 0:
            ctor = getattr(self._jd, name)
            algo = Algo(name, bits or SHAKE_DEFAULT_BITS[name], ctor, True, name)
        else:
            ctor = getattr(self._jd, name, None)
            if ctor is None:
                new = self._jd.new
                ctor = lambda data=b"", _n=name: new(_n, data)   # noqa: E731
            algo = Algo(name, spec.digest_size * 8, ctor, False, name)
        self._cache[key] = algo
        return algo

    def from_option(self, name, length):
        """The Algo for ``-a NAME`` and ``-l BITS`` (None or a string), with coreutils' errors."""
        bits = 0
        if length is not None:
            if not length.isdigit():
                raise FatalError(f"invalid length: {quote(length)}")
            bits = int(length)
        if name.lower() == "sha3":              # cksum's spelling: -a sha3 -l 256
            if bits not in (224, 256, 384, 512):
                raise UsageError("--algorithm=sha3 needs --length 224, 256, 384 or 512")
            return self.get(f"sha3_{bits}")
        try:
            canonical = self._lookup(name).name
        except ValueError:
            raise UsageError(f"invalid argument {quote(name)} for {quote('--algorithm')}\n"
                             f"Valid arguments: {', '.join(self.names())}, sha3") from None
        if canonical in _VARIABLE_TAGS:
            if bits:
                label = _VARIABLE_TAGS[canonical]
                limit = _BLAKE2_MAX_BITS.get(canonical, SHAKE_MAX_BITS)
                if bits > limit:
                    raise FatalError(f"invalid length: {quote(length)}\nmaximum digest length "
                                     f"for {quote(label)} is {limit} bits")
                if bits % 8:
                    raise FatalError(f"invalid length: {quote(length)}\n"
                                     "length is not a multiple of 8")
            return self.get(canonical, bits or None)
        if bits:
            raise FatalError("--length is only supported with --algorithm=blake2b, blake2s, "
                             "shake_128, shake_256 or sha3")
        return self.get(canonical)

    def from_tag(self, base, bits):
        """The Algo a BSD tag names (base bytes, bits bytes or None); None if invalid."""
        if base == b"SHA3":
            return self.get(f"sha3_{int(bits)}") if bits in (b"224", b"256", b"384", b"512") \
                else None
        if base == b"SHA512" and bits in (b"224", b"256"):
            return self.get(f"sha512_{int(bits)}")
        name = _TAG_BASES[base]
        if name not in _VARIABLE_TAGS:
            return None if bits is not None else self.get(name)
        if bits is None:
            return self.get(name) if name in _BLAKE2_MAX_BITS else name   # SHAKE: from the hex
        value = int(bits)
        if value <= 0 or value % 8 or value > _BLAKE2_MAX_BITS.get(name, SHAKE_MAX_BITS):
            return None
        return self.get(name, value)


# --- inputs ---------------------------------------------------------------------------------

FILE, STDIN, ERROR, NOTE = range(4)


class Item:
    """One line of output to come: a file (or stdin) to hash, a walk error, or a check note."""

    __slots__ = ("kind", "path", "name", "algo", "expected", "error", "size", "digest")

    def __init__(self, kind, name, path=None, algo=None, expected=None, error=None):
        self.kind = kind
        self.name = name                # bytes, as shown
        self.path = path                # bytes, as opened
        self.algo = algo
        self.expected = expected        # --check: the listed hex digest (bytes)
        self.error = error              # OSError (FILE/ERROR) or message (NOTE)
        self.size = 0
        self.digest = None


def _walk(top):
    """Regular files under directory ``top`` in byte order of their full paths (as
    ``find | LC_ALL=C sort``). Directory symlinks are not followed, so links cannot loop;
    symlinks to files are hashed; fifos, sockets and devices are skipped. A directory seen
    again below itself (a bind mount) is reported, not entered."""
    try:
        st = os.stat(top)
        ancestors = {(st.st_dev, st.st_ino)}
    except OSError as exc:
        yield Item(ERROR, top, error=exc)
        return
    stack = [(iter(_sorted_entries(top)), ancestors)]
    while stack:
        entries, ancestors = stack[-1]
        entry = next(entries, None)
        if entry is None:
            stack.pop()
            continue
        if isinstance(entry, Item):
            yield entry
            continue
        path, is_dir = entry
        if not is_dir:
            yield Item(FILE, path, path)
            continue
        try:
            st = os.lstat(path)
        except OSError as exc:
            yield Item(ERROR, path, error=exc)
            continue
        key = (st.st_dev, st.st_ino)
        if key in ancestors:
            yield Item(ERROR, path, error=OSError(errno.ELOOP, "File system loop detected"))
            continue
        stack.append((iter(_sorted_entries(path)), ancestors | {key}))


def _sorted_entries(path):
    """(path, is_dir) for the entries of one directory; sorting by name with a '/' after
    directory names gives the byte order of full paths. A listing error is an Item."""
    try:
        with os.scandir(path) as it:
            entries = list(it)
    except OSError as exc:
        return [Item(ERROR, path, error=exc)]
    keyed = []
    for e in entries:
        try:
            if e.is_dir(follow_symlinks=False):
                keyed.append((e.name + b"/", e.path, True))
            elif e.is_file(follow_symlinks=False):
                keyed.append((e.name, e.path, False))
            elif e.is_symlink():
                if e.is_file() or not (e.is_dir() or os.path.exists(e.path)):
                    keyed.append((e.name, e.path, False))   # a file, or dangling: report it
        except OSError:
            keyed.append((e.name, e.path, False))           # let opening it say what is wrong
    keyed.sort()
    return [(p, d) for _, p, d in keyed]


def expand_operands(operands, recursive):
    """The Items for the command line: '-' is stdin; with -r, directories are walked."""
    for op in operands:
        if op == b"-":
            yield Item(STDIN, op)
        elif recursive:
            try:
                is_dir = os.path.isdir(op)
            except OSError:
                is_dir = False
            if is_dir:
                yield from _walk(op)
            else:
                yield Item(FILE, op, op)
        else:
            yield Item(FILE, op, op)


# --- hashing --------------------------------------------------------------------------------

class Hasher:
    """Hashes Items in order: runs of small files through jitdigest.hash_many (when it exists
    and batching is on) or one kernel call each; large files streamed through one reused
    buffer per thread; with jobs > 1, units of work on a thread pool, results in input order."""

    def __init__(self, jobs=1, batch=True, progress=None):
        import threading
        import jitdigest
        self.jobs = max(1, jobs)
        self.progress = progress
        self._hash_many = getattr(jitdigest, "hash_many", None) if batch else None
        self._unbatchable = set()           # algorithms hash_many turned down
        self._local = threading.local()
        self._pool = None

    # one file
    def _buffer(self):
        buf = getattr(self._local, "buf", None)
        if buf is None:
            buf = self._local.buf = bytearray(CHUNK)
        return buf

    def _stream(self, item, fd, head):
        """Hash the rest of an open file after its first bytes ``head``."""
        h = item.algo.new()
        h.update(head)
        size = len(head)
        buf = self._buffer()
        view = memoryview(buf)
        progress = self.progress
        readinto = _readinto(fd)
        while True:
            n = readinto(buf)
            if not n:
                break
            h.update(view[:n])
            size += n
            if progress is not None:
                progress.add(n)
        item.size = size
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
        """The digests of ``datas``: one hash_many call when it serves this algorithm."""
        hm = self._hash_many
        name = algo.batch_name
        if hm is not None and name is not None and len(datas) > 1 \
                and name not in self._unbatchable:
            # One thread: -j alone decides how many run (with -j N the batches are already
            # spread over N workers; hash_many's own threads only contended with them).
            kwargs = {"threads": 1}
            if algo.xof:
                kwargs["length"] = algo.size
            out = None
            for _ in range(2):
                try:
                    out = hm(name, datas, **kwargs)
                    break
                except TypeError:
                    if kwargs.pop("threads", None) is None:    # an older signature
                        break
                except (ValueError, NotImplementedError):
                    break
            if getattr(out, "shape", None) == (len(datas), algo.size):
                return [row.tobytes() for row in out]
            self._unbatchable.add(name)         # per-file hashing for it from now on
        return [algo.oneshot(d) for d in datas]

    def _process(self, items):
        """Yield the Items, hashed, in order (one thread)."""
        pending = []
        pending_bytes = 0
        for item in items:
            kind = item.kind
            if kind == FILE:
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
                            yield from self._flush(pending)
                            pending = []
                            pending_bytes = 0
                        pending.append((item, None))
                    else:
                        pending.append((item, data))
                        pending_bytes += len(data)
            elif kind == STDIN:
                yield from self._flush(pending)
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
                yield from self._flush(pending)
                pending = []
                pending_bytes = 0
        yield from self._flush(pending)

    def run(self, items):
        """Yield every Item hashed (digest and size set, or error set), in input order."""
        if self.jobs == 1:
            return self._process(items)
        return self._run_parallel(items)

    def _units(self, items):
        """Lists of Items for the pool: each large file alone, small ones grouped; stdin alone
        (it is read on the calling thread)."""
        unit = []
        unit_bytes = 0
        for item in items:
            if item.kind == FILE:
                try:
                    size = os.stat(item.path).st_size
                except OSError:
                    size = 0
                if size > SMALL:
                    if unit:
                        yield unit
                        unit, unit_bytes = [], 0
                    yield [item]
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
        for unit in self._units(items):
            if isinstance(unit, Item):          # stdin: here, in order with other stdin reads
                fut = Future()
                fut.set_result(work([unit]))
            else:
                fut = self._pool.submit(work, unit)
            window.append(fut)
            while len(window) >= limit or window and window[0].done():
                yield from window.popleft().result()
        while window:
            yield from window.popleft().result()

    def close(self, wait=True):
        """Stop the pool; ``wait=False`` (on an exception) abandons the work in flight."""
        if self._pool is not None:
            self._pool.shutdown(wait=wait, cancel_futures=not wait)
            self._pool = None


def _readinto(fd):
    import io
    return io.FileIO(fd, "rb", closefd=False).readinto


# --- progress -------------------------------------------------------------------------------

class Progress:
    """A one-line progress display on stderr (a TTY): bytes, rate, files; a bar when the total
    is known. Drawn by a daemon thread, only once the run has lasted ``delay`` seconds."""

    def __init__(self, stream, total=None, delay=1.0, interval=0.25):
        import threading
        import time
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
        import shutil
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


# --- the command ----------------------------------------------------------------------------

class _Output:
    """stdout (bytes) and stderr messages, kept in order with each other and the progress line."""

    def __init__(self, progress=None):
        self.out = sys.stdout.buffer
        self.tty = sys.stdout.isatty()
        self.progress = progress

    def line(self, data):
        if self.progress is not None:
            self.progress.clear()
        self.out.write(data)
        if self.tty:
            self.out.flush()

    def error(self, message):
        """``jitdigest: MESSAGE`` on stderr; MESSAGE bytes or str."""
        if self.progress is not None:
            self.progress.clear()
        self.out.flush()
        if isinstance(message, str):
            message = message.encode("utf-8", "surrogateescape")
        err = sys.stderr
        err.flush()
        err.buffer.write(b"jitdigest: " + message + b"\n")
        err.buffer.flush()

    def file_error(self, name, exc):
        self.error(quotef(name) + b": " + (exc.strerror or str(exc)).encode())


def _check_options(args):
    """coreutils' option conflicts, in its order."""
    check = args.check
    if args.tag and args.binary == 0:
        raise UsageError("--tag does not support --text mode")
    if args.zero and check:
        raise UsageError("the --zero option is not supported when verifying checksums")
    if args.tag and check:
        raise UsageError("the --tag option is meaningless when verifying checksums")
    if args.binary is not None and check:
        raise UsageError("the --binary and --text options are meaningless when verifying "
                         "checksums")
    if args.ignore_missing and not check:
        raise UsageError("the --ignore-missing option is meaningful only when verifying "
                         "checksums")
    if args.verbosity and not check:
        raise UsageError(f"the --{args.verbosity} option is meaningful only when verifying "
                         "checksums")
    if args.strict and not check:
        raise UsageError("the --strict option is meaningful only when verifying checksums")
    if args.json and (check or args.tag or args.zero):
        raise UsageError("--json cannot be combined with --check, --tag or --zero")
    if args.recursive and check:
        raise UsageError("the --recursive option is meaningless when verifying checksums")
    if args.jobs < 0:
        raise UsageError(f"invalid number of jobs: {quote(args.jobs)}")


def _skip_optional_probes():
    """Start-up: when the first cached kernel loads, Numba's CPU target imports its optional
    helpers, among them scipy.linalg (a BLAS probe, 0.15-0.25 s when SciPy is installed) and
    cffi with pycparser (~0.03 s). No kernel of ours uses either, and this process runs no
    other code: make those imports fail fast, as if the packages were absent.
    JITDIGEST_CLI_KEEP_PROBES=1 turns this off."""
    if os.environ.get("JITDIGEST_CLI_KEEP_PROBES"):
        return
    for name in ("scipy.linalg", "cffi"):
        if name not in sys.modules:
            sys.modules[name] = None


def _want_progress(args):
    from ._notice import isatty
    return not args.no_progress and isatty(sys.stderr)


def run(args):
    """``jitdigest sum``: the exit status (0 all good, 1 anything failed or mismatched)."""
    from . import _dispatch
    _check_options(args)
    _skip_optional_probes()
    _dispatch.COMPILE_BATCH = False     # lane kernels when cached ("jitdigest warmup"), else
                                        # the per-message ones: no minute-long first run
    algos = Algorithms()
    algo = algos.from_option(args.algorithm, args.length)
    operands = [os.fsencode(f) for f in args.files] or [b"-"]
    jobs = args.jobs or (os.cpu_count() or 1)
    progress = None
    if _want_progress(args):
        total = None
        if not args.recursive and not args.check:
            try:
                total = sum(os.stat(p).st_size for p in operands if p != b"-")
            except OSError:
                total = None
        progress = Progress(sys.stderr, total)
    out = _Output(progress)
    hasher = Hasher(jobs, batch=not args.no_batch, progress=progress)
    try:
        if args.check:
            state = _CheckState()
            ok = all([_check_file(cf, args, algo, algos, hasher, out, state)
                      for cf in operands])
        else:
            ok = _sum(operands, args, algo, hasher, out)
    except BaseException:
        hasher.close(wait=False)
        if progress is not None:
            progress.close()
        raise
    hasher.close()
    if progress is not None:
        progress.close()
    out.out.flush()
    return 0 if ok else 1


def _sum(operands, args, algo, hasher, out):
    ok = True
    delim = b"\0" if args.zero else b"\n"
    marker = b" *" if args.binary else b"  "
    tag = args.tag
    as_json = args.json
    progress = hasher.progress

    def items():
        for item in expand_operands(operands, args.recursive):
            item.algo = algo
            yield item

    for item in hasher.run(items()):
        if progress is not None:
            progress.files += 1
        if item.error is not None:
            ok = False
            out.file_error(item.name, item.error)
            if as_json:
                out.line(_json_line(item, algo))
            continue
        hexd = binascii.hexlify(item.digest)
        if as_json:
            out.line(_json_line(item, algo, hexd))
            continue
        name = item.name
        escaped = delim == b"\n" and _needs_escape(name)
        if escaped:
            name = escape_name(name)
        if tag:
            line = algo.tag + b" (" + name + b") = " + hexd + delim
        else:
            line = hexd + marker + name + delim
        out.line(b"\\" + line if escaped else line)
    return ok


def _json_line(item, algo, hexd=None):
    import json
    name = item.name
    try:
        path = name.decode("utf-8")
        extra = None
    except UnicodeDecodeError:
        path = name.decode("utf-8", "surrogateescape")
        extra = binascii.b2a_base64(name, newline=False).decode()
    obj = {"path": path}
    if extra is not None:
        obj["path_b64"] = extra
    obj["algorithm"] = algo.name
    obj["bits"] = algo.bits
    if hexd is not None:
        obj["hex"] = hexd.decode()
        obj["size"] = item.size
    else:
        exc = item.error
        obj["error"] = exc.strerror or str(exc)
        obj["errno"] = exc.errno
    return json.dumps(obj, ensure_ascii=extra is not None).encode() + b"\n"


# --- --check --------------------------------------------------------------------------------

class _CheckState:
    bsd_reversed = -1           # coreutils keeps this for the whole run, across check files


def parse_check_line(line, default, algos, state, from_stdin):
    """(algo, hex digest, file name) for one checksum line (newline and CR already removed),
    or None if it is improperly formatted: coreutils' split_3/bsd_split_3 rules, with the
    algorithm taken from the BSD tag when there is one."""
    n = len(line)
    i = 0
    while i < n and line[i] in b" \t":
        i += 1
    escaped = line[i:i + 1] == b"\\"
    if escaped:
        i += 1
    m = _TAG_RE.match(line, i)
    if m is not None:
        return _parse_tagged(line, m, escaped, algos, from_stdin)
    algo = default
    variable = algo.name in _VARIABLE_TAGS
    min_len = 3 if variable else algo.size * 2 + 2
    if n - i < min_len + (line[i:i + 1] == b"\\"):
        return None
    if variable:                            # length from the digest, as b2sum does
        j = i
        while j < n and line[j] in _HEX:
            j += 1
        hex_len = j - i
        limit = _BLAKE2_MAX_BITS.get(algo.name, SHAKE_MAX_BITS) // 4
        if hex_len < 2 or hex_len % 2 or hex_len > limit:
            return None
        algo = algos.get(algo.name, hex_len * 4)
    j = i
    while j < n and line[j] not in b" \t":
        j += 1
    if j == n:
        return None
    digest = line[i:j]
    if len(digest) != algo.size * 2 or not _HEX.issuperset(digest):
        return None
    i = j + 1
    if n - i == 1 or line[i:i + 1] not in (b" ", b"*"):
        if state.bsd_reversed == 0:         # no mixing "HASH NAME" with "HASH  NAME"
            return None
        state.bsd_reversed = 1
    elif state.bsd_reversed != 1:
        state.bsd_reversed = 0
        i += 1
    name = line[i:]
    if escaped:
        name = unescape_name(name)
        if name is None:
            return None
    else:
        name = name.split(b"\0", 1)[0]
    if from_stdin and name == b"-":
        return None
    return algo, digest, name


def _parse_tagged(line, m, escaped, algos, from_stdin):
    algo = algos.from_tag(m.group(1), m.group(2))
    if algo is None:
        return None
    i = m.end()
    if line[i:i + 1] == b" ":
        i += 1
    if line[i:i + 1] != b"(":
        return None
    rest = line[i + 1:]
    j = rest.rfind(b")")
    if j < 0:
        return None
    name = rest[:j]
    if escaped:
        name = unescape_name(name)
        if name is None:
            return None
    else:
        name = name.split(b"\0", 1)[0]
    k = j + 1
    while rest[k:k + 1] in (b" ", b"\t"):
        k += 1
    if rest[k:k + 1] != b"=":
        return None
    k += 1
    while rest[k:k + 1] in (b" ", b"\t"):
        k += 1
    digest = rest[k:]
    if isinstance(algo, str):               # SHAKE without -BITS: the digest says
        if len(digest) < 2 or len(digest) % 2 or len(digest) * 4 > SHAKE_MAX_BITS:
            return None
        algo = algos.get(algo, len(digest) * 4)
    if len(digest) != algo.size * 2 or not _HEX.issuperset(digest):
        return None
    if from_stdin and name == b"-":
        return None
    return algo, digest, name


def _read_lines(fd, errors):
    """The lines of a file descriptor, without their newlines; a read error is appended to
    ``errors`` and ends the lines."""
    rest = b""
    while True:
        try:
            chunk = os.read(fd, 1 << 16)
        except OSError as exc:
            errors.append(exc)
            break
        if not chunk:
            break
        lines = (rest + chunk).split(b"\n")
        rest = lines.pop()
        yield from lines
    if rest:
        yield rest


def _check_file(checkfile, args, default, algos, hasher, out, state):
    """Verify one list of checksums; coreutils' digest_check, messages and all."""
    from_stdin = checkfile == b"-"
    label = b"standard input" if from_stdin else checkfile
    if from_stdin:
        fd = 0
    else:
        try:
            fd = os.open(checkfile, os.O_RDONLY | os.O_CLOEXEC)
        except OSError as exc:
            out.file_error(checkfile, exc)
            return False
    status_only = args.verbosity == "status"
    warn = args.verbosity == "warn"
    quiet = args.verbosity == "quiet"
    read_errors = []
    counts = {"bad": 0, "unread": 0, "mismatch": 0, "lines": 0, "matched": 0}
    tag_name = _VARIABLE_TAGS.get(default.name) or _FIXED_TAGS[default.name]

    def items():
        for number, line in enumerate(_read_lines(fd, read_errors), 1):
            if line[:1] == b"#":
                continue
            if line[-1:] == b"\r":
                line = line[:-1]
            if not line:
                continue
            parsed = parse_check_line(line, default, algos, state, from_stdin)
            if parsed is None:
                yield Item(NOTE, b"", error=number)
                continue
            algo, digest, name = parsed
            kind = STDIN if name == b"-" else FILE
            yield Item(kind, name, name, algo=algo, expected=digest.lower())

    progress = hasher.progress
    try:
        for item in hasher.run(items()):
            if item.kind == NOTE:
                counts["bad"] += 1
                if warn:
                    out.error(quotef(label) + b": %d: improperly formatted %s checksum line"
                              % (item.error, tag_name.encode()))
                continue
            counts["lines"] += 1
            if progress is not None:
                progress.files += 1
            name = item.name
            shown = name
            if not status_only and b"\n" in name:   # 9.1: escapes only names with a newline
                shown = b"\\" + escape_name(name)
            if item.error is not None:
                exc = item.error
                if args.ignore_missing and exc.errno == errno.ENOENT:
                    continue
                out.file_error(name, exc)
                counts["unread"] += 1
                if not status_only:
                    out.line(shown + b": FAILED open or read\n")
                continue
            match = binascii.hexlify(item.digest) == item.expected
            if match:
                counts["matched"] += 1
            else:
                counts["mismatch"] += 1
            if not status_only:
                if not match:
                    out.line(shown + b": FAILED\n")
                elif not quiet:
                    out.line(shown + b": OK\n")
    finally:
        if not from_stdin:
            os.close(fd)
    if read_errors:
        out.error(quotef(label) + b": read error")
        return False
    if not counts["lines"]:
        out.error(quotef(label) + b": no properly formatted checksum lines found")
    elif not status_only:
        bad, unread, mismatch = counts["bad"], counts["unread"], counts["mismatch"]
        if bad:
            out.error(f"WARNING: {bad} line{' is' if bad == 1 else 's are'} "
                      "improperly formatted")
        if unread:
            out.error(f"WARNING: {unread} listed file{'' if unread == 1 else 's'} "
                      "could not be read")
        if mismatch:
            out.error(f"WARNING: {mismatch} computed checksum{'' if mismatch == 1 else 's'} "
                      "did NOT match")
        if args.ignore_missing and not counts["matched"]:
            out.error(quotef(label) + b": no file was verified")
    return (counts["lines"] > 0 and counts["matched"] > 0 and not counts["mismatch"]
            and not counts["unread"] and not (args.strict and counts["bad"]))
