"""What ``jitdigest sum`` writes: checksum lines (plain, --tag, -z, --json) on stdout and
messages on stderr, kept in order with each other and with the progress line."""
import binascii
import errno
import io
import os
import sys

from .errors import FatalError
from .quote import escape_name, needs_escape, quotef


class _ClosedStdout:
    """Standard output when the process started with it closed (``>&-``; Python then sets
    sys.stdout to None): nothing is written, and ``finish`` fails as coreutils' close_stdout
    does, only if something was to be written."""

    pending = False

    def write(self, data):
        self.pending = self.pending or bool(data)

    def flush(self):
        pass


class Output:
    """stdout (bytes) and stderr messages, kept in order with each other and the progress line."""

    def __init__(self, progress=None):
        if sys.stdout is None:
            self.out = _ClosedStdout()
            self.tty = False
        else:
            self.out = sys.stdout.buffer
            self.tty = sys.stdout.isatty()
            if isinstance(self.out, io.RawIOBase) and not self.tty:
                # python -u or PYTHONUNBUFFERED (set in many container images): no buffer
                # under sys.stdout, so every line would be a write(2); one of our own, as
                # coreutils' stdio has (``finish`` and ``error`` flush it)
                self.out = io.BufferedWriter(io.FileIO(self.out.fileno(), "wb", closefd=False))
        self.progress = progress

    def finish(self):
        """Flush standard output at the end of a run; FatalError if it was closed and there
        was something to write ("write error: Bad file descriptor", as sha256sum >&-)."""
        self.out.flush()
        if isinstance(self.out, _ClosedStdout) and self.out.pending:
            raise FatalError("write error: " + os.strerror(errno.EBADF))

    def flush_lines(self):
        """Write out the lines kept so far, for a run that stops early (Ctrl-C, an error): the
        buffer of our own above (python -u) is one that nothing else flushes before the process
        ends by SIGINT. A line shorter than the buffer goes into it whole, and an interrupted
        write leaves what it did not write there, so such lines come out complete (a longer
        one, such as a long SHAKE digest's, is written through). Errors are left to
        ``finish``."""
        try:
            self.out.flush()
        except (OSError, ValueError):
            pass

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
        if err is None:                     # started with stderr closed (2>&-): say nothing
            return
        err.flush()
        err.buffer.write(b"jitdigest: " + message + b"\n")
        err.buffer.flush()

    def file_error(self, name, exc):
        message = getattr(exc, "message", None)     # filelist.ListError: worded already
        if message is not None:
            self.error(message)
            return
        self.error(quotef(name) + b": " + (exc.strerror or str(exc)).encode())


def write_sums(inputs, args, algo, hashed, out):
    """Hash the Items ``inputs`` (walk.expand_operands) and write a line for each (plain,
    --tag, -z or --json); errors go to stderr. True if every file was read. ``hashed(items)``
    is the Hasher's run (with --cache in front when asked)."""
    ok = True
    delim = b"\0" if args.zero else b"\n"
    marker = b" *" if args.binary else b"  "
    tag = args.tag
    as_json = args.json
    progress = out.progress
    parts = getattr(algo, "parts", None)        # several algorithms: a line for each

    def items():
        for item in inputs:
            item.algo = algo
            yield item

    for item in hashed(items()):
        if progress is not None:
            progress.files += 1
        if item.error is not None:
            ok = False
            out.file_error(item.name, item.error)
            if as_json:
                out.line(json_line(item, algo))
            continue
        if as_json:
            out.line(json_line(item, algo, item.digest))
            continue
        name = item.name
        escaped = delim == b"\n" and needs_escape(name)
        if escaped:
            name = escape_name(name)
        start = b"\\" if escaped else b""
        if parts is None:
            hexd = binascii.hexlify(item.digest)
            if tag:
                line = start + algo.tag + b" (" + name + b") = " + hexd + delim
            else:
                line = start + hexd + marker + name + delim
        elif tag:
            middle = b" (" + name + b") = "
            line = b"".join([start + part.tag + middle + binascii.hexlify(digest) + delim
                             for part, digest in zip(parts, item.digest)])
        else:
            end = marker + name + delim
            line = b"".join([start + binascii.hexlify(digest) + end for digest in item.digest])
        out.line(line)
    return ok


def json_line(item, algo, digest=None):
    """The --json object of one file: its digest and size, or the error that stopped it. For
    several algorithms "digests" lists, in order, what one algorithm's object holds at its
    top level ("algorithm", "bits" and, when read, "hex")."""
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
    parts = getattr(algo, "parts", None)
    if parts is None:
        _json_digest(obj, algo, digest)
    else:
        digests = [None] * len(parts) if digest is None else digest
        obj["digests"] = [_json_digest({}, part, d) for part, d in zip(parts, digests)]
    if digest is not None:
        obj["size"] = item.size
    else:
        exc = item.error
        obj["error"] = exc.strerror or str(exc)
        obj["errno"] = exc.errno
    return json.dumps(obj, ensure_ascii=extra is not None).encode() + b"\n"


def _json_digest(obj, algo, digest):
    obj["algorithm"] = algo.name
    obj["bits"] = algo.bits
    if digest is not None:
        obj["hex"] = binascii.hexlify(digest).decode()
    return obj
