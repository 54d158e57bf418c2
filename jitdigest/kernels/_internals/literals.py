"""Section 15 of ``_internals``: asking Numba for the literal type of a value it has no literal
type for answers without raising an exception, where Numba raises one and catches it.

Part of the one package that touches Numba's and llvmlite's private internals (see
``__init__``); tested in tests/test_internals_compile.py."""

# Numba's lowering of every ``a + b`` asks for the literal types of both operands
# (``numba.core.lowering._lit_or_omitted``) before it looks at whether they are constants at all;
# for a variable the value is ``ir.UNDEFINED``, ``types.literal`` raises LiteralTypingError and
# the caller catches it: four exceptions per binary operator. Each builds a highlighted message
# (colorama wraps the standard streams for each): 45 us, 13.5 us without highlighting.
# Measured (AMD EPYC znver1): 5,656 of them in MD5 lanes8 ``hash_rows``, 17,030 in SHA-512's
# lanes4 block function. Type inference asks the same for every global a kernel reads
# (``types.maybe_literal``): hundreds per kernel. The replacements give Numba's answers (tests
# compare the two) without the exception for a value whose type has no literal type
# (``Literal.ctor_map``), and call Numba's own function for every other value.
from numba.core import lowering as _lowering
from numba.core import types as _types
from numba.core.types import misc as _misc

NUMBA_LIT_OR_OMITTED = getattr(_lowering, "_lit_or_omitted", None)
NUMBA_MAYBE_LITERAL = getattr(_types, "maybe_literal", None)
_HAS_LITERAL = _misc.Literal.ctor_map         # type -> Literal class: filled as Numba loads


def _refused(value):
    """Whether ``types.literal(value)`` raises LiteralTypingError (a Literal passed in raises
    ValueError there: left to Numba's functions)."""
    return type(value) not in _HAS_LITERAL and not isinstance(value, _misc.Literal)


def lit_or_omitted(value):
    return _types.Omitted(value) if _refused(value) else NUMBA_LIT_OR_OMITTED(value)


def maybe_literal(value):
    return None if _refused(value) else NUMBA_MAYBE_LITERAL(value)


if NUMBA_LIT_OR_OMITTED is not None:
    _lowering._lit_or_omitted = lit_or_omitted
if NUMBA_MAYBE_LITERAL is not None:
    _types.maybe_literal = maybe_literal
