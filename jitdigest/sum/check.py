"""``jitdigest sum --check``: checksum lines parsed by coreutils' rules (plain or BSD-tagged,
escaped names), the files they list hashed and verified, with coreutils' messages."""
import binascii
import errno
import functools
import os
import re

from . import algos
from .quote import escape_name, quotef, unescape_name
from .walk import FILE, NOTE, STDIN, Item

_HEX = frozenset(b"0123456789abcdefABCDEF")
READ_SIZE = 1 << 18                         # bytes per read of a checksum file
# Scans of a line as C loops (a Python loop per byte was most of the time on long lines).
_BLANKS = re.compile(rb"[ \t]*")            # what coreutils skips before a line's content
_HEX_RUN = re.compile(rb"[0-9a-fA-F]*")
_WORD = re.compile(rb"[^ \t]*")             # the digest field: up to a blank
# No BSD tag is all hex digits, so a line starting with a digest never starts with a tag.
assert not any(_HEX.issuperset(base) for base in algos.TAG_BASES)


@functools.cache
def _plain_line(hex_len):
    """The usual untagged line's start: the digest, a blank, the ' ' or '*' marker."""
    return re.compile(rb"([0-9a-fA-F]{%d})[ \t][ *]" % hex_len)


class CheckState:
    """What one run remembers across its checksum files (coreutils' bsd_reversed): whether
    untagged lines are BSD's reversed "HASH NAME", one space (1), or "HASH  NAME" (0); -1
    until the first such line. A run may not mix the two. ``stdin_listed``: a line named '-'
    (standard input is read)."""
    bsd_reversed = -1
    stdin_listed = False


def parse_check_line(line, default, state, from_stdin):
    """(algo, hex digest, file name) for one checksum line (newline and CR already removed),
    or None if it is improperly formatted: coreutils' split_3/bsd_split_3 rules. ``default``
    is the Algo of -a: untagged lines use it, tagged ones must name it (BLAKE2 and SHAKE at
    any length, as b2sum); None (-a auto) takes tagged lines of any algorithm, no others."""
    family = default.__class__ is algos.Family
    if default is not None and state.bsd_reversed != 1 and not default.has_length \
            and not family:
        m = _plain_line(default.size * 2).match(line)
        if m is not None and len(line) > m.end():
            # "HASH  NAME" or "HASH *NAME": what the general rules below conclude, in one step
            state.bsd_reversed = 0
            name = line[m.end():].split(b"\0", 1)[0]
            if from_stdin and name == b"-":
                return None
            return default, m.group(1), name
    n = len(line)
    i = _BLANKS.match(line).end()
    escaped = line[i:i + 1] == b"\\"
    if escaped:
        i += 1
    m = algos.TAG_RE.match(line, i)
    if m is not None:
        parsed = _parse_tagged(line, m, escaped, from_stdin)
        # A line of another algorithm is improperly formatted, as in sha256sum and
        # cksum -a X; only -a auto (default None) checks each with its own.
        if parsed is None or default is not None and parsed[0].name not in (
                default.names if family else (default.name,)):
            return None
        return parsed
    if default is None:                     # -a auto: tagged lines only, as cksum -c
        return None
    algo = default
    if family:                              # -a sha3 -c: the length from the digest's
        algo = default.by_hex_length.get(_HEX_RUN.match(line, i).end() - i)
        if algo is None:
            return None
    variable = algo.has_length
    min_len = 3 if variable else algo.size * 2 + 2
    if n - i < min_len + (line[i:i + 1] == b"\\"):
        return None
    if variable:                            # length from the digest, as b2sum does
        hex_len = _HEX_RUN.match(line, i).end() - i
        if hex_len < 2 or hex_len % 2 or hex_len > algo.max_bits // 4:
            return None
        algo = algos.get(algo.name, hex_len * 4)
    j = _WORD.match(line, i).end()
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
    name = _name_field(name, escaped)
    if name is None:
        return None
    if from_stdin and name == b"-":
        return None
    return algo, digest, name


def _name_field(name, escaped):
    """A line's file name as bytes: unescaped if the line was escaped (None if that fails),
    else up to the first NUL, as coreutils reads it."""
    if escaped:
        return unescape_name(name)
    return name.split(b"\0", 1)[0]


def _parse_tagged(line, m, escaped, from_stdin):
    """parse_check_line for a line that starts with a BSD tag: TAG (NAME) = HEX."""
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
    name = _name_field(name, escaped)
    if name is None:
        return None
    k = _BLANKS.match(rest, j + 1).end()
    if rest[k:k + 1] != b"=":
        return None
    k = _BLANKS.match(rest, k + 1).end()
    digest = rest[k:].split(b"\0", 1)[0]     # coreutils reads the digest as a C string
    algo = algos.from_tag(m.group(1), m.group(2), len(digest))
    if algo is None or len(digest) != algo.size * 2 or not _HEX.issuperset(digest):
        return None
    if from_stdin and name == b"-":
        return None
    return algo, digest, name


def _read_lines(fd, errors):
    """The lines of a file descriptor, without their newlines; a read error is appended to
    ``errors`` and ends the lines. Linear in the input however long a line is: the pieces of
    an unfinished line are joined once, when its end arrives."""
    rest = []                               # pieces of the line not finished yet
    while True:
        try:
            chunk = os.read(fd, READ_SIZE)
        except OSError as exc:
            errors.append(exc)
            break
        if not chunk:
            break
        if b"\n" not in chunk:
            rest.append(chunk)
            continue
        lines = chunk.split(b"\n")
        if rest:
            rest.append(lines[0])
            lines[0] = b"".join(rest)
        last = lines.pop()
        rest = [last] if last else []
        yield from lines
    if rest:
        yield b"".join(rest)


def check_file(checkfile, args, default, hasher, out, state):
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

    def items():
        for number, line in enumerate(_read_lines(fd, read_errors), 1):
            if line[:1] == b"#":
                continue
            if line[-1:] == b"\r":
                line = line[:-1]
            if not line:
                continue
            parsed = parse_check_line(line, default, state, from_stdin)
            if parsed is None:
                yield Item(NOTE, b"", error=number)
                continue
            algo, digest, name = parsed
            kind = STDIN if name == b"-" else FILE
            if kind == STDIN:
                state.stdin_listed = True
            yield Item(kind, name, name, algo=algo, expected=digest.lower())

    progress = hasher.progress
    try:
        for item in hasher.run(items()):
            if item.kind == NOTE:
                counts["bad"] += 1
                if warn:
                    kind = b"" if default is None else default.tag_name.encode() + b" "
                    out.error(quotef(label) + b": %d: improperly formatted %schecksum line"
                              % (item.error, kind))
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
