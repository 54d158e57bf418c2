"""BLAKE3's ``hash_many`` on each lane width, forced with ``jitdigest.backend`` in this process
(the message lanes of 8 and 16, the per-message portable kernel) and with JITDIGEST_DISABLE in
a new one, against the ``blake3`` package. Kept apart from tests/test_blake3_many.py: each width
is a long compile of its own when cold, done here in a second worker."""
import json
import os
import pathlib
import random
import subprocess
import sys

import pytest

import jitdigest
from jitdigest.base import algorithms as _algorithms
from jitdigest.engine import cpu as _cpu, dispatch as _dispatch
from test_blake3_many import MESSAGES, MODES, expected, rows

ref = pytest.importorskip("blake3")       # the package: in the test extras

ROOT = pathlib.Path(__file__).resolve().parent.parent

# avx512_x16 serves by default where usable: tests/test_blake3_many.py runs it
WIDTHS = ("avx2_x8", "portable")
MODULES = {"avx512_x16": "many_avx512_x16", "avx2_x8": "many_avx2_x8", "portable": "portable"}


@pytest.mark.parametrize("width", WIDTHS)
def test_each_lane_width(width):
    """Forced with ``jitdigest.backend``: the message lanes of that width (the per-message
    portable kernel for "portable") serve, and agree with the package."""
    if width not in jitdigest.backends("blake3"):
        pytest.skip(f"{width} is not usable here")
    messages = MESSAGES[:60]
    with jitdigest.backend(width):
        ks = _dispatch.batch_kernels_for(_algorithms.TABLE["blake3"], len(messages), 500)
        assert ks.backend.module.__name__.rsplit(".", 1)[1] == MODULES[width]
        checked = 0
        for mode in MODES:
            for length in (32, 70):
                got = jitdigest.hash_many("blake3", messages, length=length, **mode)
                assert rows(got) == expected(messages, length, **mode), (mode, length)
                checked += len(messages)
    assert checked == 6 * len(messages)


CHILD = """
import json, random, jitdigest
from jitdigest.base import algorithms as _algorithms; from jitdigest.engine import dispatch as _dispatch
rnd = random.Random(3)
msgs = [rnd.randbytes(n) for n in (0, 1, 64, 65, 1024, 1025, 3000) * 5]
ks = _dispatch.batch_kernels_for(_algorithms.TABLE["blake3"], len(msgs), 700)
out = jitdigest.hash_many("blake3", msgs, key=bytes(32))
print(json.dumps([ks.backend.module.__name__.rsplit(".", 1)[1], [bytes(r).hex() for r in out],
                  jitdigest.backends("blake3")]))
"""


@pytest.mark.parametrize("switches, allowed", [("avx512", "avx2_x8"), ("avx512,avx2", "")])
def test_disable_switches_in_a_new_process(switches, allowed):
    env = dict(os.environ, JITDIGEST_DISABLE=switches, PYTHONPATH=str(ROOT))
    proc = subprocess.run([sys.executable, "-c", CHILD], capture_output=True, text=True,
                          env=env, cwd=ROOT, timeout=300)
    assert proc.returncode == 0, proc.stderr[-3000:]
    module, digests, names = json.loads(proc.stdout)
    rnd = random.Random(3)
    msgs = [rnd.randbytes(n) for n in (0, 1, 64, 65, 1024, 1025, 3000) * 5]
    assert digests == [h.hex() for h in expected(msgs, key=bytes(32))]
    assert len(digests) == 35
    assert "avx512_x16" not in names
    previous = _cpu.set_disabled(switches.split(","))   # the child's switches, exactly
    try:
        here = jitdigest.backends("blake3")
    finally:
        _cpu.set_disabled(previous)
    if allowed and allowed in here:
        assert module == "many_avx2_x8" and names == ["avx2_x8", "portable"]
    else:
        assert module == "portable" and names == ["portable"]


INTERPRETED = """
import json, jitdigest, numpy as np
msgs = [b"", b"abc", bytes(range(200)) * 6, b"q" * 2100]
out = [[bytes(r).hex() for r in jitdigest.hash_many("blake3", msgs, length=70, **mode)]
       for mode in ({}, {"key": bytes(range(32))}, {"derive_key_context": "c"})]
out.append([bytes(r).hex() for r in jitdigest.hash_many("blake3", np.zeros((3, 65), np.uint8))])
print(json.dumps([jitdigest.backends("blake3"), out]))
"""


def test_interpreted_in_a_new_process():
    """With NUMBA_DISABLE_JIT=1 the portable kernel serves, interpreted."""
    env = dict(os.environ, NUMBA_DISABLE_JIT="1", PYTHONPATH=str(ROOT))
    proc = subprocess.run([sys.executable, "-c", INTERPRETED], capture_output=True, text=True,
                          env=env, cwd=ROOT, timeout=300)
    assert proc.returncode == 0, proc.stderr[-3000:]
    names, out = json.loads(proc.stdout)
    assert names == ["portable"]
    msgs = [b"", b"abc", bytes(range(200)) * 6, b"q" * 2100]
    want = [[h.hex() for h in expected(msgs, 70, **mode)]
            for mode in ({}, {"key": bytes(range(32))}, {"derive_key_context": "c"})]
    want.append([h.hex() for h in expected([bytes(65)] * 3)])
    assert out == want and sum(map(len, out)) == 15
