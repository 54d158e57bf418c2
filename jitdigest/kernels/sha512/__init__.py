"""SHA-384/SHA-512/SHA-512/t (FIPS 180-4) kernels, one module per backend, each exporting its
``_contract.Backend`` record (``BACKEND``): name, tier (CPU features, switch), lanes and entries.

Per message: ``armv8`` (the ARMv8.2 SHA-512 instructions, on aarch64 only;
``tools/gen_arm_sha.py``), ``avx2`` (the message schedule in vector registers beside scalar
rounds), then ``portable``; many messages side by side in SIMD lanes, named by tier and messages
at once: ``avx512_x8``, ``avx2_x4`` (``tools/gen_lanes.py``). Importing this package imports no
backend (and no Numba).
"""


def backends():
    """The per-message backends, best first: the first one this process can run serves."""
    from . import armv8, avx2, portable
    return (armv8, avx2, portable)    # armv8: on aarch64 only (its record's arch)


def batch_backends():
    """The multi-buffer backends (``hash_rows`` only), widest first."""
    from . import avx2_x4, avx512_x8
    return (avx512_x8, avx2_x4)
