"""jitdigest.cuda on Numba's CUDA simulator (no GPU needed): every algorithm against hashlib
on ragged rows across block edges and on 2-D rows, host and device inputs, and the errors of
bad calls. The simulator runs in a child process started as README.md says (its command, read
from there: the environment it sets and nothing else), so NUMBA_ENABLE_CUDASIM never reaches
the rest of the suite; skipped where numba-cuda is not installed."""
import importlib.util
import json
import os
import re
import shlex
import subprocess
import sys
from pathlib import Path

import pytest

from jitdigest.base import algorithms as _algorithms
from jitdigest.engine import gpu as _gpu

ROOT = Path(__file__).resolve().parent.parent
HAVE_NUMBA_CUDA = importlib.util.find_spec("numba_cuda") is not None
needs_numba_cuda = pytest.mark.skipif(not HAVE_NUMBA_CUDA, reason="numba-cuda is not installed "
                                      "(pip install 'jitdigest[cuda]' or '.[test]')")
# Every algorithm of the table: the CUDA kernels serve them all (BLAKE3 is not in it).
ALL = sorted(_algorithms.SPECS)


def documented_command():
    """README.md's command for the simulator, ``VAR=value ... python script.py``: (the
    variables it sets, the command after them)."""
    text = (ROOT / "README.md").read_text()
    spans = [m for m in re.findall(r"`([^`\n]+)`", text)
             if m.startswith("NUMBA_ENABLE_CUDASIM=") and " python " in m]
    assert len(spans) == 1, f"README.md names no single simulator command: {spans}"
    words = shlex.split(spans[0])
    settings = {}
    while "=" in words[0]:
        name, _, value = words.pop(0).partition("=")
        settings[name] = value
    assert settings.get("NUMBA_ENABLE_CUDASIM") == "1" and words[0] == "python" and \
        len(words) == 2, spans[0]
    return settings, words


def child(args, sim=True, timeout=300):
    """``python args`` in a child process; with ``sim``, in the environment README.md's
    simulator command sets (no other NUMBA_ENABLE_CUDASIM or NUMBA_DISABLE_JIT)."""
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(
        [str(ROOT)] + [p for p in os.environ.get("PYTHONPATH", "").split(os.pathsep) if p]))
    env.pop("NUMBA_ENABLE_CUDASIM", None)
    if sim:
        env.pop("NUMBA_DISABLE_JIT", None)
        env.update(documented_command()[0])
    return subprocess.run([sys.executable, *args], env=env, cwd=ROOT, capture_output=True,
                          text=True, timeout=timeout)


@pytest.fixture(scope="module")
def sim_run():
    """README.md's simulator command, run on tests/cuda_sim_child.py as its script."""
    proc = child([str(ROOT / "tests" / "cuda_sim_child.py"), *documented_command()[1][2:]])
    assert proc.returncode == 0, proc.stdout + proc.stderr
    return json.loads(proc.stdout.strip().splitlines()[-1])


@needs_numba_cuda
def test_the_documented_command_alone_runs_the_simulator(sim_run):
    """The child ran on the simulator with the JIT on: README.md's one variable is all it
    takes (the kernels' Python forms run there, not the CPU-compiled ones)."""
    assert documented_command()[0] == {"NUMBA_ENABLE_CUDASIM": "1"}
    assert sim_run["simulator"] is True and sim_run["jit"] is True, sim_run


@needs_numba_cuda
@pytest.mark.parametrize("name", ALL)
def test_every_algorithm_matches_hashlib(sim_run, name):
    counts = sim_run["algorithms"][name]
    edges = sim_run["edges"]
    assert edges >= 30
    assert counts == {"ragged_host": edges, "ragged_device": edges, "rows_device": 6,
                      "rows_host": 6, "rows_empty": 3}


@needs_numba_cuda
def test_digest_sizes_and_coverage(sim_run):
    assert sorted(sim_run["algorithms"]) == ALL
    for name, size in sim_run["sizes"].items():
        spec = _algorithms.SPECS[name]
        assert size == (spec.digest_size or {"shake_128": 200, "shake_256": 33}[name])


ERRORS = {
    "decreasing": "ValueError: offsets must be non-decreasing",
    "past_end": "ValueError: offsets[-1] = 11 is past the end of values (10 bytes)",
    "negative": "ValueError: offsets[0] = -1 is negative",
    "past_end_device": "ValueError: offsets[-1] = 12 is past the end of values (10 bytes)",
    "float_offsets": "TypeError: offsets must be integers",
    "values_dtype": "TypeError: messages must have dtype uint8, not int32",
    "device_dtype": "TypeError: messages must have dtype uint8, not int16",
    "no_offsets": "TypeError: 1-D values need offsets",
    "rows_offsets": "TypeError: offsets are for 1-D values",
    "three_d": "ValueError: messages must be 2-D rows or 1-D values, not 3-D",
    "out_shape": "ValueError: out has shape (2, 31), expected (2, 32)",
    "out_dtype": "TypeError: out must have dtype uint8, not uint32",
    "out_host": "TypeError: out must be a device array",
    "out_overlap": "ValueError: out overlaps the messages",
    "shake_no_length": "TypeError: hash_many() for shake_128 needs length=",
    "length_not_shake": "TypeError: length= is for SHAKE only",
    "unknown": "ValueError: unsupported hash type sha0",
    "blake3": "NotImplementedError: jitdigest.cuda has no kernel for blake3",
}


@needs_numba_cuda
@pytest.mark.parametrize("case", sorted(ERRORS))
def test_bad_calls_raise(sim_run, case):
    assert sim_run["errors"][case].startswith(ERRORS[case])


@needs_numba_cuda
def test_bench_runs_on_the_simulator(tmp_path):
    proc = child([str(ROOT / "benchmarks" / "bench_cuda.py"), "--sim-smoke",
                  "--results", str(tmp_path)])
    assert proc.returncode == 0, proc.stdout + proc.stderr
    table = (tmp_path / "cuda_simulator.md").read_text()
    assert table.count("| ok ") == len(ALL), table
    assert "sha256" in table and "64" in table and "1024" in table


def test_import_without_gpu_says_what_is_missing():
    """Without the simulator and without a GPU (or without numba-cuda), importing jitdigest.cuda
    raises ImportError naming what is missing; importing jitdigest never imports it."""
    code = ("import sys, jitdigest\n"
            "assert 'jitdigest.cuda' not in sys.modules and 'numba' not in sys.modules\n"
            "try:\n    import jitdigest.cuda\n"
            "except ImportError as e:\n    print('ImportError:', e)\n"
            "else:\n    print('imported')\n")
    proc = child(["-c", code], sim=False)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    if not HAVE_NUMBA_CUDA:
        assert "ImportError: jitdigest.cuda needs the numba-cuda package" in proc.stdout
    elif "imported" in proc.stdout:
        pytest.skip("a CUDA GPU is here: the import succeeds")
    else:
        assert "ImportError: jitdigest.cuda found no usable CUDA GPU" in proc.stdout, proc.stdout


def test_missing_numba_cuda_message(monkeypatch):
    monkeypatch.setattr(_gpu, "find_spec", lambda name: None)
    assert "pip install 'jitdigest[cuda]'" in _gpu.missing()
    assert _gpu.describe() == "none (numba-cuda not installed)"


def test_info_says_whether_a_gpu_was_found():
    plain = child(["-m", "jitdigest", "info"], sim=False)
    sim = child(["-m", "jitdigest", "info"])
    assert plain.returncode == 0 and sim.returncode == 0, plain.stderr + sim.stderr
    line = [x for x in plain.stdout.splitlines() if x.startswith("gpu = ")]
    assert len(line) == 1, plain.stdout
    if not HAVE_NUMBA_CUDA:
        assert line[0] == "gpu = none (numba-cuda not installed)"
        assert "gpu = none (numba-cuda not installed)" in sim.stdout
    else:
        assert (line[0] == "gpu = none (no usable CUDA GPU or driver)"
                or "compute capability" in line[0]), line[0]
        assert "gpu = simulator (NUMBA_ENABLE_CUDASIM=1)" in sim.stdout


LOADERS = r"""
import struct, sys
import numpy as np, numba
from numba.extending import overload
from jitdigest.kernels import _jit, _jit_cuda as jc
# The CUDA loaders' helpers, given to the CPU target too, so their code runs here (the byte
# swaps are LLVM intrinsics, for any target).
overload(jc._aligned)(jc._aligned_impl)
overload(jc.on_cuda(_jit.be64))(jc._be64)
FORMATS = {"load_be32": ">16I", "load_le32": "<16I", "load_be64": ">16Q", "load_le64": "<16Q"}
data = np.random.default_rng(5).integers(0, 256, 256, dtype=np.uint8)
checked = aligned = 0
for name, fmt in FORMATS.items():
    impl = numba.njit(getattr(jc, "_" + name)(None, None, None, None))
    size = struct.calcsize(fmt)
    for p in range(9):
        w = np.zeros(16, np.uint64 if fmt[-1] == "Q" else np.uint32)
        impl(data[p:p + size], 0, w, 16)
        assert w.tolist() == list(struct.unpack(fmt, data[p:p + size].tobytes())), (name, p)
        checked += 1
        aligned += (data[p:].ctypes.data % (size // 16)) == 0
be64 = numba.njit(jc._be64(None, None))
for p in range(9):
    assert be64(data, p) == struct.unpack_from(">Q", data.tobytes(), p)[0]
    checked += 1
# Digests from states: whole words where the row is aligned, else bytes.
store_words = jc.on_cuda(_jit.store_words)
overload(store_words)(jc._store_words)
store = numba.njit(lambda state, little, out: store_words(state, little, out))
stored = 0
for dtype, fmt in ((np.uint32, "I"), (np.uint64, "Q")):
    state = data[:64].view(dtype).copy()
    for little in (True, False):
        whole = struct.pack(("<" if little else ">") + f"{len(state)}{fmt}", *state.tolist())
        for p in range(9):
            for n in (len(whole), len(whole) - 4, 20):
                buf = np.zeros(p + n, np.uint8)
                store(state, little, buf[p:])
                assert buf[p:].tobytes() == whole[:n], (dtype, little, p, n)
                stored += 1
print("checked", checked, "aligned", aligned, "stored", stored)
"""


@needs_numba_cuda
def test_cuda_loaders_read_the_cpu_loaders_words():
    """The CUDA block loaders (16-byte vectors or whole words where aligned, else bytes) and
    digest writer compiled for the CPU read and write what struct does, at every offset of a
    word (every path)."""
    proc = child(["-c", LOADERS], sim=False)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    checked, aligned, stored = proc.stdout.split()[1::2]
    assert int(checked) == 4 * 9 + 9 and 4 <= int(aligned) < 36, proc.stdout
    assert int(stored) == 2 * 2 * 9 * 3, proc.stdout


WORDS = r"""
import numpy as np, numba
from numba.extending import overload
from jitdigest.kernels import _jit, _jit_cuda as jc
# The CUDA forms of the 32-bit helpers (LLVM i32 operations), given to the CPU target under
# the stand-in names device code calls, so their code runs here.
add32, rotl32, rotr32 = (jc.on_cuda(f) for f in (_jit.add32, _jit.rotl32, _jit.rotr32))
overload(add32)(jc._add32)
overload(rotl32)(jc._rotl32)
overload(rotr32)(jc._rotr32)


@numba.njit
def words(x, y, out, wide):
    for i in range(x.shape[0]):
        a = x[i]
        b = y[i]
        big = (np.uint64(b) << np.uint64(32)) | np.uint64(a)       # high bits to be cut
        out[i, 0] = add32(a, b)
        out[i, 1] = add32(a, b, 0x9b05688c, big, a ^ b)
        out[i, 2] = add32(big, -1, 7)
        out[i, 3] = rotl32(a, 5)
        out[i, 4] = rotr32(big, 13)
        out[i, 5] = jc._bswap32(big)
        for n in range(1, 32):                                      # amounts not constant
            out[i, 5 + n] = rotl32(a, n)
            out[i, 36 + n] = rotr32(a, n)
        wide[i] = jc._bswap64(big)


rng = np.random.default_rng(11)
x = rng.integers(0, 1 << 32, 500, dtype=np.uint64).astype(np.uint32)
y = rng.integers(0, 1 << 32, 500, dtype=np.uint64).astype(np.uint32)
x[:4] = [0, 0xFFFFFFFF, 0x80000000, 1]
out = np.zeros((500, 68), np.uint32)
wide = np.zeros(500, np.uint64)
words(x, y, out, wide)
M = 0xFFFFFFFF
rotl = lambda v, n: ((v << n) | (v >> (32 - n))) & M
checked = 0
for i in range(500):
    a, b = int(x[i]), int(y[i])
    big = (b << 32) | a
    want = [(a + b) & M, (a + b + 0x9b05688c + big + (a ^ b)) & M, (big - 1 + 7) & M,
            rotl(a, 5), rotl(a, 32 - 13), int.from_bytes(a.to_bytes(4, "big"), "little")]
    want += [rotl(a, n) for n in range(1, 32)] + [rotl(a, 32 - n) for n in range(1, 32)]
    assert out[i].tolist() == want, (i, a, b)
    assert int(wide[i]) == int.from_bytes(big.to_bytes(8, "big"), "little")
    checked += 1
print("checked", checked)
"""


@needs_numba_cuda
def test_cuda_word_helpers_compute_what_python_does():
    """The CUDA forms of add32, rotl32, rotr32 and the byte swaps (LLVM i32/i64 operations, so
    that NVPTX keeps 32-bit words 32-bit) compiled for the CPU: sums of up to five integers of
    any width, constant and variable rotations, cut to 32 bits as plain Python arithmetic is."""
    proc = child(["-c", WORDS], sim=False)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert proc.stdout.split() == ["checked", "500"], proc.stdout
