"""Hashing on a Dask cluster: ``hash_array``, ``hash_column``, ``hash_bag`` and ``hash_files``.

Why: data too big for one process is often a Dask collection, and the usual code there,
``ddf["col"].map(lambda b: hashlib.sha256(b).digest())``, makes a Python call per row. Here
each block or partition is one ``jitdigest.hash_many`` call (``hmac_many`` with ``key=``).

The arguments are checked when the call is made, not in a worker. Tasks carry only the name,
the key and the length: a worker process compiles a kernel, or loads it from the on-disk kernel
cache, once, the first time a task needs it, and every later task reuses it (``WarmKernels``
does this when each worker starts instead). Each task hashes on one thread: Dask already runs
the blocks side by side. ``import jitdigest`` never imports Dask; importing this module needs
it (``pip install "jitdigest[dask]"``).
"""
from __future__ import annotations

import asyncio
import functools
import sys
import time
from typing import TYPE_CHECKING, Any, Iterable

try:
    import dask  # noqa: F401
    from distributed import WorkerPlugin
except ImportError as exc:
    raise ImportError('jitdigest.dask needs dask and distributed: '
                      'pip install "jitdigest[dask]"') from exc

import numpy as np

from .base import algorithms as _algorithms, config as _config, fork as _fork
from .engine import text as _text
from .batch import hash_many
from .keyed_batch import hmac_many

if TYPE_CHECKING:
    import dask.array
    import dask.bag
    import dask.dataframe

    from ._typing import ReadableBuffer

__all__ = ["hash_array", "hash_column", "hash_bag", "hash_files", "warm", "warmed",
           "WarmKernels"]


def _digests(name, key, messages, length, offsets=None, *, out=None):
    """One block's digests, on the calling thread (into ``out`` when given)."""
    if key is None:
        return hash_many(name, messages, offsets, length=length, out=out, threads=1)
    return hmac_many(name, key, messages, offsets, out=out, threads=1)


def _digest_size(name, key, length):
    """Check the arguments here, before any task runs (hash_many's and hmac_many's own errors,
    from an empty batch), and return the bytes per digest."""
    if key is not None and length is not None:
        raise TypeError("length= is for SHAKE, which HMAC does not take")
    return _digests(name, key, np.empty((0, 0), np.uint8), length).shape[1]


def _out_array(shape, dtype):
    """An uninitialised C-contiguous array of ``shape`` (rows, width) for a block's results:
    over memory from pyarrow's memory pool (mimalloc or jemalloc; the array keeps its buffer
    alive) where pyarrow is already imported, else ``np.empty``. Inside a Dask worker glibc's
    malloc maps every block of 128 KiB or more afresh (``MALLOC_TRIM_THRESHOLD_``), so an
    ``np.empty`` result would be new pages each time, page faults costing a good part of the
    hashing, where the pool hands back memory just freed (benchmarks/results/tunables.md)."""
    pa = sys.modules.get("pyarrow")
    rows, width = shape
    if pa is None or rows * width == 0:
        return np.empty(shape, dtype)
    return np.frombuffer(pa.allocate_buffer(rows * width * np.dtype(dtype).itemsize),
                         dtype).reshape(shape)


# --- arrays ---------------------------------------------------------------------------------

def hash_array(x: dask.array.Array, name: str, *, key: ReadableBuffer | None = None,
               length: int | None = None) -> dask.array.Array:
    """Digest of every row of a 2-D uint8 dask array: an (n, digest_size) uint8 dask array with
    x's row chunks (``length``: SHAKE's output bytes; ``key``: HMAC of each row). The array is
    first rechunked to one chunk along axis 1, so that every block holds whole rows."""
    import dask.array as da
    if not isinstance(x, da.Array):
        raise TypeError(f"hash_array takes a dask array, not {type(x).__name__} "
                        "(for a numpy array use jitdigest.hash_many)")
    if x.ndim != 2:
        raise ValueError(f"hash_array takes a 2-D (n, L) array of rows, not {x.ndim}-D")
    if x.dtype != np.uint8:
        raise TypeError(f"hash_array takes a uint8 array, not {x.dtype} "
                        "(use .view(np.uint8) for raw bytes)")
    size = _digest_size(name, key, length)
    x = x.rechunk({1: -1})
    return x.map_blocks(_hash_block, name, key, length, size, dtype=np.uint8,
                        chunks=(x.chunks[0], (size,)), meta=np.empty((0, 0), np.uint8))


def _hash_block(block, name, key, length, size):
    block = np.ascontiguousarray(block)
    return _digests(name, key, block, length, out=_out_array((block.shape[0], size), np.uint8))


# --- dataframe columns ----------------------------------------------------------------------

def hash_column(series: dask.dataframe.Series, name: str, *,
                key: ReadableBuffer | None = None, hex: bool = False,
                length: int | None = None) -> dask.dataframe.Series:
    """Digest of every value of a dask Series of bytes or str (str: its UTF-8 bytes): a Series
    with the same index and name, ``binary[pyarrow]`` (items read as bytes), or lowercase hex
    as ``string[pyarrow]`` with ``hex=True`` (``.astype(object)`` gives Python objects).

    The result is made over the digest array without a Python object per row (bytes objects
    cost more than hashing 64 B), in the dtype Dask gives bytes and str by default.
    Arrow-backed columns (``string[pyarrow]``, Dask's default for str, and ``binary[pyarrow]``)
    reach ``hash_many`` as their own Arrow arrays, with no copy to Python objects; object
    columns are copied into one by pyarrow. Nulls are refused with ValueError, as ``hash_many``
    refuses them."""
    import dask.dataframe as dd
    if not isinstance(series, dd.Series) or isinstance(series, dd.Index):
        raise TypeError(f"hash_column takes a dask Series, not {type(series).__name__}"
                        + (" (for an index: .index.to_series())"
                           if isinstance(series, dd.Index) else ""))
    size = _digest_size(name, key, length)
    if _column_kind(series.dtype) is None:
        raise TypeError(f"hash_column takes a Series of bytes or str, not {series.dtype}")
    meta = _hash_partition(series._meta, name, key, hex, length, size)
    return series.map_partitions(_hash_partition, name, key, hex, length, size, meta=meta)


def _column_kind(dtype):
    """"arrow" (hashed as its Arrow array), "objects" (as a list), or None (not hashable)."""
    import pandas as pd
    if isinstance(dtype, pd.StringDtype):
        return "arrow" if str(dtype.storage).startswith("pyarrow") else "objects"
    if isinstance(dtype, pd.ArrowDtype):
        return "arrow" if _text.arrow_text_or_binary(dtype.pyarrow_dtype) else None
    return "objects" if dtype == object else None


def _hash_partition(part, name, key, hex, length, size):
    import pandas as pd
    messages, offsets, scratch = _messages(part)
    digests = _hashed(name, key, length, (len(part), size), messages, offsets, scratch)
    values = _arrow_hex(digests) if hex else _arrow_binary(digests)
    return pd.Series(values, index=part.index, name=part.name, copy=False)


def _hashed(name, key, length, shape, messages, offsets, scratch):
    """A partition's digests, of ``shape``, into ``_out_array`` memory; the join's ``scratch``
    buffers (None: there are none) handed back afterwards, whatever happens. Nulls (an Arrow
    array's) are refused first."""
    from .kernels import _pyobjects
    try:
        _refuse_nulls(getattr(messages, "null_count", 0))
        return _digests(name, key, messages, length, offsets, out=_out_array(shape, np.uint8))
    finally:
        if scratch is not None:
            _pyobjects.release(scratch)


def _refuse_nulls(nulls):
    if nulls:
        raise ValueError(f"the column has {nulls} null value{'s' if nulls > 1 else ''}: "
                         "drop them (dropna) or fill them (fillna) first")


def _messages(part):
    """A partition's values for hash_many, their offsets (or None) and the join's scratch
    buffers to release after hashing (or None): an Arrow-backed column's own Arrow array (no
    copy); an object column of ``bytes`` joined in one compiled pass into this thread's reused
    buffers; any other object column copied by pyarrow into a binary array (str as UTF-8, None
    and NaN as nulls; slower per row: benchmarks/results/tunables.md). A column pyarrow cannot
    take goes to hash_many as a list (``_listed``)."""
    import pyarrow as pa

    from .kernels import _pyobjects
    if _column_kind(part.dtype) == "arrow":
        return part.array.__arrow_array__(), None, None
    values = part.to_numpy(dtype=object)
    joined = _pyobjects.join(values, scratch=True)
    if joined is not None:
        data, offsets, _ = joined
        return data, offsets, joined
    try:
        return pa.array(values, pa.binary(), from_pandas=True), None, None
    except (pa.ArrowException, TypeError, ValueError):
        return _listed(values), None, None


def _listed(values):
    """An object column's items as hash_many takes them, where pyarrow took not all of them
    (a numpy array among them, say): str as UTF-8 (an unencodable one: its UnicodeEncodeError,
    naming the row), None, NaN and NA refused as nulls, the rest as they are (hash_many takes
    any C-contiguous buffer and refuses anything else as hashlib does)."""
    import pandas as pd
    items, nulls = [], 0
    for row, value in enumerate(values):
        if isinstance(value, str):
            try:
                value = value.encode("utf-8")
            except UnicodeEncodeError as exc:
                raise UnicodeEncodeError(exc.encoding, exc.object, exc.start, exc.end,
                                         f"{exc.reason} (row {row} of a partition)") from None
        elif value is None or value is pd.NA or (isinstance(value, float) and value != value):
            nulls += 1
        items.append(value)
    _refuse_nulls(nulls)
    return items


def _bytes_objects(digests):
    """An (n, size) uint8 array as a numpy object array of n bytes (numpy's void items keep
    trailing zero bytes, which its "S" strings would strip)."""
    n, size = digests.shape
    if size == 0:
        return np.full(n, b"", dtype=object)
    return digests.view(f"V{size}").reshape(n).astype(object)


_INT32_MAX = np.iinfo(np.int32).max
# byte value -> its two lowercase hex digits as ASCII, read as one native uint16
_HEX_ASCII = np.frombuffer("".join(f"{i:02x}" for i in range(256)).encode(), np.uint16)


def _arrow_rows(pa, type_, data, width, n, offset_dtype):
    """Arrow chunks (of ``type_``, a binary or string type) whose item i is bytes
    data[i*width:(i+1)*width]: data shared, only offsets made (int32 offsets: chunks under
    2 GiB)."""
    if n == 0:
        return [pa.array([], type_)]
    step = n if offset_dtype == np.int64 or n * width <= _INT32_MAX else _INT32_MAX // width
    data = pa.py_buffer(data)
    chunks = []
    for start in range(0, n, step):
        rows = min(step, n - start)
        offsets = _offsets(pa, rows, width, offset_dtype)
        chunks.append(pa.Array.from_buffers(type_, rows, [
            None, offsets, data.slice(start * width, rows * width)]))
    return chunks


@functools.lru_cache(maxsize=8)
def _offsets(pa, rows, width, offset_dtype):
    """The Arrow offsets buffer 0, width, ..., rows * width: made once for each shape and
    shared (Arrow buffers are immutable), as partitions mostly have one length. Made afresh, it
    would cost a Dask worker a noticeable part of a partition (benchmarks/results/tunables.md):
    glibc's malloc there maps every block of 128 KiB or more anew (``MALLOC_TRIM_THRESHOLD_``),
    so each page is a page fault."""
    # int32: rows * width <= _INT32_MAX (_arrow_rows' step), so the product fits
    offsets = np.arange(rows + 1, dtype=offset_dtype) * offset_dtype(width)
    offsets.setflags(write=False)
    return pa.py_buffer(offsets)


def _arrow_binary(digests):
    import pandas as pd
    import pyarrow as pa
    n, size = digests.shape
    chunks = _arrow_rows(pa, pa.binary(), digests, size, n, np.int32)
    return pd.arrays.ArrowExtensionArray(pa.chunked_array(chunks, pa.binary()))


def _arrow_hex(digests):
    import pandas as pd
    import pyarrow as pa
    n, size = digests.shape
    text = np.take(_HEX_ASCII, digests, out=_out_array(digests.shape, np.uint16),
                   mode="clip")             # "raise" would fill a temporary, then copy
    chunks = _arrow_rows(pa, pa.large_string(), text, 2 * size, n, np.int64)
    return pd.arrays.ArrowStringArray(pa.chunked_array(chunks, pa.large_string()))


# --- bags -----------------------------------------------------------------------------------

def hash_bag(bag: dask.bag.Bag, name: str, *, key: ReadableBuffer | None = None,
             length: int | None = None) -> dask.bag.Bag:
    """Digest (bytes) of every item of a dask bag of bytes-like objects, one ``hash_many`` per
    partition."""
    import dask.bag as db
    if not isinstance(bag, db.Bag):
        raise TypeError(f"hash_bag takes a dask bag, not {type(bag).__name__}")
    size = _digest_size(name, key, length)
    return bag.map_partitions(_hash_bag_partition, name, key, length, size)


def _hash_bag_partition(part, name, key, length, size):
    """A partition's digests as bytes. Items that are all exactly ``bytes`` are joined into this
    thread's reused buffers and hashed into memory from ``_out_array``, as a column's are:
    in a Dask worker ``hash_many``'s own join and result would be new pages every partition
    (``MALLOC_TRIM_THRESHOLD_``; benchmarks/results/tunables.md). Any other items go to
    ``hash_many`` as they are, with its errors."""
    from .kernels import _pyobjects
    items = part if isinstance(part, (list, tuple)) else list(part)
    joined = _pyobjects.join(items, scratch=True)
    if joined is None:
        return _bytes_objects(_digests(name, key, items, length)).tolist()
    data, offsets, _ = joined
    return _bytes_objects(_hashed(name, key, length, (offsets.shape[0] - 1, size), data,
                                  offsets, joined)).tolist()


# --- files ---------------------------------------------------------------------------------------

def hash_files(paths: Iterable[str | bytes | Any], name: str | Iterable[str] = "sha256", *,
               client: Any = None, errors: str = "raise", progress: Any = None,
               length: int | None = None, cache: str | bytes | None = None) -> Any:
    """``jitdigest.hash_files`` on a Dask cluster: an iterator of ``FileDigest(path, digest,
    size, error)`` in input order, the files read and hashed by the workers of ``client`` (a
    ``distributed.Client``, a scheduler's address, "local:N" for a LocalCluster of N processes
    started here, or None: the current client), from a filesystem they share with this
    process; relative paths are taken from this process's directory. Paths are stat'ed here
    and sent in tasks of balanced bytes, a few tasks per worker ahead of the results, so memory
    does not grow with the number of paths. A large file of the tree hash (from
    ``SPLIT_FROM`` bytes, ``sum/dask_hasher.py``) is hashed in subtrees on several workers.
    ``cache``: a ``jitdigest sum --cache`` database, read and written here as results arrive (files unchanged since they were stored are not read)."""
    from .files import check_arguments
    from .sum import dask_hasher
    names = check_arguments(name, errors, length)
    if client is None:
        from distributed import get_client
        client = get_client()
    return dask_hasher.file_results(paths, dask_hasher.algo_of(names, length), client,
                                    errors == "raise", progress, cache)


# --- compiling once per worker process ------------------------------------------------------

LAYOUTS = ("grid", "rows")      # hash_array's blocks; columns' and bags' values + offsets
_warmed: dict[tuple[str, str, bool], float] = {}   # (algorithm, layout, keyed) -> seconds
_warm_lock = _fork.lock(globals(), "_warm_lock")


def _sample(layout):
    """A batch of the layout, one aligned group of rows: dispatch serves it with the kernel a
    full partition gets (lane kernels are passed over only for a handful of rows)."""
    if layout == "grid":
        return np.zeros((_config.ALIGN, 1), np.uint8)
    return [b""] * _config.ALIGN


def warm(names: Iterable[str], *, keyed: bool = False,
         layouts: Iterable[str] = LAYOUTS) -> dict[tuple[str, str, bool], float]:
    """Compile, or load from the kernel cache, the batch kernels this module's calls use for
    each algorithm in ``names`` (``keyed``: the HMAC ones), in this process, once; returns
    ``warmed()``. Safe to call from several threads at once."""
    specs = [_algorithms.lookup_any(name) for name in names]
    for layout in layouts:
        if layout not in LAYOUTS:
            raise ValueError(f"unknown layout {layout!r} (known: {', '.join(LAYOUTS)})")
    for spec in specs:
        for layout in layouts:
            what = (spec.name, layout, bool(keyed))
            with _warm_lock:
                if what in _warmed:
                    continue
                start = time.perf_counter()
                length = 1 if spec.digest_size == 0 else None
                _digests(spec.name, b"k" if keyed else None, _sample(layout), length)
                _warmed[what] = time.perf_counter() - start
    return warmed()


def warmed() -> dict[tuple[str, str, bool], float]:
    """{(algorithm, layout, keyed): seconds} of what ``warm`` did in this process."""
    with _warm_lock:
        return dict(_warmed)


class WarmKernels(WorkerPlugin):
    """``client.register_plugin(WarmKernels(["sha256"]))``: each worker, and each one that
    joins later, compiles or loads the kernels for those algorithms as it starts, before its
    first task (off its event loop, which goes on answering the scheduler)."""

    def __init__(self, names: Iterable[str], *, keyed: bool = False,
                 layouts: Iterable[str] = LAYOUTS) -> None:
        self.names = tuple(_algorithms.lookup_any(name).name for name in names)
        self.keyed = bool(keyed)
        self.layouts = tuple(layouts)
        self.name = f"jitdigest-warm-{','.join(self.names)}-{self.keyed}-{','.join(self.layouts)}"

    async def setup(self, worker: Any) -> None:
        await asyncio.get_running_loop().run_in_executor(
            None, lambda: warm(self.names, keyed=self.keyed, layouts=self.layouts))
