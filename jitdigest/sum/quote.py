"""File names as coreutils shows them: quoted in error messages (gnulib's quotearg, shell
style, locale-aware) and escaped in checksum lines (backslash, newline, CR), and back again."""
import os


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


_OPEN, _CLOSE = ("\u2018", "\u2019") if _UTF8 else ("'", "'")


def quote(text):
    """A value in a message, as coreutils' ``quote`` prints it (gnulib's locale quoting style):
    'x', or curly quotes in UTF-8; control characters as \\t \\n ..., a backslash doubled, the
    closing quote backslashed, other bytes the locale cannot print as \\ooo."""
    data = text if isinstance(text, bytes) else str(text).encode("utf-8", "surrogateescape")
    close = _CLOSE.encode()
    out = bytearray()
    for piece, printable in _pieces(data):
        c = piece[0]
        if len(piece) == 1 and c in _C_ESCAPES:
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
