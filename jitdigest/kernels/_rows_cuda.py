"""The CUDA batch kernels: one thread per message, each hashing its row through its family's
own ``hash_rows`` (the CPU source, compiled as a device function by ``_jit_cuda.device``) on
the one-row grid ``(r, r + 1)``: padding and length in thread-local words, digests written
straight into ``out[r]``.

Like the CPU kernels they trust their arguments: ``jitdigest.cuda`` proves every row's bytes lie
inside ``values`` before a launch.
"""
from numba import cuda

from . import blake2b, blake2s, keccak, md5, sha1, sha256, sha512
from ._jit_cuda import device

# The kernel families with a CUDA batch kernel (one thread a message: no tree hash).
FAMILIES = ("md5", "sha1", "sha256", "sha512", "keccak", "blake2b", "blake2s")
_PACKAGES = {"md5": md5, "sha1": sha1, "sha256": sha256, "sha512": sha512, "keccak": keccak,
             "blake2b": blake2b, "blake2s": blake2s}

_KERNELS = {}


def rows_kernel(family):
    """The CUDA kernel ``hash_each(values, starts, lengths, n, iv, out)`` of ``family``: thread
    ``r < n`` hashes row ``r`` (``starts``/``lengths`` int64 arrays, or one int each: rows of
    ``lengths`` bytes every ``starts`` bytes) from the initial state ``iv`` into ``out[r]``.
    Compiled on first launch, once per argument types."""
    found = _KERNELS.get(family)
    if found is None:
        hash_rows = device(portable(family).hash_rows)

        def hash_each(values, starts, lengths, n, iv, out):
            r = cuda.grid(1)
            if r < n:
                hash_rows(values, starts, lengths, (r, r + 1), iv, out)
        found = _KERNELS[family] = cuda.jit(hash_each)
    return found


def portable(family):
    """The ``portable`` backend record of ``family`` (its package's ``backends()``)."""
    return next(m.BACKEND for m in _PACKAGES[family].backends() if m.BACKEND.name == "portable")
