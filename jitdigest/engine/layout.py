"""The batch API's inputs in the kernels' layout, with every bound proven before a kernel runs.

Numba does not bounds-check: a ``hash_rows`` kernel reads ``values[starts[r]:][:lengths[r]]``
and writes ``out[r]`` trusting every number it is given, and its compiled entry reads an
array's shape from numpy's C struct, whatever a subclass's Python-level ``.shape`` says. So
this module is the one place where messages become a ``Segment`` (``values``, ``starts``,
``lengths``, or a grid of equal rows) and the output array becomes ``out``, by these rules:

* every size is taken **once**, from the buffer protocol: a ``memoryview``/``np.frombuffer``
  export held until the call returns (so a ``bytearray`` cannot be resized meanwhile), or the
  C-level fields of a plain ``ndarray`` view; never from ``len()`` (except of exact ``bytes``,
  whose length is its immutable size) nor from a subclass's attributes;
* index arrays handed to a kernel are private copies (offsets changed by another thread, or
  an Arrow buffer changed after validation, cannot reach the kernel);
* ``check_segment``, ``check_out``: the final arrays' bounds, proven just before the kernel call.
"""
import functools
import operator

import numpy as np

from ..base import config as _config, stdlib as _stdlib
from . import text as _text

_INT64_MAX = np.iinfo(np.int64).max


class Segment:
    """Messages for output rows row0 + i: ``values[starts[i]:starts[i]+lengths[i]]`` (the rows
    form of ``hash_rows``), or, when ``width`` is set, ``values[i*width:(i+1)*width]`` (the grid
    form: no index arrays)."""
    __slots__ = ("row0", "values", "starts", "lengths", "width", "n")

    def __init__(self, row0, values, starts, lengths, width=None, n=None):
        self.row0, self.values, self.starts, self.lengths = row0, values, starts, lengths
        self.width = width
        self.n = starts.shape[0] if n is None else n

    @classmethod
    def grid(cls, row0, values, width, n):
        return cls(row0, values, None, None, width, n)

    def nbytes(self):
        if self.width is not None:
            return self.width * self.n
        if self.n <= _config.FEW_ROWS:
            return sum(self.lengths.tolist())
        return int(self.lengths.sum())


def plain(arr):
    """``arr`` (an ndarray) as a plain ndarray of the same memory: its shape, strides, dtype and
    flags are then numpy's C-level fields, the ones a compiled kernel reads."""
    return arr if type(arr) is np.ndarray else np.ndarray.view(arr, np.ndarray)


def _is_buffer(obj):
    try:
        memoryview(obj)
    except TypeError:
        return False
    return True


def _rows_2d(arr):
    if arr.dtype != np.uint8:
        raise TypeError(f"a 2-D messages array must have dtype uint8, not {arr.dtype} "
                        "(use .view(np.uint8) for raw bytes)")
    if not arr.flags.c_contiguous:
        raise ValueError("a 2-D messages array must be C-contiguous "
                         "(use np.ascontiguousarray)")
    n, width = arr.shape
    return Segment.grid(0, arr.reshape(-1), width, n)


def _as_values(values):
    """``values`` as a 1-D C-contiguous uint8 array (no copy), holding its buffer export."""
    if isinstance(values, np.ndarray):
        values = plain(values)
        if values.ndim != 1:
            raise ValueError(f"values must be 1-D, not {values.ndim}-D")
        if values.dtype != np.uint8:
            raise TypeError(f"values must have dtype uint8, not {values.dtype} "
                            "(use .view(np.uint8) for raw bytes)")
        if not values.flags.c_contiguous:
            raise ValueError("values must be C-contiguous (use np.ascontiguousarray)")
        return values
    if isinstance(values, str):
        raise TypeError("Strings must be encoded before hashing")
    try:
        return np.frombuffer(values, np.uint8)
    except TypeError:
        raise TypeError("values must be a uint8 array or a bytes-like object, not "
                        f"{type(values).__name__}") from None


def _as_offsets(offsets):
    """Offsets as a private C-contiguous int64 copy, converted only where no value changes."""
    off = plain(offsets) if isinstance(offsets, np.ndarray) else np.asarray(offsets)
    if off.ndim != 1 or off.shape[0] == 0:
        raise ValueError("offsets must be 1-D with n + 1 entries "
                         f"(got shape {off.shape})")
    if off.dtype.kind not in "iu":
        raise TypeError(f"offsets must be integers, not {off.dtype}")
    if not np.can_cast(off.dtype, np.int64, "safe") and int(off.max()) > _INT64_MAX:
        raise ValueError("offsets do not fit in int64")
    return off.astype(np.int64)          # a copy even when already int64: nobody else holds it


def proved_rows(offsets, size):
    """(starts, lengths) int64 of the rows ``offsets`` (n + 1 integers) names in ``size``
    bytes, each row proved inside them."""
    off = _as_offsets(offsets)
    starts, ends = off[:-1], off[1:]
    first, last = int(off[0]), int(off[-1])
    if first < 0:
        raise ValueError(f"offsets[0] = {first} is negative")
    decreasing = ends < starts                # compared, not subtracted: no int64 wrap-around
    if decreasing.any():
        i = int(np.argmax(decreasing))
        raise ValueError(f"offsets must be non-decreasing: offsets[{i + 1}] = {int(off[i + 1])}"
                         f" < offsets[{i}] = {int(off[i])}")
    if last > size:
        raise ValueError(f"offsets[-1] = {last} is past the end of values ({size} bytes)")
    return starts, ends - starts               # 0 <= starts <= ends: exact


def _equal_rows(offsets, size):
    """(first, width, n) when int32/int64 ``offsets`` (n + 1 of them, an ndarray) name n rows
    of one length lying back to back from ``first`` inside ``size`` bytes, else None. Checked
    ``_config.GRID_WINDOW`` offsets at a time, against ``first + i * width``: no n-long
    temporary. (Inside a Dask worker, where glibc's malloc maps every block of 128 KiB or more
    afresh, ``proved_rows``' int64 copies are page faults: benchmarks/results/tunables.md.)
    Only the three numbers reach the kernel, so offsets changed meanwhile cannot make it read
    outside ``values``."""
    if not isinstance(offsets, np.ndarray):
        return None
    offsets = plain(offsets)
    if not (offsets.ndim == 1 and offsets.shape[0] > 1 and offsets.dtype in (np.int32, np.int64)):
        return None
    n = offsets.shape[0] - 1
    first, last = int(offsets[0]), int(offsets[-1])
    if first < 0 or last > size or last < first or (last - first) % n:
        return None
    width = (last - first) // n
    window = _config.GRID_WINDOW
    steps = np.arange(min(window, n) + 1, dtype=np.int64) * width   # <= last - first: fits
    for a in range(0, n, window):
        block = offsets[a:a + window + 1]
        if not np.array_equal(block, steps[:block.shape[0]] + (first + a * width)):
            return None
    return first, width, n


def _values_offsets(values, offsets, row0=0):
    values = _as_values(values)
    # Rows of one length (fixed-size records in an Arrow binary column, say) lie back to back
    # from offsets[0], as a 2-D array's do: the grid form, with no index arrays to build and
    # check (nearly as fast as a 2-D array: benchmarks/results/tunables.md).
    equal = _equal_rows(offsets, values.shape[0])
    if equal is None:
        starts, lengths = proved_rows(offsets, values.shape[0])
        if not (lengths.shape[0] and lengths.min() == lengths.max()):
            return Segment(row0, values, starts, lengths)
        equal = int(starts[0]), int(lengths[0]), lengths.shape[0]   # other offsets types
    first, width, n = equal
    return Segment.grid(row0, values[first:first + n * width], width, n)


def _item_error(i, item):
    """The exception hashlib raises for message ``i`` of a list, which is not a C-contiguous
    buffer (the exporter's own error for a strided one: BufferError from a memoryview,
    ValueError from an ndarray), with the message's number."""
    if isinstance(item, str):
        return TypeError(f"Strings must be encoded before hashing (message {i} is a str)")
    try:
        memoryview(item)
    except TypeError:
        return TypeError(f"message {i}: object supporting the buffer API required, "
                         f"not {type(item).__name__!r}")
    try:
        _stdlib.hashlib.blake2b(item)      # asks for a C-contiguous buffer, as hashing does
    except (BufferError, ValueError, TypeError) as exc:
        return type(exc)(f"message {i}: {exc}")
    return BufferError(f"message {i}: underlying buffer is not C-contiguous")


def _exact_bytes_lengths(items, n):
    """Each item's length when every item is exactly ``bytes`` (immutable, its length its size:
    no subclass's ``__len__`` or ``__buffer__``), else None. (The type check costs less than
    calling ``bytes.__len__`` on each item instead of ``len``.)"""
    if operator.countOf(map(type, items), bytes) == n:      # in C, by identity
        return np.fromiter(map(len, items), np.int64, n)
    return None


def _views(items):
    """A C-contiguous memoryview of every item (hashlib's exceptions for the others)."""
    views = []
    for i, item in enumerate(items):
        try:
            view = memoryview(item)
        except TypeError:
            view = None
        if view is None or not view.c_contiguous:
            raise _item_error(i, item)
        views.append(view)
    return views


def join(items, sep=b""):
    """``sep.join(items)`` as one ``bytes`` and each item's size in bytes (int64), each size
    read once: exact bytes by their immutable length, everything else from a memoryview held
    while it is copied (so a size cannot change between measuring and copying)."""
    n = len(items)
    lengths = _exact_bytes_lengths(items, n)
    if lengths is not None:
        joined = sep.join(items)
    else:
        views = _views(items)
        lengths = np.fromiter((v.nbytes for v in views), np.int64, n)
        joined = sep.join(views)
        for v in views:
            v.release()
    if int(lengths.sum()) + len(sep) * max(n - 1, 0) != len(joined):
        raise BufferError("a message changed size while the batch was read")
    return joined, lengths


def exclusive_cumsum(lengths):
    """starts[i] = sum(lengths[:i])."""
    starts = np.empty(lengths.shape[0], np.int64)
    if starts.shape[0]:
        starts[0] = 0
        np.cumsum(lengths[:-1], out=starts[1:])
    return starts


def _sequence(items):
    """One Segment of a sequence of messages: all exactly ``bytes`` in a list, tuple or object
    array, joined in one compiled pass (``kernels/_pyobjects.py``); else in Python (``join``)."""
    from ..kernels import _pyobjects
    fast = _pyobjects.join(items)
    if fast is not None:
        values, starts, lengths = fast
        return Segment(0, values, starts[:-1], lengths)
    if isinstance(items, np.ndarray):
        items = items.tolist()
    elif type(items) is not tuple:
        # One snapshot, read once: the messages are the items its iteration yields, whatever
        # a ``__len__`` says (``tuple()`` would take it as a size hint: 2**40 is a MemoryError),
        # and another thread's appends land before or after it.
        items = tuple([item for item in items])
    joined, lengths = join(items)
    return Segment(0, np.frombuffer(joined, np.uint8), exclusive_cumsum(lengths), lengths)


def _is_arrow(obj):
    return type(obj).__module__.partition(".")[0] == "pyarrow"


def _arrow_chunk(pa, chunk, row0):
    """One non-empty Arrow chunk as a Segment, from its buffers taken once; the offsets are a
    checked private copy."""
    n = len(chunk)
    t = chunk.type
    if (getattr(pa.types, "is_binary_view", None) and pa.types.is_binary_view(t)) or (
            getattr(pa.types, "is_string_view", None) and pa.types.is_string_view(t)):
        # Views: one copy into Arrow's offsets. pyarrow's cast reads each view as it is
        # (``Array.from_buffers`` checks none of them): a view past its data buffer, or of a
        # buffer that is not there, made it read outside them (a crash, or another object's
        # bytes hashed). So the views are copied (another thread may write the caller's) and
        # the copy is checked, then cast.
        buffers = chunk.buffers()
        views = pa.py_buffer(buffers[1].to_pybytes()) if buffers[1] is not None else None
        try:
            chunk = pa.Array.from_buffers(t, n, [buffers[0], views] + buffers[2:],
                                          offset=chunk.offset)
            chunk.validate(full=True)
        except (pa.ArrowException, IndexError, ValueError) as exc:
            raise ValueError(f"malformed pyarrow {t} array: {exc}") from None
        chunk = chunk.cast(pa.large_binary())
        t = chunk.type
    buffers = chunk.buffers()
    data = buffers[-1]
    values = np.frombuffer(data, np.uint8) if data is not None else np.empty(0, np.uint8)
    if pa.types.is_fixed_size_binary(t):
        width = t.byte_width
        first, stop = chunk.offset * width, (chunk.offset + n) * width
        if stop > values.shape[0]:
            raise ValueError("fixed_size_binary array is shorter than its length says")
        return Segment.grid(row0, values[first:stop], width, n)
    if pa.types.is_binary(t) or pa.types.is_string(t):
        odtype = np.int32
    elif pa.types.is_large_binary(t) or pa.types.is_large_string(t):
        odtype = np.int64
    else:
        raise TypeError(f"pyarrow arrays of type {t} cannot be hashed: use binary, "
                        "large_binary, string, large_string or fixed_size_binary")
    offsets = np.frombuffer(buffers[1], odtype)[chunk.offset:chunk.offset + n + 1]
    if offsets.shape[0] != n + 1:
        raise ValueError("pyarrow offsets buffer is shorter than the array's length says")
    return _values_offsets(values, offsets, row0)


def _arrow_segments(arr):
    import pyarrow as pa
    if isinstance(arr, pa.ChunkedArray):
        chunks = arr.chunks
    elif isinstance(arr, pa.Array):
        chunks = [arr]
    else:
        raise TypeError(f"unsupported pyarrow object {type(arr).__name__}: pass an Array or "
                        "ChunkedArray of binary or string type")
    nulls = arr.null_count
    if nulls:
        raise _text.null_error(nulls, _text.first_null_row(chunks))
    segments = []
    row0 = 0
    for chunk in chunks:
        if len(chunk):
            segments.append(_arrow_chunk(pa, chunk, row0))
            row0 += segments[-1].n
    return segments, row0


def segments(messages, offsets):
    """(list of Segment, number of messages) for any layout ``hash_many`` accepts."""
    if isinstance(messages, np.ndarray):
        messages = plain(messages)
        if messages.ndim == 2:
            if offsets is not None:
                raise TypeError("offsets go with a 1-D values array, not a 2-D array of rows")
            return [_rows_2d(messages)], messages.shape[0]
        if messages.ndim == 1 and offsets is not None:
            seg = _values_offsets(messages, offsets)
            return [seg], seg.n
        if messages.ndim == 1 and messages.dtype == object:
            seg = _sequence(messages)
            return [seg], seg.n
        if messages.ndim == 1 and messages.dtype.kind == "S":
            values, starts, lengths, width = _text.fixed_width(messages)
            return [Segment(0, values, starts, lengths, width, messages.shape[0])], \
                messages.shape[0]
        if messages.ndim == 1:
            raise _text.refuse_array(messages)
        raise ValueError(f"messages must be a 2-D (n, L) or 1-D uint8 array, not "
                         f"{messages.ndim}-D")
    if isinstance(messages, str):
        raise TypeError("Strings must be encoded before hashing")
    if messages is None:
        raise TypeError("messages must be an array, a sequence of bytes-like objects or a "
                        "pyarrow binary array, not None")
    text = _text.pandas_arrow(messages)     # a pandas string or binary column (or its list)
    if text is not None and offsets is not None:
        raise TypeError("offsets go with a values buffer, not with a pandas column")
    messages = messages if text is None else text
    if _is_arrow(messages):
        if offsets is not None:
            raise TypeError("offsets go with a values buffer, not with a pyarrow array")
        return _arrow_segments(messages)
    if offsets is not None:
        seg = _values_offsets(messages, offsets)
        return [seg], seg.n
    if _is_buffer(messages):
        raise TypeError("messages is a single bytes-like object: pass offsets to split it into "
                        "messages, or a list of messages (to hash one message use jitdigest.new)")
    try:
        iter(messages)
    except TypeError:
        raise TypeError("messages must be an array, a sequence of bytes-like objects or a "
                        f"pyarrow binary array, not {type(messages).__name__}") from None
    seg = _sequence(messages)
    return [seg], seg.n


def uuid_messages(namespace_bytes, names):
    """One Segment of the messages ``namespace_bytes + name`` (str names UTF-8 encoded)."""
    if not isinstance(names, (list, tuple)):
        names = names.tolist() if isinstance(names, np.ndarray) else list(names)
    ns = namespace_bytes
    n = len(names)
    try:
        text = "".join(names)
    except TypeError:
        text = None
    if text is not None and text.isascii():
        # all str, all ASCII: UTF-8 is Latin-1 there and str.__len__ (not a subclass's
        # __len__) the byte count, so one join does it, namespace included
        joined = ns.decode("latin-1").join(["", *names]).encode("latin-1")
        lengths = np.fromiter(map(str.__len__, names), np.int64, n)
    else:
        encoded = [str.encode(m, "utf-8") if isinstance(m, str) else m for m in names]
        body, lengths = join(encoded, ns)
        joined = ns + body
    lengths += len(ns)
    return Segment(0, np.frombuffer(joined, np.uint8), exclusive_cumsum(lengths), lengths)


# --- the last word before a kernel runs ------------------------------------------------------

def _is_kernel_array(arr, ndim):
    return (type(arr) is np.ndarray and arr.ndim == ndim and arr.flags.c_contiguous)


def check_segment(seg):
    """Prove that every byte the kernel will read for ``seg`` lies inside ``seg.values``
    (ValueError otherwise), on the very arrays the kernel gets, by comparisons that cannot
    overflow."""
    values = seg.values
    if not (_is_kernel_array(values, 1) and values.dtype == np.uint8):
        raise ValueError("batch values must be a 1-D C-contiguous uint8 ndarray")
    size = values.shape[0]
    n = seg.n
    if seg.width is not None:
        if not (0 <= seg.width and 0 <= n and seg.width * n <= size):   # Python ints: exact
            raise ValueError(f"{n} rows of {seg.width} bytes do not fit in {size} bytes")
        return
    for arr in (seg.starts, seg.lengths):
        if not (_is_kernel_array(arr, 1) and arr.dtype == np.int64 and arr.shape[0] == n):
            raise ValueError(f"batch starts and lengths must be C-contiguous int64 of {n}")
    if n == 0:
        return
    if n <= _config.FEW_ROWS:       # as Python ints (exact): numpy's calls cost more here
        starts, lengths = seg.starts.tolist(), seg.lengths.tolist()
        if min(starts) < 0 or min(lengths) < 0:
            raise ValueError("a message has a negative start or length")
        if any(start > size - length for start, length in zip(starts, lengths)):
            raise ValueError(f"a message runs past the end of values ({size} bytes)")
        return
    if int(seg.starts.min()) < 0 or int(seg.lengths.min()) < 0:
        raise ValueError("a message has a negative start or length")
    # start + length <= size, as start <= size - length: 0 <= length, so no wrap-around
    if not (seg.starts <= size - seg.lengths).all():
        raise ValueError(f"a message runs past the end of values ({size} bytes)")


def grid_window(width, n):
    """The index arrays of a window of a grid of rows of ``width`` bytes (``starts[i] = i *
    width``, ``lengths[i] = width``, ``rows[i] = i``; ``kernels/_rows.over_grid``), for up to
    ``_config.GRID_WINDOW`` rows, fewer when the grid ``n`` has fewer (at least one): read-only,
    kept for the next calls of the same shape (made afresh, a sizeable part of a small call:
    benchmarks/results/tunables.md)."""
    return _grid_window(width, max(1, min(n, _config.GRID_WINDOW)))


@functools.lru_cache(maxsize=16)
def _grid_window(width, k):
    rows = np.arange(k, dtype=np.int64)
    arrays = rows * width, np.full(k, width, dtype=np.int64), rows
    for a in arrays:
        a.setflags(write=False)
    return arrays


def check_rows(rows, n):
    """Prove that a row-number array only names rows 0..n-1."""
    if not (_is_kernel_array(rows, 1) and rows.dtype == np.int64):
        raise ValueError("batch rows must be a C-contiguous int64 array")
    if not rows.shape[0]:
        return
    if rows.shape[0] <= _config.FEW_ROWS:
        listed = rows.tolist()
        low, high = min(listed), max(listed)
    else:
        low, high = int(rows.min()), int(rows.max())
    if low < 0 or high >= n:
        raise ValueError(f"a row number is outside 0..{n - 1}")


def check_out(out, n, outlen):
    """``out`` (None: a new array) as the plain (n, outlen) C-contiguous writable uint8 ndarray
    the kernel writes, with numpy's messages for anything else."""
    if out is None:
        return np.empty((n, outlen), np.uint8)
    if not isinstance(out, np.ndarray):
        raise TypeError(f"out must be a numpy array, not {type(out).__name__}")
    out = plain(out)
    if out.dtype != np.uint8:
        raise TypeError(f"out must have dtype uint8, not {out.dtype}")
    if out.shape != (n, outlen):
        raise ValueError(f"out has shape {out.shape}, expected {(n, outlen)}")
    if not out.flags.c_contiguous:
        raise ValueError("out must be C-contiguous")
    if not out.flags.writeable:
        raise ValueError("out is read-only")
    return out


def overlaps(out, segs):
    """Whether ``out`` may share memory with any segment's input bytes (then the batch is
    hashed into a fresh array and copied into ``out`` afterwards, as numpy's ufuncs do)."""
    return any(np.may_share_memory(out, seg.values) for seg in segs)
