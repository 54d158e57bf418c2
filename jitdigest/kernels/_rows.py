"""How a batch entry finds its messages: row numbers into index arrays.

Every ``hash_rows(values, starts, lengths, rows, iv, out)`` entry hashes, for each row number
``r`` in ``rows`` (an int64 array, in any order: the batch driver sorts them by length), the
message ``values[start_of(starts, r):][:length_of(lengths, r)]`` into ``out[r]``; ``starts``
and ``lengths`` are int64 arrays indexed by row number. It is compiled for that one signature
(``jitdigest.engine.dispatch``).
"""
# The same rows cut at ``bounds`` (chunk ``c`` is the rows from position ``bounds[c]`` to
# ``bounds[c + 1]`` of ``rows``) are spread over cores by one Numba ``prange`` loop,
# ``over_chunks(hash_rows, values, starts, lengths, rows, bounds, iv, out)``, that calls a
# backend's ``hash_rows`` (or a keyed ``hmac_rows``) on each chunk. The kernel comes as an
# argument, a first-class function called by address: ``over_chunks`` is compiled once per word
# type for every backend (``jitdigest.engine.dispatch.chunks_entry``), not once per backend with the
# kernel linked in and optimised again (benchmarks/results/kernel_notes.md, "Batch rows").
#
# Rows of one width (a 2-D array) need no index arrays of their own: ``over_grid`` hashes grid
# rows ``bounds[c]`` to ``bounds[c + 1]`` a window at a time, each window ``values`` and ``out``
# sliced at its first row, with one small set of index arrays describing the first rows of any
# window (``jitdigest.engine.layout.grid_window``). The kernel keeps its one signature; a second, grid
# signature used to cost every backend a second compile of its kernel.
#
# The kernels read their rows only through the four functions below (the CUDA kernels also in
# a grid form, ``rows`` a pair ``(first, stop)`` and ``starts``/``lengths`` the width:
# ``_jit_cuda``). ``length_of`` refuses a negative length (ValueError): the batch driver proves
# every bound before a call (``jitdigest.engine.layout``), and this cheap guard keeps a future
# caller's mistake from becoming a loop over 2**57 blocks.
from numba import prange

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
    """The rows of chunk ``c``: a slice of the row numbers."""
    return rows[int(bounds[c]):int(bounds[c + 1])]


@parallel_kernel
def over_chunks(hash_rows, values, starts, lengths, rows, bounds, iv, out):
    """``hash_rows`` on every chunk of ``rows``, the chunks in parallel (a ``prange`` loop).
    The chunks write disjoint rows of ``out``."""
    for c in prange(bounds.shape[0] - 1):
        hash_rows(values, starts, lengths, chunk_of(rows, bounds, c), iv, out)


@parallel_kernel
def over_grid(hash_rows, values, starts, lengths, rows, bounds, iv, out):
    """``hash_rows`` on grid rows ``bounds[c]`` to ``bounds[c + 1]`` for every chunk ``c``, the
    chunks in parallel: row ``r`` is ``values[r * width:(r + 1) * width]``. ``starts``,
    ``lengths`` and ``rows`` are a window's index arrays (``starts[i] = i * width``,
    ``lengths[i] = width``, ``rows[i] = i``); each call hashes up to ``rows.shape[0]`` rows
    with ``values`` and ``out`` sliced at the first."""
    window = rows.shape[0]
    width = lengths[0]
    for c in prange(bounds.shape[0] - 1):
        first = bounds[c]
        stop = bounds[c + 1]
        while first < stop:
            k = min(stop - first, window)
            hash_rows(values[first * width:(first + k) * width], starts, lengths, rows[:k], iv,
                      out[first:first + k])
            first += k


# The CPU kernels are compiled for index arrays only (the grid form is the CUDA kernels').

@cpu_overload(row_count)
def _row_count(rows):
    return lambda rows: rows.shape[0]


@cpu_overload(row_at)
def _row_at(rows, i):
    return lambda rows, i: rows[i]


@cpu_overload(chunk_of)
def _chunk_of(rows, bounds, c):
    return lambda rows, bounds, c: rows[bounds[c]:bounds[c + 1]]


@cpu_overload(start_of)
def _start_of(starts, r):
    return lambda starts, r: starts[r]


@cpu_overload(length_of)
def _length_of(lengths, r):
    def row_length(lengths, r):
        n = lengths[r]
        if n < 0:
            raise ValueError("negative message length")
        return n
    return row_length
