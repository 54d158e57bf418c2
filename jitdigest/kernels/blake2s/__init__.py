"""BLAKE2s (RFC 7693) kernels, one module per backend, each exporting its ``_contract.Backend``
record (``BACKEND``): name, tier (CPU features, switch), lanes and entries.

Per message: ``unrolled`` (straight-line, generated), ``portable`` (loop form); many messages
side by side in SIMD lanes, named by tier and messages at once: ``avx512_x16``, ``avx2_x8``
(``tools/gen_lanes.py``). Importing this package imports no backend (and no Numba).
"""


def backends():
    """The per-message backends, best first: the first one this process can run serves."""
    from . import portable, unrolled
    return (unrolled, portable)


def batch_backends():
    """The multi-buffer backends (``hash_rows`` only), widest first."""
    from . import avx2_x8, avx512_x16
    return (avx512_x16, avx2_x8)
