"""``jitdigest sum --audit MANIFEST``: a tree compared with a list of checksums, file by file
(moved: a new path holding the digest of a missing one), then a summary line of counts. Names
are escaped as in checksum lines, always, so that every line starts with its category:

    MATCHED: NAME
    CHANGED: NAME
    NEW: NAME
    MOVED: OLD -> NEW
    MISSING: NAME
    TOTAL: 3 matched, 1 changed, 2 new, 1 moved, 1 missing, 0 unreadable

Lines for the tree come in its order, then MISSING in the manifest's order, then TOTAL. Names
are compared normalised (``./a//b`` is ``a/b``); unreadable files go to stderr."""
import binascii
import errno
import os

from .check import CheckState, _read_lines, parse_check_line
from .quote import escape_name, quotef
from .walk import FILE

CATEGORIES = ("matched", "changed", "new", "moved", "missing", "unreadable")


class Entry:
    """One manifest line: its name as written, algorithm and digest (raw bytes)."""

    __slots__ = ("name", "algo", "digest", "seen")

    def __init__(self, name, algo, digest):
        self.name = name
        self.algo = algo
        self.digest = digest
        self.seen = False               # its path is in the tree


def read_manifest(path, default, out):
    """{normalised name: Entry} in manifest order, or None if it cannot be read (reported).
    Improperly formatted lines are counted in one warning; a name listed twice keeps its
    first line."""
    from_stdin = path == b"-"
    label = b"standard input" if from_stdin else path
    try:
        fd = 0 if from_stdin else os.open(path, os.O_RDONLY | os.O_CLOEXEC)
    except OSError as exc:
        out.file_error(path, exc)
        return None
    entries = {}
    bad = 0
    errors = []
    state = CheckState()
    try:
        for line in _read_lines(fd, errors):
            if line[:1] == b"#":
                continue
            if line[-1:] == b"\r":
                line = line[:-1]
            if not line:
                continue
            parsed = parse_check_line(line, default, state, False)
            if parsed is None:
                bad += 1
                continue
            algo, hexd, name = parsed
            entries.setdefault(_norm(name), Entry(name, algo, binascii.unhexlify(hexd)))
    finally:
        if not from_stdin:
            os.close(fd)
    if errors:
        out.error(quotef(label) + b": read error")
        return None
    if bad:
        out.error(f"WARNING: {bad} line{' is' if bad == 1 else 's are'} improperly formatted")
    if not entries:
        out.error(quotef(label) + b": no properly formatted checksum lines found")
        return None
    return entries


def _norm(name):
    return os.path.normpath(name)


def _styled(old, new):
    """A manifest's name written as the tree's names are (one style in a MOVED line): with
    "./" in front when the tree's have it, without when they don't."""
    if old.startswith(b"/") or new.startswith(b"/"):
        return old
    old = _norm(old)
    return b"./" + old if new.startswith(b"./") and not old.startswith(b"../") else old


def _show(name):
    return escape_name(name)


def audit(manifest, inputs, args, default, hashed, out):
    """Compare the Items ``inputs`` (the tree) with the manifest and report; True if every
    file matched. ``hashed(items)`` hashes Items (with --cache in front when asked)."""
    entries = read_manifest(manifest, default, out)
    if entries is None:
        return False
    # files not in the manifest are hashed with -a, or (with -a auto) the manifest's first
    fallback = default or next(iter(entries.values())).algo
    counts = dict.fromkeys(CATEGORIES, 0)
    results = []                        # (category, name, tree digest key) in tree order

    def items():
        for item in inputs:
            if item.kind == FILE:
                entry = entries.get(_norm(item.name))
                item.algo = entry.algo if entry is not None else fallback
            yield item

    for item in hashed(items()):
        if item.error is not None:
            entry = entries.get(_norm(item.name))
            if entry is not None and item.error.errno == errno.ENOENT:
                continue                # a listed file operand that is gone: MISSING
            out.file_error(item.name, item.error)
            counts["unreadable"] += 1
            entry = entries.get(_norm(item.name))
            if entry is not None:
                entry.seen = True       # there, but unreadable: not missing
            continue
        entry = entries.get(_norm(item.name))
        if entry is None:
            results.append(["new", item.name, _digest_key(item.algo, item.digest)])
            continue
        entry.seen = True
        same = entry.digest == item.digest
        results.append(["matched" if same else "changed", item.name, None])
    # a new file holding the digest of a missing one was moved (pairs in order)
    missing = {}
    for entry in entries.values():
        if not entry.seen:
            missing.setdefault(_digest_key(entry.algo, entry.digest), []).append(entry)
    for result in results:
        if result[0] == "new":
            candidates = missing.get(result[2])
            if candidates:
                result[0] = "moved"
                result[2] = candidates.pop(0)
                result[2].seen = True
    for category, name, extra in results:
        counts[category] += 1
        if category == "moved":
            old = _styled(extra.name, name)
            out.line(b"MOVED: " + _show(old) + b" -> " + _show(name) + b"\n")
        else:
            out.line(category.upper().encode() + b": " + _show(name) + b"\n")
    for entry in entries.values():
        if not entry.seen:
            counts["missing"] += 1
            out.line(b"MISSING: " + _show(entry.name) + b"\n")
    out.line(b"TOTAL: " + ", ".join(f"{counts[c]} {c}" for c in CATEGORIES).encode() + b"\n")
    return counts["matched"] == sum(counts.values())


def _digest_key(algo, digest):
    return algo.name, algo.bits, bytes(digest)

