"""scrypt (RFC 7914) kernels: ROMix, the memory-hard middle of ``jitdigest.scrypt``, over the
Salsa20/8 core. One backend, ``portable`` (one source for interpreted and compiled mode); the
PBKDF2-HMAC-SHA256 before and after it are the HMAC kernels' (``jitdigest/_pbkdf2.py``).
Importing this package imports no backend (and no Numba).
"""
