"""Section 12 of ``_internals``: a block function (or a piece of kernel called by several
entries) compiled for one signature, whatever its callers hold
(``Dispatcher.get_call_template``), and the casts that let that signature take ``bytes`` and
``bytearray`` (``lower_cast``, public, registered here beside its only user).

Part of the one package that touches Numba's and llvmlite's private internals (see
``__init__``); tested in tests/test_internals.py."""
from numba.core import types
from numba.core.imputils import lower_cast

from .ours import OursDispatcher

# A compiled function called from another is compiled for the argument types of the call:
# ``compress(state, buf, 0, 1)`` from one driver, ``compress(state, message, pos, n)`` from
# another, with a ``bytes`` message in a third, gave a family's block function four or five
# signatures (the SHA-512 ones among the slowest to compile). A block function's arguments
# are a state array, the input bytes and integers: the dispatcher below types a call with the
# input as a read-only uint8 array and every integer as int64, every bool as a bool (literal or
# not), and Numba's call lowering casts the caller's values to those types (a mutable array to a
# read-only one, a literal to int64: Numba's own casts; ``bytes``/``bytearray``: below).
BLOCK = types.Array(types.uint8, 1, "C", readonly=True)
# ... and an output's bytes (a writable array or a bytearray) as a writable uint8 array
OUT = types.Array(types.uint8, 1, "C")


def _is_bytes(t):
    return (isinstance(t, (types.Array, types.Bytes, types.ByteArray)) and t.ndim == 1
            and t.layout == "C" and t.dtype == types.uint8)


def normal_type(t, output=False):
    """The type a block function is compiled for in place of the argument type ``t``
    (``output``: an argument it writes bytes to)."""
    if output:
        writable = isinstance(t, types.ByteArray) or (isinstance(t, types.Array) and t.mutable)
        return OUT if _is_bytes(t) and writable else t
    if _is_bytes(t):
        return BLOCK
    if isinstance(t, types.Boolean):
        return types.boolean
    if isinstance(t, types.Integer):
        return types.int64
    return t


class TypedOnceDispatcher(OursDispatcher):
    """A CPU dispatcher (compiling inside ``ours()``) whose calls from compiled code are typed
    with ``normal_type``."""

    outputs = frozenset()           # positions of the arguments it writes bytes to

    def get_call_template(self, args, kws):
        return super().get_call_template(
            tuple(normal_type(a, i in self.outputs) for i, a in enumerate(args)), kws)


def typed_once(dispatcher, outputs=()):
    """``dispatcher`` (a CPU ``numba.njit`` dispatcher), its calls from other compiled
    functions typed with ``normal_type`` (``outputs``: the positions of the arguments it writes
    bytes to): one compile for every caller."""
    dispatcher.__class__ = TypedOnceDispatcher
    if outputs:
        dispatcher.outputs = frozenset(outputs)
    return dispatcher


@lower_cast(types.Bytes, types.Array)
@lower_cast(types.ByteArray, types.Array)
def _buffer_as_block(context, builder, fromty, toty, val):
    # Numba stores bytes, bytearray and arrays in one struct (``ArrayModel``): the same value.
    # A writable array only from a bytearray.
    target = toty == BLOCK or (toty == OUT and isinstance(fromty, types.ByteArray))
    if not target or context.get_value_type(fromty) != context.get_value_type(toty):
        raise NotImplementedError(f"cannot cast {fromty} to {toty}")
    return val
