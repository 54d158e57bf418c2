"""Section 11 of ``_internals``: an operator on scalar numbers typed once per function type and
typing context (``BaseFunction.get_call_type``), not once per compiled function.

The kernels are mostly ``a + b``, ``a ^ b``, ``a >> 7`` on uint32/uint64 scalars; Numba types
each by trying the operator's templates in turn, with a memo that lasts one function's typing.
The answer (a signature; a failure is not remembered) is kept per function type (a new
overload of an operator makes a new one, ``BaseFunction.augment``), typing context (one per
target) and argument types, for operators only and only when every argument is a scalar number
and there are no keywords. In place of Numba's only inside ``ours()`` (section 20).

Part of the one package that touches Numba's and llvmlite's private internals (see
``__init__``); tested in tests/test_internals_compile.py."""
import operator as _operator

from numba.core import types
from numba.core.types import functions as _functions

from .ours import replace

NUMBA_GET_CALL_TYPE = _functions.BaseFunction.get_call_type
_OPERATORS = frozenset(getattr(_operator, name) for name in dir(_operator)
                       if not name.startswith("_"))
_SCALARS = (types.Integer, types.Boolean, types.Float)
_typed = {}


def call_type(self, context, args, kws):
    try:
        known = (not kws and self.typing_key in _OPERATORS
                 and all(isinstance(a, _SCALARS) for a in args))
    except TypeError:                       # an unhashable typing key: not an operator
        known = False
    if not known:
        return NUMBA_GET_CALL_TYPE(self, context, args, kws)
    key = (self, context, tuple(args))
    sig = _typed.get(key)
    if sig is None:
        sig = NUMBA_GET_CALL_TYPE(self, context, args, kws)
        if sig is not None:
            _typed[key] = sig
    return sig


replace(_functions.BaseFunction, "get_call_type", call_type)
