"""Batch kernels that run without importing Numba: ``jitdigest sum``'s small files, and a
process's first one-shot digests (``FirstDigests``).

Why: importing Numba and loading a kernel through it is most of a short ``jitdigest sum``
(benchmarks/results/tunables.md). So the batch kernel that serves an algorithm here is also
stored as machine code (``native_write``: a C-callable wrapper around the compiled
``hash_rows``, linked with everything it calls), by ``jitdigest warmup`` for every algorithm
and by a ``jitdigest sum`` that had to reach one through Numba, and a later process
loads that object without Numba and calls it through ctypes: linked by
``jitdigest/runtime/elf.py`` on x86-64 Linux (no LLVM: ``ELF_LOADER``), by llvmlite's MCJIT
elsewhere or where ``_elf`` refuses an object. A loaded kernel must give hashlib's digest of
b"abc" before it is used. A missing, damaged or foreign entry is never an error: ``rows()``
gives None and the caller hashes through Numba. Where entries live: ``folder()``; which are
read: ``_load``; what their code may call: ``_resolver``.
"""
import ctypes
import functools
import itertools
import json
import os
import sys
from array import array

from ..base import algorithms as _algorithms, arm as _arm, cachedir as _cachedir
from ..base import fork as _fork
from ..base.stdlib import hashlib  # the real one, whatever stands in for it in sys.modules

FORMAT = 2
# Settings that change nothing the machine code or the choice of kernel depends on.
_IGNORED = frozenset({"JITDIGEST_CACHE_DIR", "NUMBA_CACHE_DIR", "JITDIGEST_QUIET",
                      "NUMBA_NUM_THREADS", "NUMBA_THREADING_LAYER"})
ERROR_PATH_HELPERS = frozenset({
    "numba_gil_ensure", "numba_gil_release", "numba_unpickle", "numba_do_raise",
    "numba_runtime_build_excinfo_struct", "numba_fatal_error", "NRT_Free",
    "NRT_MemInfo_call_dtor"})
PYTHON_WRAPPER_HELPERS = frozenset({"NRT_adapt_ndarray_from_python"})
_TYPECODES = {"uint32": "I", "uint64": "Q"}

_loaded = {}            # algorithm name -> Rows or None
_engines = []           # the LLVM engines holding loaded code (kept for the process's life)


@functools.lru_cache(maxsize=None)
def context():
    """A digest of what the stored machine code depends on besides the kernel sources (once
    per process: the switches are read once, at import)."""
    import llvmlite
    settings = sorted((k, v) for k, v in os.environ.items()
                      if k.startswith(("NUMBA_", "JITDIGEST_")) and k not in _IGNORED)
    text = repr((FORMAT, sys.platform, sys.implementation.cache_tag, llvmlite.__version__,
                 _host(), settings))
    return hashlib.sha256(text.encode()).hexdigest()[:16]


# /proc/cpuinfo's fields that name the processor and its instruction sets (x86, then Arm)
_CPUINFO = frozenset({b"vendor_id", b"cpu family", b"model", b"model name", b"stepping",
                      b"flags", b"Features", b"CPU implementer", b"CPU architecture",
                      b"CPU variant", b"CPU part", b"CPU revision"})


def _host():
    """The processor as the stored machine code depends on it: on Linux, the first
    processor's identity and instruction-set flags in /proc/cpuinfo (the CPUID bits LLVM's
    host detection reads too), without importing llvmlite.binding; elsewhere, or where
    /proc/cpuinfo names no flags, LLVM's host CPU name and features."""
    try:
        with open("/proc/cpuinfo", "rb") as f:
            first = f.read(1 << 16).split(b"\n\n", 1)[0]
    except OSError:
        first = b""
    fields = {}
    for line in first.splitlines():
        key, sep, value = line.partition(b":")
        if sep and key.strip() in _CPUINFO:
            fields[key.strip()] = value.strip()
    if b"flags" in fields or b"Features" in fields:
        return ("cpuinfo", sorted(fields.items()))
    import llvmlite.binding as ll
    return ("llvm", ll.get_host_cpu_name(), ll.get_host_cpu_features().flatten())


def folder():
    """``<kernel cache folder>/native/<context>/`` (the cache folder already names the version
    and the kernel sources), ``context()`` a digest of what else the machine code depends on:
    the host CPU and its features (``_host``), llvmlite's version and every ``NUMBA_*`` and
    ``JITDIGEST_*`` setting (a switched-off SHA-NI, ``NUMBA_CPU_NAME``, ``NUMBA_DISABLE_JIT``:
    another context, so nothing stored is used). What an entry holds: ``native_write``."""
    return os.path.join(_cachedir.directory(), "native", context())


class Rows:
    """An algorithm's batch kernel loaded from its object: ``hash(values, lengths, size)``;
    ``starting(iv)``: the same kernel from other initial words (a tree hash's keyed mode)."""

    def __init__(self, function, iv, word, size):
        self._function = function
        self._word = word
        self._iv = array(_TYPECODES[word], iv)
        self.digest_size = size             # 0: SHAKE, a tree hash: any output length

    def starting(self, iv):
        if len(iv) != len(self._iv):
            raise ValueError("initial words of another length")
        return Rows(self._function, iv, self._word, self.digest_size)

    def hash(self, values, lengths, size):
        """The ``size``-byte digests of the messages ``values`` (bytes) holds back to back,
        ``lengths`` (an array('q')) long: one bytes object of ``len(lengths) * size``."""
        if not isinstance(values, bytes) or not isinstance(lengths, array) \
                or lengths.typecode != "q":
            raise TypeError("values must be bytes and lengths an array('q')")
        if size <= 0 or self.digest_size and size != self.digest_size:
            raise ValueError(f"digest size {size} is not this kernel's")
        if any(length < 0 for length in lengths) or sum(lengths) != len(values):
            raise ValueError("message lengths do not add up to the values")
        n = len(lengths)
        starts = array("q", itertools.accumulate(lengths, initial=0))
        rows = array("q", range(n))
        out = bytearray(n * size)
        view = (ctypes.c_char * len(out)).from_buffer(out)
        status = self._function(values, len(values), starts.buffer_info()[0],
                                lengths.buffer_info()[0], rows.buffer_info()[0], n,
                                self._iv.buffer_info()[0], len(self._iv), ctypes.addressof(view),
                                n, size)
        del view
        if status != 0:
            raise RuntimeError("the batch kernel failed")
        return bytes(out)


# A process's first one-shot digests of an algorithm go through its stored kernel (a batch of
# one row) while Numba is not imported; the digest after these many loads the compiled kernels
# through Numba (once: benchmarks/results/tunables.md), whose per-call cost is lower.
FIRST_DIGESTS = 16
_first = {}             # algorithm name -> FirstDigests, or None


class FirstDigests:
    """Stands in for an algorithm's kernel set (``_dispatch.KernelSet``) in hash objects made
    while Numba is not imported: one-shot digests of ``bytes`` from the algorithm's initial
    state go through the stored batch kernel, the first ``FIRST_DIGESTS`` of them; everything
    else (``update`` of other buffers, ``final``, later digests, the set's ``name`` and
    ``backend``) through the kernel set itself, loaded through Numba when first needed."""

    def __init__(self, spec, kernel):
        self._spec = spec
        self._kernel = kernel
        self.left = FIRST_DIGESTS

    def oneshot(self, iv, data, out):
        """``iv``: None for the initial state (a hash object made on this stand-in)."""
        if (self.left > 0 and (iv is None or iv is self._spec.initial_state)
                and type(data) is bytes and len(out) > 0):
            self.left -= 1
            digest = self._kernel.hash(data, array("q", [len(data)]), len(out))
            if type(out) is bytes:          # just made by Hash.digest, seen by no one else
                ctypes.memmove(ctypes.cast(ctypes.c_char_p(out), ctypes.c_void_p).value,
                               digest, len(out))
            else:
                out[:] = digest
            return
        self._kernel_set().oneshot(self._iv_array(iv), data, out)

    def oneshot_bytes(self, iv, data, out):
        if self.left > 0:
            self.oneshot(iv, data, out)
        else:
            self._kernel_set().oneshot_bytes(self._iv_array(iv), data, out)

    def _iv_array(self, iv):
        return self._spec.initial_state if iv is None else iv

    def _kernel_set(self):
        from ..engine import dispatch as _dispatch
        return _dispatch.kernels_for(self._spec)

    def __getattr__(self, name):
        return getattr(self._kernel_set(), name)


def first_digests(spec):
    """The FirstDigests of ``spec`` while it still serves (Numba not imported, a stored kernel,
    digests left), else None."""
    if "numba" in sys.modules:
        return None
    try:
        first = _first[spec.name]
    except KeyError:
        kernel = rows(spec.name)
        first = _first[spec.name] = None if kernel is None else FirstDigests(spec, kernel)
    return first if first is not None and first.left > 0 else None


def rows(name):
    """The stored batch kernel of the algorithm ``name`` (hashlib's name), or None."""
    try:
        return _loaded[name]
    except KeyError:
        pass
    with _fork.loading():               # no fork lands while the object code is linked
        if name not in _loaded:
            _loaded[name] = _load(name)
    return _loaded[name]


def _read_json(path):
    try:
        with open(path, "rb") as f:
            found = json.loads(f.read())
    except (OSError, ValueError):
        return None
    return found if isinstance(found, dict) else None


def _load(name):
    """The algorithm's stored kernel, linked and checked, or None."""
    found = stored(lambda where: (_read_json(os.path.join(where, "index.json")) or {}).get(name),
                   name)
    if found is None:
        return None
    function, meta = found
    kernel = Rows(function, meta["iv"][name], meta["word"], meta["sizes"][name])
    return kernel if _answers(kernel, name) else None


def stored(base_of, name, prototype=None):
    """(ctypes function, description) of the stored object ``base_of(folder)`` names for the
    algorithm ``name``, linked, or None. Nothing is read from (or stored in, by ``store``) a
    folder that another user could write: the SHA-256 digests catch damage, not a writer, so
    ``_cachedir.trusted()`` must pass first (one ``CacheWarning`` where it does not: hashing
    goes through Numba, compiling in memory). Before any object is linked its digest is
    checked. ``prototype``: the entry's ctypes type (default: a batch kernel's)."""
    if os.environ.get("NUMBA_DISABLE_JIT", "0") not in ("", "0"):
        return None                          # interpreted, as asked
    if os.path.exists(".numba_config.yaml"):
        return None                          # Numba's settings file, read from the working
                                             # folder: whatever it says, Numba's path obeys it
    try:
        where = folder()
    except Exception:                        # no llvmlite, or it cannot tell the host
        return None
    if not _cachedir.trusted(where):
        return None
    base = base_of(where)
    if not isinstance(base, str) or os.sep in base or "/" in base:
        return None
    meta, code = _entry(where, base, name)
    if meta is None:
        return None
    try:
        function = _link(code, meta, prototype)
    except Exception:                        # llvmlite refused it: the Numba path is there
        function = None
    return None if function is None else (function, meta)


def _answers(kernel, name):
    """Whether a loaded kernel gives hashlib's digest of b"abc" (a tree hash: its package's
    known answer): a link that went wrong in any way is refused here, not trusted with a file."""
    size = kernel.digest_size or 32
    shape = tree_shape(_algorithms.lookup_any(name).family)
    if shape is not None:
        message, want = shape[2]
        return kernel.hash(message, array("q", [len(message)]), len(want)) == want
    want = hashlib.new(name, b"abc")
    want = want.digest(size) if kernel.digest_size == 0 else want.digest()
    return kernel.hash(b"abc", array("q", [3]), size) == want


@functools.lru_cache(maxsize=None)
def tree_shape(family):
    """A tree hash's (state words, parameters of a key, known answer), as its kernel package
    describes them (``stream_shape``); None for any other family. Once per family."""
    from ..engine import dispatch as _dispatch
    describe = getattr(_dispatch.FAMILIES.get(family), "stream_shape", None)
    return describe() if describe is not None else None


def _entry(where, base, name):
    """(description, object) of the stored kernel ``base`` if both are there, whole, and
    serve the algorithm ``name``; else (None, None)."""
    meta = _read_json(os.path.join(where, base + ".json"))
    try:
        with open(os.path.join(where, base + ".o"), "rb") as f:
            code = f.read()
    except OSError:
        return None, None
    return (meta, code) if _valid(meta, code, name) else (None, None)


def _digest(code, meta):
    """The SHA-256 of an object and of every field of its description but this one: a
    description changed in any way (an initial state cut short) is refused like a damaged
    object."""
    fields = {k: v for k, v in meta.items() if k != "sha256"}
    return hashlib.sha256(code + json.dumps(fields, sort_keys=True).encode()).hexdigest()


def _valid(meta, code, name):
    try:
        return (meta["format"] == FORMAT and meta["sha256"] == _digest(code, meta)
                and meta["word"] in _TYPECODES and isinstance(meta["symbol"], str)
                and all(isinstance(n, str) for n in meta["uses"])
                and isinstance(meta["sizes"][name], int) and meta["sizes"][name] >= 0
                and all(isinstance(w, int) and 0 <= w < 1 << (32 if meta["word"] == "uint32"
                                                               else 64)
                        for w in meta["iv"][name])
                and len(meta["iv"][name]) > 0
                and _parts(meta, code) is not None)
    except (KeyError, TypeError):
        return False


def _parts(meta, code):
    """The objects ``code`` holds, as ``meta["parts"]`` sizes them, or None."""
    sizes = meta.get("parts", [len(code)])
    if (not isinstance(sizes, list) or not sizes or sum(sizes) != len(code)
            or not all(isinstance(n, int) and n > 0 for n in sizes)):
        return None
    starts = list(itertools.accumulate([0] + sizes))
    return [code[a:b] for a, b in zip(starts, starts[1:])]


def _addresses(names, resolve=None):
    """{name: address} for the names an object uses that LLVM does not know by itself, as
    ``resolve`` (default ``_resolver()``) finds them: symbols of the process (CPython's C API,
    found with ``dlsym``), ``abort`` for ERROR_PATH_HELPERS this process lacks; None if any
    other name is missing (the object cannot run here). Numba's runtime is not looked for: a
    process that runs these objects has not imported it."""
    resolve = _resolver() if resolve is None else resolve
    found = {}
    for name in names:
        if name.startswith("llvm."):
            continue
        address = resolve(name)
        if address is None:
            return None
        found[name] = address
    return found


def _process_symbols():
    """A function of a name giving its address in this process (``dlsym``), or None."""
    process = ctypes.CDLL(None)
    dlsym = process.dlsym
    dlsym.restype = ctypes.c_void_p
    dlsym.argtypes = [ctypes.c_void_p, ctypes.c_char_p]
    return lambda name: dlsym(process._handle, name.encode()) or None


def _resolver():
    """A function of a name giving its address in this process, ``abort``'s for the
    ERROR_PATH_HELPERS and PYTHON_WRAPPER_HELPERS it lacks, else None.

    Every name a stored object uses must be an LLVM intrinsic, a symbol of this process
    (CPython's C API) or one of ``ERROR_PATH_HELPERS`` (Numba's runtime, reached only when an
    exception is reported or a reference count of an array Numba allocated falls to zero:
    neither happens for the arrays the wrapper views, whose bounds ``Rows.hash`` makes) or
    ``PYTHON_WRAPPER_HELPERS`` (reached only from the kernel's own Python wrapper, which comes
    with the kernel's object and is never called here); those point at ``abort``."""
    lookup = _process_symbols()
    abort = ctypes.cast(ctypes.CDLL(None).abort, ctypes.c_void_p).value

    def resolve(name):
        address = lookup(name)
        if address is None and (name in ERROR_PATH_HELPERS or name in PYTHON_WRAPPER_HELPERS):
            return abort
        return address
    return resolve


# Loaded by jitdigest/runtime/elf.py, without importing llvmlite.binding (a large part of a
# one-file ``jitdigest sum``: benchmarks/results/tunables.md), where the objects are ELF for
# x86-64; else by llvmlite's MCJIT.
ELF_LOADER = sys.platform.startswith("linux") and _arm.machine() in ("x86_64", "amd64")


# ``rows_entry``'s C type: (values, n_values, starts, lengths, rows, n_rows, iv, n_iv, out,
# out_rows, out_cols) -> status
_P, _I64 = ctypes.c_void_p, ctypes.c_int64
ROWS_PROTOTYPE = ctypes.CFUNCTYPE(_I64, ctypes.c_char_p, _I64, _P, _P, _P, _I64, _P, _I64, _P,
                                  _I64, _I64)


def _link(code, meta, prototype=None):
    """The entry of the objects in ``code`` as a ctypes function of ``prototype`` (default
    ``ROWS_PROTOTYPE``; the GIL released during the call), or None."""
    parts = _parts(meta, code)
    resolve = _resolver()
    found = None if parts is None else _addresses(meta["uses"], resolve)
    if found is None:
        return None
    address = _link_elf(parts, meta, found, resolve) if ELF_LOADER else None
    if address is None:
        address = _link_mcjit(parts, meta, found)
    if not address:
        return None
    return (prototype or ROWS_PROTOTYPE)(address)


def _link_elf(parts, meta, found, resolve):
    """The entry's address, the objects linked by ``_elf``, or None. The names they use come
    from ``found`` (``_addresses``); others, ``memcpy`` and the like that LLVM's intrinsics
    became, from ``resolve``."""
    from . import elf as _elf
    return _elf.link(parts, meta["symbol"], lambda name: found.get(name) or resolve(name))


def _link_mcjit(parts, meta, found):
    """The entry's address, the objects loaded by llvmlite's MCJIT, or None; LLVM is told the
    addresses in ``found`` (``_addresses``) it does not know yet."""
    import llvmlite.binding as ll
    ll.initialize_native_target()
    ll.initialize_native_asmprinter()
    for name, address in found.items():
        if not ll.address_of_symbol(name):
            ll.add_symbol(name, address)
    machine = ll.Target.from_default_triple().create_target_machine()
    engine = ll.create_mcjit_compiler(ll.parse_assembly(""), machine)
    for part in parts:
        engine.add_object_file(ll.ObjectFileRef.from_data(part))
    engine.finalize_object()
    address = engine.get_function_address(meta["symbol"])
    if not address:
        return None
    _engines.append(engine)
    return address
