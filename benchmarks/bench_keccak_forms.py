#!/usr/bin/env python3
"""Keccak kernels, loop form (backend ``portable``, jitdigest/kernels/keccak/portable.py) against
straight-line form (backend ``unrolled``, jitdigest/kernels/keccak/unrolled.py): SHA3-256
throughput interpreted and compiled, cold compile time, and the compiled portable kernel
against OpenSSL's portable code.

Every measurement runs in a child process so that each starts cold and alone:

* compiled: a fresh, empty kernel cache (JITDIGEST_CACHE_DIR and NUMBA_CACHE_DIR), so
  "compile" is the cold compile of the three entry points (update, final, oneshot) that a
  ``jitdigest.sha3_256`` object and one-shot digest use inside ``with jitdigest.backend(form)``,
  after Numba itself has warmed up on a trivial function; throughput is the backend module's
  ``update`` entry, called directly, on ``--mib`` MiB;
* interpreted: NUMBA_DISABLE_JIT=1, ``update`` on ``--kib`` KiB;
* OpenSSL: hashlib.sha3_256 with OPENSSL_ia32cap masking every CPU extension (its portable
  code), and once unmasked for reference.

Each child is started ``--rounds`` times, the forms and OpenSSL taking turns, and the figures
are medians over all runs (MB = 10**6 bytes). Runs are timed in CPU time of the hashing thread
(``time.thread_time``), which other processes sharing the cores distort far less than wall
time; ``--wall`` times them with ``time.perf_counter`` instead. Cold compile times are wall
time.

    python benchmarks/bench_keccak_forms.py [--mib 1] [--kib 4] [--repeat 15] [--rounds 3]
"""
import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
# Form -> backend name, which is also its module under jitdigest/kernels/keccak/.
FORMS = {"loop": "portable", "unrolled": "unrolled"}
OPENSSL_PORTABLE = "~0xffffffffffffffff:~0xffffffffffffffff"


def _times(fn, repeat, clock):
    clock = time.perf_counter if clock == "wall" else time.thread_time
    times = []
    for _ in range(repeat):
        t0 = clock()
        fn()
        times.append(clock() - t0)
    return times


def child_kernel(form, nbytes, repeat, clock):
    """Throughput of one form's ``update`` entry (and cold compile time when compiled)."""
    import importlib

    import numpy as np

    sys.path.insert(0, ROOT)
    import jitdigest
    from jitdigest.base.algorithms import SPECS

    spec = SPECS["sha3_256"]
    compile_s = None
    t0 = time.perf_counter()
    mod = importlib.import_module("jitdigest.kernels.keccak." + FORMS[form])
    import_s = time.perf_counter() - t0
    if jitdigest.info()["jit"]:
        import numba
        numba.njit(lambda x: x + 1)(1)          # Numba's own first-use cost, not the kernel's
        t0 = time.perf_counter()
        with jitdigest.backend(FORMS[form]):    # update, final, oneshot, as dispatch compiles them
            h = jitdigest.sha3_256()
            h.update(np.zeros(1000, np.uint8))
            h.digest()
            jitdigest.sha3_256(b"abc").digest()
        compile_s = time.perf_counter() - t0
    # Read-only bytes, as hash objects pass them: the signature compiled above serves the calls.
    data = np.frombuffer(bytes(range(256)) * (nbytes // 256), np.uint8)
    state = spec.initial_state.copy()
    buf = np.zeros(spec.block_size, np.uint8)
    mod.update(state, buf, 0, data)             # warm-up
    times = _times(lambda: mod.update(state, buf, 0, data), repeat, clock)
    return {"times": times, "compile_s": compile_s, "import_s": import_s}


def child_openssl(nbytes, repeat, clock):
    import hashlib
    data = bytes(range(256)) * (nbytes // 256)
    hashlib.sha3_256(data).digest()
    return {"times": _times(lambda: hashlib.sha3_256(data).digest(), repeat, clock)}


def run_child(args, flags, env_extra):
    env = dict(os.environ)
    env.update(env_extra)
    env["PYTHONPATH"] = ROOT + os.pathsep + env.get("PYTHONPATH", "")
    out = subprocess.run([sys.executable, "-W", "error", os.path.abspath(__file__), *flags,
                          "--child", json.dumps(args)],
                         env=env, check=True, capture_output=True, text=True)
    return json.loads(out.stdout.strip().splitlines()[-1])


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--mib", type=float, default=1.0, help="compiled message size (MiB)")
    ap.add_argument("--kib", type=float, default=4.0, help="interpreted message size (KiB)")
    ap.add_argument("--repeat", type=int, default=15, help="compiled/OpenSSL runs per child")
    ap.add_argument("--repeat-interp", type=int, default=3, help="interpreted runs per child")
    ap.add_argument("--rounds", type=int, default=3, help="times each child is started")
    ap.add_argument("--wall", action="store_true", help="time runs in wall time")
    ap.add_argument("--child", help=argparse.SUPPRESS)
    a = ap.parse_args()
    clock = "wall" if a.wall else "cpu"
    if a.child:
        job = json.loads(a.child)
        if job["kind"] == "kernel":
            res = child_kernel(job["form"], job["nbytes"], job["repeat"], clock)
        else:
            res = child_openssl(job["nbytes"], job["repeat"], clock)
        print(json.dumps(res))
        return

    nbig = int(a.mib * (1 << 20)) // 256 * 256
    nsmall = int(a.kib * 1024) // 256 * 256
    env_default = {"OPENSSL_ia32cap": ""} if "OPENSSL_ia32cap" in os.environ else {}
    flags = ["--wall"] if a.wall else []
    times = {}          # (what, form) -> run times
    compile_s = {}      # form -> cold compile times

    def add(key, res):
        times.setdefault(key, []).extend(res["times"])

    for _ in range(a.rounds):
        for form in FORMS:
            with tempfile.TemporaryDirectory(prefix="jitdigest-cache-") as cache:
                res = run_child({"kind": "kernel", "form": form, "nbytes": nbig,
                                 "repeat": a.repeat}, flags,
                                {"JITDIGEST_CACHE_DIR": cache, "NUMBA_CACHE_DIR": cache,
                                 "NUMBA_DISABLE_JIT": "0"})
            add(("compiled", form), res)
            compile_s.setdefault(form, []).append(res["compile_s"])
            add(("interpreted", form),
                run_child({"kind": "kernel", "form": form, "nbytes": nsmall,
                           "repeat": a.repeat_interp}, flags, {"NUMBA_DISABLE_JIT": "1"}))
        add(("openssl", "portable"), run_child({"kind": "openssl", "nbytes": nbig,
                                                "repeat": a.repeat}, flags,
                                               {"OPENSSL_ia32cap": OPENSSL_PORTABLE}))
        add(("openssl", "default"), run_child({"kind": "openssl", "nbytes": nbig,
                                               "repeat": a.repeat}, flags, env_default))

    def mbps(key, nbytes):
        return nbytes / statistics.median(times[key]) / 1e6

    print("SHA3-256 update(): medians of %d x %d runs, %s time; MB = 1e6 bytes"
          % (a.rounds, a.repeat, "wall" if a.wall else "thread CPU"))
    print("%-10s %16s %18s %14s %12s" % ("form", "compiled MB/s", "interpreted MB/s",
                                          "cold compile", "/ OpenSSL"))
    print("%-10s %16s %18s %14s %12s" % ("", "(%g MiB)" % a.mib, "(%g KiB)" % a.kib,
                                          "(3 entries)", "portable"))
    ossl = mbps(("openssl", "portable"), nbig)
    for form in FORMS:
        comp = mbps(("compiled", form), nbig)
        print("%-10s %16.1f %18.3f %13.2fs %11.2fx" % (
            form, comp, mbps(("interpreted", form), nsmall),
            statistics.median(compile_s[form]), comp / ossl))
    print("%-10s %16.1f %18s %14s %11.2fx" % ("OpenSSL", ossl, "", "", 1.0))
    print("  (portable: OPENSSL_ia32cap=%s)" % OPENSSL_PORTABLE)
    print("%-10s %16.1f" % ("OpenSSL", mbps(("openssl", "default"), nbig)))
    print("  (default, CPU extensions allowed)")
    speeds = sorted(((mbps(("compiled", f), nbig), f) for f in FORMS), reverse=True)
    (fast, best), (slow, _) = speeds[0], speeds[-1]
    if fast / slow < 1.03:
        print("compiled: no clear winner (within 3%%; %s ahead by %.1f%%)"
              % (best, 100 * (fast / slow - 1)))
    else:
        print("compiled: %s is faster by %.0f%%" % (best, 100 * (fast / slow - 1)))


if __name__ == "__main__":
    main()
