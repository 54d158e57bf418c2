"""The one timing helper every benchmark script shares: medians of self-calibrated repeats,
and running a measurement in a child process with a different environment (interpreted
mode, OpenSSL's portable code) that reports back as JSON."""
import json
import os
import statistics
import subprocess
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
OPENSSL_PORTABLE = {"OPENSSL_ia32cap": "~0xffffffffffffffff:~0xffffffffffffffff"}


def seconds_per_call(fn, min_time=0.05, repeat=7):
    """Median seconds per call of ``fn()``, each repeat running long enough to be timed."""
    fn()
    number = 1
    while True:
        t0 = time.perf_counter()
        for _ in range(number):
            fn()
        elapsed = time.perf_counter() - t0
        if elapsed >= min_time:
            break
        number *= 2 if elapsed == 0 else max(2, min(100, int(min_time / elapsed) + 1))
    samples = [elapsed / number]
    for _ in range(repeat - 1):
        t0 = time.perf_counter()
        for _ in range(number):
            fn()
        samples.append((time.perf_counter() - t0) / number)
    return statistics.median(samples)


def run_child(module_code, args, env=None, timeout=900):
    """Run ``python -c module_code args...`` with extra ``env``; its last stdout line is JSON."""
    full_env = dict(os.environ)
    full_env.update(env or {})
    full_env["PYTHONPATH"] = os.pathsep.join([ROOT, full_env.get("PYTHONPATH", "")])
    proc = subprocess.run([sys.executable, "-c", module_code, *map(str, args)], env=full_env,
                          capture_output=True, text=True, timeout=timeout)
    if proc.returncode != 0:
        raise RuntimeError(f"child failed:\n{proc.stderr}")
    return json.loads(proc.stdout.strip().splitlines()[-1])


def machine():
    """One line naming the CPU and versions, for result headers."""
    import platform
    cpu = platform.processor() or platform.machine()
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    cpu = line.split(":", 1)[1].strip()
                    break
    except OSError:
        pass
    import numba
    import numpy
    return (f"{cpu}, {os.cpu_count()} cores; Python {platform.python_version()}, "
            f"numba {numba.__version__}, numpy {numpy.__version__}, {time.strftime('%Y-%m-%d')}")
