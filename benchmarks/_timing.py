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


def cpu_model():
    """The CPU's model name (``/proc/cpuinfo``), else what ``platform`` says."""
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    import platform
    return platform.processor() or platform.machine()


def machine():
    """One line naming the CPU and versions, for result headers."""
    import platform

    import numba
    import numpy
    return (f"{cpu_model()}, {os.cpu_count()} cores; Python {platform.python_version()}, "
            f"numba {numba.__version__}, numpy {numpy.__version__}, {time.strftime('%Y-%m-%d')}")


# --- JMH-style measurement: timed iterations, a confidence interval, bytes per op ---------------

CLOCKS = {"wall": time.perf_counter, "cpu": time.thread_time}


def _betacf(a, b, x):
    """Continued fraction of the regularised incomplete beta function (modified Lentz)."""
    tiny = 1e-300
    qab, qap, qam = a + b, a + 1.0, a - 1.0
    c, d = 1.0, 1.0 - qab * x / qap
    d = 1.0 / (d if abs(d) > tiny else tiny)
    h = d
    for m in range(1, 300):
        m2 = 2 * m
        for aa in (m * (b - m) * x / ((qam + m2) * (a + m2)),
                   -(a + m) * (qab + m) * x / ((a + m2) * (qap + m2))):
            d = 1.0 + aa * d
            d = 1.0 / (d if abs(d) > tiny else tiny)
            c = 1.0 + aa / c
            c = c if abs(c) > tiny else tiny
            h *= d * c
        if abs(d * c - 1.0) < 1e-15:
            break
    return h


def _incomplete_beta(a, b, x):
    import math
    if x <= 0.0:
        return 0.0
    if x >= 1.0:
        return 1.0
    front = math.exp(math.lgamma(a + b) - math.lgamma(a) - math.lgamma(b)
                     + a * math.log(x) + b * math.log1p(-x))
    if x < (a + 1.0) / (a + b + 2.0):
        return front * _betacf(a, b, x) / a
    return 1.0 - front * _betacf(b, a, 1.0 - x) / b


def student_t_quantile(p, df):
    """The ``p`` quantile (0.5 < p < 1) of Student's t distribution with ``df`` degrees of
    freedom, by bisection on its CDF (no scipy needed): e.g. (0.9995, 4) -> 8.610."""
    if not 0.5 < p < 1.0 or df < 1:
        raise ValueError("need 0.5 < p < 1 and df >= 1")

    def upper_tail(t):                      # P(T > t) for t >= 0
        return 0.5 * _incomplete_beta(df / 2.0, 0.5, df / (df + t * t))

    lo, hi = 0.0, 1.0
    while upper_tail(hi) > 1.0 - p:
        hi *= 2.0
    for _ in range(200):
        mid = 0.5 * (lo + hi)
        if upper_tail(mid) > 1.0 - p:
            lo = mid
        else:
            hi = mid
        if hi - lo < 1e-12 * hi:
            break
    return 0.5 * (lo + hi)


def confidence_interval(samples, level=0.999):
    """(mean, half-width) of the ``level`` confidence interval of the mean, as JMH reports
    "Score ± Error": Student's t with n - 1 degrees of freedom. The half-width is nan for
    fewer than two samples."""
    n = len(samples)
    mean = statistics.fmean(samples)
    if n < 2:
        return mean, float("nan")
    t = student_t_quantile(0.5 + level / 2.0, n - 1)
    return mean, t * statistics.stdev(samples) / n ** 0.5


def throughput_iterations(fn, iterations=5, iteration_time=0.2, warmup=2, warmup_time=None,
                          clock="wall"):
    """JMH's throughput mode: ``warmup`` iterations then ``iterations`` measured ones, each
    calling ``fn()`` over and over for at least ``iteration_time`` seconds (and at least once);
    returns the measured iterations' scores in calls per second. Calls are made in batches
    sized so that reading the clock costs nothing measurable; ``clock`` is "wall"
    (perf_counter) or "cpu" (this thread's CPU time, which other processes on a shared
    machine distort far less)."""
    now = CLOCKS[clock]
    warmup_time = iteration_time if warmup_time is None else warmup_time
    t0 = now()
    fn()
    first = now() - t0
    batch = 1 if first <= 0 else max(1, int(iteration_time / 50 / first))

    def one_iteration(duration):
        calls = 0
        t0 = now()
        while True:
            for _ in range(batch):
                fn()
            calls += batch
            elapsed = now() - t0
            if elapsed >= duration:
                return calls / elapsed

    for _ in range(warmup):
        one_iteration(warmup_time)
    return [one_iteration(iteration_time) for _ in range(iterations)]


def bytes_per_op(fn, ops=100):
    """Python-level bytes an ``fn()`` call holds at its high-water mark, by tracemalloc (numpy
    reports its data buffers to tracemalloc too): the median over ``ops`` calls of the traced
    peak above the memory in use before the call. Every object the call makes and keeps until
    it returns counts, so for code that frees little before it returns this is the bytes
    allocated per call (JMH's ``gc.alloc.rate.norm``), and it never counts more. Call ``fn``
    once beforehand so that one-time costs (compiling, caches) are not counted."""
    import tracemalloc
    was_tracing = tracemalloc.is_tracing()
    if not was_tracing:
        tracemalloc.start()
    try:
        peaks = []
        for _ in range(ops):
            before = tracemalloc.get_traced_memory()[0]
            tracemalloc.reset_peak()
            fn()
            peaks.append(tracemalloc.get_traced_memory()[1] - before)
    finally:
        if not was_tracing:
            tracemalloc.stop()
    return statistics.median(peaks)


def take_turns(fns, rounds=3, min_time=0.05, repeat=3):
    """{name: median seconds per call} for a dict of callables timed in turn, ``rounds`` times
    each (``seconds_per_call`` per turn, the median over every turn): a slow spell on a shared
    machine then hits every contender instead of one."""
    samples = {name: [] for name in fns}
    for _ in range(rounds):
        for name, fn in fns.items():
            samples[name].append(seconds_per_call(fn, min_time, repeat))
    return {name: statistics.median(s) for name, s in samples.items()}
