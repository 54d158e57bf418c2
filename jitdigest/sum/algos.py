"""Which digest ``jitdigest sum`` computes: ``-a``/``-l`` and BSD tags resolved to an Algo (a
constructor, an output length and the tag it prints), all read from the table in _algorithms;
the row that follows b3sum (``sum_format``) to a Keyed (its own objects, in a mode: plain,
keyed or key derivation; -l counts its output in BYTES, as b3sum's does); ``-a sha256,md5,sha1``
to Several, which hashes the same bytes with each."""
import functools
import re

import jitdigest

from .._bigfile import Tee
from ..base import algorithms as _algorithms
from ..base.fork import cached_property
from ..runtime import native as _native, stream as _stream
from .errors import FatalError, UsageError
from .quote import quote

SHAKE_MAX_BITS = 1 << 20        # the longest SHAKE output -l or a checksum line may ask for
DEFAULT = "sha256"              # -a when not given


def _has_length(spec):
    """Whether the output length is chosen: BLAKE2's digest_size, SHAKE's digest(n)."""
    return spec.digest_size == 0 or spec.family.startswith("blake2")


def _max_bits(spec):
    return spec.digest_size * 8 or SHAKE_MAX_BITS


class Algo:
    """One algorithm at one output length: how to hash, how to print its tag."""

    def __init__(self, spec, bits):
        self.name = spec.name
        self.bits = bits
        self.size = bits // 8
        self.xof = spec.digest_size == 0
        self.has_length = _has_length(spec)     # -l applies; a checksum's length tells it
        self.max_bits = _max_bits(spec)
        self.tag_name = spec.bsd_tag            # the tag without "-BITS" (in messages)
        full = bits == spec.digest_size * 8
        # BLAKE2 below its full size and SHAKE (always) say their length in the tag
        self.tag = (spec.bsd_tag if full else f"{spec.bsd_tag}-{bits}").encode()
        # hash_many serves BLAKE2 with its default parameters only
        self.batch_name = spec.name if full or self.xof else None
        self._kwargs = {"digest_size": self.size} if self.has_length and not (
            self.xof or full) else {}
        self._made = None
        self.streams = _stream.streams(spec)    # large files may stream without Numba

    @property
    def _ctor(self):
        # made on first use: jitdigest.new's module imports numpy, which a run that finds
        # every file in its --cache never needs
        if self._made is None:
            self._made = functools.partial(jitdigest.new, self.name, **self._kwargs)
        return self._made

    def new(self, data=b""):
        return self._ctor(data)

    def new_large(self):
        """A hash object for a file too large to read whole: on the entry stored as machine
        code (``jitdigest/runtime/stream.py``: no Numba to import) where one is stored."""
        h = _stream.new(self.name) if self.streams else None
        return self._ctor() if h is None else h

    @property
    def batch_kwargs(self):
        """``hash_many``'s keyword arguments for this output (a SHAKE's length)."""
        return {"length": self.size if self.xof else None}

    @cached_property
    def cache_key(self):
        """The algorithm as a --cache row stores it: its name and output length, e.g.
        "blake2b:256" (the rule is the database module's, shared with hash_files; imported
        here, not by every run: that module imports sqlite3)."""
        from .._filecache import algorithm_key
        return algorithm_key(self.name, self.bits)

    @property
    def native_rows(self):
        """A function giving the batch kernel stored as machine code for this output
        (``jitdigest/runtime/native.py``), or None there; None: no such kernel is stored."""
        return None if self.batch_name is None else functools.partial(_native.rows,
                                                                       self.batch_name)

    def finish(self, h):
        return h.digest(self.size) if self.xof else h.digest()

    def oneshot(self, data):
        return self.finish(self._ctor(data))


# the row whose output, options and --check follow b3sum's (``AlgoSpec.sum_format``)
B3SUM = next(name for name, spec in _algorithms.TABLE.items() if spec.sum_format == "b3sum")
_B3SUM_SPEC = _algorithms.TABLE[B3SUM]
B3SUM_OUT_LEN = _B3SUM_SPEC.digest_size     # b3sum's default output length, in bytes


class Keyed:
    """The b3sum-format row at one output length in bytes, in one mode (plain, keyed with
    ``key``, or key derivation under ``context``), through its own objects (``jitdigest.new``
    with its package's keywords); files above ``big`` bytes may be hashed with ``threads``
    threads (1: never); runs of small files go through ``hash_many(name, ..., key=,
    derive_key_context=, length=)``. ``eager``: its objects' module is imported at once (a run
    with several jobs), not when first needed."""

    name = B3SUM
    xof = False
    has_length = False
    tag_name = _B3SUM_SPEC.bsd_tag

    def __init__(self, size=B3SUM_OUT_LEN, key=None, context=None, threads=1,
                 length_ok=True, eager=True):
        self.size = size
        self.length_ok = length_ok      # False: b3sum's "Failed to parse length." per file
        self.bits = size * 8
        self.max_bits = self.bits
        self.key = key
        self.context = context
        self.threads = threads
        tag = self.tag_name.encode()
        self.tag = tag if size == B3SUM_OUT_LEN else b"%s-%d" % (tag, self.bits)
        self.batch_name = self.name if length_ok else None
        self.batch_kwargs = {"key": key, "derive_key_context": context, "length": size}
        # large files may stream without Numba (one thread, no key to derive first)
        self.streams = threads == 1 and context is None and _stream.streams(_B3SUM_SPEC)
        if eager:                   # where other threads will hash: imported here, not there
            self._objects

    @cached_property
    def _objects(self):
        # (a run whose files all stream through runtime/stream never imports them, nor numpy)
        from .._constructors import object_type
        return object_type(_B3SUM_SPEC)

    def _ident(self):
        return (self.size, self.key, self.context)

    def __eq__(self, other):
        return isinstance(other, Keyed) and self._ident() == other._ident()

    def __hash__(self):
        return hash(self._ident())

    @cached_property
    def cache_key(self):
        """What a --cache row says of this mode: the context, or an identifier of the key
        (a key derived from it: the database never holds the key itself)."""
        from .._filecache import algorithm_key
        if self.key is not None:
            ident = self._objects(self.key, derive_key_context="jitdigest sum --cache key id")
            return algorithm_key(self.name, self.bits, f"-keyed-{ident.hexdigest(8)}")
        if self.context is not None:
            return algorithm_key(self.name, self.bits, f"-derive-key-{self.context}")
        return algorithm_key(self.name, self.bits)

    def new(self, data=b"", threads=1):
        return self._objects(data, key=self.key, derive_key_context=self.context,
                             max_threads=threads)

    def new_large(self):
        """A hash object for a file too large to read whole (threads when asked): on one
        thread, the entry stored as machine code (``jitdigest/runtime/stream.py``) where one
        is stored and the mode needs no derived key."""
        h = _stream.new(self.name, self.key) if self.streams else None
        return self.new(threads=self.threads) if h is None else h

    @property
    def native_rows(self):
        """As ``Algo.native_rows``: the plain or keyed mode's (the kernel from the key's
        parameters), not key derivation's (its key is derived first), nor for -l 0."""
        if self.context is not None or not self.length_ok or not self.size:
            return None
        return self._keyed_rows

    def _keyed_rows(self):
        kernel = _native.rows(self.name)
        if kernel is None or self.key is None:
            return kernel
        return kernel.starting(_native.tree_shape(_B3SUM_SPEC.family)[1](self.key))

    def finish(self, h):
        return h.digest(self.size)

    def oneshot(self, data):
        return self.new(data).digest(self.size)


def get(name, bits=None):
    """The Algo for canonical ``name`` at ``bits`` (None: its full size, SHAKE's default)."""
    spec = _algorithms.SPECS[name]
    return _made(name, bits or spec.digest_size * 8 or spec.default_bits)


@functools.cache
def _made(name, bits):
    return Algo(_algorithms.SPECS[name], bits)


def _choices(items):
    items = [str(item) for item in items]
    return ", ".join(items[:-1]) + " or " + items[-1]


# BSD tags: "SHA3-256" is the base SHA3 with 256 bits, "BLAKE2b-256" the base BLAKE2b at 256.
_FIXED_TAGS = {}                # (base, bits or None) -> name, for fixed-size digests
_LENGTH_TAGS = {}               # base -> name, for BLAKE2 and SHAKE
for _spec in _algorithms.SPECS.values():
    if _has_length(_spec):
        _LENGTH_TAGS[_spec.bsd_tag.encode()] = _spec.name
    else:
        _base, _, _bits = _spec.bsd_tag.encode().partition(b"-")
        _FIXED_TAGS[(_base, _bits or None)] = _spec.name
_SHA3 = {int(bits): name for (base, bits), name in _FIXED_TAGS.items() if base == b"SHA3"}
TAG_BASES = sorted({base for base, _ in _FIXED_TAGS} | set(_LENGTH_TAGS),
                   key=lambda b: (-len(b), b))
# Longest first: "SHA384" must not match as "SHA3" followed by "84".
TAG_RE = re.compile(b"(" + b"|".join(map(re.escape, TAG_BASES)) + rb")(?:-([0-9]+))?")


def names():
    return sorted(_algorithms.SPECS)


# -l as coreutils reads it (xdectoumax: strtoumax in base 10): C-locale white space, an
# optional '+', ASCII digits, nothing after; at most UINTMAX_MAX.
_LENGTH_RE = re.compile(r"[ \t\n\v\f\r]*\+?([0-9]+)", re.ASCII)
_UINTMAX = (1 << 64) - 1


def parse_length(text):
    """The number of bits ``-l TEXT`` asks for, or FatalError with coreutils' message."""
    m = _LENGTH_RE.fullmatch(text)
    if m is None:
        raise FatalError(f"invalid length: {quote(text)}")
    bits = int(m.group(1))
    if bits > _UINTMAX:
        raise FatalError(f"invalid length: {quote(text)}: "
                         "Value too large for defined data type")
    return bits


AUTO = "auto"   # -a auto -c: each tagged line checked with the algorithm its tag names


def from_option(name, length, check=False, family=False):
    """The Algo for ``-a NAME`` and ``-l BITS`` (None or a string), with coreutils' errors;
    None for ``-a auto`` with --check (cksum -c without -a: tagged lines of any algorithm);
    with ``family`` (--check), a Family for ``-a sha3`` whatever -l says."""
    if name.lower() == B3SUM:
        raise UsageError(f"-a {B3SUM} is chosen by from_list")
    if name.lower() == "sha3" and length is not None and _LENGTH_RE.fullmatch(length):
        bits = int(_LENGTH_RE.fullmatch(length).group(1))
        if bits not in _SHA3:                   # cksum's words (tests/cksum/cksum-sha3.sh)
            raise FatalError(f"invalid length: {quote(length)}\ndigest length for "
                             f"{quote('SHA3')} must be 224, 256, 384, or 512")
    bits = 0 if length is None else parse_length(length)
    if name.lower() == AUTO:
        if not check:
            raise UsageError(f"--algorithm={AUTO} is meaningful only when verifying checksums")
        if bits:
            with_length = sorted(_LENGTH_TAGS.values()) + ["sha3"]
            raise FatalError("--length is only supported with "
                             f"--algorithm={_choices(with_length)}")
        return None
    if name.lower() == "sha3":                  # cksum's spelling: -a sha3 -l 256
        if family:                              # -c: lines of every SHA3 length
            return Family([get(n) for _, n in sorted(_SHA3.items())])
        if bits not in _SHA3:
            raise UsageError(f"--algorithm=sha3 needs --length {_choices(sorted(_SHA3))}")
        return get(_SHA3[bits])
    try:
        spec = _algorithms.lookup(name)
    except ValueError:
        raise UsageError(f"invalid argument {quote(name)} for {quote('--algorithm')}\n"
                         f"Valid arguments: {', '.join(names())}, sha3, {B3SUM}, {AUTO}"
                         ) from None
    if _has_length(spec):
        if bits:
            limit = _max_bits(spec)
            if bits % 8:                        # b2sum's order: this first, then the maximum
                raise FatalError(f"invalid length: {quote(length)}\n"
                                 "length is not a multiple of 8")
            if bits > limit:
                raise FatalError(f"invalid length: {quote(length)}\nmaximum digest length "
                                 f"for {quote(spec.bsd_tag)} is {limit} bits")
        return get(spec.name, bits or None)
    if bits:
        with_length = sorted(_LENGTH_TAGS.values()) + ["sha3"]
        raise FatalError(f"--length is only supported with --algorithm={_choices(with_length)}")
    return get(spec.name)


def from_tag(base, bits, hex_length):
    """The Algo a BSD tag names (``base`` and ``bits`` as TAG_RE matched them, bytes or None),
    for a digest of ``hex_length`` hex digits; None if the tag names none. SHAKE's tag without
    "-BITS" takes the length from the digest."""
    name = _FIXED_TAGS.get((base, bits))
    if name is not None:
        return get(name)
    name = _LENGTH_TAGS.get(base)
    if name is None:
        return None
    spec = _algorithms.SPECS[name]
    if bits is None:
        if spec.digest_size:                    # BLAKE2: its full size
            return get(name)
        if hex_length < 2 or hex_length % 2 or hex_length * 4 > SHAKE_MAX_BITS:
            return None
        return get(name, hex_length * 4)
    value = int(bits)
    if value <= 0 or value % 8 or value > _max_bits(spec):
        return None
    return get(name, value)


class Family:
    """``-a sha3 --check``: lines of any of the ``members`` are checked, each at its own
    length (cksum -a sha3 -c, coreutils' check-mixed-tags): a tagged line's tag or an
    untagged line's digest length says which."""

    has_length = False

    def __init__(self, members):
        self.members = members
        self.names = frozenset(m.name for m in members)
        self.by_hex_length = {m.size * 2: m for m in members}
        self.tag_name = members[0].tag_name.partition("-")[0]     # "SHA3", in messages
        self.name = self.tag_name.lower()


class Several:
    """Several Algos over one read of each file: a digest is a tuple, one per part, in the
    order the command line gave them. The Hasher treats it as one algorithm (``new``,
    ``finish``, ``oneshot``); its batch path hashes each part over the same buffers."""

    batch_name = None

    def __init__(self, parts):
        self.parts = tuple(parts)

    def new(self, data=b""):
        return Tee([part.new(data) for part in self.parts])

    def new_large(self):
        return Tee([part.new_large() for part in self.parts])

    def finish(self, h):
        return tuple(part.finish(p) for part, p in zip(self.parts, h.hashes))

    def oneshot(self, data):
        return tuple(part.oneshot(data) for part in self.parts)


def _takes_length(name):
    """Whether ``-l`` applies to ``name`` (an unknown name: True, so from_option says so)."""
    if name.lower() == "sha3":
        return True
    if name.lower() == B3SUM:
        return False
    try:
        return _has_length(_algorithms.lookup(name))
    except ValueError:
        return True


_U64_RE = re.compile(r"\+?[0-9]+", re.ASCII)


def bytes_length(text):
    """The bytes ``-l TEXT`` asks of the b3sum-format row, read as b3sum reads it (Rust's u64 parse: an
    optional '+', ASCII digits, at most 2**64 - 1), or None where b3sum fails each file."""
    if _U64_RE.fullmatch(text) is None or int(text) > _UINTMAX:
        return None
    return int(text)


def _keyed(length, mode):
    """The Keyed for -a of the b3sum-format row (-l in bytes) in ``mode`` (key, context,
    threads)."""
    if length is None:
        return Keyed(**mode)
    size = bytes_length(length)
    if size is None:
        return Keyed(0, length_ok=False, **mode)
    return Keyed(size, **mode)


def from_list(text, length, check=False, audit=False, mode=None):
    """The Algo for ``-a TEXT`` (as from_option), or a Several for a comma-separated list:
    -l applies to its members that take a length (an error, as today, if none does); a
    name given twice (in any spelling) and lists with --check or --audit are usage errors.
    ``mode`` is the b3sum-format row's (Keyed's key, context and threads); in a list that
    row takes no -l (it would count bytes where the others count bits)."""
    mode = mode or {}
    names = text.split(",")
    if len(names) == 1:
        if text.lower() == B3SUM:
            return _keyed(length, mode)
        return from_option(text, length, check or audit, family=check)
    if length is not None and B3SUM in [n.lower() for n in names]:
        raise UsageError(f"--length cannot be used with a list holding {B3SUM} ({B3SUM} "
                         "counts it in bytes, the others in bits)")
    for option, used in (("--check", check), ("--audit", audit)):
        if used:
            raise UsageError(f"several algorithms cannot be combined with {option}")
    if length is not None and not any(_takes_length(n) for n in names):
        from_option(names[0], length)           # today's error for -l without BLAKE2/SHAKE
    parts = []
    for name in names:
        if name.lower() == B3SUM:
            algo = _keyed(None, mode)
        else:
            algo = from_option(name, length if _takes_length(name) else None)
        if algo in parts:
            raise UsageError(f"invalid argument {quote(text)} for {quote('--algorithm')}: "
                             f"{quote(algo.name)} given twice")
        parts.append(algo)
    return Several(parts)
