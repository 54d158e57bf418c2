"""Section 16 of ``_internals``: listing the variables of a Numba IR statement
(``ir.Inst._rec_list_vars``) by each value's type, looked up once per type, instead of up to
four ``isinstance`` checks per value; replaced, on import, by a function with the same answers.

Part of the one package that touches Numba's and llvmlite's private internals (see
``__init__``); tested in tests/test_internals_compile.py."""

# Numba's passes rebuild every block's used and defined variables after most passes
# (``analysis.compute_use_defs``, from ``PostProcessor``), by walking each statement's
# attributes: a ``Var`` is listed, an instruction is asked for its own, lists, tuples and dicts
# are walked, anything else (a ``Loc``, a string, a constant, an operator) gives nothing. The
# generated kernels' blocks are thousands of statements long. Profiled over a whole warmup
# (AMD EPYC znver3): 15.9 million calls and 81 million ``isinstance`` checks; the statements'
# locations alone, checked against four classes each, were a quarter of them. The replacement
# classifies a value's type once (``issubclass`` against the same classes, so subclasses land
# where ``isinstance`` puts them) and returns the same list, in the same order.
from numba.core import ir as _ir

NUMBA_REC_LIST_VARS = getattr(getattr(_ir, "Inst", None), "_rec_list_vars", None)
_OTHER, _VAR, _INST, _SEQUENCE, _DICT = range(5)
_KINDS = {}                                  # type -> its kind: grows with the types seen


def _kind(t):
    kind = (_VAR if issubclass(t, _ir.Var) else _INST if issubclass(t, _ir.Inst)
            else _SEQUENCE if issubclass(t, (list, tuple)) else _DICT if issubclass(t, dict)
            else _OTHER)
    _KINDS[t] = kind
    return kind


def rec_list_vars(self, val):
    kinds = _KINDS
    kind = kinds.get(type(val))
    if kind is None:
        kind = _kind(type(val))
    if kind == _VAR:
        return [val]
    if kind == _INST:
        return val.list_vars()
    if kind == _OTHER:
        return []
    found = []
    for v in (val.values() if kind == _DICT else val):
        k = kinds.get(type(v))
        if k is None:
            k = _kind(type(v))
        if k == _VAR:
            found.append(v)
        elif k == _INST:
            found.extend(v.list_vars())
        elif k != _OTHER:
            found.extend(rec_list_vars(self, v))
    return found


if NUMBA_REC_LIST_VARS is not None:
    _ir.Inst._rec_list_vars = rec_list_vars
