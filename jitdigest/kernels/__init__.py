"""The kernels: one package per algorithm family (``md5/``, ``sha256/``, ``keccak/``, ...) holding
its backends under the same names (``portable.py``, ``unrolled.py``, ``sha_ni.py``; lane kernels
``<tier>_x<N>.py``: the tier's ISA and the messages hashed side by side, ``avx512_x16.py``),
and the drivers and helpers they share, written once (``_md``, ``_hmac``, ``_blake2``, ``_rows``,
``_lanes``, ``_jit``, ``_simd``; ``_internals/``, a module per private Numba/llvmlite seam they
rely on). ``jitdigest.engine.dispatch`` picks a backend per family.

Importing this package, or a family package, imports no Numba and compiles nothing.
"""
