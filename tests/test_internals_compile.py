"""Tests of the ``_internals`` seams that cut Numba's compile time on the generated kernels
(sections 10, 11 and 15-18: SSA in long blocks, operator types, literal types, statement
variables, error markup, inlined overloads): each replacement gives Numba's own answers, and
Numba still calls it, so a Numba upgrade that moves one fails here instead of silently
compiling slower or differently. The other seams are tested in tests/test_internals.py."""
import collections
import operator
import sys

import numpy as np
import pytest

numba = pytest.importorskip("numba")
if numba.config.DISABLE_JIT:
    pytest.skip("the seams are in compiled code (NUMBA_DISABLE_JIT=1)", allow_module_level=True)

from jitdigest.kernels import _internals  # noqa: E402


# --- 10. Numba's SSA pass in long blocks --------------------------------------------------

def test_stmt_index_gives_numbas_answers():
    """The replacement answers as Numba's linear scan does, for statements in and out of the
    block, every ``stop`` (the default -1, 0, inside, past the end, negative), before and
    after the body changes; and it is the one Numba's SSA pass calls."""
    import random

    from numba.core import ir, ssa
    assert ssa._FixSSAVars._stmt_index is _internals.stmt_index
    original = _internals.NUMBA_STMT_INDEX
    scope, loc = ir.Scope(None, ir.Loc("f", 1)), ir.Loc("f", 1)

    def assign(i):
        return ir.Assign(ir.Const(i, loc), scope.redefine("x", loc), loc)

    rng = random.Random(7)
    ours, numbas, checked = ssa._FixSSAVars({}), ssa._FixSSAVars({}), 0
    block = ir.Block(scope, loc)
    block.body = [assign(i) for i in range(40)]
    outside = [assign(-1), ir.Assign(ir.Expr.phi(loc), scope.redefine("x", loc), loc)]
    for change in range(4):
        if change == 1:
            block.body.append(assign(99))                   # longer, same list
        elif change == 2:
            block.body = block.body[5:]                     # another list
        elif change == 3:
            block.body[3] = outside[0]                      # same list, same length
            del ours._jitdigest_positions                   # (never done by Numba's pass)
        n = len(block.body)
        for stmt in block.body + outside:
            for stop in (-1, -2, -n, -n - 3, 0, 1, n // 2, n - 1, n, n + 5, rng.randrange(n)):
                assert ours._stmt_index(stmt, block, stop) == \
                    original(numbas, stmt, block, stop), (change, stop)
                checked += 1
            assert ours._stmt_index(stmt, block) == original(numbas, stmt, block)
    assert checked > 1500


def test_long_blocks_compile_without_a_quadratic_ssa_pass():
    """A loop whose body is one long block (500 statements reassigning one variable, as the
    generated lane kernels' rounds do) compiles, and Numba's SSA pass looks statements up
    through the replacement."""
    from numba.core import ssa
    lines = ["def f(x, n):", "    t = x", "    for _ in range(n):"]
    lines += [f"        t = t * 3 + {i}" for i in range(500)]
    lines.append("    return t")
    namespace = {}
    exec("\n".join(lines), namespace)
    calls = []
    replacement = ssa._FixSSAVars._stmt_index

    def counting(self, *args, **kwargs):
        calls.append(1)
        return replacement(self, *args, **kwargs)
    ssa._FixSSAVars._stmt_index = counting
    try:
        f = numba.njit(namespace["f"])
        expected = 5
        for i in range(500):
            expected = (expected * 3 + i) % (1 << 64)
        assert f(5, 1) % (1 << 64) == expected
    finally:
        ssa._FixSSAVars._stmt_index = replacement
    assert calls, "Numba's SSA pass no longer calls _stmt_index: see _internals/ssa.py"


# --- 11. an operator on scalars, typed once -----------------------------------------------

def test_operator_types_are_numbas_and_new_overloads_are_seen():
    """Remembered answers equal Numba's own, first time and again, for operators on scalar
    numbers (literal or not); other calls go to Numba untouched; a failure is not remembered,
    and an operator overload registered later is used."""
    import operator

    from numba.core import types
    from numba.core.registry import cpu_target
    from numba.core.types import functions
    assert functions.BaseFunction.get_call_type is _internals.call_type
    context = cpu_target.typing_context
    context.refresh()
    scalars = [types.uint32, types.uint64, types.int64, types.uint8, types.boolean,
               types.float64, types.IntegerLiteral(7), types.BooleanLiteral(True)]
    ops = [operator.add, operator.xor, operator.rshift, operator.lshift, operator.or_,
           operator.and_, operator.lt, operator.mul, operator.floordiv, operator.invert]
    checked = 0
    for op in ops:
        fnty = context.resolve_value_type(op)
        for a in scalars:
            for b in scalars:
                args = (a,) if op is operator.invert else (a, b)
                try:
                    want = _internals.NUMBA_GET_CALL_TYPE(fnty, context, args, {})
                except Exception as exc:
                    want = type(exc)
                for _ in range(2):
                    try:
                        got = fnty.get_call_type(context, args, {})
                    except Exception as exc:
                        got = type(exc)
                    assert got == want, (op, args)
                    checked += 1
    assert checked > 1000
    array = types.Array(types.uint32, 1, "C")
    add = context.resolve_value_type(operator.add)
    assert add.get_call_type(context, (array, array), {}) == \
        _internals.NUMBA_GET_CALL_TYPE(add, context, (array, array), {})

    def matmul(a, b):
        return a @ b
    with pytest.raises(numba.core.errors.TypingError):
        numba.njit(matmul)(3, 4)                       # no int @ int in Numba

    @numba.extending.overload(operator.matmul)
    def _int_matmul(a, b):
        if isinstance(a, types.Integer) and isinstance(b, types.Integer):
            return lambda a, b: a * b + 1
    assert numba.njit(matmul)(3, 4) == 13


# --- 15. literal types asked for without an exception ---------------------------------------

def test_literal_answers_are_numbas_and_no_exception_is_raised_for_a_binop():
    """The replacements answer as Numba's own functions do for values with a literal type and
    without (an Omitted or None where Numba raises and catches), a Literal passed in still
    raises; Numba's lowering and type inference still call them, and compiling a function of
    binary operators on variables raises no LiteralTypingError."""
    import types as pytypes

    from numba.core import errors, ir, lowering, types
    assert lowering._lit_or_omitted is _internals.lit_or_omitted
    assert types.maybe_literal is _internals.maybe_literal
    values = [ir.UNDEFINED, 7, -1, True, 2.5, "s", None, np.uint64(3), np.int32(4), (1, 2),
              np, int, len, lowering, pytypes.SimpleNamespace(), b"x", 1j]

    def answer(fn, value):
        try:
            return ("ok", fn(value))
        except Exception as exc:
            return (type(exc).__name__,)
    checked = 0
    for value in values + [types.IntegerLiteral(3)]:
        assert answer(_internals.lit_or_omitted, value) == \
            answer(_internals.NUMBA_LIT_OR_OMITTED, value), value
        assert answer(_internals.maybe_literal, value) == \
            answer(_internals.NUMBA_MAYBE_LITERAL, value), value
        checked += 1
    assert answer(_internals.maybe_literal, types.IntegerLiteral(3))[0] == "ValueError"
    assert checked == len(values) + 1

    calls = collections.Counter()
    raised = []

    def counting(name, fn):
        def wrapper(*args, **kws):
            calls[name] += 1
            return fn(*args, **kws)
        return wrapper
    init = errors.LiteralTypingError.__init__

    def record(self, *args, **kws):
        raised.append(args)
        init(self, *args, **kws)
    lowering._lit_or_omitted = counting("lower", _internals.lit_or_omitted)
    types.maybe_literal = counting("typing", _internals.maybe_literal)
    errors.LiteralTypingError.__init__ = record
    try:
        @numba.njit
        def mix(a, b):
            t = a ^ (b & np.uint32(0xff))
            return np.uint32(t + (a << np.uint32(3)) + len((1, 2)))
        assert mix(np.uint32(5), np.uint32(0x1234)) == np.uint32(
            (5 ^ (0x1234 & 0xff)) + (5 << 3) + 2)
    finally:
        lowering._lit_or_omitted = _internals.lit_or_omitted
        types.maybe_literal = _internals.maybe_literal
        errors.LiteralTypingError.__init__ = init
    assert calls["lower"] >= 8 and calls["typing"] >= 1, \
        f"Numba no longer calls these ({dict(calls)}): see _internals/literals.py"
    assert not raised, raised


# --- 16. an IR statement's variables ------------------------------------------------------

def test_statement_variables_are_numbas():
    """For every statement of two functions' IR (straight-line word arithmetic, a loop, calls,
    tuples, getitem/setitem) and for values Numba's IR does not hold (subclasses of list,
    dict and Var, nesting), the replacement lists the same Var objects in the same order as
    Numba's walk; and Numba's use/def analysis reaches it."""
    from numba.core import analysis, ir
    from numba.core.compiler import run_frontend
    assert ir.Inst._rec_list_vars is _internals.rec_list_vars
    original = _internals.NUMBA_REC_LIST_VARS

    def words(a, b, n):
        x = np.uint32(a ^ (b >> np.uint32(3)))
        for i in range(n):
            x = np.uint32(x + (a & b) + i)
            a, b = b, x
        return (x, a, b)

    def rows(values, out, k):
        t = (values[0], values[k])
        for i in range(values.shape[0]):
            out[i] = values[i] * k + len(t)
        return min(t[0], t[1], key=None)

    def numbas(stmt):
        ir.Inst._rec_list_vars = original
        try:
            return stmt.list_vars()
        finally:
            ir.Inst._rec_list_vars = _internals.rec_list_vars

    checked = 0
    for func in (words, rows):
        for block in run_frontend(func).blocks.values():
            for stmt in block.body:
                assert stmt.list_vars() == numbas(stmt), stmt
                assert [id(v) for v in stmt.list_vars()] == [id(v) for v in numbas(stmt)]
                checked += 1
    assert checked > 40

    scope, loc = ir.Scope(None, ir.Loc("f", 1)), ir.Loc("f", 1)
    v1, v2 = scope.redefine("a", loc), scope.redefine("b", loc)

    class Vars(list):
        pass

    class Table(dict):
        pass

    class Named(ir.Var):
        pass
    v3 = Named(scope, "c", loc)
    expr = ir.Expr.binop(operator.add, v1, v2, loc)
    for value in ([v1, (v2, {"k": v3, "l": [expr, loc]})], Vars([v2, v1]), Table(x=v1, y=(v2,)),
                  (), {}, None, 3, "v", v3, expr, (loc, ir.Const(1, loc), [[[v2]]])):
        assert _internals.rec_list_vars(expr, value) == original(expr, value), value

    calls = collections.Counter()

    def counting(self, val):
        calls["walk"] += 1
        return _internals.rec_list_vars(self, val)
    ir.Inst._rec_list_vars = counting
    try:
        analysis.compute_use_defs(run_frontend(words).blocks)
    finally:
        ir.Inst._rec_list_vars = _internals.rec_list_vars
    assert calls["walk"] > 10, "Numba's use/def analysis no longer walks statements here"


# --- 17. error text marked up without wrapping the streams ---------------------------------

def test_error_markup_is_numbas_text():
    """Where Numba marks error text up (colorama installed), the replacement returns Numba's
    own text for every colour and style of every theme, and raises as Numba does for text
    that cannot be encoded; sys.stdout and sys.stderr are left as they were."""
    from numba.core import errors
    if _internals.NUMBA_MARKUP is None:
        pytest.skip("colorama is not installed: Numba marks nothing up")
    scheme = errors.HighlightColorScheme
    assert scheme._markup is _internals.markup
    original, ours = _internals.NUMBA_MARKUP, _internals.markup
    checked = 0
    out, err = sys.stdout, sys.stderr
    for theme in errors.themes.values():
        colours = set(theme.values()) | {None, ""}
        for colour in colours:
            for style in (errors.Style.BRIGHT, None, "", errors.Style.DIM):
                for msg in ("Cannot determine Numba type of <class 'function'>", "", "é ∑ 🎉"):
                    assert ours(None, msg, colour, style) == original(None, msg, colour, style)
                    checked += 1
            assert ours(None, "x", colour) == original(None, "x", colour)
    assert checked > 50
    with pytest.raises(UnicodeEncodeError):
        original(None, "\ud800")
    with pytest.raises(UnicodeEncodeError):
        ours(None, "\ud800")
    assert sys.stdout is out and sys.stderr is err
    assert errors.termcolor().errmsg("m") == original(errors.termcolor(), "m",
                                                      errors.termcolor()._errmsg)


# --- 18. jitdigest's inlined overloads not compiled on their own ---------------------------

def test_inlined_overloads_are_not_compiled_on_their_own():
    """Compiling kernels that call jitdigest's inlined helpers (scratch words of new sizes,
    so that Numba types them afresh) compiles none of the helpers' implementations on its own,
    builds a helper's IR once for the same argument types however many calls and kernels
    there are, and gives right answers; a helper's error still raises at run time; an inlined
    overload defined outside jitdigest is left to Numba (compiled on its own, as Numba does)."""
    from numba.core import event
    from numba.core.inline_closurecall import InlineWorker
    from numba.core.typing import templates

    from jitdigest.kernels._jit import new_words, scratch
    assert templates._OverloadFunctionTemplate._get_jit_decorator is \
        _internals.get_jit_decorator
    assert templates._OverloadFunctionTemplate.generic is _internals.generic

    def theirs(n):
        return n

    @numba.extending.overload(theirs, inline="always")
    def _theirs(n):
        return lambda n: n + 1

    compiled = []

    class Listener(event.Listener):
        def on_start(self, ev):
            compiled.append(ev.data["dispatcher"].py_func.__qualname__)

        def on_end(self, ev):
            pass

    @numba.njit
    def words(k):
        w = new_words(13, np.uint32)
        s = scratch(k, np.uint64, 11)
        for i in range(k):
            s[i] = i * 3
        t = 0
        for i in range(13):
            w[i] = np.uint32(i + k)
            t += w[i]
        return t + s[k - 1] + theirs(k)

    listener = Listener()
    with event.install_listener("numba:compile", listener):
        assert words(5) == sum(i + 5 for i in range(13)) + 12 + 6
    assert any(name.endswith("<locals>.words") for name in compiled), compiled
    ours = [n for n in compiled if "_new_words" in n or "_scratch" in n]
    assert not ours, f"compiled on their own: {ours}"
    assert any("_theirs" in n for n in compiled), compiled
    with pytest.raises(ValueError, match="scratch words over their cap"):
        words(12)

    built = collections.Counter()
    untyped = InlineWorker.run_untyped_passes

    def counting(self, func, *args, **kws):
        built[func.__qualname__] += 1
        return untyped(self, func, *args, **kws)

    @numba.njit
    def first(x):
        w = new_words(17, np.uint64)
        v = new_words(17, np.uint64)
        w[3] = x
        v[16] = x + 1
        return w[3] + v[16] + w[0]

    @numba.njit
    def second(x):
        w = new_words(17, np.uint64)
        w[16] = x * 2
        return w[16] + w[1]
    InlineWorker.run_untyped_passes = counting
    try:
        assert first(np.uint64(4)) == 9 and second(np.uint64(5)) == 10
    finally:
        InlineWorker.run_untyped_passes = untyped
    assert built["_new_words.<locals>.impl"] == 1, built
