"""jitdigest.cuda on a GPU: every algorithm checked against hashlib on random rows hashed on the
device (ragged values+offsets and 2-D rows), then messages/s at 64 B and 1 KiB rows, kernel
only (rows already on the device, digests left there) and with the copies (host rows to the
device, digests back), against the CPU's ``jitdigest.hash_many`` (every core) in the same run.
Writes a Markdown table, JSON and (with matplotlib) a chart into benchmarks/results/.

    python benchmarks/bench_cuda.py [--messages 10000000] [--algorithms sha256 md5]
    python benchmarks/bench_cuda.py --sim-smoke     # Numba's simulator, tiny sizes, no GPU

Each figure is the median of ``--repeat`` timed calls after a warm-up call (which compiles);
the GPU is synchronised before and after each. The timed algorithms' CPU kernels compile in a
``jitdigest warmup`` process during the device checks, which ends before anything is timed.
Kernel-only figures are also taken at each of ``--threads-per-block`` (the default launch is
``_config.CUDA_THREADS_PER_BLOCK``), and each kernel's registers and local memory per thread
are printed. The CPU runs on ``--cpu-messages`` rows with every thread and on an eighth of them
with one (how its cores scale). Every algorithm is checked first (the timed ones leading), then
the timed ones are measured; the table and JSON are rewritten after each step, so a run cut
short still leaves what it found.
"""
import argparse
import hashlib
import json
import os
import platform
import statistics
import subprocess
import sys
import time

SIM = "--sim-smoke" in sys.argv
if SIM:                        # before Numba's import: the simulator, interpreted kernels
    os.environ.update(NUMBA_ENABLE_CUDASIM="1", NUMBA_DISABLE_JIT="1")
sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

import numpy as np  # noqa: E402

import jitdigest  # noqa: E402
import jitdigest.cuda as jc  # noqa: E402
from jitdigest.base import config as _config  # noqa: E402
from jitdigest.kernels._rows_cuda import rows_kernel  # noqa: E402
from _timing import cpu_model  # noqa: E402  (benchmarks/, this script's folder)
from numba import cuda  # noqa: E402
from numba.core import types  # noqa: E402

RESULTS = os.path.join(os.path.dirname(os.path.abspath(__file__)), "results")


def parse():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--messages", type=int, default=10_000_000, help="rows per GPU measurement")
    p.add_argument("--cpu-messages", type=int, default=4_000_000,
                   help="rows per CPU measurement (an eighth of them on one thread)")
    p.add_argument("--sizes", type=int, nargs="+", default=[64, 1024], help="row bytes")
    p.add_argument("--algorithms", nargs="+", default=["sha256", "md5"],
                   help="algorithms timed (all are checked)")
    p.add_argument("--check-rows", type=int, default=2000, help="random rows checked per layout")
    p.add_argument("--repeat", type=int, default=5)
    p.add_argument("--threads-per-block", type=int, nargs="+", default=[64, 128, 256, 512],
                   help="launch widths timed kernel-only")
    p.add_argument("--no-cpu-warmup", action="store_true",
                   help="do not compile the timed algorithms' CPU kernels on other cores "
                        "('jitdigest warmup') while the device checks run")
    p.add_argument("--results", default=RESULTS, help="folder for the table, JSON and chart")
    p.add_argument("--ptx", metavar="DIR", help="also write the timed kernels' PTX there")
    p.add_argument("--sim-smoke", action="store_true",
                   help="run on Numba's CUDA simulator with tiny sizes (a test of this script)")
    args = p.parse_args()
    if args.sim_smoke:
        args.messages, args.cpu_messages, args.check_rows, args.repeat = 64, 64, 12, 1
        args.threads_per_block = [32, 64]
    return args


def device_name():
    if SIM:
        return "simulator"
    gpu = cuda.get_current_device()
    name = gpu.name.decode() if isinstance(gpu.name, bytes) else gpu.name
    return f"{name} (cc {'.'.join(map(str, gpu.compute_capability))})"


def kw(name):
    return {"length": 32} if name.startswith("shake") else {}


def expected(name, msg):
    h = hashlib.new(name, bytes(msg))
    return h.digest(32) if name.startswith("shake") else h.digest()


def verify(name, rng, rows):
    """Rows of random lengths (0..1100) and a 2-D block, hashed on the device; how many match."""
    lens = rng.integers(0, 1100, rows)
    offsets = np.concatenate(([0], np.cumsum(lens))).astype(np.int64)
    values = rng.integers(0, 256, int(offsets[-1]), dtype=np.uint8)
    got = jc.hash_many(name, cuda.to_device(values), cuda.to_device(offsets),
                       **kw(name)).copy_to_host()
    good = sum(got[i].tobytes() == expected(name, values[offsets[i]:offsets[i + 1]])
               for i in range(rows))
    block = rng.integers(0, 256, (rows, 200), dtype=np.uint8)
    got = jc.hash_many(name, cuda.to_device(block), **kw(name)).copy_to_host()
    good += sum(got[i].tobytes() == expected(name, block[i]) for i in range(rows))
    return good, 2 * rows


def timed(fn, repeat):
    """The median seconds of ``repeat`` calls of ``fn`` after a warm-up call (which compiles)."""
    fn()
    times = []
    for _ in range(repeat):
        cuda.synchronize()
        t0 = time.perf_counter()
        fn()
        cuda.synchronize()
        times.append(time.perf_counter() - t0)
    return statistics.median(times)


def rows_of(n, size, rng):
    """``n`` rows of ``size`` bytes: a random 1 MiB pattern repeated (fast to make)."""
    pattern = rng.integers(0, 256, 1 << 20, dtype=np.uint8)
    flat = np.resize(pattern, n * size)
    return flat.reshape(n, size)


def resources(name):
    """Registers and local (thread-private, off-chip) bytes per thread of each compiled
    signature of ``name``'s kernel: {signature: (registers, local bytes)}."""
    if SIM:
        return {}
    kernel = rows_kernel(_algorithms_family(name))
    found = {}
    for sig, compiled in kernel.overloads.items():
        layout = "2-D" if isinstance(sig[1], types.Integer) else "ragged"
        try:
            found[layout] = (compiled.regs_per_thread, compiled.local_mem_per_thread)
        except Exception as exc:                 # numba-cuda versions differ here
            found[layout] = repr(exc)
    return found


def _algorithms_family(name):
    return jitdigest.base.algorithms.lookup(name).family


def measure(name, size, args, rng):
    host = rows_of(args.messages, size, rng)
    dev = cuda.to_device(host)
    spec_out = jc.hash_many(name, dev[:1], **kw(name)).shape[1]
    out = cuda.device_array((args.messages, spec_out), np.uint8)
    default = _config.CUDA_THREADS_PER_BLOCK
    widths = {}
    try:
        for tpb in args.threads_per_block:
            _config.CUDA_THREADS_PER_BLOCK = tpb
            widths[tpb] = args.messages / timed(
                lambda: jc.hash_many(name, dev, out=out, **kw(name)), args.repeat)
    finally:
        _config.CUDA_THREADS_PER_BLOCK = default
    kernel = timed(lambda: jc.hash_many(name, dev, out=out, **kw(name)), args.repeat)
    got = out.copy_to_host()
    picks = rng.integers(0, args.messages, 64)
    check = all(got[i].tobytes() == expected(name, host[i]) for i in [0, args.messages - 1, *picks])
    del dev, out, got                  # device memory for the copies' own arrays
    copies = timed(lambda: jc.hash_many(name, host, **kw(name)).copy_to_host(), args.repeat)
    cpu_rows = host[:args.cpu_messages]
    cpu = timed(lambda: jitdigest.hash_many(name, cpu_rows, **kw(name)), args.repeat)
    one_rows = cpu_rows[:max(1, len(cpu_rows) // 8)]      # one thread: how the cores scale
    one = timed(lambda: jitdigest.hash_many(name, one_rows, threads=1, **kw(name)), args.repeat)
    return {"algorithm": name, "size": size, "messages": args.messages,
            "threads_per_block": default, "kernel_per_s": args.messages / kernel,
            "kernel_per_s_by_threads_per_block": {str(k): v for k, v in widths.items()},
            "copies_per_s": args.messages / copies, "cpu_per_s": len(cpu_rows) / cpu,
            "cpu_messages": len(cpu_rows), "cpu_one_thread_per_s": len(one_rows) / one,
            "rows_ok": bool(check),
            "resources": resources(name)}


def environment():
    import numba
    env = {"cpu": cpu_model(), "cores": os.cpu_count(), "python": platform.python_version(),
           "numpy": np.__version__, "numba": numba.__version__}
    try:
        from importlib.metadata import version
        env["numba-cuda"] = version("numba-cuda")
    except Exception:
        env["numba-cuda"] = "?"
    if not SIM:
        env["driver"] = ".".join(map(str, cuda.cudadrv.driver.driver.get_version()))
    return env


def write(results, checks, args, gpu, env, chart=False):
    os.makedirs(args.results, exist_ok=True)
    tag = "simulator" if SIM else "".join(c if c.isalnum() else "_" for c in gpu.split(" (")[0])
    base = os.path.join(args.results, f"cuda_{tag}")
    threads = env.get("cpu_threads", "?")
    lines = [f"# jitdigest.cuda on {gpu}", "",
             f"CPU: {env['cpu']}, {env['cores']} cores; jitdigest.hash_many on {threads} "
             f"threads ({env.get('layer', '?')} layer). Python {env['python']}, numpy "
             f"{env['numpy']}, numba {env['numba']}, numba-cuda {env['numba-cuda']}"
             + (f", CUDA driver {env['driver']}" if "driver" in env else "") + ".", "",
             "| algorithm | device check | rows checked |", "| --- | --- | --- |"]
    kernels = env.get("kernels", {})
    lines[-2:] = ["| algorithm | device check | rows checked | registers, local bytes a thread "
                  "(ragged; 2-D) |", "| --- | --- | --- | --- |"]
    lines += [f"| {name} | {'ok' if good == total else 'MISMATCH'} | {good}/{total} | "
              + "; ".join(str(v) for v in kernels.get(name, {}).values()) + " |"
              for name, (good, total) in sorted(checks.items())]
    lines += ["", f"Messages/s, {args.messages:,} messages per GPU call (median of "
              f"{args.repeat}; kernel: rows and digests on the device, "
              f"{_config.CUDA_THREADS_PER_BLOCK} threads a block; copies: host rows in, "
              "digests back to the host):",
              "", "| algorithm | bytes | GPU kernel | GPU with copies | CPU hash_many | "
              "CPU, one thread | kernel / CPU | copies / CPU |",
              "| --- | --- | --- | --- | --- | --- | --- | --- |"]
    for r in results:
        lines.append(f"| {r['algorithm']} | {r['size']} | {r['kernel_per_s']:.3g} | "
                     f"{r['copies_per_s']:.3g} | {r['cpu_per_s']:.3g} | "
                     f"{r['cpu_one_thread_per_s']:.3g} | "
                     f"{r['kernel_per_s'] / r['cpu_per_s']:.1f}x | "
                     f"{r['copies_per_s'] / r['cpu_per_s']:.1f}x |")
    if results:
        widths = list(results[0]["kernel_per_s_by_threads_per_block"])
        lines += ["", "Kernel-only messages/s by threads a block:", "",
                  "| algorithm | bytes | " + " | ".join(widths) + " |",
                  "| --- | --- |" + " --- |" * len(widths)]
        for r in results:
            by = r["kernel_per_s_by_threads_per_block"]
            lines.append(f"| {r['algorithm']} | {r['size']} | "
                         + " | ".join(f"{by[w]:.3g}" for w in widths) + " |")
    with open(base + ".md", "w") as f:
        f.write("\n".join(lines) + "\n")
    with open(base + ".json", "w") as f:
        json.dump({"gpu": gpu, "environment": env, "checks": checks, "results": results}, f,
                  indent=1)
    if not chart:
        return
    print("\n".join(lines))
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        return
    labels = [f"{r['algorithm']}\n{r['size']} B" for r in results]
    x = np.arange(len(results))
    fig, ax = plt.subplots(figsize=(max(6, 1.6 * len(results)), 4))
    for i, (key, label) in enumerate((("kernel_per_s", "GPU kernel"),
                                      ("copies_per_s", "GPU with copies"),
                                      ("cpu_per_s", "CPU hash_many"))):
        ax.bar(x + (i - 1) * 0.27, [r[key] for r in results], 0.27, label=label)
    ax.set_xticks(x, labels)
    ax.set_yscale("log")
    ax.set_ylabel("messages/s")
    ax.set_title(f"jitdigest.cuda on {gpu}")
    ax.legend()
    fig.tight_layout()
    fig.savefig(base + ".png", dpi=120)


def main():
    args = parse()
    rng = np.random.default_rng(2026)
    warmup = None
    if not (SIM or args.no_cpu_warmup):       # the CPU's kernels compile during the GPU checks
        warmup = subprocess.Popen([sys.executable, "-m", "jitdigest", "warmup", "--no-tune",
                                   *args.algorithms], stdout=subprocess.DEVNULL)
    gpu = device_name()
    env = environment()
    print(gpu, env, flush=True)
    checks, results = {}, []

    def check(name):
        t0 = time.perf_counter()
        checks[name] = verify(name, rng, args.check_rows)
        env.setdefault("kernels", {})[name] = resources(name)
        print(f"check {name}: {checks[name][0]}/{checks[name][1]} "
              f"({time.perf_counter() - t0:.1f} s) {env['kernels'][name]}", flush=True)
        write(results, checks, args, gpu, env)

    timed_names = list(args.algorithms)
    for name in timed_names + sorted(jc.algorithms_available - set(timed_names)):
        check(name)                            # every digest first: a short run keeps them
    if warmup is not None:                    # nothing else on the cores while timing
        print("cpu warmup:", "ok" if warmup.wait() == 0 else "failed", flush=True)
    for name in timed_names:
        for size in args.sizes:
            t0 = time.perf_counter()
            results.append(measure(name, size, args, rng))
            if "layer" not in env:
                import numba
                env["cpu_threads"] = numba.get_num_threads()
                env["layer"] = "none" if SIM else numba.threading_layer()
            print(results[-1], f"({time.perf_counter() - t0:.1f} s)", flush=True)
            write(results, checks, args, gpu, env)
    if args.ptx and not SIM:
        os.makedirs(args.ptx, exist_ok=True)
        for name in args.algorithms:
            kernel = rows_kernel(_algorithms_family(name))
            cc = cuda.get_current_device().compute_capability
            for i, (sig, compiled) in enumerate(kernel.overloads.items()):
                try:
                    ptx = compiled.inspect_asm(cc)
                except Exception as exc:             # numba-cuda versions differ here
                    ptx = f"// {exc!r}"
                with open(os.path.join(args.ptx, f"{name}_{i}.ptx"), "w") as f:
                    f.write(f"// {sig}\n" + ptx)
    write(results, checks, args, gpu, env, chart=True)
    bad = [name for name, (good, total) in checks.items() if good != total]
    bad += [f"{r['algorithm']}/{r['size']}" for r in results if not r["rows_ok"]]
    if bad:
        print("MISMATCH:", " ".join(bad))
        sys.exit(1)


if __name__ == "__main__":
    main()
