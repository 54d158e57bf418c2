"""A small ``hash_rows`` kernel with a known answer, for the tests that store or link batch
kernels as machine code (``test_internals.py``, ``test_elf.py``): row r's output byte k is
(the sum of its bytes + iv[0] + k) & 255."""
from array import array

import numba
import numpy as np


def compiled():
    """The kernel, compiled for the batch entry's uint32 signature."""
    from jitdigest.engine import dispatch as _dispatch

    @numba.njit
    def kernel(values, starts, lengths, rows, iv, out):
        for i in range(rows.shape[0]):
            total = 0
            for j in range(lengths[i]):
                total += values[starts[i] + j]
            for k in range(out.shape[1]):
                out[rows[i], k] = (total + iv[0] + k) & 255

    kernel.compile(_dispatch._signatures(np.uint32)["hash_rows"])
    return kernel


MESSAGES = [bytes(range(i)) for i in range(20)]


def answers(rows):
    """Whether ``rows`` (a ``jitdigest.runtime.native.Rows`` over the kernel, iv [7]) gives the
    formula's 3 bytes for each of MESSAGES."""
    out = rows.hash(b"".join(MESSAGES), array("q", map(len, MESSAGES)), 3)
    return out == b"".join(bytes(((sum(m) + 7 + k) & 255) for k in range(3)) for m in MESSAGES)
