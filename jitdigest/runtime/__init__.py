"""Start-up and stored code: batch kernels saved as object files and linked without Numba
(``native``, ``elf``), so that a script's first digests need no compile and no Numba import.
"""
