"""``jitdigest sum`` with the row whose ``sum_format`` is b3sum's (``algos.B3SUM``): b3sum
1.2's output, options and ``--check`` byte for byte.

b3sum differs from coreutils' tools in ways scripts see, so that row alone follows it, not
them: -l counts BYTES; names are shown as UTF-8 with each invalid sequence replaced by U+FFFD
(Rust's to_string_lossy); only backslash and newline are escaped (a CR is not); errors read
"NAME: STRERROR (os error N)"; --check takes only "HASH  NAME" lines of 64 lowercase hex
digits, says "NAME: FAILED (ERROR)" on stdout for a file it cannot read and explains each bad
line on stderr. --keyed reads the 32-byte key from standard input, --derive-key CONTEXT,
--no-names and --raw are b3sum's. In a list (with sha256, say) its lines follow the coreutils
format of the others; --keyed and --derive-key still apply to them."""
import binascii
import os
import re

from ..base import config as _config
from ..base.stdlib import hmac  # the real one, whatever stands in for it in sys.modules
from . import algos
from .check import _read_lines
from .errors import FatalError, UsageError
from .walk import ERROR, FILE, NOTE, STDIN, Item

KEY_LEN = 32
_HEX_LEN = 2 * algos.B3SUM_OUT_LEN
_PREFIX_LEN = _HEX_LEN + 2                  # the digest and two spaces
_LOWER_HEX = re.compile("[0-9a-f]*")


def _names(args):
    return [n.lower() for n in args.algorithm.split(",")]


NAME = algos.B3SUM
_ALGORITHM = f"--algorithm={NAME}"


def alone(args):
    """Whether -a is this row alone: b3sum's formats and check mode."""
    return _names(args) == [NAME]


def check_options(args):
    """b3sum's option conflicts (after coreutils' ones), as usage errors."""
    names = _names(args)
    only = [o for o, used in (("--keyed", args.keyed),
                              ("--derive-key", args.derive_key is not None),
                              ("--no-names", args.no_names), ("--raw", args.raw),
                              ("--num-threads", args.num_threads is not None),
                              ("--no-mmap", args.no_mmap)) if used]
    if only and NAME not in names:
        raise UsageError(f"the {only[0]} option needs {_ALGORITHM}")
    if args.keyed and args.derive_key is not None:
        raise UsageError("the --keyed option cannot be used with --derive-key")
    if args.keyed and not args.files:
        raise UsageError("the --keyed option needs FILE operands (the key is read from "
                         "standard input)")
    for option, used in (("--no-names", args.no_names), ("--raw", args.raw)):
        if used and names != [NAME]:
            raise UsageError(f"the {option} option needs {_ALGORITHM} alone")
        if used and (args.json or args.audit is not None):
            raise UsageError(f"the {option} option cannot be combined with --json or --audit")
    if args.raw and args.recursive:
        raise UsageError("the --raw option cannot be combined with --recursive")
    if args.derive_key is not None:
        try:
            args.derive_key.encode("utf-8")
        except UnicodeEncodeError:
            raise UsageError("the --derive-key context is not valid UTF-8") from None
    if names != [NAME]:
        return
    if args.tag or args.binary is not None or args.zero:
        raise UsageError("--tag, --binary, --text and --zero are not supported with "
                         f"{_ALGORITHM} (b3sum's format)")
    if args.check:
        used = [o for o, on in (("--keyed", args.keyed),
                                ("--derive-key", args.derive_key is not None),
                                ("--length", args.length is not None),
                                ("--no-names", args.no_names), ("--raw", args.raw)) if on]
        if used:
            raise UsageError(f"the {used[0]} option cannot be used with --check")
        if args.ignore_missing or args.strict or args.verbosity not in (None, "quiet"):
            raise UsageError(f"{_ALGORITHM} --check takes --quiet only (b3sum's check mode)")


def mode(args, jobs):
    """The keyword arguments of ``algos.Keyed`` for this run (key, context, threads for streamed
    files: --num-threads N, 0 meaning all cores, or the configured default; with -j above 1
    such files are hashed one at a time on the calling thread, see ``Hasher._units``); reads
    the key from standard input with --keyed. b3sum's order: the --raw operand count, the
    key, --num-threads."""
    if args.raw and len(args.files) > 1:
        raise FatalError("Only one filename can be provided when using --raw")
    key = read_key(0) if args.keyed else None
    if args.num_threads is not None:
        n = algos.bytes_length(args.num_threads)       # the same unsigned parse as -l
        if n is None:
            raise FatalError("Failed to parse num threads.")
        threads = min(n, os.cpu_count() or 1) or -1     # 0: the objects' AUTO
    else:
        threads = _config.SUM_TREE_THREADS
    return {"key": key, "context": args.derive_key, "threads": threads, "eager": jobs > 1}


def read_key(fd):
    """Exactly KEY_LEN bytes from ``fd``, or FatalError with b3sum's messages."""
    data = b""
    while len(data) <= KEY_LEN:
        try:
            more = os.read(fd, KEY_LEN + 1 - len(data))
        except OSError as exc:
            raise FatalError(error_text(exc).decode()) from None
        if not more:
            break
        data += more
    if len(data) < KEY_LEN:
        raise FatalError(f"expected {KEY_LEN} key bytes from stdin, found {len(data)}")
    if len(data) > KEY_LEN:
        raise FatalError(f"read more than {KEY_LEN} key bytes from stdin")
    return data


def keyed_stdin(items):
    """Items, with standard input refused (its bytes were the key), as b3sum refuses it."""
    for item in items:
        if item.kind == STDIN:
            yield Item(ERROR, item.name, error=OSError(None, "Cannot open `-` in keyed mode"))
        else:
            yield item


def lossy(name):
    """A name as b3sum shows it: UTF-8, each invalid sequence one U+FFFD (as Rust's
    to_string_lossy; Python's "replace" handler splits sequences the same way)."""
    return name.decode("utf-8", "replace").encode("utf-8")


def error_text(exc):
    """An error as Rust's io::Error prints it: "STRERROR (os error N)"."""
    if isinstance(exc, OSError) and exc.errno is not None:
        return f"{exc.strerror or os.strerror(exc.errno)} (os error {exc.errno})".encode()
    text = exc.strerror if isinstance(exc, OSError) and exc.strerror else str(exc)
    return text.encode("utf-8", "surrogateescape")


def write_sums(items, algo, args, hashed, out):
    """Hash ``items`` and write b3sum's lines (or raw bytes); errors on stderr. True if every
    file was read (and -l was a number)."""
    ok = True
    progress = out.progress
    for item in hashed(items):
        if progress is not None:
            progress.files += 1
        if item.error is not None:
            ok = False
            out.error(lossy(item.name) + b": " + error_text(item.error))
            continue
        if not algo.length_ok:
            ok = False
            out.error(lossy(item.name) + b": Failed to parse length.")
            continue
        if args.raw:
            out.line(item.digest)
            continue
        hexd = binascii.hexlify(item.digest)
        if args.no_names:
            out.line(hexd + b"\n")
            continue
        shown = lossy(item.name)
        if b"\\" in shown or b"\n" in shown:
            shown = shown.replace(b"\\", b"\\\\").replace(b"\n", b"\\n")
            out.line(b"\\" + hexd + b"  " + shown + b"\n")
        else:
            out.line(hexd + b"  " + shown + b"\n")
    return ok


# --- --check -----------------------------------------------------------------------------------

class _BadLine(Exception):
    """A checksum line b3sum refuses, with its message."""


class _NotUtf8(Exception):
    """A checksum file that is not UTF-8: b3sum stops there."""


def _unescape(text):
    out = []
    while True:
        i = text.find("\\")
        if i < 0:
            out.append(text)
            return "".join(out)
        if i + 1 >= len(text) or text[i + 1] not in "n\\":
            raise _BadLine("Invalid backslash escape")
        out.append(text[:i])
        out.append("\n" if text[i + 1] == "n" else "\\")
        text = text[i + 2:]


def parse_line(raw):
    """(name as shown, path, digest) of one checksum line (bytes, its newline removed), as
    b3sum 1.2's parse_check_line; _BadLine with its message, _NotUtf8."""
    try:
        line = raw.decode("utf-8")
    except UnicodeDecodeError:
        raise _NotUtf8 from None
    if not line:
        raise _BadLine("Empty line")
    escaped = line[0] == "\\"
    if escaped:
        line = line[1:]
    if len(line.encode("utf-8")) <= _PREFIX_LEN:
        raise _BadLine("Short line")
    if not line[:_PREFIX_LEN].isascii():
        raise _BadLine("Non-ASCII prefix")
    if line[_HEX_LEN:_PREFIX_LEN] != "  ":
        raise _BadLine("Invalid space")
    hexd = line[:_HEX_LEN]
    if _LOWER_HEX.fullmatch(hexd) is None:
        raise _BadLine("Invalid hex")
    shown = line[_PREFIX_LEN:]
    path = _unescape(shown) if escaped else shown
    if "\0" in path:
        raise _BadLine("Null character in path")
    if "\ufffd" in path:
        raise _BadLine("Unicode replacement character in path")
    if escaped:
        shown = "\\" + shown
    return shown.encode("utf-8"), path.encode("utf-8"), bytes.fromhex(hexd)


def check_files(operands, args, algo, hasher, out):
    """b3sum --check over the checksum files in order: True if every line parsed and every
    file matched. A checksum file that cannot be opened or read, or is not UTF-8, ends the
    run there (its error on stderr), as it ends b3sum's."""
    ok = True
    quiet = args.verbosity == "quiet"
    for checkfile in operands:
        fatal = []
        fd = 0
        if checkfile != b"-":
            try:
                fd = os.open(checkfile, os.O_RDONLY | os.O_CLOEXEC)
            except OSError as exc:
                out.error(error_text(exc))
                return False

        def items():
            for raw in _read_lines(fd, fatal):
                try:
                    shown, path, digest = parse_line(raw)
                except _BadLine as exc:
                    yield Item(NOTE, b"", error=str(exc))
                    continue
                except _NotUtf8:
                    fatal.append(None)
                    return
                kind = STDIN if path == b"-" else FILE
                yield Item(kind, shown, path, algo=algo, expected=digest)

        try:
            for item in hasher.run(items()):
                if item.kind == NOTE:
                    ok = False
                    out.error(item.error)
                elif item.error is not None:
                    ok = False
                    out.line(item.name + b": FAILED (" + error_text(item.error) + b")\n")
                elif not hmac.compare_digest(item.digest, item.expected):
                    ok = False
                    out.line(item.name + b": FAILED\n")
                elif not quiet:
                    out.line(item.name + b": OK\n")
        finally:
            if fd:
                os.close(fd)
        if fatal:
            exc = fatal[0]
            out.error(b"stream did not contain valid UTF-8" if exc is None
                      else error_text(exc))
            return False
    return ok
