"""Section 18 of ``_internals``: an overload of jitdigest's that Numba inlines at IR level
(``cpu_overload``, ``inline="always"``) is not also compiled on its own for each argument types
and thrown away, and its IR is built and typed once per argument types, not at every call.

Typing a call of an overload, Numba makes its implementation's dispatcher and compiles it
(``_OverloadFunctionTemplate._build_impl``), then, for an inlined one, builds and types its IR
again (``generic``) and inlines that. Here the dispatcher may not compile (``_can_compile``,
Numba's own switch; it still folds the arguments, all ``generic`` asks of it), and ``generic``'s
answer (the signature and the inlining records it files in ``_inline_overloads`` and
``_compiled_overloads``) is kept per template, typing context, argument types and compiler
flags (the key of Numba's ``_impl_cache``) and filed again when asked. Only overloads defined in
jitdigest's modules and always inlined; in place of Numba's only inside ``ours()`` (section 20).

Part of the one package that touches Numba's and llvmlite's private internals (see
``__init__``); tested in tests/test_internals_compile.py."""
from numba.core import targetconfig as _targetconfig
from numba.core.typing import templates as _templates

from .ours import replace

_TEMPLATE = getattr(_templates, "_OverloadFunctionTemplate", None)
NUMBA_GET_JIT_DECORATOR = getattr(_TEMPLATE, "_get_jit_decorator", None)
NUMBA_GENERIC = getattr(_TEMPLATE, "generic", None)
_answers = {}
_PACKAGE = __name__.partition(".")[0] + "."


def _ours_inlined(template):
    inline = getattr(template, "_inline", None)
    module = getattr(getattr(template, "_overload_func", None), "__module__", None) or ""
    return inline is not None and inline.is_always_inline and module.startswith(_PACKAGE)


def get_jit_decorator(self):
    jitter = NUMBA_GET_JIT_DECORATOR(self)
    if not _ours_inlined(self):
        return jitter

    def not_compiling(**options):
        decorate = jitter(**options)

        def make(pyfunc):
            dispatcher = decorate(pyfunc)
            dispatcher._can_compile = False
            return dispatcher
        return make
    return not_compiling


def generic(self, args, kws):
    if not _ours_inlined(self):
        return NUMBA_GENERIC(self, args, kws)
    key = (type(self), self.context, tuple(args), tuple(kws.items()),
           _targetconfig.ConfigStack.top_or_none())
    known = _answers.get(key)
    if known is None:
        sig = NUMBA_GENERIC(self, args, kws)
        if sig is not None:            # a failure (None or an exception) is not remembered
            _answers[key] = (sig, self._inline_overloads[sig.args],
                             self._compiled_overloads[sig.args])
        return sig
    sig, inlining, compiled = known
    self._inline_overloads[sig.args] = inlining
    self._compiled_overloads[sig.args] = compiled
    return sig


replace(_TEMPLATE, "_get_jit_decorator", get_jit_decorator)
replace(_TEMPLATE, "generic", generic)
