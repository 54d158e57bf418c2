"""File names as coreutils shows them: quoted in error messages (gnulib's quotearg, shell
style, locale-aware) and escaped in checksum lines (backslash, newline, CR), and back again."""
import os
import re


def _utf8_locale():
    """Whether the locale is UTF-8, from LC_ALL, LC_CTYPE or LANG as the C library chooses."""
    for var in ("LC_ALL", "LC_CTYPE", "LANG"):
        value = os.environ.get(var)
        if value:
            return "utf-8" in value.lower() or "utf8" in value.lower()
    return False


_UTF8 = _utf8_locale()
_SAFE = frozenset(b"%+,-./0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZ]_abcdefghijklmnopqrstuvwxyz@")
_C_COMPAT = _SAFE | frozenset(b": '")    # also fine inside "...": allows the "it's" form
_C_ESCAPES = {7: b"a", 8: b"b", 9: b"t", 10: b"n", 11: b"v", 12: b"f", 13: b"r"}


# Runs of printable ASCII other than "'" are one piece each: long names cost a few C-level
# scans, not a Python step per byte. (ASCII bytes never occur inside a UTF-8 sequence.)
_RUN = re.compile(rb"[\x20-\x26\x28-\x7e]+")
_BARE_OK = bytes(sorted(_SAFE | frozenset(b"{}#~")))
_C_COMPAT_BYTES = bytes(sorted(_C_COMPAT))


def _chars(data):
    """(bytes, printable) per character of ``data`` (no plain run in it), split as the
    locale's mbrtoc32 would split them."""
    if not _UTF8:
        return [(bytes((c,)), 32 <= c < 127) for c in data]
    out = []
    for ch in data.decode("utf-8", "surrogateescape"):
        o = ord(ch)
        if 0xDC80 <= o <= 0xDCFF:
            out.append((bytes((o - 0xDC00,)), False))
        elif o < 128:
            out.append((bytes((o,)), 32 <= o < 127))
        else:
            out.append((ch.encode(), ch.isprintable()))
    return out


def _pieces(name):
    """Yield (bytes, printable, run) for ``name`` in order: each run of printable ASCII but
    "'" as one piece (run True), every other character alone."""
    pos = 0
    for m in _RUN.finditer(name):
        if m.start() > pos:
            for p, ok in _chars(name[pos:m.start()]):
                yield p, ok, False
        yield m.group(), True, True
        pos = m.end()
    if pos < len(name):
        for p, ok in _chars(name[pos:]):
            yield p, ok, False


def _compat_run(run, first, name):
    """Whether a plain run also reads the same inside "..." (coreutils' "it's" form)."""
    rest = run.translate(None, _C_COMPAT_BYTES)
    if not rest:
        return True
    if first and run[:1] in (b"#", b"~") and not run[1:].translate(None, _C_COMPAT_BYTES):
        return True
    return len(name) == 1 and name in (b"{", b"}")


def quotef(name):
    """A file name for an error message, quoted as coreutils' ``quotef`` does (gnulib quotearg,
    shell-escape style, ':' quoted too): bare when harmless, else '...' with $'\\n' escapes."""
    if name and name[:1] not in (b"#", b"~") and name not in (b"{", b"}"):
        if not name.translate(None, _BARE_OK):
            return name                     # the common case, in one scan
    if name and name[:1] not in (b"#", b"~") and name not in (b"{", b"}"):
        for piece, printable, run in _pieces(name):
            if run:
                if piece.translate(None, _BARE_OK):
                    break
            elif piece[0] < 128 or not printable:
                break
        else:
            return name
    out = bytearray(b"'")
    pending = False            # inside a $'...' run
    compat = True              # every character also fine inside "..."
    quote_seen = False
    for index, (piece, printable, run) in enumerate(_pieces(name)):
        c = piece[0]
        if run:
            if pending:
                out += b"''"
                pending = False
            out += piece
            compat = compat and _compat_run(piece, index == 0, name)
            continue
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


_OPEN, _CLOSE = ("\u2018", "\u2019") if _UTF8 else ("'", "'")


def quote(text):
    """A value in a message, as coreutils' ``quote`` prints it (gnulib's locale quoting style):
    'x', or curly quotes in UTF-8; control characters as \\t \\n ..., a backslash doubled, the
    closing quote backslashed, other bytes the locale cannot print as \\ooo."""
    data = text if isinstance(text, bytes) else str(text).encode("utf-8", "surrogateescape")
    close = _CLOSE.encode()
    out = bytearray()
    for piece, printable, run in _pieces(data):
        c = piece[0]
        if run:
            out += piece.replace(b"\\", b"\\\\")
        elif len(piece) == 1 and c in _C_ESCAPES:
            out += b"\\" + _C_ESCAPES[c]
        elif piece == b"\\" or piece == close:
            out += b"\\" + piece
        elif printable:
            out += piece
        else:
            for b in piece:
                out += b"\\%03o" % b
    return _OPEN + out.decode("utf-8") + _CLOSE


def needs_escape(name):
    """Whether a name is written escaped (and its line marked with a leading backslash)."""
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
