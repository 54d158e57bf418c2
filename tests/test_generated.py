"""Generated kernels are up to date: every tools/gen_*.py, run with --check, finds its output
identical to what it would write now."""
import pathlib
import subprocess
import sys

import pytest

TOOLS = pathlib.Path(__file__).resolve().parent.parent / "tools"
GENERATORS = sorted(TOOLS.glob("gen_*.py"))


def test_there_are_generators():
    assert {g.name for g in GENERATORS} >= {"gen_x86_sha.py", "gen_keccak.py"}


@pytest.mark.parametrize("generator", GENERATORS, ids=lambda p: p.name)
def test_generated_file_is_current(generator):
    proc = subprocess.run([sys.executable, str(generator), "--check"], capture_output=True,
                          text=True, cwd=TOOLS.parent, timeout=300)
    assert proc.returncode == 0, proc.stdout + proc.stderr
