#!/usr/bin/env python3
"""BLAKE2b / BLAKE2s: jitdigest against hashlib, and the loop form (backend ``portable``,
jitdigest/kernels/blake2{b,s}/portable.py) against the straight-line form (backend
``unrolled``, jitdigest/kernels/blake2{b,s}/unrolled.py), compiled and interpreted.

1. hashlib vs jitdigest on ``--mib`` MiB in the same process, taking turns (medians of
   self-calibrated repeats): the public classes, i.e. the form dispatch picks, one-shot
   ``blake2b(data).digest()`` and streaming ``h.update(buffer); h.digest()``.
   ratio = jitdigest speed / hashlib speed (hashlib's _blake2: the reference C code).
2. Every per-message backend (``jitdigest.backends(name)``, forced with
   ``with jitdigest.backend(...)``), streaming: compiled in this process; interpreted in a
   child process with ``NUMBA_DISABLE_JIT=1`` on ``--kib`` KiB; cold compile time of the
   three entry points a hash object and a one-shot digest use (update, final, oneshot) in a
   child process with an empty kernel cache (JITDIGEST_CACHE_DIR and NUMBA_CACHE_DIR).

    python benchmarks/bench_blake2.py [--mib 1] [--kib 64] [--no-compile-time]
"""
import argparse
import hashlib
import os
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from _timing import machine, run_child, seconds_per_call  # noqa: E402

NAMES = ("blake2b", "blake2s")

# Streaming speed of every form of both algorithms in this process's mode (JIT on or off):
# argv[1] = message size in bytes; prints {"blake2b/unrolled": MB/s, ...}.
FORMS_CHILD = """
import json, os, sys
sys.path.insert(0, os.path.join(os.environ["PYTHONPATH"].split(os.pathsep)[0], "benchmarks"))
from bench_blake2 import form_speeds
print(json.dumps(form_speeds(int(sys.argv[1]))))
"""

# Cold compile of one form's entries: argv[1] = algorithm, argv[2] = backend name.
COMPILE_CHILD = """
import json, sys, time
import numba
numba.njit(lambda x: x + 1)(1)                # Numba's own first-use cost, not the kernel's
import numpy as np
import jitdigest
ctor = getattr(jitdigest, sys.argv[1])
t0 = time.perf_counter()
with jitdigest.backend(sys.argv[2]):          # update, final, oneshot, as dispatch compiles them
    h = ctor()
    h.update(np.zeros(1000, np.uint8))
    h.digest()
    ctor(b"abc").digest()
print(json.dumps(time.perf_counter() - t0))
"""


def forms():
    """[(algorithm, backend)] for every per-message BLAKE2 backend this process can run."""
    from _backends import per_message
    return [(name, backend) for name in NAMES for backend in per_message(name)]


def form_speeds(size, repeat=5):
    """{"algorithm/backend": MB/s} of streaming update + digest through each backend."""
    import numpy as np

    import jitdigest
    view = np.frombuffer(os.urandom(size), np.uint8)
    speeds = {}
    for name, backend in forms():
        cls = getattr(jitdigest, name)
        with jitdigest.backend(backend):
            assert stream(cls, view) == getattr(hashlib, name)(view).digest()
            seconds = seconds_per_call(lambda: stream(cls, view),
                                       min_time=0.02 if size < 1 << 20 else 0.05, repeat=repeat)
        speeds[f"{name}/{backend}"] = size / seconds / 1e6
    return speeds


def stream(cls, view):
    h = cls()
    h.update(view)
    return h.digest()


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--mib", type=float, default=1.0, help="compiled message size (MiB)")
    ap.add_argument("--kib", type=float, default=64.0, help="interpreted message size (KiB)")
    ap.add_argument("--no-compile-time", action="store_true", help="skip the cold compiles")
    a = ap.parse_args()

    import numpy as np

    import jitdigest
    from _backends import jit_enabled, serving
    if not jit_enabled():
        sys.exit("run with the JIT on: the interpreted figures come from a child process")

    size = int(a.mib * (1 << 20))
    data = os.urandom(size)
    view = np.frombuffer(bytearray(data), np.uint8)
    print(machine())
    print(f"\n1. hashlib vs jitdigest on {size} bytes (MB = 1e6 bytes, medians)")
    print(f"{'algorithm':10} {'path':10} {'hashlib MB/s':>13} {'jitdigest MB/s':>15} "
          f"{'ratio':>6}  form")
    for name in NAMES:
        ours_cls, ref_cls = getattr(jitdigest, name), getattr(hashlib, name)
        form = serving(name)
        assert ours_cls(data).digest() == ref_cls(data).digest()
        paths = {"one-shot": (lambda: ref_cls(data).digest(), lambda: ours_cls(data).digest()),
                 "streaming": (lambda: stream(ref_cls, view), lambda: stream(ours_cls, view))}
        for path, (theirs, ours) in paths.items():
            t_ref, t_ours = [], []
            for _ in range(3):                   # take turns: drift hits both alike
                t_ref.append(seconds_per_call(theirs, repeat=5))
                t_ours.append(seconds_per_call(ours, repeat=5))
            t_ref, t_ours = sorted(t_ref)[1], sorted(t_ours)[1]
            print(f"{name:10} {path:10} {size / t_ref / 1e6:13.0f} {size / t_ours / 1e6:15.0f} "
                  f"{t_ref / t_ours:6.2f}  {form}")

    nsmall = int(a.kib * 1024)
    compiled = form_speeds(size)
    interpreted = run_child(FORMS_CHILD, [nsmall], env={"NUMBA_DISABLE_JIT": "1"})
    compile_s = {}
    if not a.no_compile_time:
        for name, backend in forms():
            with tempfile.TemporaryDirectory(prefix="jitdigest-cache-") as cache:
                compile_s[f"{name}/{backend}"] = run_child(
                    COMPILE_CHILD, [name, backend],
                    env={"JITDIGEST_CACHE_DIR": cache, "NUMBA_CACHE_DIR": cache,
                         "NUMBA_DISABLE_JIT": "0"})
    print(f"\n2. forms, streaming: compiled on {size} bytes, interpreted on {nsmall} bytes")
    print(f"{'form':20} {'compiled MB/s':>14} {'interpreted MB/s':>17} {'JIT gain':>9} "
          f"{'cold compile':>13}")
    for key, fast in compiled.items():
        slow = interpreted.get(key)             # a backend that needs the JIT has none
        cold = f"{compile_s[key]:12.1f}s" if key in compile_s else f"{'-':>13}"
        interp = f"{slow:17.3f} {fast / slow:8.0f}x" if slow else f"{'-':>17} {'-':>9}"
        print(f"{key:20} {fast:14.1f} {interp} {cold}")
    for name in NAMES:
        loop, unrolled = compiled[f"{name}/portable"], compiled[f"{name}/unrolled"]
        winner = "unrolled" if unrolled >= loop else "loop (portable)"
        print(f"{name}: compiled, {winner} form faster by "
              f"{100 * (max(loop, unrolled) / min(loop, unrolled) - 1):.0f}%")


if __name__ == "__main__":
    main()
