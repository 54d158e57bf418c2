"""``--files-from FILE`` (one name a line) and ``--files0-from FILE`` (NUL-separated, as find
-print0 writes them; '-' is standard input): the names to hash, read as the run goes, with the
messages coreutils' wc and du give for an unreadable list, an empty name, or '-' listed in a
list read from standard input."""
import os

from .check import READ_SIZE
from .errors import FatalError, UsageError
from .quote import quote, quotef
from .walk import ERROR, Item


class ListError(OSError):
    """A problem with one entry of a list: its whole message, already worded."""

    def __init__(self, message):
        super().__init__(0, message.decode("utf-8", "surrogateescape"))
        self.message = message


def check_options(args):
    """The list options' conflicts with each other and with operands (wc's wording)."""
    lists = [o for o, v in (("--files-from", args.files_from),
                             ("--files0-from", args.files0_from)) if v is not None]
    if len(lists) > 1:
        raise UsageError("--files-from and --files0-from cannot be combined")
    if lists and args.files:
        raise UsageError(f"extra operand {quote(args.files[0])}\n"
                         f"file operands cannot be combined with {lists[0]}")
    if lists and args.check:
        raise UsageError(f"the {lists[0]} option is meaningless when verifying checksums")


def names(path, zero):
    """The names listed in ``path`` (bytes; b"-": standard input), each as bytes, or an ERROR
    Item for a bad entry or a read error; the list is opened here, at once (FatalError)."""
    from_stdin = path == b"-"
    try:
        fd = 0 if from_stdin else os.open(path, os.O_RDONLY | os.O_CLOEXEC)
    except OSError as exc:
        raise FatalError(f"cannot open {quote(os.fsdecode(path))} for reading: "
                         f"{exc.strerror}") from None
    return _names(fd, path, zero, from_stdin)


def _names(fd, path, zero, from_stdin):
    sep = b"\0" if zero else b"\n"
    label = quotef(path)
    rest = b""
    number = 0
    try:
        while True:
            try:
                chunk = os.read(fd, READ_SIZE)
            except OSError as exc:
                yield Item(ERROR, path, error=ListError(
                    label + b": read error: " + exc.strerror.encode()))
                return
            if not chunk:
                break
            pieces = (rest + chunk).split(sep)
            rest = pieces.pop()
            for name in pieces:
                number += 1
                yield _entry(name, label, number, from_stdin)
        if rest:
            number += 1
            yield _entry(rest, label, number, from_stdin)
    finally:
        if not from_stdin:
            os.close(fd)


def _entry(name, label, number, from_stdin):
    if not name:
        return Item(ERROR, name, error=ListError(
            b"%s:%d: invalid zero-length file name" % (label, number)))
    if from_stdin and name == b"-":
        return Item(ERROR, name, error=ListError(
            b"when reading file names from stdin, no file name of '-' allowed"))
    return name
