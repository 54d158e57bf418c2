"""The keyed entry points (HMAC, PBKDF2: ``jitdigest/kernels/_hmac.py``'s drivers, exported by
every Merkle-Damgard backend module) for an algorithm, compiled on first use.

Kept apart from ``_dispatch``'s KernelSet (whose entries every backend has): only the
Merkle-Damgard families have keyed kernels. Each is the one of the backend ``_dispatch`` chose
for the algorithm (SHA-NI where usable), compiled for exactly one signature and called through
Numba's compiled wrapper; ``hmac_bytes`` (key and message ``bytes``) as a builtin function that
writes into a ``bytes`` output its caller has just made (``_dispatch.bytes_builtin``), where
this Python has one. ``entry(spec, "hmac")`` is None for the other families; callers then use
hash objects.
"""

from ..base import algorithms as _algorithms, fork as _fork
from . import cpu as _cpu, dispatch as _dispatch
from ..base.lazy_numpy import on_first_use

np = on_first_use(globals())        # a script's first HMACs (``hmac._first_hmac``) need none

_compiled = {}
_lock = _fork.lock(globals(), "_lock")      # held around a compile


def bytes_view(obj):
    """A uint8 view of a bytes-like object, with the C API's ``y*`` error for anything else."""
    if not isinstance(obj, str):
        try:
            return np.frombuffer(obj, np.uint8)
        except TypeError:
            pass
    raise TypeError(f"a bytes-like object is required, not '{type(obj).__name__}'")


# the prange entries calling hmac_rows -> their driver (``_dispatch.chunks_entry``)
_CHUNKS = {"hmac_chunks": "over_chunks", "hmac_grid_chunks": "over_grid"}
# entry -> the backend module's function that is compiled for it
_FUNCTION = {"hmac_bytes": "hmac"}


def _signature(word, entry):
    from numba import types
    if entry == "hmac_rows":                        # hash_rows' signature
        return _dispatch._signatures(word)["hash_rows"]
    w = types.uint32 if word.__name__ == "uint32" else types.uint64
    iv = types.Array(w, 1, "C", readonly=True)
    data = types.Array(types.uint8, 1, "C", readonly=True)
    out = types.ByteArray(types.uint8, 1, "C")
    if entry == "hmac":
        return (iv, data, data, out)
    if entry == "hmac_states":
        return (iv, data, types.int64, types.Array(w, 1, "C"))
    if entry == "hmac_final":
        state = types.Array(w, 1, "C")
        buf = types.Array(types.uint8, 1, "C")
        return (state, buf, types.int64, types.int64, iv, out)
    if entry == "hmac_bytes":                       # key and message bytes: no array views
        message = types.Bytes(types.uint8, 1, "C", readonly=True)
        return (iv, message, message, out)
    return (iv, data, data, types.int64, types.int64, out)        # pbkdf2


def entry(spec, name):
    """The compiled ``name`` entry ("hmac", "hmac_bytes", "hmac_states", "hmac_final",
    "hmac_rows", "hmac_chunks", "hmac_grid_chunks", "pbkdf2") serving ``spec``
    now, or None."""
    if spec.family not in _algorithms.MERKLE_DAMGARD:
        return None
    backend = _dispatch.kernels_for(spec).backend
    key = (backend, name, _cpu.jit_enabled())
    func = _compiled.get(key)
    if func is None and name in _CHUNKS:
        if entry(spec, "hmac_rows") is None:        # compiled (or loaded) first: called by address
            return None
        with _lock:
            func = _compiled.get(key)
            if func is None:
                func = _compiled[key] = _dispatch.chunks_entry(
                    _CHUNKS[name], backend.module.hmac_rows, _signature(spec.word, "hmac_rows"))
    if func is None:
        with _lock:
            func = _compiled.get(key)
            if func is None:
                function = _FUNCTION.get(name, name)
                func = getattr(backend.module, function, None)
                if func is None:
                    return None
                if _cpu.jit_enabled():
                    compiled = func.compile(_signature(spec.word, name))
                    if name == "hmac_bytes":        # called with a bytes output just made
                        compiled = _dispatch.bytes_builtin(
                            func, _signature(spec.word, name),
                            f"{backend.family}_{backend.name}_hmac") or compiled
                    func = compiled
                elif name == "hmac_bytes":
                    func = _dispatch._into_fresh_bytes(func)
                _compiled[key] = func
    return func
