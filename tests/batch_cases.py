"""Shared cases for the batch tests (tests/test_batch_*.py): the algorithms, the batch kernel
sets registered for each as pytest params, message lengths at the padding edges, ragged
batches, the input layouts hash_many takes, and the hashlib check of a batch's digests."""
import hashlib

import numpy as np
import pytest

from jitdigest.base import algorithms as _algorithms
from jitdigest.engine import dispatch as _dispatch

ALL = sorted(_algorithms.SPECS)
SHAKE_LENGTH = 40
LAYOUTS = ["rows", "offsets", "list", "arrow", "arrow_chunked"]
N_RAGGED = 77          # > 4 lane groups of 16, the last one partial


def registered_batch_backends(spec):
    """Every backend registered to serve hash_rows for an algorithm: lane kernels, then the
    per-message kernels."""
    return _dispatch.batch_backends(spec.family) + _dispatch.backends(spec.family)


def batch_params(names):
    """pytest params (algorithm, kernel set), one per registered batch backend; only those
    this CPU/target cannot run appear as skips (a backend without a hash_rows entry fails)."""
    params = []
    for name in names:
        spec = _algorithms.SPECS[name]
        for backend in registered_batch_backends(spec):
            marks = () if _dispatch.usable(backend) else (
                pytest.mark.skip(reason=f"{backend.name} not usable on this CPU/target"),)
            ks = _dispatch._kernel_set(backend, spec.word)
            params.append(pytest.param(name, ks, id=f"{name}-{backend.name}", marks=marks))
    return params

def expected(name, msg, length=SHAKE_LENGTH):
    h = hashlib.new(name, bytes(msg))
    return h.digest(length) if name.startswith("shake") else h.digest()


def out_length(name, length=SHAKE_LENGTH):
    spec = _algorithms.SPECS[name]
    return spec.digest_size or length


def length_kw(name, length=SHAKE_LENGTH):
    return {"length": length} if name.startswith("shake") else {}


def edge_lengths(spec):
    """Message lengths from 0 to 3 blocks, with the padding edges (the last length that still
    fits the length field in the final block, and the first that does not)."""
    bs = spec.block_size
    pad = spec.min_padding
    lengths = {0, 1, 2, bs // 2, bs - 1, bs, bs + 1, 2 * bs - 1, 2 * bs, 2 * bs + 1,
               3 * bs - 1, 3 * bs, 3 * bs + 1}
    if pad:
        lengths |= {bs - pad, bs - pad + 1, 2 * bs - pad, 2 * bs - pad + 1}
    return sorted(lengths)


def ragged_messages(spec, n=N_RAGGED, seed=0):
    rng = np.random.default_rng(seed)
    lengths = np.resize(edge_lengths(spec), n)
    rng.shuffle(lengths)
    return [rng.integers(0, 256, int(k), dtype=np.uint8).tobytes() for k in lengths]


def rows_widths(spec):
    bs = spec.block_size
    pad = spec.min_padding
    return sorted({0, 1, max(bs - pad, 0), bs - pad + 1, bs, 2 * bs + 1, 3 * bs})


def layout(kind, msgs):
    """(messages, offsets) laying ``msgs`` out as ``kind``."""
    n = len(msgs)
    if kind == "rows":
        width = len(msgs[0]) if msgs else 0
        assert all(len(m) == width for m in msgs)
        return np.frombuffer(b"".join(msgs), np.uint8).reshape(n, width).copy(), None
    if kind == "offsets":
        lengths = np.array([len(m) for m in msgs], np.int64)
        offsets = np.concatenate(([5], 5 + np.cumsum(lengths)))   # junk before and after
        values = np.frombuffer(b"head!" + b"".join(msgs) + b"tail", np.uint8)
        return values, offsets
    if kind == "list":
        kinds = (bytes, bytearray, memoryview)
        return [kinds[i % 3](m) for i, m in enumerate(msgs)], None
    pa = pytest.importorskip("pyarrow")
    if kind == "arrow":
        return pa.array([b"junk"] * 3 + msgs, pa.binary())[3:], None    # a slice: offset 3
    assert kind == "arrow_chunked"
    cut = n // 3
    return pa.chunked_array([pa.array(msgs[:cut], pa.large_binary()),
                             pa.array([], pa.large_binary()),
                             pa.array(msgs[cut:] + [b"x"], pa.large_binary())[:n - cut]],
                            pa.large_binary()), None


def check_batch(name, msgs, got, length=SHAKE_LENGTH):
    assert got.dtype == np.uint8 and got.flags.c_contiguous
    assert got.shape == (len(msgs), out_length(name, length))
    bad = [i for i, m in enumerate(msgs) if got[i].tobytes() != expected(name, m, length)]
    assert not bad, f"{name}: rows {bad[:10]} differ (lengths {[len(msgs[i]) for i in bad[:10]]})"
