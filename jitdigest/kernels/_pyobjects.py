"""One compiled pass that joins a list, tuple or object array of ``bytes`` for the batch API.

Why: ``hash_many(name, [b"...", ...])`` must measure every message and copy it into one
buffer. Done in Python (``operator.countOf`` to prove every item is exactly ``bytes``, ``len``
of each, ``bytes.join``) that costs three C-level passes and ~90 ns per item, more than MD5's
lane kernels take to hash a 64-byte message. Here one compiled function reads CPython's object
layout directly: the container's item pointers, each item's type, size and bytes.

Safety rests on three facts, each checked before this path is used:

* the layout: the offsets of ``ob_type``, ``ob_size``, a ``bytes`` object's data and a list's or
  tuple's item array are found by ``layout()`` from the running interpreter's own sizes and
  proved on probe objects (``ctypes`` reads of objects made for the purpose); any surprise, a
  build without the GIL, another implementation or the interpreted mode turns the path off
  (``layout()`` is None) and ``jitdigest._layout`` joins in Python as before;
* the GIL: the function is a ``gil_kernel`` and calls no Python code, so no other thread can
  resize the container or free an item while it runs; the container's size and item array are
  read inside it, never passed in from an earlier look;
* the type: an item is read only if its type pointer is ``bytes`` itself (immutable, its size
  its length); a subclass, a ``bytearray``, an array or a view ends the pass with that item's
  index, and the Python path takes over with its exact errors.
"""
import ctypes
import sys
import sysconfig

from ._jit import JIT_ENABLED, gil_kernel  # first: it imports Numba once, safely (_cpu)

import numpy as np  # noqa: E402
from llvmlite import ir  # noqa: E402
from numba.core import cgutils, types  # noqa: E402
from numba.extending import intrinsic  # noqa: E402

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
def join_exact_bytes(base, n, items_offset, indirect, bytes_type, off_type, off_size, off_data):
    """Join the ``bytes`` items of a container: ``(values, starts, lengths, -1)``, or
    ``(empty, empty, empty, i)`` when item ``i`` is not exactly ``bytes``.

    ``base``: the container's address; its item pointers start at ``base + items_offset``, or at
    the pointer stored there when ``indirect`` (a list). ``n < 0``: the count is the container's
    ``ob_size`` (a list or tuple, read here under the GIL); else ``n`` items (an object array's
    data, whose length the caller took from the array it holds)."""
    if n < 0:
        n = _peek(base + off_size)
    items = _peek(base + items_offset) if indirect else base + items_offset
    total = 0
    for i in range(n):
        item = _peek(items + 8 * i)
        if _peek(item + off_type) != bytes_type:
            empty = np.empty(0, np.int64)
            return np.empty(0, np.uint8), empty, empty, i
        total += _peek(item + off_size)
    values = np.empty(total, np.uint8)
    starts = np.empty(n, np.int64)
    lengths = np.empty(n, np.int64)
    pos = 0
    for i in range(n):
        item = _peek(items + 8 * i)
        size = _peek(item + off_size)
        _copy_from(values, pos, item + off_data, size)
        starts[i] = pos
        lengths[i] = size
        pos += size
    return values, starts, lengths, -1


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


def join(items):
    """``(values, starts, lengths)`` of a list, tuple or 1-D object ndarray whose items are all
    exactly ``bytes``; None when any is not, or where the layout is not proved."""
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
    values, starts, lengths, bad = join_exact_bytes(*args, id(bytes), off_type, off_size,
                                                    off_data)
    return None if bad >= 0 else (values, starts, lengths)
