"""The batch engine ``hash_many`` had before its prange loops, kept only to compare against:
the same chunks (``jitdigest.batch._plan``), spread over Python threads from a shared
``ThreadPoolExecutor`` that call each backend's GIL-free ``hash_rows`` entry, the calling thread
taking the first share. ``previous_pool()`` swaps it in for the duration of a ``with`` block."""
import contextlib
import os
from concurrent.futures import ThreadPoolExecutor

from jitdigest import batch

_POOL = ThreadPoolExecutor(max_workers=max(32, os.cpu_count() or 1))


def _run_share(entry, calls):
    for args in calls:
        entry(*args)


def pool_chunks(kernels, spec, grid, head, rows, bounds, tail, threads):
    entry = batch._entry(kernels, spec, "hash_rows")
    calls = list(batch._calls(grid, head, rows, bounds, tail))
    if threads == 1 or len(calls) == 1:
        _run_share(entry, calls)
        return
    shares = [calls[len(calls) * i // threads:len(calls) * (i + 1) // threads]
              for i in range(threads)]
    futures = [_POOL.submit(_run_share, entry, share) for share in shares[1:]]
    _run_share(entry, shares[0])
    for f in futures:
        f.result()


@contextlib.contextmanager
def previous_pool():
    """hash_many (and hmac_many) on the thread pool engine inside the block."""
    saved = batch._chunks
    batch._chunks = pool_chunks
    try:
        yield
    finally:
        batch._chunks = saved
