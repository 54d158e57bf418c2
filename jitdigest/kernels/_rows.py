"""How a batch entry finds its messages: a list of rows, or a grid of equal rows.

Every ``hash_rows(values, starts, lengths, rows, iv, out)`` entry hashes, for each row number
``r`` it is given, the message ``values[start_of(starts, r):][:length_of(lengths, r)]`` into
``out[r]``. It is compiled for two signatures (``jitdigest._dispatch``):

* rows: ``starts``, ``lengths`` int64 arrays indexed by row number, ``rows`` an int64 array of
  the row numbers to hash (in any order: the batch driver sorts them by length);
* grid: ``starts`` and ``lengths`` one int64 each, the row width, and ``rows`` a pair
  ``(first, stop)``: row ``r`` is ``values[r * width:(r + 1) * width]``. That is a 2-D
  ``(n, width)`` array, hashed without building three index arrays of ``n`` int64 (for 100k
  64-byte rows they cost more than a third of MD5's hashing time, mostly in page faults).

The same rows cut at ``bounds`` (chunk ``c`` is the rows from position ``bounds[c]`` to
``bounds[c + 1]`` of ``rows``) are spread over cores by one Numba ``prange`` loop,
``over_chunks(hash_rows, values, starts, lengths, rows, bounds, iv, out)``, that calls a
backend's ``hash_rows`` (or a keyed ``hmac_rows``) on each chunk. The kernel comes as an
argument, a first-class function called by address: ``over_chunks`` is compiled once per word
type and layout for every backend (``jitdigest._dispatch.chunks_entry``), not once per backend
with the kernel linked in and optimised again (2-3 s of LLVM each, measured).

The kernels read their rows only through the four functions below. ``length_of`` refuses a
negative length (ValueError): the batch driver proves every bound before a call
(``jitdigest._layout``), and this cheap guard keeps a future caller's mistake from becoming a
loop over 2**57 blocks.
"""
from numba import prange, types

from ._jit import cpu_overload, parallel_kernel


def row_count(rows):
    """How many rows are to be hashed."""
    return rows[1] - rows[0] if isinstance(rows, tuple) else len(rows)


def row_at(rows, i):
    """The row number of the ``i``-th row to hash."""
    return rows[0] + i if isinstance(rows, tuple) else int(rows[i])


def start_of(starts, r):
    """The first byte of row ``r`` in ``values``."""
    return r * starts if isinstance(starts, int) else int(starts[r])


def length_of(lengths, r):
    """The length of row ``r`` in bytes."""
    n = lengths if isinstance(lengths, int) else int(lengths[r])
    if n < 0:
        raise ValueError("negative message length")
    return n


def chunk_of(rows, bounds, c):
    """The rows of chunk ``c``: a slice of the row numbers, or a sub-range of the grid."""
    if isinstance(rows, tuple):
        return (rows[0] + int(bounds[c]), rows[0] + int(bounds[c + 1]))
    return rows[int(bounds[c]):int(bounds[c + 1])]


@parallel_kernel
def over_chunks(hash_rows, values, starts, lengths, rows, bounds, iv, out):
    """``hash_rows`` on every chunk of ``rows``, the chunks in parallel (a ``prange`` loop).
    The chunks write disjoint rows of ``out``."""
    for c in prange(bounds.shape[0] - 1):
        hash_rows(values, starts, lengths, chunk_of(rows, bounds, c), iv, out)


def _is_grid(rows):
    return isinstance(rows, types.UniTuple)


@cpu_overload(row_count)
def _row_count(rows):
    if _is_grid(rows):
        return lambda rows: rows[1] - rows[0]
    return lambda rows: rows.shape[0]


@cpu_overload(row_at)
def _row_at(rows, i):
    if _is_grid(rows):
        return lambda rows, i: rows[0] + i
    return lambda rows, i: rows[i]


@cpu_overload(chunk_of)
def _chunk_of(rows, bounds, c):
    if _is_grid(rows):
        return lambda rows, bounds, c: (rows[0] + bounds[c], rows[0] + bounds[c + 1])
    return lambda rows, bounds, c: rows[bounds[c]:bounds[c + 1]]


@cpu_overload(start_of)
def _start_of(starts, r):
    if isinstance(starts, types.Integer):
        return lambda starts, r: r * starts
    return lambda starts, r: starts[r]


@cpu_overload(length_of)
def _length_of(lengths, r):
    if isinstance(lengths, types.Integer):
        def grid_length(lengths, r):
            if lengths < 0:
                raise ValueError("negative message length")
            return lengths
        return grid_length

    def row_length(lengths, r):
        n = lengths[r]
        if n < 0:
            raise ValueError("negative message length")
        return n
    return row_length
