"""What ``jitdigest sum`` is to hash: the command line's operands as Items, in order ('-' is
standard input; with -r, the regular files under a directory in byte order of their paths, as
the filters of ``filters.Rules`` keep them)."""
import errno
import os
import stat

# Item kinds: a file to hash, standard input, a walk error, a malformed --check line
FILE, STDIN, ERROR, NOTE = range(4)


class Item:
    """One line of output to come: a file (or stdin) to hash, a walk error, or a check note."""

    __slots__ = ("kind", "path", "name", "algo", "expected", "error", "size", "digest",
                 "stat")

    def __init__(self, kind, name, path=None, algo=None, expected=None, error=None):
        self.kind = kind
        self.name = name                # bytes, as shown
        self.path = path                # bytes, as opened
        self.algo = algo
        self.expected = expected        # --check: the listed hex digest (bytes)
        self.error = error              # OSError (FILE/ERROR), the line number (NOTE)
        self.size = 0
        self.digest = None
        self.stat = None                # --cache: os.stat before reading


def _walk(top, rules):
    """Regular files under directory ``top`` in byte order of their full paths (as
    ``find | LC_ALL=C sort``). Symlinks to files are hashed; symlinks to directories are
    followed only with -L (``rules.follow``), a loop then ends in a warning; broken symlinks,
    fifos, sockets and devices are skipped (named with --verbose). A directory seen again
    below itself without -L (a bind mount) is reported, not entered."""
    follow = rules is not None and rules.follow
    try:
        st = os.stat(top)
        ancestors = {(st.st_dev, st.st_ino)}
    except OSError as exc:
        yield Item(ERROR, top, error=exc)
        return
    device = st.st_dev if rules is not None and rules.one_file_system else None
    prefix = len(top) + (not top.endswith(b"/"))
    stack = [(iter(_sorted_entries(top, rules, prefix)), ancestors)]
    while stack:
        entries, ancestors = stack[-1]
        for entry in entries:
            if entry.__class__ is not tuple:        # a listing error
                yield entry
                continue
            _, path, is_dir = entry
            if not is_dir:
                yield Item(FILE, path, path)
                continue
            try:
                st = os.stat(path) if follow else os.lstat(path)
            except OSError as exc:
                yield Item(ERROR, path, error=exc)
                continue
            key = (st.st_dev, st.st_ino)
            if key in ancestors:
                if follow:
                    rules.warn(path, b"file system loop detected; not followed")
                else:
                    yield Item(ERROR, path,
                               error=OSError(errno.ELOOP, "File system loop detected"))
                continue
            if device is not None and st.st_dev != device:
                rules.skipped(path, b"on another file system")
                continue
            stack.append((iter(_sorted_entries(path, rules, prefix)), ancestors | {key}))
            break                                   # into it; this listing goes on after
        else:
            stack.pop()


def _sorted_entries(path, rules, prefix):
    """(sort key, path, is_dir) for the entries of one directory that the walk keeps, sorted:
    the name, with a '/' after directory names, gives the byte order of full paths. A listing
    error is an Item. ``prefix``: the length of the operand and its '/' in each path."""
    try:
        with os.scandir(path) as it:
            entries = list(it)
    except OSError as exc:
        return [Item(ERROR, path, error=exc)]
    keyed = []
    filtered = rules is not None and rules.active()
    for e in entries:
        try:
            if e.is_dir(follow_symlinks=False):
                if filtered and rules.by_name and rules.dir_excluded(e.name, e.path[prefix:]):
                    rules.skipped(e.path, b"excluded")
                    continue
                keyed.append((e.name + b"/", e.path, True))
                continue
            if e.is_file(follow_symlinks=False):
                if filtered and not _kept(e, rules, prefix):
                    continue
                keyed.append((e.name, e.path, False))
                continue
            if not e.is_symlink():
                if rules is not None:
                    rules.skipped(e.path, b"not a regular file")
                continue
            try:
                st = e.stat()
            except OSError:
                if rules is not None:
                    rules.skipped(e.path, b"broken symbolic link")
                continue
            if stat.S_ISDIR(st.st_mode):
                if rules is not None and rules.follow:
                    if rules.by_name and rules.dir_excluded(e.name, e.path[prefix:]):
                        rules.skipped(e.path, b"excluded")
                        continue
                    keyed.append((e.name + b"/", e.path, True))
                elif rules is not None:
                    rules.skipped(e.path, b"symbolic link to a directory (not followed "
                                          b"without -L)")
            elif stat.S_ISREG(st.st_mode):
                if filtered and not _kept(e, rules, prefix):
                    continue
                keyed.append((e.name, e.path, False))
            elif rules is not None:
                rules.skipped(e.path, b"not a regular file")
        except OSError:
            keyed.append((e.name, e.path, False))           # let opening it say what is wrong
    keyed.sort()
    return keyed


def _kept(entry, rules, prefix):
    """Whether a regular file (or a link to one) passes the filters."""
    if rules.by_name and not rules.file_kept(entry.name, entry.path[prefix:]):
        rules.skipped(entry.path, b"excluded")
        return False
    if rules.by_size and not rules.size_kept(entry.stat().st_size):
        rules.skipped(entry.path, b"size out of range")
        return False
    return True


def _operand_kept(op, rules):
    """A file named on the command line or in a list: the filters on its base name and
    size (a file that cannot be looked at is kept: opening it says what is wrong)."""
    name = op.rstrip(b"/").rpartition(b"/")[2]
    if rules.by_name and not rules.file_kept(name, name):
        rules.skipped(op, b"excluded")
        return False
    if rules.by_size:
        try:
            size = os.stat(op).st_size
        except OSError:
            return True
        if not rules.size_kept(size):
            rules.skipped(op, b"size out of range")
            return False
    return True


def expand_operands(operands, recursive, rules=None):
    """The Items for the command line (or a file list): '-' is stdin; with -r, directories
    are walked; an Item among ``operands`` (a bad list entry) is passed on."""
    filtered = rules is not None and rules.active()
    for op in operands:
        if op.__class__ is Item:
            yield op
        elif op == b"-":
            yield Item(STDIN, op)
        elif recursive:
            try:
                is_dir = os.path.isdir(op)
            except (OSError, ValueError):
                is_dir = False
            if is_dir:
                yield from _walk(op, rules)
            elif not filtered or _operand_kept(op, rules):
                yield Item(FILE, op, op)
        elif not filtered or _operand_kept(op, rules):
            yield Item(FILE, op, op)
