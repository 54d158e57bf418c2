"""Many ``jitdigest sum`` runs in one child process, so that a test pays one interpreter start
for all of them: each with its own standard input (a file put on fd 0), working directory and
standard output and error (files put on fd 1 and 2), as a separate process would see them.

    python tests/sum_child.py CASES.json RESULTS.json

CASES: a list of {"argv": [...], "stdin": hex, "cwd": path}; argv items are strings, or
{"hex": ...} for bytes that are not UTF-8. RESULTS: [{"status", "stdout", "stderr"}] (hex).
"""
import json
import os
import sys
import tempfile

from jitdigest.base import config as _config
from jitdigest import cli

# The tests make their files just before these runs: a --cache run trusts them as it trusts
# files older than its margin for coarse clocks (SUM_CACHE_RACY_NS), which a quiet machine does not reach
# (tests/test_sum_cache_audit.py does the same). Without it, what was stored depended on how
# long the runs took.
_config.SUM_CACHE_RACY_NS = 0


def _arg(a):
    return os.fsdecode(bytes.fromhex(a["hex"])) if isinstance(a, dict) else a


def run_one(case, scratch):
    saved = [os.dup(fd) for fd in (0, 1, 2)]
    paths = [os.path.join(scratch, n) for n in ("in", "out", "err")]
    with open(paths[0], "wb") as f:
        f.write(bytes.fromhex(case.get("stdin", "")))
    here = os.getcwd()
    try:
        for fd, path, flags in zip((0, 1, 2), paths,
                                   (os.O_RDONLY, os.O_WRONLY | os.O_CREAT | os.O_TRUNC,
                                    os.O_WRONLY | os.O_CREAT | os.O_TRUNC)):
            new = os.open(path, flags, 0o600)
            os.dup2(new, fd)
            os.close(new)
        os.chdir(case["cwd"])
        try:
            status = cli.main(["sum", *map(_arg, case["argv"])])
        except SystemExit as exc:               # argparse's usage errors
            status = exc.code
        sys.stdout.flush()
        sys.stderr.flush()
    finally:
        os.chdir(here)
        for fd, old in zip((0, 1, 2), saved):
            os.dup2(old, fd)
            os.close(old)
    out = {"status": status}
    for key, path in (("stdout", paths[1]), ("stderr", paths[2])):
        with open(path, "rb") as f:
            out[key] = f.read().hex()
    return out


def main():
    with open(sys.argv[1]) as f:
        cases = json.load(f)
    with tempfile.TemporaryDirectory() as scratch:
        results = [run_one(case, scratch) for case in cases]
    with open(sys.argv[2], "w") as f:
        json.dump(results, f)


if __name__ == "__main__":
    main()
