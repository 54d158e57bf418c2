"""What ``jitdigest sum`` is to hash: the command line's operands as Items, in order ('-' is
standard input; with -r, the regular files under a directory in byte order of their paths)."""
import errno
import os

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
        for entry in entries:
            if entry.__class__ is not tuple:        # a listing error
                yield entry
                continue
            _, path, is_dir = entry
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
            break                                   # into it; this listing goes on after
        else:
            stack.pop()


def _sorted_entries(path):
    """(sort key, path, is_dir) for the entries of one directory, sorted: the name, with a '/'
    after directory names, gives the byte order of full paths. A listing error is an Item."""
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
    return keyed


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
