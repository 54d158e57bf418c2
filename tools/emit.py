"""The end every generator shares: write its files (repository-relative path -> text), or with
``--check`` write nothing and show how each stale file differs from a fresh one (exit status
1), which tests/test_generated.py runs for every tools/gen_*.py."""
import difflib
import pathlib
import sys

ROOT = pathlib.Path(__file__).resolve().parent.parent


def write_or_check(files, argv, script):
    """Returns the exit status; ``script`` names the generator in its 'stale' lines."""
    stale = 0
    for rel, text in files.items():
        path = ROOT / rel
        old = path.read_text(encoding="utf-8") if path.exists() else ""
        if old == text:
            continue
        if "--check" in argv:
            stale += 1
            sys.stdout.writelines(difflib.unified_diff(
                old.splitlines(True), text.splitlines(True), rel, rel + " (fresh)", n=1))
            print(f"{rel} is stale: run python tools/{script}")
        else:
            path.write_text(text, encoding="utf-8")
            print("wrote", rel)
    return 1 if stale else 0
