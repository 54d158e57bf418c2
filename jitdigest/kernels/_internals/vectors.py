"""Section 1 of ``_internals``: 512-bit vectors, an LLVM function attribute llvmlite does not
know (``FunctionAttributes._known``).

Part of the one package that touches Numba's and llvmlite's private internals (see
``__init__``); tested in tests/test_internals.py."""
from numba.core import types
from numba.extending import intrinsic


# LLVM's X86 tuning for most AVX-512 Intel cores ("prefer-256-bit") makes the vectoriser use
# 256-bit vectors even where 512-bit ones are legal; a 16-lane loop then runs as two 8-lane
# halves. The function attribute below asks for 512-bit vectors, as clang's
# -mprefer-vector-width=512 does (measured: SHA-256 x16 +20%). Target-independent and harmless
# without AVX-512 (the vector types then are not legal and are split). llvmlite accepts only the
# attributes in its ``_known`` set, so the instance's set is widened first.
PREFER_512 = '"prefer-vector-width"="512"'


def _prefer_wide_vectors(function):
    """Give the LLVM function ``function`` the attribute ``PREFER_512``; False (and the target's
    default width) if llvmlite refuses it."""
    attrs = function.attributes
    try:
        attrs._known = attrs._known | {PREFER_512}
        attrs.add(PREFER_512)
    except (AttributeError, TypeError, ValueError):
        return False
    return True


@intrinsic
def wide_vectors(typingctx):
    """Called first in a kernel (no arguments, no result): the enclosing compiled function
    prefers 512-bit vectors. If llvmlite ever refuses the attribute the kernel is simply
    compiled with the target's default width (``tests/test_internals.py`` then fails)."""
    def codegen(context, builder, signature, args):
        _prefer_wide_vectors(builder.function)
        return context.get_dummy_value()
    return types.none(), codegen
