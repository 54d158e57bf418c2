"""``hmac_many``: HMAC of many messages under one key, in every layout ``hash_many`` takes.

Why: pseudonymising a column (HMAC-SHA256 of each row with one secret key) is otherwise a
Python loop of ``hmac.new(key, row, name).digest()``. Here the keyed inner and outer states are
computed once, and the rows are hashed by the batch kernels in two passes over ``out``
(``_keyed_rows`` says which kernels serve each family). Threads as in ``hash_many``
(``threads``; chunks of rows in a ``prange`` loop).
"""
from __future__ import annotations

from typing import Any

import numpy as np
import numpy.typing as npt

from .base import algorithms as _algorithms
from .engine import dispatch as _dispatch, keyed as _keyed, layout as _layout
from . import batch
from .base.stdlib import hmac as _std_hmac
from .hmac import HMAC

__all__ = ["hmac_many"]


class _KeyedRows:
    """Stands in for a kernel set in ``batch._run``: its ``hash_rows`` (and its ``prange``
    forms) are the keyed kernel's, which take the inner and outer states as ``iv``;
    each compiled on first use."""

    _ENTRIES = {"hash_rows": "hmac_rows", "hash_chunks": "hmac_chunks",
                "grid_chunks": "hmac_grid_chunks"}

    def __init__(self, spec):
        self._spec = spec

    def __getattr__(self, entry):
        if entry not in self._ENTRIES:
            raise AttributeError(entry)
        func = _keyed.entry(self._spec, self._ENTRIES[entry])
        setattr(self, entry, func)
        return func


def _readonly(words, dtype):
    arr = np.array(words, dtype=dtype)
    arr.setflags(write=False)
    return arr


def _keyed_states(key, spec):
    """The inner and outer states after the key blocks (hash objects' state words)."""
    h = HMAC(key, None, spec.name)
    inner = h._started()             # MD families: started now; others: started already
    outer = h._outer                 # MD families: the state array; others: a hash object
    return inner._state, outer if isinstance(outer, np.ndarray) else outer._state


def hmac_many(name: str, key: bytes | bytearray, messages: Any, offsets: Any = None, *,
              out: npt.NDArray[np.uint8] | None = None,
              threads: int | None = None) -> npt.NDArray[np.uint8]:
    """HMAC of every message under one ``key``: a C-contiguous (n, digest_size) uint8 array
    whose row i is ``hmac.new(key, message_i, name).digest()``.

    ``name``: any name ``jitdigest.new`` takes that HMAC allows (not SHAKE).
    ``key``: bytes or bytearray, as for ``hmac.new``.
    ``messages``, ``offsets``, ``out``, ``threads``: as for ``jitdigest.hash_many``.
    """
    if not isinstance(key, (bytes, bytearray)):
        raise TypeError("key: expected bytes or bytearray, but got %r" % type(key).__name__)
    spec = _algorithms.lookup(name)
    if spec.digest_size == 0:
        _std_hmac.new(key, None, name)              # SHAKE: the standard library's error
        raise ValueError(f"HMAC does not take {spec.name}")
    threads = batch._thread_cap(threads)
    segments, n = _layout.segments(messages, offsets)
    ds = spec.digest_size
    given = out
    out = _layout.check_out(out, n, ds)
    if n == 0:
        return out if given is None else given
    if _layout.overlaps(out, segments):     # as numpy does: never write over unread input
        fresh = np.empty_like(out)
        _keyed_rows(key, spec, segments, n, fresh, threads)
        out[...] = fresh
        return given
    _keyed_rows(key, spec, segments, n, out, threads)
    return out if given is None else given


def _keyed_rows(key, spec, segments, n, out, threads):
    """Fill ``out`` (checked, not overlapping the input) with the rows' HMACs:

    * MD5, SHA-1, SHA-2 on lane kernels: the inner pass hashes every row from the inner keyed
      state, the outer pass every inner digest (a grid of rows of the digest size, read from and
      written back to ``out``: each kernel reads a row before writing that row's output) from
      the outer keyed state; ``iv`` carries one word past the state, the key block's byte
      count, which the lane kernels add to the length in the padding;
    * the same families without lanes (or too few rows to fill them): one kernel pass doing
      both hashes per row (each backend's ``hmac_rows``, ``kernels/_hmac.py``);
    * SHA-3: both passes on the Keccak batch kernels, from the keyed sponge states (no length
      field to adjust);
    * BLAKE2, whose last block is compressed differently, so that no state after the key block
      serves an empty message: a loop of ``jitdigest.hmac`` objects (slow; correct)."""
    bs = spec.block_size
    if spec.family.startswith("blake2"):
        for seg in segments:
            _loop(key, spec, seg, out)
        return out
    inner, outer = _keyed_states(key, spec)
    kernels = _dispatch.batch_kernels_for(spec, n, sum(seg.nbytes() for seg in segments) // n)
    if spec.family in _algorithms.MERKLE_DAMGARD:
        if kernels.backend.lanes == 1:
            states = _readonly(np.concatenate([inner, outer]), spec.word)
            _passes(_KeyedRows(spec), spec, states, None, segments, n, out, threads)
            return out
        inner = _readonly(list(inner) + [bs], spec.word)      # + the key block's bytes
        outer = _readonly(list(outer) + [bs], spec.word)
    else:                                                     # SHA-3: the sponge states
        inner, outer = _readonly(inner, spec.word), _readonly(outer, spec.word)
    _passes(kernels, spec, inner, outer, segments, n, out, threads)
    return out


def _passes(kernels, spec, inner, outer, segments, n, out, threads):
    """The inner pass over the messages, then (``outer`` given) the outer pass over ``out``."""
    for seg in segments:
        view = out if seg.n == n else out[seg.row0:seg.row0 + seg.n]
        batch._run(kernels, spec, inner, seg, view, threads)
    if outer is not None:
        digests = _layout.Segment.grid(0, out.reshape(-1), spec.digest_size, n)
        batch._run(kernels, spec, outer, digests, out, threads)


def _loop(key, spec, seg, out):
    proto = HMAC(key, None, spec.name)
    values = seg.values
    for i in range(seg.n):
        if seg.width is not None:
            start, length = i * seg.width, seg.width
        else:
            start, length = int(seg.starts[i]), int(seg.lengths[i])
        h = proto.copy()
        h.update(values[start:start + length])
        out[seg.row0 + i] = np.frombuffer(h.digest(), np.uint8)
