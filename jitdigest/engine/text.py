"""Which inputs of the batch API are text, hashed as UTF-8, and numpy's fixed-width bytes.

The rule, in this one place (``hash_many``'s docstring states it): a container whose type says
it holds text -- a pandas Series, Index or array of a string dtype (``str``, ``string[python]``,
``string[pyarrow]``, ``ArrowDtype`` of a pyarrow string type) or a pyarrow string,
large_string or string_view array -- is hashed as each item's UTF-8 bytes; a Python ``str``
anywhere else (alone, in a list or tuple, in an object or ``U`` array, in an object-dtype
Series) raises hashlib's TypeError. Nulls in a text or binary container raise ValueError
naming the first null row. A 1-D numpy ``S`` array is hashed item by item as numpy reads the
items (trailing NUL bytes stripped: ``arr[i]``, ``arr.tolist()``).
"""
import importlib.util

import numpy as np


def _is_pandas(obj):
    return type(obj).__module__.partition(".")[0] == "pandas"


def pandas_arrow(obj):
    """A pandas Series, Index or extension array of a string or binary dtype as its pyarrow
    array (no copy where it is Arrow-backed; ``string[python]`` converted by pandas), or a list
    of UTF-8 bytes where pyarrow is not installed; None for anything else (other dtypes are read
    item by item as a sequence)."""
    if not _is_pandas(obj):
        return None
    import pandas as pd
    arr = obj.array if isinstance(obj, (pd.Series, pd.Index)) else obj
    dtype = getattr(arr, "dtype", None)
    if isinstance(dtype, pd.StringDtype):
        if importlib.util.find_spec("pyarrow") is None:
            return _encoded(arr.to_numpy(dtype=object, na_value=None))
    elif not (isinstance(dtype, pd.ArrowDtype) and arrow_text_or_binary(dtype.pyarrow_dtype)):
        return None
    return arr.__arrow_array__()


def arrow_text_or_binary(t):
    """Whether pyarrow type ``t`` is one the batch API hashes (binary or string kinds)."""
    import pyarrow as pa
    kinds = ("binary", "large_binary", "string", "large_string", "fixed_size_binary",
             "binary_view", "string_view")
    return any(getattr(pa.types, f"is_{k}", lambda _: False)(t) for k in kinds)


def _encoded(items):
    """A string column's items (None for a null) as UTF-8 bytes, nulls refused."""
    out = []
    for row, item in enumerate(items):
        if item is None:
            raise null_error(sum(x is None for x in items), row)
        out.append(item.encode("utf-8"))
    return out


def null_error(count, row):
    """The one error for nulls among the messages: how many, and the first one's row."""
    return ValueError(f"messages has {count} null entr{'y' if count == 1 else 'ies'} (the "
                      f"first at row {row}): drop them (dropna, arr.drop_null()) or fill them "
                      "(fillna, pyarrow.compute.fill_null) first")


def first_null_row(chunks):
    """The row of the first null among pyarrow ``chunks`` (rows counted across them)."""
    row0 = 0
    for chunk in chunks:
        if chunk.null_count:
            valid = chunk.is_valid().to_numpy(zero_copy_only=False)
            return row0 + int(np.argmin(valid))
        row0 += len(chunk)
    return -1


def fixed_width(arr):
    """A 1-D numpy ``S`` array as (values, starts, lengths, width): item i is
    ``values[starts[i]:starts[i] + lengths[i]]``, its bytes as numpy reads them (trailing NUL
    bytes stripped); ``width`` is the itemsize when no item has trailing NULs (the rows then
    form a grid), else None."""
    arr = np.ascontiguousarray(arr)
    n, width = arr.shape[0], arr.dtype.itemsize
    values = arr.view(np.uint8).reshape(-1) if n else np.empty(0, np.uint8)
    lengths = np.char.str_len(arr).astype(np.int64) if n else np.empty(0, np.int64)
    if n and int(lengths.min()) == width:
        return values, None, None, width
    return values, np.arange(n, dtype=np.int64) * width, lengths, None


def refuse_array(arr):
    """The TypeError for a 1-D numpy array without offsets that is neither ``S`` nor object."""
    if arr.dtype.kind == "U":
        return TypeError("Strings must be encoded before hashing (a numpy str array: encode "
                         "it, e.g. np.char.encode(arr, 'utf-8'), or pass "
                         "pyarrow.array(arr) to hash its items as UTF-8)")
    if arr.dtype == np.uint8:
        return TypeError("a 1-D array of message bytes needs offsets (n + 1 of them); for n "
                         "messages of equal length pass a 2-D (n, L) array")
    return TypeError(f"a 1-D array of dtype {arr.dtype} cannot be hashed as messages: pass a "
                     "2-D (n, L) uint8 array of rows, 1-D uint8 values with offsets, or an "
                     "array of bytes (dtype S or object)")
