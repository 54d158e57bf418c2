"""Tests of the ``_internals`` seams that cut Numba's compile time on the generated kernels
(sections 10, 11 and 18: SSA in long blocks, operator types, inlined overloads, and section 20,
``ours()``, the only place they are in Numba's): each replacement gives Numba's own answers,
and Numba calls it inside ``ours()`` and its own function outside, so a Numba upgrade that
moves one fails here instead of silently compiling slower or differently. The other seams are
tested in tests/test_internals.py; tests/test_numba_untouched.py checks a whole process."""
import collections

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
    original = _internals.NUMBA_STMT_INDEX
    assert ssa._FixSSAVars._stmt_index is original
    with _internals.ours():
        assert ssa._FixSSAVars._stmt_index is _internals.stmt_index
    scope, loc = ir.Scope(None, ir.Loc("f", 1)), ir.Loc("f", 1)

    def assign(i):
        return ir.Assign(ir.Const(i, loc), scope.redefine("x", loc), loc)

    rng = random.Random(7)
    ours, numbas, checked = ssa._FixSSAVars({}), ssa._FixSSAVars({}), 0
    ours._stmt_index = _internals.stmt_index.__get__(ours)
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

    def counting(self, *args, **kwargs):
        calls.append(1)
        return _internals.stmt_index(self, *args, **kwargs)
    f = numba.njit(namespace["f"])
    expected = 5
    for i in range(500):
        expected = (expected * 3 + i) % (1 << 64)
    with _internals.ours():
        ssa._FixSSAVars._stmt_index = counting
        assert f(5, 1) % (1 << 64) == expected
    assert ssa._FixSSAVars._stmt_index is _internals.NUMBA_STMT_INDEX
    assert calls, "Numba's SSA pass no longer calls _stmt_index: see _internals/ssa.py"


# --- 11. an operator on scalars, typed once -----------------------------------------------

def test_operator_types_are_numbas_and_new_overloads_are_seen():
    """Remembered answers equal Numba's own, first time and again, for operators on scalar
    numbers (literal or not); other calls go to Numba untouched; a failure is not remembered,
    and an operator overload registered later is used."""
    from numba.core.types import functions
    assert functions.BaseFunction.get_call_type is _internals.NUMBA_GET_CALL_TYPE
    with _internals.ours():
        assert functions.BaseFunction.get_call_type is _internals.call_type
        _check_operator_types()


def _check_operator_types():
    import operator

    from numba.core import types
    from numba.core.registry import cpu_target
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


# --- 18. jitdigest's inlined overloads not compiled on their own ---------------------------

def test_inlined_overloads_are_not_compiled_on_their_own():
    """Compiling kernels that call jitdigest's inlined helpers (scratch words of new sizes,
    so that Numba types them afresh) compiles none of the helpers' implementations on its own,
    builds a helper's IR once for the same argument types however many calls and kernels
    there are, and gives right answers; a helper's error still raises at run time; an inlined
    overload defined outside jitdigest is left to Numba (compiled on its own, as Numba does)."""
    from numba.core.typing import templates

    from jitdigest.kernels._jit import new_words, scratch
    template = templates._OverloadFunctionTemplate
    assert template.generic is _internals.NUMBA_GENERIC
    with _internals.ours():
        assert template._get_jit_decorator is _internals.get_jit_decorator
        assert template.generic is _internals.generic
        _check_inlined_overloads(new_words, scratch)


def _check_inlined_overloads(new_words, scratch):
    from numba.core import event
    from numba.core.inline_closurecall import InlineWorker

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


# --- 20. the replacements in Numba's only while jitdigest compiles ---------------------------

def _replaced():
    """Which of the functions sections 10, 11 and 18 stand in for are replaced now."""
    from numba.core import ssa
    from numba.core.types import functions
    from numba.core.typing import templates
    template = templates._OverloadFunctionTemplate
    return [ssa._FixSSAVars._stmt_index is _internals.stmt_index,
            functions.BaseFunction.get_call_type is _internals.call_type,
            template._get_jit_decorator is _internals.get_jit_decorator,
            template.generic is _internals.generic]


def test_ours_replaces_under_the_compiler_lock_and_restores_when_the_outermost_exits():
    """Inside ``ours()`` (nested or not) every replacement is in place and Numba's compiler lock
    is held by this thread; after the outermost exits (also by an exception), Numba's own
    objects are back and the lock is released."""
    import threading

    lock = _internals.compiler_lock()

    def lock_free_elsewhere():
        free = []
        t = threading.Thread(target=lambda: free.append(lock.acquire(timeout=0.01)
                                                         and (lock.release() or True)))
        t.start()
        t.join()
        return free[0]
    assert _replaced() == [False] * 4 and lock_free_elsewhere()
    with _internals.ours():
        assert _replaced() == [True] * 4 and not lock_free_elsewhere()
        with pytest.raises(KeyError):
            with _internals.ours():
                assert _replaced() == [True] * 4
                raise KeyError("inner")
        assert _replaced() == [True] * 4
    assert _replaced() == [False] * 4 and lock_free_elsewhere()


def test_jitdigest_dispatchers_compile_inside_ours_and_users_do_not():
    """A dispatcher made by ``ours_dispatcher`` types its body with the replacements in place (a
    first call, a caller's typing, ``compile(sig)``); a plain ``numba.njit`` function that calls
    it is typed on Numba's own functions before and after, with the replacements in place only
    while the callee compiles."""
    seen = []

    def probe(x):
        return x

    @numba.extending.overload(probe)
    def _probe(x):
        seen.append(all(_replaced()))
        return lambda x: x + 1

    @numba.njit
    def kernel_body(x):
        return probe(x) * 2
    kernel = _internals.ours_dispatcher(kernel_body)
    assert kernel(np.int64(3)) == 8 and seen == [True]
    kernel.compile((numba.types.float64,))
    assert seen == [True, True]

    @numba.njit
    def users(x):
        return probe(x) + kernel(np.int32(x))
    assert users(np.int16(1)) == 2 + 4
    assert seen == [True, True, False, True], seen
    assert _replaced() == [False] * 4
