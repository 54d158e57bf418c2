"""The keyed entry points (HMAC, PBKDF2: ``jitdigest/kernels/_hmac.py``'s drivers, in every
Merkle-Damgard backend's record) for an algorithm, compiled on first use.

Each is the one of the backend ``dispatch`` chose for the algorithm (SHA-NI where usable),
compiled for exactly one signature (``kernels/_contract.SIGNATURES``) by
``dispatch.compile_entry`` and called through Numba's compiled wrapper; ``hmac_bytes`` (key and
message ``bytes``) as a builtin function that writes into a ``bytes`` output its caller has
just made (``dispatch.bytes_builtin``), where this Python has one. ``entry(spec, "hmac")`` is
None for the other families; callers then use hash objects.
"""

from ..base import algorithms as _algorithms, fork as _fork
from . import cpu as _cpu, dispatch as _dispatch
from ..base.lazy_numpy import on_first_use
from ..kernels._contract import signature

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


def entry(spec, name):
    """The compiled ``name`` entry ("hmac", "hmac_bytes", "hmac_states", "hmac_final",
    "hmac_rows", "hmac_chunks", "hmac_grid_chunks", "pbkdf2") serving ``spec``
    now, or None."""
    if spec.family not in _algorithms.MERKLE_DAMGARD:
        return None
    backend = _dispatch.kernels_for(spec).backend
    key = (backend, name, _cpu.jit_enabled())
    func = _compiled.get(key)
    if func is None:
        with _lock:
            func = _compiled.get(key)
            if func is None:
                func = _dispatch.compile_entry(backend, spec.word, name)
                if func is None:
                    return None
                if name == "hmac_bytes":            # called with a bytes output just made
                    if _cpu.jit_enabled():
                        func = _dispatch.bytes_builtin(
                            backend.hmac, signature(name, spec.word),
                            f"{backend.family}_{backend.name}_hmac") or func
                    else:
                        func = _dispatch._into_fresh_bytes(func)
                _compiled[key] = func
    return func
