"""The BLAKE3 objects' kernels: which backend module serves now (``_kernels``), and its entry
points, each compiled for one signature on first use (or loaded from the kernel cache) and then
called through Numba's compiled wrapper, or for a one-shot ``bytes`` digest as a builtin
function (``oneshot_bytes``). Importing this module imports no Numba.
"""
from collections.abc import Iterable
from types import ModuleType

import numpy as np

from ..base.fork import cached_property
from ..engine import cpu as _cpu, dispatch as _dispatch, notice as _notice
from ..kernels.blake3 import backends
from ..kernels.blake3.layout import CHUNK_LEN

_U64_MAX = 2 ** 64 - 1


def _signatures():
    from numba import types
    state = types.Array(types.uint32, 1, "C")
    params = types.Array(types.uint32, 1, "C", readonly=True)
    buf = types.Array(types.uint8, 1, "C")
    data = types.Array(types.uint8, 1, "C", readonly=True)
    message = types.Bytes(types.uint8, 1, "C", readonly=True)
    out = types.ByteArray(types.uint8, 1, "C")
    i64 = types.int64
    return {
        "update": (state, buf, i64, data),
        "final": (state, buf, i64, i64, i64, out),       # ..., output block, byte in it, out
        "oneshot": (params, message, i64, i64, out),
        "oneshot_array": (params, data, i64, i64, out),
        "flush": (state, buf, i64),
        "parallel_cvs": (state, data, i64, i64, i64, state),
        "push_cvs": (state, state, i64, i64),
    }


# the entries the objects use (also what ``jitdigest warmup`` compiles for them)
ENTRIES = ("update", "final", "oneshot", "oneshot_array", "flush", "parallel_cvs", "push_cvs")


class _Kernels:
    """The entry points of one backend module, each compiled (or loaded from the cache) on
    first use and then called through Numba's compiled wrapper (no type resolution per call)."""

    def __init__(self, module):
        self._module = module
        # one-shot inputs of this many bytes or more go to the lanes' ``oneshot_array``
        self.array_from = getattr(module, "GROUP_MIN", _U64_MAX)
        # bytes per group of chunks the lanes hash side by side (0: no lanes, no threads)
        self.group_len = (module.BACKEND.lanes * CHUNK_LEN
                          if getattr(module, "parallel_cvs", None) is not None else 0)
        # the longest input ``max_threads`` leaves on one thread whatever the thread count
        # (``_update_threads`` gives a task two groups at least, and two threads a task each)
        self.split_from = 4 * self.group_len

    def _compiled(self, function, entry):
        if _cpu.jit_enabled():
            with _notice.compiling("blake3"):
                return function.compile(_signatures()[entry])
        return function

    @cached_property
    def update(self):
        return self._compiled(self._module.update, "update")

    @cached_property
    def final(self):
        return self._compiled(self._module.final, "final")

    @cached_property
    def oneshot(self):
        return self._compiled(self._module.oneshot, "oneshot")

    def _bytes_entry(self, entry, compiled):
        """``entry`` (``oneshot``, ``oneshot_array``) for a ``bytes`` message, writing into a
        ``bytes`` output its caller has just made and returning it: the compiled entry as a
        builtin function (one C call, no argument parsing or unboxing by Numba's wrapper:
        ``engine.dispatch.bytes_builtin``), or, where there is none (interpreted, another
        Python), ``compiled`` into a ``bytearray`` copied into new ``bytes``."""
        if _cpu.jit_enabled():
            builtin = _dispatch.bytes_builtin(
                getattr(self._module, entry), _signatures()[entry],
                "blake3_%s_%s" % (self._module.__name__.rsplit(".", 1)[1], entry))
            if builtin is not None:
                return builtin
        as_array = entry == "oneshot_array"

        def call(params, data, block_index, skip, out):
            written = bytearray(len(out))
            if as_array:
                data = np.frombuffer(data, np.uint8)
            compiled(params, data, block_index, skip, written)
            return bytes(written)
        return call

    @cached_property
    def oneshot_bytes(self):
        """``oneshot`` as a builtin taking ``bytes`` (``_bytes_entry``)."""
        return self._bytes_entry("oneshot", self.oneshot)

    @cached_property
    def oneshot_array_bytes(self):
        """``oneshot_array`` as a builtin taking ``bytes`` (``_bytes_entry``)."""
        return self._bytes_entry("oneshot_array", self.oneshot_array)

    @cached_property
    def oneshot_array(self):
        return self._compiled(self._module.oneshot_array, "oneshot_array")

    @cached_property
    def flush(self):
        return self._compiled(self._module.flush, "flush")

    @cached_property
    def parallel_cvs(self):
        return self._compiled(self._module.parallel_cvs, "parallel_cvs")

    @cached_property
    def push_cvs(self):
        return self._compiled(self._module.push_cvs, "push_cvs")


# each entry as an attribute of a _Kernels (compiling it on first use), for ``compile_entries``
_ENTRY = {"update": lambda k: k.update, "final": lambda k: k.final,
          "oneshot": lambda k: k.oneshot, "oneshot_array": lambda k: k.oneshot_array,
          "flush": lambda k: k.flush, "parallel_cvs": lambda k: k.parallel_cvs,
          "push_cvs": lambda k: k.push_cvs}


_SETS = {}                  # backend name: its _Kernels
_CHOICE = (None, None)      # the _cpu.DISABLED object the choice was made under, the choice


def _kernels():
    """The kernels of the first backend usable now (``_cpu.usable``: the CPU, the JIT, the
    JITDIGEST_DISABLE switches). Every backend keeps the same state, so an object may be served
    by one and then another. The backend modules, and with them Numba, are imported on first
    use; the choice is made again only when the set of disabled switches is replaced."""
    global _CHOICE
    disabled = _cpu.DISABLED
    made_under, chosen = _CHOICE
    if made_under is not disabled:
        for module in backends():
            feature = getattr(module, "FEATURE", None)
            if feature is None or _cpu.usable(feature, module.SWITCH):
                break
        chosen = _SETS.get(module.__name__)
        if chosen is None:
            chosen = _SETS[module.__name__] = _Kernels(module)
        _CHOICE = (disabled, chosen)
    return chosen


# what ``blake3(data).digest()`` calls: the _cpu.DISABLED object the backend was chosen under,
# its ``oneshot_bytes`` (or None), ``array_from``, ``oneshot_array_bytes`` (or None) and the
# longest input ``max_threads`` leaves on one thread (its ``split_from``, or any length); each
# entry set by ``publish_oneshot`` once a digest has used it (so none is loaded unused)
ONESHOT = (None, None, 0, None, 0)


def publish_oneshot(array):
    """Put the chosen backend's ``oneshot_bytes`` (``array`` false) or ``oneshot_array_bytes``
    in ``ONESHOT`` (compiling or loading it), keeping the other if chosen under the same
    switches."""
    global ONESHOT
    chosen = _kernels()
    made_under = _CHOICE[0]
    was, small, _, large, _ = ONESHOT
    if was is not made_under:
        small = large = None
    if array:
        large = chosen.oneshot_array_bytes
    else:
        small = chosen.oneshot_bytes
    ONESHOT = (made_under, small, chosen.array_from, large, chosen.split_from or _U64_MAX)


def compile_entries(module: ModuleType, entries: Iterable[str]) -> None:
    """Compile (or load from the cache) those of ``entries`` a backend module has, as the
    objects will use them (``jitdigest warmup``)."""
    kernels = _SETS.get(module.__name__)
    if kernels is None:
        kernels = _SETS[module.__name__] = _Kernels(module)
    for entry in entries:
        if hasattr(module, entry):
            _ENTRY[entry](kernels)


def backend_name() -> str:
    """The name of the backend that serves BLAKE3 now ("avx512_x16", "avx2_x8" or "portable")."""
    return _kernels()._module.__name__.rsplit(".", 1)[1]
