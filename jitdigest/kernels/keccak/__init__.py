"""Keccak-f[1600] sponge: SHA-3 and SHAKE (FIPS 202) kernels, one module per backend, each
exporting its ``_contract.Backend`` record (``BACKEND``): name, tier, lanes and entries.

Per message: ``armv8`` (the ARMv8.2 SHA-3 instructions, on aarch64 only and off unless
``JITDIGEST_ENABLE=sha3``; ``tools/gen_arm_sha.py``), ``unrolled`` (straight-line, generated),
``portable`` (loop form); many messages side by side in SIMD lanes, named by tier and messages
at once: ``avx512_x8``, ``avx2_x4`` (``tools/gen_lanes.py``). Importing this package imports no
backend (and no Numba).
"""


def backends():
    """The per-message backends, best first: the first one this process can run serves."""
    from . import armv8, portable, unrolled
    return (armv8, unrolled, portable)    # armv8: on aarch64 only (its record's arch)


def batch_backends():
    """The multi-buffer backends (``hash_rows`` only), widest first."""
    from . import avx2_x4, avx512_x8
    return (avx512_x8, avx2_x4)
