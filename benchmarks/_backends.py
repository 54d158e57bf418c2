"""Which backends a benchmark can time, named through jitdigest's public API only
(``jitdigest.backends``, ``jitdigest.backend``, ``jitdigest.info``), so that the benchmarks pick
tiers the way a user would and never reach into dispatch.

``jitdigest.backends(name)`` lists the per-message backends best first, then the multi-buffer
ones (named ``<tier>_x<messages>``) that serve ``hash_many`` only; a per-message backend in ``HARDWARE`` runs the
CPU's hash instructions, every other one portable code compiled by Numba.
"""
import functools
import os
import re
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
if ROOT not in sys.path:
    sys.path.insert(0, ROOT)

import jitdigest  # noqa: E402

MULTI_BUFFER = re.compile(r"_x\d+$")   # multi-buffer backends: avx512_x16, avx2_x8, sha_ni_x2
HARDWARE = ("sha_ni",)          # per-message backends built on CPU hash instructions


def per_message(name):
    """The per-message backends this process can run for ``name``, best first (the first is
    the one hash objects and one-shot digests use)."""
    return [b for b in jitdigest.backends(name) if not MULTI_BUFFER.search(b)]


def lanes(name):
    """The multi-buffer backends this process can run for ``name``, widest first."""
    return [b for b in jitdigest.backends(name) if MULTI_BUFFER.search(b)]


def software(name):
    """The best per-message backend for ``name`` that runs no CPU hash instruction (what
    dispatch would pick with every hardware path off), or None under no JIT at all."""
    return next((b for b in per_message(name) if b not in HARDWARE), None)


def hardware(name):
    """The per-message backend built on CPU hash instructions (SHA-NI) this process can run
    for ``name``, or None."""
    return next((b for b in per_message(name) if b in HARDWARE), None)


@functools.lru_cache(maxsize=None)
def _info():
    return jitdigest.info()             # outside any ``backend()`` block: every algorithm


def jit_enabled():
    """False under ``NUMBA_DISABLE_JIT=1`` (kernels run interpreted)."""
    return _info()["jit"]


def serving(name):
    """The per-message backend dispatch gives ``name`` in this process."""
    return _info()["kernels"][name]


def serving_batch(name, length=None):
    """The backend ``hash_many`` uses for many rows of ``name`` in this process (of ``length``
    bytes each: this CPU's calibration table's choice, where ``jitdigest tune`` or ``warmup``
    made one, as ``info()["tuned"]`` shows it)."""
    tuned = _info()["tuned"].get(name) if length is not None else None
    if not tuned:
        return _info()["batch_kernels"][name]
    bounds = sorted(tuned)
    return tuned[next((b for b in bounds if length <= b), bounds[-1])]
