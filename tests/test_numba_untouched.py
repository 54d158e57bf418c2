"""jitdigest leaves Numba as it found it: after jitdigest compiled kernels (an empty kernel
cache, so they compile), the Numba functions its compile-speed replacements stand in for are
Numba's own objects again, and a user's ``@njit`` functions compile, type and run as in a
process that never imported jitdigest. Each side runs in a fresh process."""
import json
import os
import subprocess
import sys

import pytest

if os.environ.get("NUMBA_DISABLE_JIT") == "1":
    pytest.skip("nothing is compiled (NUMBA_DISABLE_JIT=1)", allow_module_level=True)

# (module, class or None, attribute): what jitdigest replaces while it compiles its kernels.
REPLACED = (
    ("numba.core.ssa", "_FixSSAVars", "_stmt_index"),
    ("numba.core.types.functions", "BaseFunction", "get_call_type"),
    ("numba.core.lowering", None, "_lit_or_omitted"),
    ("numba.core.types", None, "maybe_literal"),
    ("numba.core.ir", "Inst", "_rec_list_vars"),
    ("numba.core.errors", "HighlightColorScheme", "_markup"),
    ("numba.core.typing.templates", "_OverloadFunctionTemplate", "_get_jit_decorator"),
    ("numba.core.typing.templates", "_OverloadFunctionTemplate", "_build_impl"),
    ("numba.core.typing.templates", "_OverloadFunctionTemplate", "generic"),
)

CHILD = r'''
import hashlib, importlib, json, sys

REPLACED = %(replaced)r
USE_JITDIGEST = %(use_jitdigest)r


def current():
    found = {}
    for module, owner, name in REPLACED:
        obj = importlib.import_module(module)
        if owner is not None:
            obj = getattr(obj, owner, None)
            if obj is None:                 # HighlightColorScheme: only with colorama
                continue
        found[".".join(filter(None, (module, owner, name)))] = vars(obj).get(name)
    return found


before = current()
report = {}
if USE_JITDIGEST:
    import jitdigest
    rows = [b"abc", b"", b"x" * 200]
    digests = [bytes(d) for d in jitdigest.hash_many("sha256", rows)]
    assert digests == [hashlib.sha256(r).digest() for r in rows], digests
    assert jitdigest.sha256(b"x").digest() == hashlib.sha256(b"x").digest()
    assert jitdigest.blake2b(b"x").digest() == hashlib.blake2b(b"x").digest()
    assert jitdigest.md5(b"x").digest() == hashlib.md5(b"x").digest()
    after = current()
    report["changed"] = sorted(k for k in before if after.get(k) is not before[k])

import numpy as np
from numba import literally, njit, types
from numba.extending import overload


def twice(x):
    return 2 * x


seen_while_typing = set()


@overload(twice)
def _twice(x):
    now = current()                         # (called while Numba types the user's function)
    seen_while_typing.update(k for k, v in now.items() if v is not before[k])
    if isinstance(x, types.Integer):
        return lambda x: x + x
    if isinstance(x, types.Float):
        return lambda x: x * 2.0


def width(x):
    pass


@overload(width, inline="always", prefer_literal=True)
def _width(x):
    if isinstance(x, types.IntegerLiteral):
        n = x.literal_value
        return lambda x: n * 10
    if isinstance(x, types.Integer):
        return lambda x: x


@njit
def literal_arg(n):
    return literally(n) + 1


@njit
def calls_overloads(a, b):
    return twice(a) + twice(b) + width(3) + width(a)


@njit
def mixed_ints(a, b, c):
    return (a + b * c - (a >> 1)) ^ b


@njit
def globals_and_constants():
    return (np.uint32(7) + np.int8(-3), 1.5 * 2, "ab" + "c")


@njit
def bad(x):
    return x.no_such_attribute


results = {
    "literal_arg": repr(literal_arg(4)),
    "calls_overloads": repr(calls_overloads(3, 2.5)),
    "mixed_ints": repr(mixed_ints(np.uint32(40000), np.int64(-7), np.uint8(200))),
    "globals_and_constants": repr(globals_and_constants()),
}
try:
    bad(1)
except Exception as exc:
    results["bad"] = type(exc).__name__
report["results"] = results
report["signatures"] = {
    f.__name__: [str(s) for s in f.nopython_signatures]
    for f in (literal_arg, calls_overloads, mixed_ints, globals_and_constants)}
report["after_user"] = sorted(seen_while_typing.union(
    k for k, v in current().items() if v is not before[k]))
print(json.dumps(report))
'''


def _run(use_jitdigest, tmp_path, warmup=()):
    """The child's report; ``warmup``: algorithms ``jitdigest warmup`` compiles into the
    child's kernel cache first, so that the child loads those kernels instead."""
    env = dict(os.environ, JITDIGEST_CACHE_DIR=str(tmp_path / "cache"), NUMBA_CACHE_DIR=str(
        tmp_path / "numba"))
    if warmup:
        done = subprocess.run([sys.executable, "-m", "jitdigest", "warmup", "--no-tune",
                               *warmup], env=env, capture_output=True, text=True, timeout=600)
        assert done.returncode == 0, done.stderr[-4000:]
    code = CHILD % {"replaced": REPLACED, "use_jitdigest": use_jitdigest}
    done = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True,
                          text=True, timeout=600)
    assert done.returncode == 0, done.stderr[-4000:]
    return json.loads(done.stdout.strip().splitlines()[-1])


def test_numba_is_numbas_own_after_jitdigest_compiled(tmp_path):
    stock = _run(False, tmp_path / "stock")
    used = _run(True, tmp_path / "used")
    assert used["changed"] == [], "jitdigest left these Numba functions replaced"
    assert used["after_user"] == stock["after_user"] == [], \
        "a user's compile met these Numba functions replaced"
    assert used["results"] == stock["results"]
    assert used["signatures"] == stock["signatures"]


def test_numba_is_numbas_own_after_warmup_compiled_kernels(tmp_path):
    """The same, the kernels compiled by ``jitdigest warmup`` and loaded from its cache."""
    stock = _run(False, tmp_path / "stock")
    used = _run(True, tmp_path / "used", warmup=("sha256", "md5", "blake2b"))
    assert used["changed"] == [], "jitdigest left these Numba functions replaced"
    assert used["after_user"] == stock["after_user"] == []
    assert used["results"] == stock["results"]
    assert used["signatures"] == stock["signatures"]
