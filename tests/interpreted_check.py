"""Run by tests in a child process with NUMBA_DISABLE_JIT=1: every ShortMsg vector (and the
MD5 suite) through the interpreted kernels, whole and split, with warnings as errors."""
import sys
import warnings

warnings.simplefilter("error")

import jitdigest  # noqa: E402
from jitdigest import _cpu  # noqa: E402
from vectors import messages  # noqa: E402


def main(names):
    assert not _cpu.jit_enabled()
    failures = 0
    for name in names:
        kind = "" if name == "md5" else "ShortMsg"
        cases = messages(name, kind)
        for msg, expected, outlen in cases:
            h = jitdigest.new(name, msg)
            whole = h.digest() if h.digest_size else h.digest(outlen)
            h = jitdigest.new(name)
            h.update(msg[:len(msg) // 3])
            h.update(bytearray(msg[len(msg) // 3:]))
            split = h.digest() if h.digest_size else h.digest(outlen)
            if whole != expected or split != expected:
                failures += 1
        print(f"{name}: {len(cases)} vectors, kernel {h._kernels.name}")
    print(f"failures: {failures}")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
