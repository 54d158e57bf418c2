"""Section 20 of ``_internals``: the compile-speed replacements (sections 10, 11 and 15-18)
active only while jitdigest compiles its own kernels.

``ours()`` holds Numba's global compiler lock, puts the replacements in place when the
outermost one is entered and Numba's own objects back when it exits, so a user's ``@njit``
function is compiled by unmodified Numba. ``ours_dispatcher(d)`` makes a CPU dispatcher
compile (a first call, a caller's typing, an explicit ``compile(sig)``, a cache load) inside
it (``Dispatcher.compile``, its documented method, overridden in a subclass).

Part of the one package that touches Numba's and llvmlite's private internals (see
``__init__``); tested in tests/test_internals_compile.py and tests/test_numba_untouched.py."""
import contextlib

from numba.core.compiler_lock import global_compiler_lock
from numba.core.registry import CPUDispatcher

_ABSENT = object()
_REPLACEMENTS = []          # (owner, attribute name, replacement)
_state = {"depth": 0, "saved": ()}


def replace(owner, name, replacement):
    """Register ``replacement`` for ``owner.name`` (a module or class), for ``ours()``; nothing
    if this Numba has no such attribute (``missing()`` says so)."""
    if owner is not None and name in vars(owner):
        _REPLACEMENTS.append((owner, name, replacement))


@contextlib.contextmanager
def ours():
    """Numba's compiler lock held, and the registered replacements in place (re-entrant: the
    outermost exit puts back what was there when the outermost entered)."""
    with global_compiler_lock:
        if _state["depth"] == 0:
            _state["saved"] = [(owner, name, vars(owner).get(name, _ABSENT))
                               for owner, name, _ in _REPLACEMENTS]
            for owner, name, replacement in _REPLACEMENTS:
                setattr(owner, name, replacement)
        _state["depth"] += 1
        try:
            yield
        finally:
            _state["depth"] -= 1
            if _state["depth"] == 0:
                for owner, name, original in reversed(_state["saved"]):
                    if original is _ABSENT:
                        delattr(owner, name)
                    else:
                        setattr(owner, name, original)
                _state["saved"] = ()


class OursDispatcher(CPUDispatcher):
    """A CPU dispatcher that compiles (or loads from its cache) inside ``ours()``."""

    def compile(self, sig):
        with ours():
            return super().compile(sig)


def ours_dispatcher(dispatcher):
    """``dispatcher`` (a CPU ``numba.njit`` dispatcher), compiling inside ``ours()``."""
    if not isinstance(dispatcher, OursDispatcher):
        dispatcher.__class__ = OursDispatcher
    return dispatcher
