"""One compiled pass that joins a list, tuple or object array of ``bytes`` for the batch API.

Why: ``hash_many(name, [b"...", ...])`` must measure every message and copy it into one
buffer. Done in Python (``operator.countOf`` to prove every item is exactly ``bytes``, ``len``
of each, ``bytes.join``) that costs three C-level passes per item, more than MD5's lane
kernels take to hash a 64-byte message (benchmarks/results/kernel_notes.md). Here one compiled function reads CPython's object
layout directly: the container's item pointers, each item's type, size and bytes.

Safety rests on three facts, each checked before this path is used:
"""
# * the layout: the offsets of ``ob_type``, ``ob_size``, a ``bytes`` object's data and a list's or
# tuple's item array are found by ``layout()`` from the running interpreter's own sizes and
# proved on probe objects (``ctypes`` reads of objects made for the purpose); any surprise, a
# build without the GIL, another implementation or the interpreted mode turns the path off
# (``layout()`` is None) and ``jitdigest.engine.layout`` joins in Python as before;
# * the GIL: the function is a ``gil_kernel`` and calls no Python code, so no other thread can
# resize the container or free an item while it runs; the container's size and item array are
# read inside it, never passed in from an earlier look;
# * the type: an item is read only if its type pointer is ``bytes`` itself (immutable, its size
# its length); a subclass, a ``bytearray``, an array or a view ends the pass with that item's
# index, and the Python path takes over with its exact errors.
import ctypes
import sys
import sysconfig
import threading

from ._jit import JIT_ENABLED, gil_kernel  # first: it imports Numba once, safely (_cpu)

import numpy as np  # noqa: E402
from llvmlite import ir  # noqa: E402
from numba.core import cgutils, types  # noqa: E402
from numba.extending import intrinsic  # noqa: E402

from ..base import config as _config  # noqa: E402

WORD = ctypes.sizeof(ctypes.c_void_p)


@intrinsic
def _peek(typingctx, address):
    """The machine word (int64) stored at ``address``."""
    if not isinstance(address, types.Integer):
        return None

    def codegen(context, builder, signature, args):
        return builder.load(builder.inttoptr(args[0], ir.IntType(64).as_pointer()))
    return types.int64(address), codegen


@intrinsic
def _copy_from(typingctx, dest, pos, address, size):
    """Copy ``size`` bytes from ``address`` to ``dest[pos:]`` (a uint8 array; the caller has
    proved the range) with one ``memcpy``."""
    if not (isinstance(dest, types.Array) and dest.dtype == types.uint8
            and all(isinstance(t, types.Integer) for t in (pos, address, size))):
        return None

    def codegen(context, builder, signature, args):
        array, at, source, count = args
        data = context.make_array(signature.args[0])(context, builder, array).data
        target = builder.gep(data, [at])
        cgutils.raw_memcpy(builder, target, builder.inttoptr(source, target.type), count, 1)
        return context.get_dummy_value()
    return types.void(dest, pos, address, size), codegen


@gil_kernel
def join_exact_bytes(base, n, items_offset, indirect, bytes_type, off_type, off_size, off_data,
                     values, starts, lengths):
    """Join the ``bytes`` items of a container into ``values`` (the bytes), ``starts`` (item i
    starts at ``starts[i]``; ``starts[n]`` is the total) and ``lengths``, in one pass over the
    items: returns ``(n, total, -1)``; ``(n, total, -2)`` when a buffer is too small for them
    (what was written is to be thrown away; ``total`` says how large to make ``values``);
    ``(n, _, i)`` when item ``i`` is not exactly ``bytes``.

    ``base``: the container's address; its item pointers start at ``base + items_offset``, or at
    the pointer stored there when ``indirect`` (a list). ``n < 0``: the count is the container's
    ``ob_size`` (a list or tuple, read here under the GIL); else ``n`` items (an object array's
    data, whose length the caller took from the array it holds).

    One pass, not a first one to measure and a second to copy: every item's header is read
    once (kernel_notes.md, "Joining bytes for the batch API")."""
    if n < 0:
        n = _peek(base + off_size)
    items = _peek(base + items_offset) if indirect else base + items_offset
    room = n + 1 <= starts.shape[0] and n <= lengths.shape[0]
    capacity = values.shape[0]
    total = 0
    for i in range(n):
        item = _peek(items + 8 * i)
        if _peek(item + off_type) != bytes_type:
            return n, total, i
        size = _peek(item + off_size)
        if room and size <= capacity - total:       # total <= capacity here: no overflow
            _copy_from(values, total, item + off_data, size)
            starts[i] = total
            lengths[i] = size
        else:
            room = False
        total += size
    if not room:
        return n, total, -2
    starts[n] = total
    return n, total, -1


_LAYOUT = []


def _word_at(address):
    return ctypes.c_ssize_t.from_address(address).value


def _probe():
    """The offsets (type, size, bytes data, tuple items, list item pointer), proved on probe
    objects, or None."""
    if (not JIT_ENABLED or WORD != 8 or sys.implementation.name != "cpython"
            or sysconfig.get_config_var("Py_GIL_DISABLED")):
        return None
    off_type = object.__basicsize__ - WORD          # PyObject_HEAD: ob_refcnt, ob_type
    off_size = object.__basicsize__                 # PyObject_VAR_HEAD adds ob_size
    off_data = bytes.__basicsize__ - 1              # ob_sval, after the header (+1 for its NUL)
    off_tuple = tuple.__basicsize__                 # ob_item[] follows the var header
    off_list = off_size + WORD                      # PyListObject.ob_item, after the var header
    if (bytes.__itemsize__ != 1 or tuple.__itemsize__ != WORD or off_data < off_size + WORD
            or list.__basicsize__ < off_list + WORD):
        return None
    probes = [b"", b"x", b"jitdigest", bytes(range(256)) * 3]
    as_list, as_tuple = list(probes), tuple(probes)
    items_list = _word_at(id(as_list) + off_list)
    for i, p in enumerate(probes):
        if (_word_at(id(p) + off_type) != id(bytes) or _word_at(id(p) + off_size) != len(p)
                or ctypes.string_at(id(p) + off_data, len(p)) != p
                or _word_at(id(as_tuple) + off_tuple + WORD * i) != id(p)
                or _word_at(items_list + WORD * i) != id(p)):
            return None
    if (_word_at(id(as_list) + off_size) != len(probes)
            or _word_at(id(as_tuple) + off_size) != len(probes)):
        return None
    return off_type, off_size, off_data, off_tuple, off_list


def layout():
    """The proved offsets, or None where this path must not be used (found once)."""
    if not _LAYOUT:
        _LAYOUT.append(_probe())
    return _LAYOUT[0]


def join(items, scratch=False):
    """``(values, starts, lengths)`` of a list, tuple or 1-D object ndarray whose items are all
    exactly ``bytes`` (``starts`` has one more entry, the total: offsets for ``hash_many``);
    None when any is not, or where the layout is not proved.

    ``scratch``: into this thread's reusable buffers (up to ``_config.JOIN_SCRATCH_BYTES``),
    which the caller must hand back with ``release()`` once it is done with the result. Where
    malloc hands large blocks straight back to the system (Dask's workers set
    ``MALLOC_TRIM_THRESHOLD_``), a fresh buffer costs a page fault every 4 KiB, which costs more than the join."""
    found = layout()
    if found is None:
        return None
    off_type, off_size, off_data, off_tuple, off_list = found
    kind = type(items)
    if kind is list:
        args = (id(items), -1, off_list, True)
    elif kind is tuple:
        args = (id(items), -1, off_tuple, False)
    elif (kind is np.ndarray and items.dtype == object and items.ndim == 1
          and items.flags.c_contiguous):
        args = (items.ctypes.data, items.shape[0], 0, False)
    else:
        return None
    buffers = _take() if scratch else None
    if buffers is None:
        buffers = (_EMPTY_BYTES, _EMPTY_INDEX, _EMPTY_INDEX)
    while True:              # at most twice, unless other threads keep growing the container
        n, total, bad = join_exact_bytes(*args, id(bytes), off_type, off_size, off_data,
                                         *buffers)
        if bad != -2:
            break
        buffers = _grown(buffers, n, total, scratch)
    if bad >= 0:
        if scratch:
            release(buffers)
        return None
    values, starts, lengths = buffers
    return values[:total], starts[:n + 1], lengths[:n]


_EMPTY_BYTES = np.empty(0, np.uint8)
_EMPTY_INDEX = np.empty(0, np.int64)
_SCRATCH = threading.local()


def _take():
    """This thread's scratch buffers, taken out so that a nested call cannot share them."""
    held = getattr(_SCRATCH, "buffers", None)
    _SCRATCH.buffers = None
    return held


def _grown(buffers, n, total, scratch):
    values, starts, lengths = buffers
    if total > values.shape[0]:
        # scratch: with room to spare, so that the next, slightly larger partition fits
        values = np.empty(total + (total >> 3 if scratch else 0), np.uint8)
    if n + 1 > starts.shape[0]:
        starts = np.empty(n + 1 + (n >> 3 if scratch else 0), np.int64)
        lengths = np.empty(starts.shape[0] - 1, np.int64)
    return values, starts, lengths


def release(buffers):
    """Hand back the buffers of a ``join(..., scratch=True)`` result (its arrays' bases) for
    this thread's next call, unless they are over ``_config.JOIN_SCRATCH_BYTES``."""
    values, starts, lengths = (b if b.base is None else b.base for b in buffers)
    if values.nbytes + starts.nbytes + lengths.nbytes <= _config.JOIN_SCRATCH_BYTES:
        _SCRATCH.buffers = (values, starts, lengths)
