"""Section 10 of ``_internals``: Numba's SSA reconstruction finds a statement's position in its
block by a linear scan (``_FixSSAVars._stmt_index``), quadratic in a block's length, and the
generated kernels' blocks are thousands of statements long. ``stmt_index`` answers as the scan
does (the index of ``defstmt`` among ``range(len(body))[:stop]``, else ``len(body)``) from a
dict of positions, kept per handler and block body and made again when the body or its length
changes (Numba builds new blocks, ``_run_block_rewrite``, and does not change one a handler
reads). In place of Numba's only inside ``ours()`` (section 20).

Part of the one package that touches Numba's and llvmlite's private internals (see
``__init__``); tested in tests/test_internals_compile.py."""
from numba.core import ssa as _ssa

from .ours import replace

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


replace(_ssa._FixSSAVars, "_stmt_index", stmt_index)
