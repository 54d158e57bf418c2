"""Which kernel serves each algorithm family in this process.

Each family is a package under ``jitdigest/kernels`` (named in ``FAMILIES`` below) whose
``backends()`` and ``batch_backends()`` import and return its backend modules in preference
order; a backend that needs a CPU feature declares ``FEATURE`` and ``SWITCH`` at its top. The
first backend this process can run serves (``_cpu.usable``), unless ``backend(name)`` forces
one. Entry points are compiled for exactly one signature on first use and called through
Numba's compiled wrapper, skipping the dispatcher's type resolution (the data argument is always
a C-contiguous uint8 array made by the caller). The choice is made here, in Python, once per
hash object: kernels never read a global switch.
"""
import contextlib
import functools

from . import cpu as _cpu, notice as _notice
from ..base import fork as _fork
from ..kernels import blake2b, blake2s, blake3, keccak, md5, sha1, sha256, sha512

# Algorithm families (``AlgoSpec.family``) -> their kernel package. BLAKE3's per-message
# backends serve here only their batch entries (``hash_rows``...): its objects' entries have
# other signatures and are chosen by ``jitdigest.blake3`` itself.
FAMILIES = {"md5": md5, "sha1": sha1, "sha256": sha256, "sha512": sha512, "keccak": keccak,
            "blake2b": blake2b, "blake2s": blake2s, "blake3": blake3}

ENTRIES = ("update", "final", "oneshot", "hash_rows", "hash_chunks", "grid_chunks")
# the prange entries calling hash_rows -> their driver in jitdigest/kernels/_rows.py: over
# chunks of rows, or over chunks of a grid of equal rows a window at a time
CHUNKS = {"hash_chunks": "over_chunks", "grid_chunks": "over_grid"}


class Backend:
    """One backend module of one family, with what it declares about itself."""

    __slots__ = ("module", "family", "name", "feature", "switch", "lanes", "by_default")

    def __init__(self, module, family):
        self.module = module
        self.family = family
        self.name = getattr(module, "NAME", module.__name__.rpartition(".")[2])
        self.feature = getattr(module, "FEATURE", None)  # host and Numba's target must have it
        self.switch = getattr(module, "SWITCH", None)    # JITDIGEST_DISABLE name turning it off
        self.lanes = getattr(module, "LANES", 1)         # messages side by side in one SIMD group
        # False: the built-in rule never picks it (a win on some CPUs and lengths only, found
        # by 'jitdigest tune'); calibration and jitdigest.backend() still can
        self.by_default = getattr(module, "BY_DEFAULT", True)

    def usable(self):
        if self.feature is None:
            return True
        return _cpu.usable(self.feature, self.switch)

    def __repr__(self):
        return f"Backend({self.family}, {self.name})"


# The family packages' lists are fixed: each is imported and wrapped once per process.
# Imported under ``_fork``'s gate: a fork never lands inside a kernel module's import.
@functools.lru_cache(maxsize=None)
def backends(family):
    """Every per-message backend of a family, usable or not, in preference order."""
    with _fork.loading():
        return tuple(Backend(m, family) for m in FAMILIES[family].backends())


@functools.lru_cache(maxsize=None)
def batch_backends(family):
    """Every multi-buffer backend of a family (``hash_rows`` only), widest first."""
    with _fork.loading():
        return tuple(Backend(m, family) for m in FAMILIES[family].batch_backends())


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
    # the output: a bytearray (cheaper than an ndarray), or for ``oneshot`` a bytes object
    # just made by ``Hash.digest`` (the entry reads any writable or read-only buffer)
    digest = types.ByteArray(types.uint8, 1, "C")
    return {
        "update": (state, buf, i64, data),
        "final": (state, buf, i64, i64, digest),
        "oneshot": (iv, message, digest),      # the one-shot path serves immutable bytes only
        # Batch: hash messages values[starts[r]:starts[r]+lengths[r]] for r in rows into out[r]
        "hash_rows": (data, index, index, index, iv, rows_out),
    }


def chunks_signature(rows_signature):
    """The signature of a ``kernels/_rows`` driver (``over_chunks``, ``over_grid``) of a kernel
    of ``rows_signature`` (``hash_rows``'s, ``hmac_rows``'): the kernel, a first-class
    function, then its arguments with the chunk ``bounds`` after ``rows``."""
    from numba import types
    bounds = types.Array(types.int64, 1, "C", readonly=True)
    return ((types.FunctionType(types.none(*rows_signature)),) + tuple(rows_signature[:4])
            + (bounds,) + tuple(rows_signature[4:]))


def chunks_entry(driver, rows_function, rows_signature):
    """The ``prange`` entry ``driver`` ("over_chunks", "over_grid": ``kernels/_rows.py``) for
    the kernel ``rows_function`` (a backend module's dispatcher, compiled for
    ``rows_signature``), with the kernel bound: ``entry(values, starts, lengths, rows, bounds,
    iv, out)``. One compiled driver per signature serves every backend; it calls the kernel by
    address."""
    from ..kernels import _rows
    driver = getattr(_rows, driver)
    if not _cpu.jit_enabled():
        return functools.partial(driver, rows_function)
    from ..kernels._internals import KernelAddress
    from . import parallel as _parallel
    _parallel.layer()   # first: lowering a prange loop starts Numba's layer, and TBB must be
    # loadable by then (with NUMBA_THREADING_LAYER=tbb Numba otherwise finds none and raises)
    signature = chunks_signature(rows_signature)
    return functools.partial(driver.compile(signature),
                             KernelAddress(rows_function, signature[0].signature))


class KernelSet:
    """The entry points of one backend for one word type, each compiled on first access."""

    def __init__(self, backend, word):
        self.backend = backend
        self.name = backend.name
        self._word = word

    def _function(self, entry):
        return getattr(self.backend.module, entry)

    def ready(self, entry):
        """Is ``entry`` loaded, or in the kernel cache (so using it compiles nothing)?"""
        if entry in self.__dict__ or not _cpu.jit_enabled():
            return True
        from ..kernels._numba_cache import on_disk
        if entry in CHUNKS:
            from ..kernels import _rows
            return on_disk(getattr(_rows, CHUNKS[entry])) and self.ready("hash_rows")
        return on_disk(self._function(entry))

    def __getattr__(self, entry):
        if entry in ("oneshot_bytes", "update_bytes"):
            func = getattr(self, "_" + entry)()
            setattr(self, entry, func)
            return func
        if entry not in ENTRIES:
            raise AttributeError(entry)
        if entry in CHUNKS:
            getattr(self, "hash_rows")      # compiled (or loaded) first: called by address
            with _notice.compiling(self.backend.family):
                func = chunks_entry(CHUNKS[entry], self._function("hash_rows"),
                                    _signatures(self._word)["hash_rows"])
        else:
            func = self._function(entry)
            if _cpu.jit_enabled():
                with _notice.compiling(self.backend.family):
                    func = func.compile(_signatures(self._word)[entry])
            elif entry == "oneshot":
                func = _into_fresh_bytes(func)
        setattr(self, entry, func)          # later lookups skip __getattr__
        return func

    def _builtin(self, entry):
        """The compiled ``entry`` as a builtin function that takes ``bytes`` as they are
        (``bytes_builtin``), or None: interpreted, or none in this Python."""
        getattr(self, entry)                # compiled (or loaded) first
        if not _cpu.jit_enabled():
            return None
        return bytes_builtin(self._function(entry), _signatures(self._word)[entry],
                             f"{self.backend.family}_{self.name}_{entry}")

    def _oneshot_bytes(self):
        """``oneshot`` for a ``bytes`` message into a ``bytes`` output just made (what
        ``Hash.digest`` passes): the compiled entry as a builtin function
        (``_internals.bytes_entry``: about 200 ns less a call than through Numba's wrapper,
        a fifth of ``sha256(data).digest()`` before), or the entry itself where this Python
        has none."""
        return self._builtin("oneshot") or self.oneshot

    def _update_bytes(self):
        """``update`` for ``bytes`` data: ``update_bytes(state, buf, buflen, data) -> buflen``.
        The compiled entry as a builtin function that takes the bytes themselves (through
        Numba's wrapper, ``np.frombuffer`` first and the call cost 800 ns more than the kernel,
        a 1 KiB ``update()`` 2.7 us against hashlib's 0.8), or the entry behind a view."""
        builtin = self._builtin("update")
        if builtin is not None:
            return builtin
        from numpy import frombuffer, uint8
        update = self.update
        return lambda state, buf, buflen, data: update(state, buf, buflen, frombuffer(data, uint8))

    def compile_all(self, entries=("update", "final", "oneshot")):
        for entry in entries:
            getattr(self, entry)

    def __repr__(self):
        return f"KernelSet({self.backend.family}, {self.name})"


def bytes_builtin(dispatcher, signature, name):
    """``dispatcher`` compiled for ``signature`` (arrays, int64 and ``bytes`` arguments; its
    result an int64, or written into the last, ``bytes``, argument) as a builtin function
    that takes ``bytes`` objects for ``bytes``, ``bytearray`` and read-only uint8 arrays
    (``_internals.bytes_entry``), or None where this Python has none."""
    try:
        from ..kernels import _internals
        return _internals.bytes_entry(dispatcher.overloads[tuple(signature)], name)
    except Exception:           # a Numba that no longer fits (its test in test_internals says)
        return None


def _into_fresh_bytes(function):
    """An interpreted entry (``oneshot``, HMAC's ``hmac_bytes``) that, like the compiled one,
    also writes into a ``bytes`` output, its last argument, that its caller has just made
    (Python code cannot write into bytes: it gets a writable array over their storage)."""
    def entry(*args):
        out = args[-1]
        if type(out) is bytes:
            from .layout import fresh_bytes_storage
            out = fresh_bytes_storage(out)
        function(*args[:-1], out)
    return entry


_sets = {}


def _kernel_set(backend, word):
    key = (backend, word)
    ks = _sets.get(key)
    if ks is None:
        ks = _sets[key] = KernelSet(backend, word)
    return ks


# --- choosing ------------------------------------------------------------------------------

FORCED = None           # the backend name ``backend()`` forces, or None


def _forced(spec, candidates):
    """The kernel sets ``FORCED`` leaves among ``candidates`` (None: it names none of them)."""
    match = [b for b in candidates if b.name == FORCED]
    if not match:
        return None
    if not match[0].usable():
        raise ValueError(f"backend {FORCED!r} cannot run in this process (CPU, Numba's target "
                         f"or JITDIGEST_DISABLE); {spec.name} can use: "
                         f"{', '.join(available(spec))}")
    return [_kernel_set(match[0], spec.word)]


def usable_kernel_sets(spec):
    """Every kernel set this process can run for an algorithm, best first (portable last);
    only the forced one inside ``backend()`` (a lane backend forced: the usual choice)."""
    family = backends(spec.family)
    if FORCED is not None:
        forced = _forced(spec, family)
        if forced is not None:
            return forced
        if FORCED not in [b.name for b in batch_backends(spec.family)]:
            raise ValueError(f"backend {FORCED!r} does not serve {spec.name}; it can use: "
                             f"{', '.join(available(spec))}")
    return [_kernel_set(b, spec.word) for b in family if b.usable()]


def batch_kernel_sets(spec):
    """Every kernel set able to serve ``hash_rows`` for an algorithm, lane kernels first."""
    if FORCED is not None:
        forced = _forced(spec, batch_backends(spec.family))
        if forced is not None:
            return forced
    lanes = [_kernel_set(b, spec.word) for b in batch_backends(spec.family) if b.usable()]
    if FORCED is not None and FORCED in [b.name for b in backends(spec.family)]:
        lanes = []                          # a per-message backend forced: no lanes either
    return lanes + usable_kernel_sets(spec)


def available(spec):
    """The names of the backends this process can run for ``spec``, per-message ones first
    (best first), then the multi-buffer ones (widest first), each name once (BLAKE3's chunk
    lanes and message lanes share theirs)."""
    names = [b.name for b in backends(spec.family) + batch_backends(spec.family) if b.usable()]
    return list(dict.fromkeys(names))


@contextlib.contextmanager
def backend(name):
    """``with backend("portable"): ...`` -- inside the block, hash objects, one-shot digests and
    batch calls use the named backend (a lane backend: batch calls only); an algorithm that has
    no such backend raises ValueError. Process-wide, like ``JITDIGEST_DISABLE``; objects made
    before the block keep their kernels."""
    global FORCED
    if not isinstance(name, str):
        raise TypeError("backend name must be a string")
    known = {b.name for family in FAMILIES for b in backends(family) + batch_backends(family)}
    if name not in known:
        raise ValueError(f"unknown backend {name!r} (known: {', '.join(sorted(known))})")
    previous = FORCED
    FORCED = name
    _cpu.set_disabled(set(_cpu.DISABLED))     # a new switch set object: cached choices expire
    try:
        yield
    finally:
        FORCED = previous
        _cpu.set_disabled(set(_cpu.DISABLED))


# False in processes that would rather not wait for a batch kernel to compile (the command
# line: a first ``jitdigest sum`` compiles in seconds, not a minute): batch_kernels_for then
# picks a lane kernel only when it is loaded or cached, else the per-message kernel.
COMPILE_BATCH = True


def batch_kernels_for(spec, rows=None, mean_length=None):
    """The kernel set that should serve ``hash_rows`` for ``rows`` messages of ``mean_length``
    bytes on average: this CPU's calibration table's choice (``_calibration``) where it has
    one, else ``default_batch_kernels``. With ``COMPILE_BATCH`` off, a lane kernel that would
    have to be compiled is passed over."""
    many, single, few, by_name = _batch_rule(spec)
    ks = single if rows is not None and rows < few else many
    # the table was measured on full batches: a batch too small to fill the lanes keeps the rule
    if FORCED is None and mean_length is not None and (ks is many or ks.name == many.name):
        from . import calibration as _calibration
        name = _calibration.choice(spec, mean_length)
        if name is not None and name != ks.name:
            ks = by_name.get(name, ks)
    if COMPILE_BATCH or ks.backend.lanes == 1 or ks.ready("hash_rows") or FORCED is not None:
        return ks
    return usable_kernel_sets(spec)[0]


def default_batch_kernels(spec, rows=None):
    """The built-in rule (used where no calibration exists): the kernel set that should serve
    ``hash_rows`` for ``rows`` messages (None: many).

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
    kernels stopped paying AVX-SSE transitions in the batch entry.)
    """
    many, single, few, _ = _batch_rule(spec)
    return single if rows is not None and rows < few else many


_batch_rules = {}


def _batch_rule(spec):
    """``(many, single, few, by_name)``: the built-in rule's kernel set for many rows, the one
    serving fewer than ``few`` rows, and the batch kernel sets by name (the first of a name)
    for the calibration table's choices. Worked out once per switch set, as ``kernels_for``
    is: worked out on every call, it was 70 us of a one-row ``hash_many``'s 120 (AMD EPYC)."""
    rule = _batch_rules.get(spec.name)
    if rule is not None and rule[0] is _cpu.DISABLED:
        return rule[1]
    disabled = _cpu.DISABLED
    sets = batch_kernel_sets(spec)
    by_name = {}
    for ks in sets:
        by_name.setdefault(ks.name, ks)
    found = _work_out_batch_rule(spec, sets) + (by_name,)
    _batch_rules[spec.name] = (disabled, found)
    return found


def _work_out_batch_rule(spec, sets):
    if FORCED is not None:
        return sets[0], sets[0], 0
    sets = [ks for ks in sets if ks.backend.by_default]
    many = sets[0]
    single, few = many, 0
    if many.backend.lanes > 1:
        single = usable_kernel_sets(spec)[0]
        few = many.backend.lanes // 2 if single.backend.feature else 2
    if (spec.family == "sha256" and many.name == "lanes8"
            and "avx512vl" not in _cpu.target_features()):
        for ks in sets:
            if ks.name == "sha_ni":
                many = ks
                break
    return many, single, few


_chosen = {}


def kernels_for(spec):
    """The kernel set serving ``spec`` now: chosen once, chosen again when the switches change."""
    chosen = _chosen.get(spec.name)
    if chosen is not None and chosen[0] is _cpu.DISABLED:
        return chosen[1]
    ks = usable_kernel_sets(spec)[0]
    _chosen[spec.name] = (_cpu.DISABLED, ks)
    return ks
