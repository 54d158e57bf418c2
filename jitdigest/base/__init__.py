"""The bottom layer: facts every other layer reads and nothing here imports from above.

The algorithm table (``algorithms``), settings from the environment (``config``), the host CPU
and the one way Numba is first imported (``host``, ``arm``), where caches live and whether they
are trusted (``cachedir``), fork safety (``fork``), the real standard library modules
(``stdlib``) and numpy on first use (``lazy_numpy``). Imports run one way through the package:
API -> runtime -> engine -> kernels -> base (``tests/test_layers.py``).
"""
