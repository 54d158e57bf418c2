"""Every use of Numba's and llvmlite's private internals (placeholder: the 512-bit preference)."""
from numba import types
from numba.extending import intrinsic

_PREFER_512 = '"prefer-vector-width"="512"'


@intrinsic
def wide_vectors(typingctx):
    def codegen(context, builder, signature, args):
        attrs = builder.function.attributes
        try:
            attrs._known = attrs._known | {_PREFER_512}
            attrs.add(_PREFER_512)
        except (AttributeError, TypeError, ValueError):
            pass
        return context.get_dummy_value()
    return types.none(), codegen
