"""The README's examples run as written. Every fenced ``python`` block runs alone in a fresh
interpreter, and every ``sh`` block in a new temporary folder with this checkout's ``jitdigest``
and ``python`` first on PATH; a block fails naming its line and first line. The examples are
plain code with asserts (no ``>>>`` sessions: a block holding one fails here).

Not run: the blocks that install the package or run this suite (the two commands), and blocks
whose first line is ``# not run: REASON`` (reported as skipped with that reason). The GPU
example (a block importing ``jitdigest.cuda``) runs on Numba's CUDA simulator, with the
variables of the README's own simulator command. All blocks of one test session share one temporary kernel
cache, so a kernel two blocks use compiles once; the README must stay under 300 lines."""
import os
import re
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
README = ROOT / "README.md"
MAX_LINES = 300
# A limit against hangs only: a cold kernel cache makes the first blocks compile.
TIMEOUT = 900
FENCE = re.compile(r"^```(\w*)\s*$")
NOT_RUN = re.compile(r"^#\s*not run:\s*(.+)$")


def blocks(text):
    """(language, line of the opening fence, code) of every fenced block of ``text``."""
    found, lang, start, body = [], None, 0, []
    for number, line in enumerate(text.splitlines(), 1):
        match = FENCE.match(line)
        if lang is None and match:
            lang, start, body = match.group(1), number, []
        elif lang is not None and line.rstrip() == "```":
            found.append((lang, start, "\n".join(body) + "\n"))
            lang = None
        elif lang is not None:
            body.append(line)
    assert lang is None, f"README.md: the block opened at line {start} is never closed"
    return found


BLOCKS = [b for b in blocks(README.read_text()) if b[0] in ("python", "sh")]


def simulator_variables(text):
    """The variables of the README's simulator command (``NUMBA_ENABLE_CUDASIM=1 ... python
    script.py``, in backquotes), as tests/test_cuda_sim.py reads it."""
    spans = [m for m in re.findall(r"`([^`\n]+)`", text)
             if m.startswith("NUMBA_ENABLE_CUDASIM=") and " python " in m]
    assert len(spans) == 1, f"README.md names no single simulator command: {spans}"
    words = spans[0].split()
    return dict(w.split("=", 1) for w in words[:words.index("python")])


def first_line(code):
    return next((line.strip() for line in code.splitlines() if line.strip()), "")


def installs_or_runs_suite(code):
    return "pip install" in code or "pytest" in code


@pytest.fixture(scope="session")
def readme_env(tmp_path_factory):
    """The environment every block runs in: the user's kernel cache, as a reader's own
    commands use it (the suite's, where the rest of it compiles the same kernels: compiled
    once), shims that run this checkout's ``python`` and ``jitdigest``, and none of the
    switches a test may have set."""
    shims = tmp_path_factory.mktemp("readme-bin")
    for name, args in (("python", ""), ("python3", ""), ("jitdigest", " -m jitdigest")):
        shim = shims / name
        shim.write_text(f'#!/bin/sh\nexec "{sys.executable}"{args} "$@"\n')
        shim.chmod(0o755)
    env = {k: v for k, v in os.environ.items()
           if not k.startswith(("JITDIGEST_", "NUMBA_", "PYTHON"))}
    env.update(PYTHONPATH=str(ROOT),
               PATH=os.pathsep.join([str(shims), env.get("PATH", "")]))
    return env


def test_readme_is_short():
    lines = len(README.read_text().splitlines())
    assert lines < MAX_LINES, f"README.md has {lines} lines; keep it under {MAX_LINES}"


def test_readme_has_runnable_blocks():
    assert sum(lang == "python" for lang, _, _ in BLOCKS) >= 5
    assert sum(lang == "sh" for lang, _, code in BLOCKS if not NOT_RUN.match(first_line(code))
               and not installs_or_runs_suite(code)) >= 2


@pytest.mark.parametrize("lang,line,code", BLOCKS, ids=[f"{l}-line{n}" for l, n, _ in BLOCKS])
def test_readme_block_runs(lang, line, code, readme_env, tmp_path):
    head = first_line(code)
    reason = NOT_RUN.match(head)
    if reason:
        pytest.skip(f"README.md line {line}: {reason.group(1)}")
    if lang == "sh" and installs_or_runs_suite(code):
        pytest.skip(f"README.md line {line}: installs the package or runs the test suite "
                    "(tests/test_install.py runs the two commands)")
    assert ">>> " not in code, (f"README.md line {line} ({head!r}): write examples as plain "
                                "code with asserts, not >>> sessions")
    env = dict(readme_env)
    if lang == "python":
        if "jitdigest.cuda" in code:
            env.update(simulator_variables(README.read_text()))
        cmd = [sys.executable, "-c", code]
    else:
        cmd = ["bash", "-e", "-o", "pipefail", "-c", code]
    try:
        proc = subprocess.run(cmd, cwd=tmp_path, env=env, capture_output=True, text=True,
                              timeout=TIMEOUT)
    except subprocess.TimeoutExpired:
        pytest.fail(f"README.md line {line} ({head!r}): still running after {TIMEOUT} s")
    assert proc.returncode == 0, (
        f"README.md line {line} ({head!r}) exited with {proc.returncode}\n"
        f"{textwrap.indent(proc.stdout[-3000:], '  out: ')}\n"
        f"{textwrap.indent(proc.stderr[-3000:], '  err: ')}")
