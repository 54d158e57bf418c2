"""The backend contract: what every kernel backend module exports, and how its entries are typed.

* ``Tier``, ``TIERS``: the instruction sets a backend may need (vector width, CPU features, the
  ``JITDIGEST_DISABLE`` switch, the architecture); the generators (tools/lanes_*.py) read the
  same table, so a new tier is one row here plus regenerated files.
* ``Backend``: the frozen record a backend module builds at its bottom (``BACKEND``): family,
  name, tier, lanes, entries (the Numba dispatchers, None where it has none).
* ``SIGNATURES``: entry name -> the Numba argument types it is compiled for, given the word
  type; ``signature(entry, word)`` builds them (Numba is imported only then).

Importing this module imports neither Numba nor numpy: ``jitdigest.engine.dispatch`` reads
records and builds signatures only when a kernel is first needed.
"""
import re
import sys


class Tier:
    """An instruction set a backend is built on: ``bits`` of vector width (0: none), the CPU
    ``features`` the host and Numba's target must both have (None: any CPU), the ``switch``
    that turns it off and the ``arch`` it exists on (None: listed on every architecture)."""

    __slots__ = ("name", "bits", "features", "switch", "arch")

    def __init__(self, name, bits, features, switch, arch=None):
        for field, value in zip(self.__slots__, (name, bits, features, switch, arch)):
            object.__setattr__(self, field, value)

    def __setattr__(self, name, value):
        raise AttributeError("Tier is immutable")

    def lanes(self, word_bits):
        """Words of ``word_bits`` bits side by side in one vector (1: a scalar tier)."""
        return max(1, self.bits // word_bits)

    def __repr__(self):
        return f"Tier({self.name})"


# ISA name -> tier. A backend's name (and its module's): its tier's ISA, and for a batch kernel
# ``_x<N>``, the messages it hashes side by side (SIMD lanes times interleaved groups):
# ``avx512_x16``, ``avx2_x8``, ``sha_ni_x2``; ``portable`` and ``unrolled`` need no ISA.
# ``tools/lanes_common.py`` renders one lane file per family and vector tier in VECTOR_TIERS.
TIERS = {t.name: t for t in (
    Tier("portable", 0, None, None),
    Tier("avx2", 256, "avx2", "avx2"),
    Tier("avx512", 512, ("avx512f", "avx512bw"), "avx512"),
    Tier("sha_ni", 128, "sha", "sha_ni"),
    Tier("armv8_sha1", 128, "sha1", "sha1", "aarch64"),
    Tier("armv8_sha2", 128, "sha2", "sha2", "aarch64"),
    Tier("armv8_sha512", 128, "sha512", "sha512", "aarch64"),
    Tier("armv8_sha3", 128, "sha3", "sha3", "aarch64"),
)}
VECTOR_TIERS = ("avx512", "avx2")       # the SIMD lane kernels' tiers, widest first

# The names the lane backends had before they were named by tier (``jitdigest.backend()`` still
# takes them): ``lanes<N>``, N state words of the family side by side in one vector.
OLD_NAME = re.compile(r"lanes(\d+)")


def current_name(batch, word_bits, name):
    """The name now of the backend among ``batch`` (a family's batch records, its state words
    ``word_bits`` wide) that the old name ``name`` meant; any other ``name`` as it is."""
    old = OLD_NAME.fullmatch(name)
    if old is None:
        return name
    for b in batch:
        if b.tier.name in VECTOR_TIERS and b.tier.lanes(word_bits) == int(old.group(1)):
            return b.name
    return name


# The entries a record may carry, each typed by SIGNATURES. The entries of a tree hash's objects,
# whose arguments differ from the Merkle-Damgard ones, have their own names (``xof_*``...).
ENTRIES = ("update", "final", "oneshot", "hash_rows", "hmac", "hmac_states", "hmac_final",
           "hmac_rows", "pbkdf2", "xof_final", "xof_oneshot", "xof_oneshot_array", "flush",
           "parallel_cvs", "push_cvs")


class Backend:
    """One backend of one family: what it is, what it needs, and its entry points (``ENTRIES``
    as attributes: a Numba dispatcher, or the plain function when the JIT is off, or None).

    ``lanes``: messages (a tree hash's chunk lanes: chunks) side by side in one SIMD group;
    ``in_flight``: messages hashed at once per call; ``by_default``: False when the built-in
    rule never picks it (calibration and ``jitdigest.backend()`` still can); ``group_min``:
    chunk lanes take one-shot inputs of this many bytes on (``xof_oneshot_array``);
    ``source``: the defining module's name."""

    __slots__ = ("family", "name", "tier", "lanes", "in_flight", "by_default", "arch",
                 "group_min", "source") + ENTRIES

    def __init__(self, family, name, tier, source, *, lanes=1, in_flight=None, by_default=True,
                 group_min=None, **entries):
        unknown = set(entries) - set(ENTRIES)
        if unknown:
            raise TypeError(f"unknown entries: {', '.join(sorted(unknown))}")
        fields = {"family": family, "name": name, "tier": tier, "lanes": lanes,
                  "in_flight": lanes if in_flight is None else in_flight,
                  "by_default": by_default, "arch": tier.arch, "group_min": group_min,
                  "source": source}
        for field in self.__slots__:
            object.__setattr__(self, field, fields[field] if field in fields
                               else entries.get(field))

    def __setattr__(self, name, value):
        raise AttributeError("Backend is immutable")

    @property
    def feature(self):
        return self.tier.features

    @property
    def switch(self):
        return self.tier.switch

    def function(self, entry):
        """The dispatcher of ``entry`` (an ``ENTRIES`` name), or None: the field's value."""
        return _FIELDS[entry].__get__(self, Backend)

    @property
    def module(self):
        """The module that defined the record (for tools and tests that read its helpers)."""
        return sys.modules[self.source]

    def __repr__(self):
        return f"Backend({self.family}, {self.name})"


_FIELDS = {entry: Backend.__dict__[entry] for entry in ENTRIES}     # the slots' descriptors


# --- signatures --------------------------------------------------------------------------

class _Types:
    """The Numba types the signatures are built from, for one word type."""

    def __init__(self, word):
        from numba import types
        w = types.uint32 if word.__name__ == "uint32" else types.uint64
        self.i64 = types.int64
        self.state = types.Array(w, 1, "C")
        self.iv = types.Array(w, 1, "C", readonly=True)
        self.buf = types.Array(types.uint8, 1, "C")
        self.data = types.Array(types.uint8, 1, "C", readonly=True)
        self.message = types.Bytes(types.uint8, 1, "C", readonly=True)
        self.index = types.Array(types.int64, 1, "C", readonly=True)
        self.rows_out = types.Array(types.uint8, 2, "C")
        # the output: a bytearray (cheaper than an ndarray), or for ``oneshot`` a bytes object
        # just made by ``Hash.digest`` (the entry reads any writable or read-only buffer)
        self.out = types.ByteArray(types.uint8, 1, "C")


# entry -> its argument types from a ``_Types``. ``hmac_bytes`` is ``hmac`` compiled for bytes
# key and message (``COMPILED_FROM``); a tree hash's object entries take its 32-bit words.
SIGNATURES = {
    "update": lambda t: (t.state, t.buf, t.i64, t.data),
    "final": lambda t: (t.state, t.buf, t.i64, t.i64, t.out),
    "oneshot": lambda t: (t.iv, t.message, t.out),      # immutable bytes only
    # hash values[starts[r]:starts[r]+lengths[r]] for r in rows into out[r]
    "hash_rows": lambda t: (t.data, t.index, t.index, t.index, t.iv, t.rows_out),
    "hmac": lambda t: (t.iv, t.data, t.data, t.out),
    "hmac_bytes": lambda t: (t.iv, t.message, t.message, t.out),
    "hmac_states": lambda t: (t.iv, t.data, t.i64, t.state),
    "hmac_final": lambda t: (t.state, t.buf, t.i64, t.i64, t.iv, t.out),
    "hmac_rows": lambda t: (t.data, t.index, t.index, t.index, t.iv, t.rows_out),
    "pbkdf2": lambda t: (t.iv, t.data, t.data, t.i64, t.i64, t.out),
    # a tree hash's objects: ``iv`` is the parameter words, ``state`` the whole layout
    "xof_final": lambda t: (t.state, t.buf, t.i64, t.i64, t.i64, t.out),
    "xof_oneshot": lambda t: (t.iv, t.message, t.i64, t.i64, t.out),
    "xof_oneshot_array": lambda t: (t.iv, t.data, t.i64, t.i64, t.out),
    "flush": lambda t: (t.state, t.buf, t.i64),
    "parallel_cvs": lambda t: (t.state, t.data, t.i64, t.i64, t.i64, t.state),
    "push_cvs": lambda t: (t.state, t.state, t.i64, t.i64),
}
COMPILED_FROM = {"hmac_bytes": "hmac"}      # signature name -> the record entry compiled for it

_types = {}


def signature(entry, word):
    """The argument types ``entry`` (a ``SIGNATURES`` name) is compiled for, for ``word``
    (numpy's ``uint32`` or ``uint64``)."""
    t = _types.get(word.__name__)
    if t is None:
        t = _types[word.__name__] = _Types(word)
    return SIGNATURES[entry](t)


def chunks_signature(rows_signature):
    """The signature of a ``_rows`` driver (``over_chunks``, ``over_grid``) of a kernel of
    ``rows_signature``: the kernel, a first-class function, then its arguments with the chunk
    ``bounds`` after ``rows``."""
    from numba import types
    bounds = types.Array(types.int64, 1, "C", readonly=True)
    return ((types.FunctionType(types.none(*rows_signature)),) + tuple(rows_signature[:4])
            + (bounds,) + tuple(rows_signature[4:]))
