"""Manifests in every format ``jitdigest sum`` writes, read back for ``--update`` and
``--match``/``--no-match``: plain lines ("HASH  NAME", "HASH *NAME"; their algorithm is -a's),
BSD-tagged lines (each names its own), b3sum's lines (its row's -a) and --json lines. The
format is the first entry's; names are compared normalised (./a//b is a/b)."""
import binascii
import json
import os

from . import algos
from .check import CheckState, _read_lines, parse_check_line
from .quote import quotef

PLAIN, TAG, JSON, B3SUM = "plain", "tag", "json", "b3sum"


class Entry:
    """One line: the name as written, the Algo, the digest (bytes), the size (--json only)."""

    __slots__ = ("name", "algo", "digest", "size", "seen")

    def __init__(self, name, algo, digest, size=None):
        self.name = name
        self.algo = algo
        self.digest = digest
        self.size = size
        self.seen = False


class Manifest:
    """What one manifest holds: its format, whether plain lines were marked binary ('*'),
    and {normalised name: Entry} in the manifest's order (a name listed twice: its first)."""

    def __init__(self):
        self.format = None
        self.binary = False
        self.entries = {}
        self.bad = 0

    def algorithms(self):
        return list(dict.fromkeys((e.algo.name, e.algo.bits) for e in self.entries.values()))


def norm(name):
    return os.path.normpath(name)


def algo_named(name, bits):
    """The algorithm of a --json object ("algorithm", "bits"), or None if unknown."""
    if name == algos.B3SUM:
        return algos.Keyed(bits // 8)
    try:
        return algos.get(name, bits)
    except (KeyError, ValueError):
        return None


def read(path, out, plain, strict=True, b3=False):
    """The Manifest at ``path`` (bytes), or None if it cannot be read or holds no entries
    (both reported). ``plain``: the Algo of plain lines; ``strict``: lines of other
    algorithms (tagged, --json) count as improperly formatted, else each keeps its own;
    ``b3``: plain lines are b3sum's."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_CLOEXEC)
    except OSError as exc:
        out.file_error(path, exc)
        return None
    manifest = Manifest()
    errors = []
    state = CheckState()
    try:
        for line in _read_lines(fd, errors):
            if line[:1] == b"#" or not line.strip():
                continue
            if line[-1:] == b"\r" and line[:1] != b"{":
                line = line[:-1]
            parsed = _parse(line, plain, strict, state, b3)
            if parsed is _UNREAD:
                continue
            if parsed is None:
                manifest.bad += 1
                continue
            form, entry = parsed
            if manifest.format is None:
                manifest.format = form
                manifest.binary = form == PLAIN and b" *" in line[:entry.algo.size * 2 + 3]
            manifest.entries.setdefault(norm(entry.name), entry)
    finally:
        os.close(fd)
    if errors:
        out.error(quotef(path) + b": read error")
        return None
    bad = manifest.bad
    if bad:
        out.error(quotef(path) + (f": {bad} line{' is' if bad == 1 else 's are'} "
                                  "improperly formatted").encode())
    if not manifest.entries:
        out.error(quotef(path) + b": no properly formatted checksum lines found")
        return None
    return manifest


def _parse(line, plain, strict, state, b3):
    if line[:1] == b"{":
        return _parse_json(line, plain if strict else None)
    if b3:
        from .b3sum import parse_line
        try:
            _, path, digest = parse_line(line)
        except Exception:                           # b3sum's bad lines
            return None
        return B3SUM, Entry(path, plain, digest)
    parsed = parse_check_line(line, None, state, False)        # a tagged line?
    if parsed is not None:
        algo, hexd, name = parsed
        if strict and not _same(algo, plain):
            return None
        return TAG, Entry(name, algo, binascii.unhexlify(hexd))
    parsed = parse_check_line(line, plain, state, False)
    if parsed is None:
        return None
    algo, hexd, name = parsed
    return PLAIN, Entry(name, algo, binascii.unhexlify(hexd))


def _same(algo, other):
    return (algo.name, algo.bits) == (other.name, other.bits)


_UNREAD = object()      # a --json line for a file that could not be read: no digest to keep


def _parse_json(line, default):
    try:
        obj = json.loads(line)
        if isinstance(obj, dict) and "error" in obj and "hex" not in obj:
            return _UNREAD
        if "path_b64" in obj:
            name = binascii.a2b_base64(obj["path_b64"])
        else:
            name = obj["path"].encode("utf-8", "surrogateescape")
        hexd = obj["hex"]
        algo = algo_named(obj["algorithm"], int(obj["bits"]))
        digest = bytes.fromhex(hexd)
        size = obj.get("size")
    except (ValueError, KeyError, TypeError, binascii.Error):
        return None
    if algo is None or len(digest) != algo.size:
        return None
    if default is not None and not _same(algo, default):
        return None
    return JSON, Entry(name, algo, digest, size if isinstance(size, int) else None)
