"""Which kernel serves each algorithm family in this process.

A registry of backends (portable always; hardware ones behind a CPU feature and a
``JITDIGEST_DISABLE`` switch), each giving the family's entry points. Entry points are
compiled for exactly one signature on first use and called through Numba's compiled wrapper,
skipping the dispatcher's type resolution (the data argument is always a C-contiguous uint8
array made by the caller). The choice is made here, in Python, once per hash object: kernels
never read a global switch.
"""
import importlib
from dataclasses import dataclass

from . import _cpu, _notice

ENTRIES = ("update", "final", "oneshot", "hash_rows", "hash_grid")
# hash_grid is the hash_rows function compiled for the grid form (jitdigest/kernels/_rows.py)
_FUNCTION = {"hash_grid": "hash_rows"}


@dataclass(frozen=True)
class Backend:
    name: str                # "portable", "sha_ni", ...
    family: str              # kernel family, as in the algorithm table
    module: str              # module under jitdigest.kernels holding the entries
    prefix: str = ""         # entries are named prefix + "update" / "final" / "oneshot"
    feature: str = None      # CPU feature the host and Numba's target must both have
    switch: str = None       # JITDIGEST_DISABLE name that turns this backend off
    lanes: int = 1           # messages side by side in one SIMD group (batch backends)

    def usable(self):
        if self.feature is None:
            return True
        return _cpu.usable(self.feature, self.switch)


# Preference order within a family: first usable wins.
REGISTRY = (
    Backend("sha_ni", "sha1", "x86_sha", "sha1_", feature="sha", switch="sha_ni"),
    Backend("sha_ni", "sha256", "x86_sha", "sha256_", feature="sha", switch="sha_ni"),
    Backend("portable", "md5", "md5"),
    Backend("portable", "sha1", "sha1"),
    Backend("portable", "sha256", "sha256"),
    Backend("portable", "sha512", "sha512"),
    Backend("unrolled", "keccak", "keccak_unrolled"),
    Backend("portable", "keccak", "keccak"),
    Backend("unrolled", "blake2b", "blake2", "blake2b_unrolled_"),
    Backend("portable", "blake2b", "blake2", "blake2b_"),
    Backend("unrolled", "blake2s", "blake2", "blake2s_unrolled_"),
    Backend("portable", "blake2s", "blake2", "blake2s_"),
)


# Batch backends: multi-buffer kernels (messages across SIMD lanes) that serve only
# ``hash_rows``; the per-message kernels above serve it too (a loop over the one-shot driver).
BATCH_REGISTRY = (
    # Lane kernels (jitdigest/kernels/lanes_*.py, made by tools/gen_lanes.py): 16 x uint32 or
    # 8 x uint64 lanes on 512-bit vectors, 8 x uint32 or 4 x uint64 on AVX2's 256-bit ones.
    Backend("lanes16", "md5", "lanes_md5", "x16_",
            feature=("avx512f", "avx512bw"), switch="avx512", lanes=16),
    Backend("lanes8", "md5", "lanes_md5", "x8_", feature="avx2", switch="avx2", lanes=8),
    Backend("lanes16", "sha1", "lanes_sha1", "x16_",
            feature=("avx512f", "avx512bw"), switch="avx512", lanes=16),
    Backend("lanes8", "sha1", "lanes_sha1", "x8_", feature="avx2", switch="avx2", lanes=8),
    Backend("lanes16", "sha256", "lanes_sha256", "x16_",
            feature=("avx512f", "avx512bw"), switch="avx512", lanes=16),
    Backend("lanes8", "sha256", "lanes_sha256", "x8_", feature="avx2", switch="avx2", lanes=8),
    Backend("lanes8", "sha512", "lanes_sha512", "x8_",
            feature=("avx512f", "avx512bw"), switch="avx512", lanes=8),
    Backend("lanes4", "sha512", "lanes_sha512", "x4_", feature="avx2", switch="avx2", lanes=4),
    Backend("lanes8", "keccak", "lanes_keccak", "x8_",
            feature=("avx512f", "avx512bw"), switch="avx512", lanes=8),
    Backend("lanes4", "keccak", "lanes_keccak", "x4_", feature="avx2", switch="avx2", lanes=4),
    Backend("lanes8", "blake2b", "lanes_blake2", "b_x8_",
            feature=("avx512f", "avx512bw"), switch="avx512", lanes=8),
    Backend("lanes4", "blake2b", "lanes_blake2", "b_x4_", feature="avx2", switch="avx2", lanes=4),
    Backend("lanes16", "blake2s", "lanes_blake2", "s_x16_",
            feature=("avx512f", "avx512bw"), switch="avx512", lanes=16),
    Backend("lanes8", "blake2s", "lanes_blake2", "s_x8_", feature="avx2", switch="avx2", lanes=8),
)


def _signatures(word):
    from numba import types
    w = types.uint32 if word.__name__ == "uint32" else types.uint64
    state = types.Array(w, 1, "C")
    iv = types.Array(w, 1, "C", readonly=True)
    buf = types.Array(types.uint8, 1, "C")
    data = types.Array(types.uint8, 1, "C", readonly=True)
    message = types.Bytes(types.uint8, 1, "C", readonly=True)
    i64 = types.int64
    index = types.Array(types.int64, 1, "C", readonly=True)
    rows_out = types.Array(types.uint8, 2, "C")
    digest = types.ByteArray(types.uint8, 1, "C")     # a bytearray: cheaper than an ndarray
    return {
        "update": (state, buf, i64, data),
        "final": (state, buf, i64, i64, digest),
        "oneshot": (iv, message, digest),      # the one-shot path serves immutable bytes only
        # Batch: hash messages values[starts[r]:starts[r]+lengths[r]] for r in rows into out[r];
        # the grid form: rows r in range(*rows) of one width, values[r * width:(r + 1) * width].
        "hash_rows": (data, index, index, index, iv, rows_out),
        "hash_grid": (data, i64, i64, types.UniTuple(i64, 2), iv, rows_out),
    }


class KernelSet:
    """The entry points of one backend for one family, each compiled on first access."""

    def __init__(self, backend, word):
        self.backend = backend
        self.name = backend.name
        self._word = word
        self._module = None

    def _function(self, entry):
        if self._module is None:
            self._module = importlib.import_module("jitdigest.kernels." + self.backend.module)
        return getattr(self._module, self.backend.prefix + _FUNCTION.get(entry, entry))

    def ready(self, entry):
        """Is ``entry`` loaded, or in the kernel cache (so using it compiles nothing)?"""
        if entry in self.__dict__ or not _cpu.jit_enabled():
            return True
        function = self._function(entry)          # imports the kernel module (and Numba)
        from .kernels._numba_cache import on_disk
        return on_disk(function)

    def __getattr__(self, entry):
        if entry not in ENTRIES:
            raise AttributeError(entry)
        func = self._function(entry)
        if _cpu.jit_enabled():
            with _notice.compiling(self.backend.family):
                func = func.compile(_signatures(self._word)[entry])
        setattr(self, entry, func)          # later lookups skip __getattr__
        return func

    def compile_all(self, entries=("update", "final", "oneshot")):
        for entry in entries:
            getattr(self, entry)

    def __repr__(self):
        return f"KernelSet({self.backend.family}, {self.name})"


_sets = {}


def _kernel_set(backend, word):
    key = (backend, word)
    ks = _sets.get(key)
    if ks is None:
        ks = _sets[key] = KernelSet(backend, word)
    return ks


def backends(family):
    """Every registered backend of a family, usable or not, in preference order."""
    return [b for b in REGISTRY if b.family == family]


def batch_kernel_sets(spec):
    """Every kernel set able to serve ``hash_rows`` for an algorithm, lane kernels first."""
    lanes = [_kernel_set(b, spec.word) for b in BATCH_REGISTRY
             if b.family == spec.family and b.usable()]
    return lanes + usable_kernel_sets(spec)


# False in processes that would rather not wait for a batch kernel to compile (the command
# line: a first ``jitdigest sum`` compiles in seconds, not a minute): batch_kernels_for then
# picks a lane kernel only when it is loaded or cached, else the per-message kernel.
COMPILE_BATCH = True


def batch_kernels_for(spec, mean_length, rows=None):
    """The kernel set that should serve ``hash_rows``; see ``_best_batch_kernels``. With
    ``COMPILE_BATCH`` off, a lane kernel that would have to be compiled is passed over."""
    ks = _best_batch_kernels(spec, mean_length, rows)
    if COMPILE_BATCH or ks.backend.lanes == 1 or ks.ready("hash_rows"):
        return ks
    return usable_kernel_sets(spec)[0]


def _best_batch_kernels(spec, mean_length, rows=None):
    """The kernel set that should serve ``hash_rows`` for ``rows`` messages (None: many) of
    about ``mean_length`` bytes (lane kernels where they beat the per-message kernels, measured
    per family).

    A lane kernel runs a batch of fewer rows than lanes with idle lanes. Measured, 64 KiB rows,
    per-message kernel over lanes16/lanes8 by row count: with SHA-NI (sha1, sha256) the
    per-message kernel wins up to 4-8 rows (1 row: 3.4x sha1, 7x sha256; even at 8 rows for
    sha256); with the portable kernels only a single row (1.2x sha3_256 to 1.9x md5; 2 rows
    are even). So the per-message kernel serves fewer than half a group of rows when it is a
    hardware one, and a single row otherwise.

    Measured, SHA-1 and SHA-256 (one core, rows of equal length, enough rows to fill the
    lanes), lane kernel over SHA-NI at 64 B / 1 KiB / 16 KiB. On an AVX-512 CPU the lanes win
    everywhere: lanes16 3.0x / 3.0x / 2.9x (SHA-1) and 2.3x / 1.9x / 1.8x (SHA-256). Compiled
    for an AVX2 + SHA-NI target without AVX-512 (no vector rotate: 3 operations each), SHA-1
    lanes8 still wins (1.6x / 1.5x / 1.4x) but SHA-256 lanes8 does not (0.87x / 0.81x / 0.81x):
    there SHA-NI serves SHA-256 batches of any length. (Figures of 2026-12-02, after the SHA-NI
    kernels stopped paying AVX-SSE transitions in the batch entry.) No choice depends on
    ``mean_length`` at present; it stays in the signature for the next family that needs it.
    """
    sets = batch_kernel_sets(spec)
    lanes = sets[0].backend.lanes
    if rows is not None and lanes > 1:
        single = usable_kernel_sets(spec)[0]
        if rows < (lanes // 2 if single.backend.feature else 2):
            return single
    if (spec.family == "sha256" and sets[0].name == "lanes8"
            and "avx512vl" not in _cpu.target_features()):
        for ks in sets:
            if ks.name == "sha_ni":
                return ks
    return sets[0]


def usable_kernel_sets(spec):
    """Every kernel set this process can run for an algorithm, best first (portable last)."""
    return [_kernel_set(b, spec.word) for b in backends(spec.family) if b.usable()]


_chosen = {}


def kernels_for(spec):
    """The kernel set serving ``spec`` now: chosen once, chosen again when the switches change."""
    chosen = _chosen.get(spec.name)
    if chosen is not None and chosen[0] is _cpu.DISABLED:
        return chosen[1]
    ks = usable_kernel_sets(spec)[0]
    _chosen[spec.name] = (_cpu.DISABLED, ks)
    return ks
