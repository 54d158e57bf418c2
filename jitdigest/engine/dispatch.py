"""Which kernel serves each algorithm family in this process.

Each family is a package under ``jitdigest/kernels`` (``FAMILIES``) whose ``backends()`` and
``batch_backends()`` import and return its backend modules in preference order; each module
exports one ``kernels/_contract.Backend`` record (``BACKEND``): its tier (CPU features, switch,
architecture), lanes and entries. The first backend this process can run serves
(``_cpu.usable``), unless ``backend(name)`` forces one (``FORCED``, a context variable). Entry
points are compiled for exactly one signature (``_contract.SIGNATURES``) on first use and called
through Numba's compiled wrapper, skipping the dispatcher's type resolution. The choice is made
here, in Python, once per hash object: kernels never read a global switch.
"""
import contextlib
import contextvars
import functools
from collections.abc import Iterator

from . import cpu as _cpu, notice as _notice
from ..base import fork as _fork, host as _host
from ..base.fork import cached_property
from ..kernels import blake2b, blake2s, blake3, keccak, md5, sha1, sha256, sha512
from ..kernels._contract import (COMPILED_FROM, OLD_NAME, chunks_signature, current_name,
                                 signature)

# Algorithm families (``AlgoSpec.family``) -> their kernel package (named after the family).
FAMILIES = {package.__name__.rpartition(".")[2]: package
            for package in (md5, sha1, sha256, sha512, keccak, blake2b, blake2s, blake3)}

# the entries a KernelSet serves: those of the hashlib algorithms, and a tree hash's objects'
# (its ``update`` and XOF_ENTRIES)
ENTRIES = ("update", "final", "oneshot", "hash_rows", "hash_chunks", "grid_chunks")
XOF_ENTRIES = ("xof_final", "xof_oneshot", "xof_oneshot_array", "flush", "parallel_cvs",
               "push_cvs")
# the prange entries -> (their driver in jitdigest/kernels/_rows.py, the rows entry they call):
# over chunks of rows, or over chunks of a grid of equal rows a window at a time
CHUNKS = {"hash_chunks": ("over_chunks", "hash_rows"), "grid_chunks": ("over_grid", "hash_rows"),
          "hmac_chunks": ("over_chunks", "hmac_rows"),
          "hmac_grid_chunks": ("over_grid", "hmac_rows")}


def usable(backend):
    """Can this process run ``backend`` (a record) now: its tier's architecture, CPU features
    and switch (``_cpu.usable``)?"""
    tier = backend.tier
    return tier.features is None or _cpu.usable(tier.features, tier.switch)


def _listed(modules):
    """The records of ``modules`` that exist on this architecture (``Backend.arch``)."""
    return tuple(m.BACKEND for m in modules
                 if m.BACKEND.arch is None or m.BACKEND.arch == _host.ARCH)


# The family packages' lists are fixed: each is imported once per process.
# Imported under ``_fork``'s gate: a fork never lands inside a kernel module's import.
@functools.lru_cache(maxsize=None)
def backends(family):
    """Every per-message backend record of a family, usable or not, in preference order."""
    with _fork.loading():
        return _listed(FAMILIES[family].backends())


@functools.lru_cache(maxsize=None)
def batch_backends(family):
    """Every multi-buffer backend record of a family (``hash_rows`` only), widest first."""
    with _fork.loading():
        return _listed(FAMILIES[family].batch_backends())


def _signatures(word):
    """``{entry: signature}`` of the Merkle-Damgard entries (``_contract.signature``)."""
    return {e: signature(e, word) for e in ("update", "final", "oneshot", "hash_rows")}


def _driver(name):
    from ..kernels import _rows
    return {"over_chunks": _rows.over_chunks, "over_grid": _rows.over_grid}[name]


def chunks_entry(driver, rows_function, rows_signature):
    """The ``prange`` entry ``driver`` ("over_chunks", "over_grid": ``kernels/_rows.py``) for
    the kernel ``rows_function`` (a backend's dispatcher, compiled for ``rows_signature``),
    with the kernel bound: ``entry(values, starts, lengths, rows, bounds, iv, out)``. One
    compiled driver per signature serves every backend; it calls the kernel by address."""
    driver = _driver(driver)
    if not _cpu.jit_enabled():
        return functools.partial(driver, rows_function)
    from ..kernels._internals import KernelAddress
    from . import parallel as _parallel
    _parallel.layer()   # first: lowering a prange loop starts Numba's layer, and TBB must be
    # loadable by then (with NUMBA_THREADING_LAYER=tbb Numba otherwise finds none and raises)
    signature = chunks_signature(rows_signature)
    return functools.partial(driver.compile(signature),
                             KernelAddress(rows_function, signature[0].signature))


def compile_entry(backend, word, entry):
    """``entry`` of the record ``backend`` compiled for ``word`` (or loaded from the cache;
    interpreted: the function itself), or None where the backend has none. ``entry``: a
    ``_contract.SIGNATURES`` name, or a ``CHUNKS`` one (its rows entry compiled first)."""
    if entry in CHUNKS:
        driver, rows = CHUNKS[entry]
        rows_function = backend.function(rows)
        if rows_function is None:
            return None
        compile_entry(backend, word, rows)      # compiled (or loaded) first: called by address
        with _notice.compiling(backend.family):
            return chunks_entry(driver, rows_function, signature(rows, word))
    function = backend.function(COMPILED_FROM.get(entry, entry))
    if function is None or not _cpu.jit_enabled():
        return function
    with _notice.compiling(backend.family):
        return function.compile(signature(entry, word))


class _Entry:
    """A KernelSet attribute: the entry compiled on first access, then a plain attribute."""

    def __init__(self, entry):
        self.entry = entry

    def __get__(self, ks, owner=None):
        if ks is None:
            return self
        func = ks.compiled(self.entry)
        if func is None:
            raise AttributeError(self.entry)
        ks.__dict__[self.entry] = func          # later lookups skip the descriptor
        return func


class KernelSet:
    """The entry points of one backend for one word type, each compiled on first access."""

    update = _Entry("update")
    final = _Entry("final")
    oneshot = _Entry("oneshot")
    hash_rows = _Entry("hash_rows")
    hash_chunks = _Entry("hash_chunks")
    grid_chunks = _Entry("grid_chunks")
    xof_final = _Entry("xof_final")
    xof_oneshot = _Entry("xof_oneshot")
    xof_oneshot_array = _Entry("xof_oneshot_array")
    flush = _Entry("flush")
    parallel_cvs = _Entry("parallel_cvs")
    push_cvs = _Entry("push_cvs")

    def __init__(self, backend, word):
        self.backend = backend
        self.name = backend.name
        self._word = word

    def compiled(self, entry):
        """``entry`` (an ``ENTRIES`` or ``XOF_ENTRIES`` name) compiled, or None where the
        backend has none."""
        func = self.__dict__.get(entry)
        if func is None:
            func = compile_entry(self.backend, self._word, entry)
            if func is not None and entry == "oneshot" and not _cpu.jit_enabled():
                func = _into_fresh_bytes(func)
        return func

    def ready(self, entry):
        """Is ``entry`` loaded, or in the kernel cache (so using it compiles nothing)?"""
        if entry in self.__dict__ or not _cpu.jit_enabled():
            return True
        from ..kernels._numba_cache import on_disk
        if entry in CHUNKS:
            driver, rows = CHUNKS[entry]
            return on_disk(_driver(driver)) and self.ready(rows)
        return on_disk(self.backend.function(entry))

    @cached_property
    def oneshot_bytes(self):
        """``oneshot`` for a ``bytes`` message into a ``bytes`` output just made (what
        ``Hash.digest`` passes): the compiled entry as a builtin function
        (``_internals.bytes_entry``: a cheaper call than Numba's wrapper), or the entry
        itself where this Python has none."""
        return self._builtin("oneshot") or self.oneshot

    @cached_property
    def update_bytes(self):
        """``update`` for ``bytes`` data: ``update_bytes(state, buf, buflen, data) -> buflen``.
        The compiled entry as a builtin function that takes the bytes themselves (Numba's
        wrapper would need ``np.frombuffer`` first), or the entry behind a view."""
        builtin = self._builtin("update")
        if builtin is not None:
            return builtin
        from numpy import frombuffer, uint8
        update = self.update
        return lambda state, buf, buflen, data: update(state, buf, buflen, frombuffer(data, uint8))

    def _builtin(self, entry):
        """The compiled ``entry`` as a builtin function that takes ``bytes`` as they are
        (``bytes_builtin``), or None: interpreted, or none in this Python."""
        self.compiled(entry)                    # compiled (or loaded) first
        if not _cpu.jit_enabled():
            return None
        return bytes_builtin(self.backend.function(entry), signature(entry, self._word),
                             f"{self.backend.family}_{self.name}_{entry}")

    def compile_all(self, entries=("update", "final", "oneshot")):
        for entry in entries:
            func = self.compiled(entry)
            if func is not None:
                self.__dict__[entry] = func

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

# the backend name ``backend()`` forces in this context (thread, task), or None
_FORCED = contextvars.ContextVar("jitdigest_forced_backend", default=None)


def forced():
    """The backend name ``backend()`` forces here, or None."""
    return _FORCED.get()


def _forced_name(spec):
    """The name of the backend ``backend()`` forces here for ``spec``'s family (an old lane
    name read as that family's backend now: ``_contract.current_name``), or None."""
    name = _FORCED.get()
    if name is None:
        return None
    bits = 64 if spec.word_name == "uint64" else 32
    return current_name(batch_backends(spec.family), bits, name)


def _forced(spec, candidates, name):
    """The kernel sets the forced ``name`` leaves among ``candidates`` (None: none of them)."""
    match = [b for b in candidates if b.name == name]
    if not match:
        return None
    if not usable(match[0]):
        raise ValueError(f"backend {name!r} cannot run in this process (CPU, Numba's target "
                         f"or JITDIGEST_DISABLE); {spec.name} can use: "
                         f"{', '.join(available(spec))}")
    return [_kernel_set(match[0], spec.word)]


def usable_kernel_sets(spec):
    """Every kernel set this process can run for an algorithm, best first (portable last);
    only the forced one inside ``backend()`` (a lane backend forced: the usual choice)."""
    family = backends(spec.family)
    name = _forced_name(spec)
    if name is not None:
        found = _forced(spec, family, name)
        if found is not None:
            return found
        if name not in [b.name for b in batch_backends(spec.family)]:
            raise ValueError(f"backend {name!r} does not serve {spec.name}; it can use: "
                             f"{', '.join(available(spec))}")
    return [_kernel_set(b, spec.word) for b in family if usable(b)]


def batch_kernel_sets(spec):
    """Every kernel set able to serve ``hash_rows`` for an algorithm, lane kernels first."""
    name = _forced_name(spec)
    if name is not None:
        found = _forced(spec, batch_backends(spec.family), name)
        if found is not None:
            return found
    lanes = [_kernel_set(b, spec.word) for b in batch_backends(spec.family) if usable(b)]
    if name is not None and name in [b.name for b in backends(spec.family)]:
        lanes = []                          # a per-message backend forced: no lanes either
    return lanes + usable_kernel_sets(spec)


def available(spec):
    """The names of the backends this process can run for ``spec``, per-message ones first
    (best first), then the multi-buffer ones (widest first), each name once (a family's
    chunk lanes and message lanes may share theirs)."""
    names = [b.name for b in backends(spec.family) + batch_backends(spec.family) if usable(b)]
    return list(dict.fromkeys(names))


@contextlib.contextmanager
def backend(name: str) -> Iterator[None]:
    """``with backend("portable"): ...`` -- inside the block, hash objects, one-shot digests and
    batch calls made in this context (thread, task) use the named backend (a lane backend:
    batch calls only); an algorithm that has no such backend raises ValueError. Objects made
    before the block keep their kernels. The lane backends' names before they were named by
    tier (``lanes16``, ``lanes8``, ``lanes4``) still work, each read per family
    (``_contract.current_name``)."""
    if not isinstance(name, str):
        raise TypeError("backend name must be a string")
    known = {b.name for family in FAMILIES for b in backends(family) + batch_backends(family)}
    if name not in known and not OLD_NAME.fullmatch(name):
        raise ValueError(f"unknown backend {name!r} (known: {', '.join(sorted(known))})")
    token = _FORCED.set(name)
    _cpu.set_disabled(set(_cpu.DISABLED))     # a new switch set object: cached choices expire
    try:
        yield
    finally:
        _FORCED.reset(token)
        _cpu.set_disabled(set(_cpu.DISABLED))


# False in processes that would rather not wait for a batch kernel to compile (the command
# line: a first ``jitdigest sum`` compiles in seconds, not a minute): batch_kernels_for then
# picks a lane kernel only when it is loaded or cached, else the per-message kernel. Per
# process, as ``_cpu.DISABLED`` is: the command line's worker threads must see it too.
COMPILE_BATCH = True


def batch_kernels_for(spec, rows=None, mean_length=None):
    """The kernel set that should serve ``hash_rows`` for ``rows`` messages of ``mean_length``
    bytes on average: this CPU's calibration table's choice (``_calibration``) where it has
    one, else ``default_batch_kernels``. An algorithm the table lacks is measured on its first
    such batch in this process, where that compiles nothing more (``_autocal``; not with
    ``COMPILE_BATCH`` off). With ``COMPILE_BATCH`` off, a lane kernel that would have to be
    compiled is passed over."""
    _notice.chose(spec.name)
    many, single, few, by_name = _batch_rule(spec)
    ks = single if rows is not None and rows < few else many
    name = _FORCED.get()
    # the table was measured on full batches: a batch too small to fill the lanes keeps the rule
    if name is None and mean_length is not None and (ks is many or ks.name == many.name):
        from . import calibration as _calibration
        choice = _calibration.choice(spec, mean_length)
        if choice is None and COMPILE_BATCH and spec.name not in _calibration.TRIED:
            from . import autocal as _autocal
            choice = _autocal.choose(spec, ks, by_name, mean_length)
        if choice is not None and choice != ks.name:
            ks = by_name.get(choice, ks)
    if COMPILE_BATCH or ks.backend.lanes == 1 or ks.ready("hash_rows") or name is not None:
        return ks
    return usable_kernel_sets(spec)[0]


def default_batch_kernels(spec, rows=None):
    """The built-in rule (used where no calibration exists): the kernel set that should serve
    ``hash_rows`` for ``rows`` messages (None: many).

    A lane kernel runs a batch of fewer rows than lanes with idle lanes: the per-message kernel
    serves fewer than half a group of rows when it is a hardware one (SHA-NI, ARMv8), and a
    single row otherwise. Where the CPU has no AVX-512 (no vector rotate), interleaved SHA-NI
    (``sha_ni_x2``, else the per-message SHA-NI) serves SHA-256 batches of any length instead
    of the AVX2 lanes (benchmarks/results/ has the measurements behind both rules).
    """
    many, single, few, _ = _batch_rule(spec)
    return single if rows is not None and rows < few else many


_batch_rules = {}


def _batch_rule(spec):
    """``(many, single, few, by_name)``: the built-in rule's kernel set for many rows, the one
    serving fewer than ``few`` rows, and the batch kernel sets by name (the first of a name)
    for the calibration table's choices. Worked out once per switch set and forced backend,
    as ``kernels_for`` is (worked out on every call, it was most of a one-row ``hash_many``)."""
    key = (spec.name, _FORCED.get())
    rule = _batch_rules.get(key)
    if rule is not None and rule[0] is _cpu.DISABLED:
        return rule[1]
    disabled = _cpu.DISABLED
    sets = batch_kernel_sets(spec)
    by_name = {}
    for ks in sets:
        by_name.setdefault(ks.name, ks)
    found = _work_out_batch_rule(spec, sets) + (by_name,)
    _batch_rules[key] = (disabled, found)
    return found


def _work_out_batch_rule(spec, sets):
    if _FORCED.get() is not None:
        return sets[0], sets[0], 0
    sets_all, sets = sets, [ks for ks in sets if ks.backend.by_default]
    many = sets[0]
    single, few = many, 0
    if many.backend.lanes > 1:
        single = usable_kernel_sets(spec)[0]
        few = many.backend.lanes // 2 if single.backend.tier.features else 2
    if (spec.family == "sha256" and many.name == "avx2_x8"
            and "avx512vl" not in _cpu.target_features()):
        # interleaved SHA-NI (not a default backend: it wins only where SIMD is narrow)
        every = {ks.name: ks for ks in sets_all if ks.name in ("sha_ni_x2", "sha_ni")}
        many = every.get("sha_ni_x2") or every.get("sha_ni") or many
    return many, single, few


_chosen = {}            # spec name -> (the switch set it was chosen under, kernel set)
_chosen_forced = {}     # (spec name, forced backend name) -> the same, inside ``backend()``


def kernels_for(spec):
    """The kernel set serving ``spec`` now (a tree hash's too: its objects' entries are
    ``update``, ``xof_final``...): chosen once per switch set and forced backend. (Hash
    objects read ``_chosen`` themselves where nothing is forced: ``_hashobj``.)"""
    _notice.chose(spec.name)                # a compile that follows is named after ``spec``
    name = _FORCED.get()
    table, key = (_chosen, spec.name) if name is None else (_chosen_forced, (spec.name, name))
    chosen = table.get(key)
    if chosen is not None and chosen[0] is _cpu.DISABLED:
        return chosen[1]
    ks = usable_kernel_sets(spec)[0]
    table[key] = (_cpu.DISABLED, ks)
    return ks


def __getattr__(name):
    # ``FORCED``, read by callers written before it became a context variable
    if name == "FORCED":
        return _FORCED.get()
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def fresh_bytes_storage(data):
    """A writable uint8 array over the storage of ``data``, a ``bytes`` object its caller has
    just made and nobody else has seen (filling it is what C code does with
    ``PyBytes_FromStringAndSize(NULL, n)``); the caller keeps ``data`` alive meanwhile."""
    import ctypes                          # only for long SHAKE output: not at import time
    as_string = ctypes.pythonapi.PyBytes_AsString
    as_string.restype = ctypes.c_void_p
    as_string.argtypes = [ctypes.py_object]
    storage = (ctypes.c_ubyte * len(data)).from_address(as_string(data))
    import numpy as np
    return np.ctypeslib.as_array(storage)
