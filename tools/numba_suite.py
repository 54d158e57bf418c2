"""Run some of Numba's own test modules in a process where jitdigest compiled its kernels first.

jitdigest swaps some Numba functions for faster ones while it compiles its own kernels
(``jitdigest.kernels._internals.ours``) and puts Numba's back afterwards; Numba's tests,
run in the same process afterwards, must pass as on stock Numba. With ``--stock`` jitdigest
is not imported at all (to tell a failure of stock Numba from one jitdigest causes).

    python tools/numba_suite.py [--stock] [module ...]

Prints one line per failing test and a summary: tests run, passed, failed, errors, skipped.
Exit status 0 when nothing failed.
"""
import argparse
import hashlib
import os
import platform
import sys
import tempfile
import time
import unittest

sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))),
                                "benchmarks"))
from _timing import cpu_model  # noqa: E402  (benchmarks/_timing.py: result headers' CPU name)

MODULES = ("numba.tests.test_ssa", "numba.tests.test_ir_utils",
           "numba.tests.test_literal_dispatch", "numba.tests.test_typeinfer",
           "numba.tests.test_extending")


def compile_jitdigest():
    """Import jitdigest and make it compile kernels (an empty kernel cache); check the
    digests against hashlib."""
    os.environ["JITDIGEST_CACHE_DIR"] = tempfile.mkdtemp(prefix="jitdigest-suite-")
    import jitdigest
    rows = [b"abc", b"", b"x" * 300]
    got = [bytes(d) for d in jitdigest.hash_many("sha256", rows)]
    assert got == [hashlib.sha256(r).digest() for r in rows]
    for name in ("sha256", "blake2b", "md5"):
        assert getattr(jitdigest, name)(b"x").digest() == hashlib.new(name, b"x").digest()
    return jitdigest.__version__


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--stock", action="store_true",
                        help="do not import jitdigest (stock Numba)")
    parser.add_argument("modules", nargs="*", default=MODULES)
    args = parser.parse_args(argv)

    import numba
    print(f"CPU: {cpu_model()}; Python {platform.python_version()}; numba {numba.__version__}; "
          f"{time.strftime('%Y-%m-%d')}")
    if args.stock:
        print("jitdigest: not imported (stock Numba)")
    else:
        t = time.perf_counter()
        version = compile_jitdigest()
        print(f"jitdigest {version}: kernels compiled first "
              f"(hash_many sha256, sha256, blake2b, md5; {time.perf_counter() - t:.1f} s)")
    sys.stdout.flush()

    suite = unittest.defaultTestLoader.loadTestsFromNames(args.modules)
    stream = open(os.devnull, "w")
    t = time.perf_counter()
    result = unittest.TextTestRunner(stream=stream, verbosity=0).run(suite)
    elapsed = time.perf_counter() - t
    for kind, items in (("FAIL", result.failures), ("ERROR", result.errors),
                        ("UNEXPECTED SUCCESS", [(t, "") for t in result.unexpectedSuccesses])):
        for test, trace in items:
            print(f"{kind}: {test.id()}")
            if trace:
                print("    " + trace.strip().splitlines()[-1])
    skipped = len(result.skipped)
    expected = len(result.expectedFailures)
    failed = len(result.failures) + len(result.unexpectedSuccesses)
    passed = result.testsRun - failed - len(result.errors) - skipped - expected
    print(f"modules: {' '.join(args.modules)}")
    print(f"ran {result.testsRun}: passed {passed}, failed {failed}, errors "
          f"{len(result.errors)}, skipped {skipped}, expected failures {expected} "
          f"({elapsed:.0f} s)")
    return 0 if result.wasSuccessful() else 1


if __name__ == "__main__":
    sys.exit(main())
