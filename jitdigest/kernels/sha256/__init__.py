"""SHA-224/SHA-256 (FIPS 180-4) kernels, one module per backend, each exporting its
``_contract.Backend`` record (``BACKEND``): name, tier (CPU features, switch), lanes and entries.

Per message: ``armv8`` (the ARMv8 SHA-256 instructions, on aarch64 only; ``tools/gen_arm_sha.py``),
``sha_ni`` (``tools/gen_sha_ni.py``), ``portable``; many messages side by side in SIMD lanes,
named by tier and messages at once: ``avx512_x16``, ``avx2_x8`` (``tools/gen_lanes.py``); two
messages' SHA-NI rounds interleaved: ``sha_ni_x2`` (``tools/gen_sha_ni_batch.py``). Importing
this package imports no backend (and no Numba).
"""


def backends():
    """The per-message backends, best first: the first one this process can run serves."""
    from . import armv8, portable, sha_ni
    return (armv8, sha_ni, portable)    # armv8: on aarch64 only (its record's arch)


def batch_backends():
    """The multi-buffer backends (``hash_rows`` only): the SIMD lane kernels widest first, then
    the interleaved SHA-NI one (served where a calibration table picks it, or forced)."""
    from . import avx2_x8, avx512_x16, sha_ni_x2
    return (avx512_x16, avx2_x8, sha_ni_x2)
