"""Run by tests in a child process with NUMBA_DISABLE_JIT=1: every ShortMsg vector (and the
MD5 suite) through the interpreted kernels, whole and split, with warnings as errors. Prints how
many vectors each algorithm read; exits non-zero on a failure, or when any named algorithm (or
the whole run) checked none."""
import sys
import warnings

warnings.simplefilter("error")

import jitdigest  # noqa: E402
from jitdigest.engine import cpu as _cpu  # noqa: E402
from vectors import messages  # noqa: E402


def main(names):
    assert not _cpu.jit_enabled()
    if not names:
        print("no algorithms named")
        return 2
    failures = 0
    checked = {}
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
            checked[name] = checked.get(name, 0) + 1
        kernel = h._kernels.name if cases else "-"
        print(f"{name}: {checked.get(name, 0)} vectors, kernel {kernel}")
    empty = [name for name in names if not checked.get(name)]
    print(f"checked: {sum(checked.values())} vectors")
    print(f"failures: {failures}")
    if empty:
        print(f"no vectors checked for: {' '.join(empty)}")
    return 1 if failures or empty else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
