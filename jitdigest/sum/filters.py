"""What a walk keeps (``--exclude``/``--include`` globs, ``--min-size``/``--max-size``,
``--one-file-system``, ``-L``/``-P``) and what it tells ``--verbose`` users it skipped.

Globs follow rsync's reading: a pattern without '/' matches a file's or directory's name at any
depth; with a '/' inside it matches the path relative to the operand ('/' at the start only
anchors, as it does there); a '/' at the end matches directories only. '*' and '?' never match
'/', '**' does; '[...]' is a class ('!' or '^' first negates); '\\' quotes the next character.
An excluded directory is not entered; --include keeps only files matching one of its globs
(directories are still entered); --exclude wins over --include."""
import os
import re

from .errors import UsageError
from .quote import quote, quotef

_SIZE_RE = re.compile(r"([0-9]+)(?:([KMGTPE])(iB|B)?)?", re.ASCII)
_POWERS = "KMGTPE"


def parse_size(text, option):
    """Bytes for ``--min-size``/``--max-size``: digits, optionally K, M, G, T, P or E
    (powers of 1024; KiB too), or KB, MB ... (powers of 1000)."""
    m = _SIZE_RE.fullmatch(text.strip())
    if m is None:
        raise UsageError(f"invalid size {quote(text)} for {quote(option)}")
    value = int(m.group(1))
    if m.group(2):
        base = 1000 if m.group(3) == "B" else 1024
        value *= base ** (_POWERS.index(m.group(2)) + 1)
    return value


class Glob:
    """One pattern: matched on the name or the relative path, files or directories only."""

    def __init__(self, pattern):
        raw = os.fsencode(pattern)
        self.dirs_only = raw.endswith(b"/") and len(raw) > 1
        raw = raw.rstrip(b"/") if self.dirs_only else raw
        self.on_path = b"/" in raw or b"**" in raw
        self.regex = re.compile(_translate(raw.lstrip(b"/")), re.DOTALL)

    def matches(self, name, rel, is_dir):
        if self.dirs_only and not is_dir:
            return False
        return self.regex.fullmatch(rel if self.on_path else name) is not None


def _translate(pat):
    """A bytes regular expression for one glob (see the module's docstring)."""
    out = []
    i, n = 0, len(pat)
    while i < n:
        c = pat[i:i + 1]
        i += 1
        if c == b"*":
            if pat[i:i + 1] == b"*":
                i += 1
                if pat[i:i + 1] == b"/":            # "**/": any leading directories, or none
                    i += 1
                    out.append(b"(?:.*/)?")
                else:
                    out.append(b".*")
            else:
                out.append(b"[^/]*")
        elif c == b"?":
            out.append(b"[^/]")
        elif c == b"\\" and i < n:
            out.append(re.escape(pat[i:i + 1]))
            i += 1
        elif c == b"[":
            j = i
            if pat[j:j + 1] in (b"!", b"^"):
                j += 1
            if pat[j:j + 1] == b"]":
                j += 1
            j = pat.find(b"]", j)
            if j < 0:
                out.append(b"\\[")
                continue
            body = pat[i:j]
            i = j + 1
            negate = body[:1] in (b"!", b"^")
            if negate:
                body = body[1:]
            body = body.replace(b"\\", b"\\\\").replace(b"^", b"\\^").replace(b"[", b"\\[")
            out.append(b"[^/" + body + b"]" if negate else b"[" + body + b"]")
        else:
            out.append(re.escape(c))
    return b"".join(out)


class Rules:
    """The walk's choices for one run. ``note(message)`` writes to stderr (for --verbose
    notes and -L's loop warnings)."""

    def __init__(self, args, note):
        self.excludes = [Glob(p) for p in args.exclude or ()]
        self.includes = [Glob(p) for p in args.include or ()]
        self.min_size = None if args.min_size is None else parse_size(args.min_size,
                                                                      "--min-size")
        self.max_size = None if args.max_size is None else parse_size(args.max_size,
                                                                      "--max-size")
        self.one_file_system = args.one_file_system
        self.follow = args.dereference
        self.verbose = args.verbose
        self._note = note
        self.by_name = bool(self.excludes or self.includes)
        self.by_size = self.min_size is not None or self.max_size is not None

    def quiet(self):
        """The same choices, saying nothing (for a second walk that only counts)."""
        other = object.__new__(Rules)
        other.__dict__.update(self.__dict__)
        other.verbose = False
        other._note = lambda message: None
        return other

    def active(self):
        """Whether any filter applies (else the walk keeps every regular file)."""
        return self.by_name or self.by_size

    def skipped(self, path, why):
        """A walk left ``path`` out: named on stderr with --verbose."""
        if self.verbose:
            self._note(quotef(path) + b": skipped: " + why)

    def warn(self, path, why):
        self._note(b"warning: " + quotef(path) + b": " + why)

    def dir_excluded(self, name, rel):
        return any(g.matches(name, rel, True) for g in self.excludes)

    def file_kept(self, name, rel):
        """By the globs alone."""
        if any(g.matches(name, rel, False) for g in self.excludes):
            return False
        return not self.includes or any(g.matches(name, rel, False) for g in self.includes)

    def size_kept(self, size):
        return not ((self.min_size is not None and size < self.min_size)
                    or (self.max_size is not None and size > self.max_size))
