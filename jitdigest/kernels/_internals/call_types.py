"""Section 11 of ``_internals``: an operator on scalar numbers typed once per typing context and
target (``BaseFunction.get_call_type``), not once per function.

Part of the one package that touches Numba's and llvmlite's private internals (see
``__init__``); tested in tests/test_internals_compile.py."""
from numba.core import types


# The kernels are mostly ``a + b``, ``a ^ b``, ``a >> 7`` on uint32/uint64 scalars, thousands of
# times over; Numba types each by running operator.add's templates in turn (NumPy's ufunc rules
# among them), with a memo that lasts one function's typing. Measured (a fresh cache, AMD EPYC
# znver1, with section 10): SHA-256 lanes8 ``hash_rows`` 30.4 -> 17.0 s, MD5 lanes8 13.3 ->
# 8.6 s, SHA3 lanes4 7.0 -> 5.1 s, SHA-1 portable one-shot 13.6 -> 11.6 s. Those templates give
# the same answer for the same argument types: the answer (a signature; a failure raises and is
# not remembered) is kept per function type (a new overload of an operator makes a new one,
# ``BaseFunction.augment``), typing context and target, for operators only and only when every
# argument is a scalar number (integer, boolean, float, literal or not) and no keywords.
import operator as _operator  # noqa: E402

from numba.core.target_extension import get_local_target as _local_target  # noqa: E402
from numba.core.types import functions as _functions  # noqa: E402

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
    key = (self, context, _local_target(context), tuple(args))
    sig = _typed.get(key)
    if sig is None:
        sig = NUMBA_GET_CALL_TYPE(self, context, args, kws)
        if sig is not None:
            _typed[key] = sig
    return sig


_functions.BaseFunction.get_call_type = call_type
