"""Section 18 of ``_internals``: an overload of jitdigest's that Numba inlines at IR level
(``cpu_overload``: ``inline="always"``) is not also compiled on its own, once per argument
types, to be thrown away (the dispatcher Numba makes for it,
``_OverloadFunctionTemplate._get_jit_decorator``, is one that does not compile), and its IR
is built and typed once per argument types, not once per call (``generic`` remembered).

Part of the one package that touches Numba's and llvmlite's private internals (see
``__init__``); tested in tests/test_internals_compile.py."""

# Typing a call of an overload, Numba builds the implementation's dispatcher and makes "sure
# that the implementation can be fully compiled" (``_build_impl``: typing, lowering, LLVM and
# machine code); for an overload inlined at IR level it then types the implementation's IR
# again (``generic``: ``run_untyped_passes``, ``type_inference_stage``) and inlines that, so
# the compiled function is never called. jitdigest's helpers take constants (a scratch size, a
# lane count: literal types), so each size is a new compile: 23 of ``scratch``'s in one warmup,
# 16 of ``lane_words``'s, 12 of ``scratch_copy``'s (AMD EPYC znver3). A dispatcher that may not
# compile (``_can_compile``, Numba's own switch, ``Dispatcher.disable_compile``) still folds the
# arguments, which is all ``generic`` asks of it; an error in the implementation still shows
# where Numba types and lowers the inlined IR. Only overloads defined in jitdigest's modules
# and inlined always are changed.
#
# Then, for every call typed, ``generic`` builds the implementation's IR from its bytecode and
# types it (the IR the inliner copies into the caller), although a template's answer for the
# same argument types is the same: ``lane_words``' IR was built 164 times in ten kernel sets.
# The answer (the signature and the inlining record Numba files under it in the template's
# class: ``_inline_overloads``, ``_compiled_overloads``) is kept per template, typing
# context, argument types and compiler flags (the key of Numba's own ``_impl_cache``), and
# filed again when it is asked for. The inliner copies that IR for each call site
# (``InlineWorker.inline_ir``), as it does when two calls of one function share the record.
from numba.core import targetconfig as _targetconfig
from numba.core.typing import templates as _templates

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


if NUMBA_GET_JIT_DECORATOR is not None and NUMBA_GENERIC is not None:
    _TEMPLATE._get_jit_decorator = get_jit_decorator
    _TEMPLATE.generic = generic
