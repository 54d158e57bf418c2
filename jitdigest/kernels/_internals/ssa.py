"""Section 10 of ``_internals``: Numba's SSA reconstruction (``_FixSSAVars._stmt_index``) finds
statements by a linear scan, quadratic in a block's length; replaced, on import, by a lookup
with the same results.

Part of the one package that touches Numba's and llvmlite's private internals (see
``__init__``); tested in tests/test_internals_compile.py."""

# Measured (BLAKE2b lanes4 ``hash_rows``, a fresh cache, AMD EPYC znver1): 42 s to compile, 48 s
# of them (profiled) in 189,000 scans of one block's statement list; with the lookup below the
# same compile takes 24 s. The replacement returns exactly what Numba's scan returns (tests
# compare the two): the index of ``defstmt`` in ``block.body`` if it is found among the
# positions ``range(len(body))[:stop]``, else ``len(body)``. Each handler (one per variable
# being fixed) keeps the index of the block it last looked in; blocks are not changed while a
# handler reads them (``_run_block_rewrite`` builds new ones), and a changed body or length is
# indexed again.
from numba.core import ssa as _ssa  # noqa: E402

NUMBA_STMT_INDEX = getattr(getattr(_ssa, "_FixSSAVars", None), "_stmt_index", None)


def stmt_index(self, defstmt, block, stop=-1):
    body = block.body
    seen = getattr(self, "_jitdigest_positions", None)
    if seen is None or seen[0] is not body or seen[1] != len(body):
        positions = {}
        for i, stmt in enumerate(body):
            positions.setdefault(id(stmt), i)
        seen = self._jitdigest_positions = (body, len(body), positions)
    i = seen[2].get(id(defstmt))
    if i is not None and i in range(seen[1])[:stop]:
        return i
    return seen[1]


if NUMBA_STMT_INDEX is not None:
    _ssa._FixSSAVars._stmt_index = stmt_index
