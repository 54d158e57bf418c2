"""The compile notice (jitdigest/engine/notice.py): a line in a Jupyter cell's output (none with
JITDIGEST_QUIET=1), records on the ``jitdigest`` logger, and on a terminal one owner of the
line: ``jitdigest sum``'s progress line shows the compile in place of its bar, never both on
one line, naming the algorithm asked for."""
import hashlib
import io
import logging
import os
import re
import subprocess
import sys
import threading
import time

import pytest

from jitdigest.engine import notice
from jitdigest.sum.progress import Progress


def _child_env(cache_dir, **extra):
    env = {k: v for k, v in os.environ.items() if k != "JITDIGEST_QUIET"}
    env["JITDIGEST_CACHE_DIR"] = str(cache_dir)
    env.update(extra)
    return env


# --- in process ---------------------------------------------------------------------------------

def _wait_for(predicate):
    deadline = time.monotonic() + 60            # only stops a hang
    while not predicate():
        assert time.monotonic() < deadline
        time.sleep(0.01)


def test_logger_records_a_compile_that_runs_past_the_delay(monkeypatch, caplog):
    monkeypatch.setattr(notice._config, "NOTICE_DELAY", 0.0)
    monkeypatch.setenv("JITDIGEST_QUIET", "1")  # the records come all the same
    caplog.set_level(logging.INFO, logger="jitdigest")
    with notice.compiling("sha512", "sha384"):
        _wait_for(lambda: any("compiling" in r.getMessage() for r in caplog.records))
    messages = [r.getMessage() for r in caplog.records if r.name == "jitdigest"]
    assert messages[0].startswith("compiling sha384 kernels (family sha512)")
    assert messages[-1].startswith("compiled sha384 kernels (family sha512) in ")


def test_asking_names_the_algorithm_of_the_family():
    assert notice.label("sha512") == "sha512"
    with notice.asking(["md5", "sha384"]):
        assert notice.label("sha512") == "sha384"
        assert notice.label("md5") == "md5"
        assert notice.label("sha256") == "sha256"
        assert notice.label("sha512", "sha512_256") == "sha512_256"
    assert notice.label("sha512") == "sha512"


def test_the_progress_line_owns_the_terminal_line(monkeypatch):
    """With a progress line on stderr, a compile shows in it (no rate, no bar) and the
    notice itself writes nothing; afterwards the bar again, its rate leaving the compile out."""
    monkeypatch.setattr(notice._config, "NOTICE_DELAY", 0.0)
    monkeypatch.delenv("JITDIGEST_QUIET", raising=False)
    stream = io.StringIO()
    monkeypatch.setattr(sys, "stderr", stream)
    progress = Progress(sys.stderr, total=4 << 20, delay=100)
    try:
        assert "B/s" not in progress.line(100)          # nothing read: no rate
        progress.add(1 << 20)
        with notice.compiling("sha512", "sha384"):
            _wait_for(lambda: progress._compile is not None)
            line = progress.line(100)
            assert line.startswith("jitdigest: compiling sha384 kernels")
            assert "%" not in line and "B/s" not in line
        assert progress._compile is None
        line = progress.line(100)
        assert line.startswith(" 25% [") and "B/s" in line
    finally:
        progress.close()
    assert stream.getvalue().count("compiling sha384") >= 1
    for segment in re.split(r"[\r\n]", stream.getvalue()):
        assert not ("compiling" in segment and "%" in segment), segment
    assert notice._owners == []


# --- a child process with an empty cache ----------------------------------------------------

_LOGGED = """\
import logging
records = []
class Keep(logging.Handler):
    def emit(self, record):
        records.append((record.levelname, record.getMessage()))
logger = logging.getLogger("jitdigest")
logger.addHandler(Keep())
logger.setLevel(logging.DEBUG)
import jitdigest
print(jitdigest.sha1(b"abc").hexdigest())
for level, text in records:
    print(level, text)
"""


def test_logger_records_a_kernel_compile(tmp_path):
    proc = subprocess.run([sys.executable, "-c", _LOGGED], capture_output=True, text=True,
                          env=_child_env(tmp_path), timeout=600)
    assert proc.returncode == 0, proc.stderr
    lines = proc.stdout.splitlines()
    assert lines[0] == hashlib.sha1(b"abc").hexdigest()
    records = [line for line in lines[1:] if "sha1 kernels" in line]
    assert records, proc.stdout
    if any(line.startswith("INFO compiling") for line in records):
        assert any(line.startswith("INFO compiled sha1 kernels") for line in records)
    assert "compiling" not in proc.stderr              # not a terminal: no notice


# --- a notebook ------------------------------------------------------------------------------

def _run_notebook(env):
    nbformat = pytest.importorskip("nbformat")
    nbclient = pytest.importorskip("nbclient")
    pytest.importorskip("ipykernel")
    nb = nbformat.v4.new_notebook()
    nb.cells.append(nbformat.v4.new_code_cell(
        'import jitdigest; jitdigest.sha512(b"abc").hexdigest()'))
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3",
                                 "language": "python"}
    client = nbclient.NotebookClient(nb, kernel_name="python3", timeout=600,
                                     startup_timeout=120)
    client.execute(env=env)
    return nb.cells[0].outputs


def _texts(outputs):
    texts = []
    for output in outputs:
        if output.get("output_type") == "stream":
            texts.append(output.get("text", ""))
        elif "data" in output:
            texts.append(output["data"].get("text/plain", ""))
    return texts


def test_a_first_compile_in_a_notebook_says_so(tmp_path):
    outputs = _run_notebook(_child_env(tmp_path / "cache"))
    texts = _texts(outputs)
    expected = repr(hashlib.sha512(b"abc").hexdigest())
    assert expected in texts, outputs
    said = [t for t in texts if "compiling" in t]
    assert said, outputs
    assert "sha512" in said[0] and "jitdigest warmup" in said[0]


def test_a_quiet_notebook_shows_the_result_only(tmp_path):
    outputs = _run_notebook(_child_env(tmp_path / "cache", JITDIGEST_QUIET="1"))
    assert _texts(outputs) == [repr(hashlib.sha512(b"abc").hexdigest())], outputs


# --- jitdigest sum on a terminal -------------------------------------------------------------

@pytest.mark.skipif(sys.platform == "win32", reason="needs a pseudo-terminal")
def test_sum_on_a_terminal_shows_the_compile_or_the_bar(tmp_path):
    """A first ``jitdigest sum -a sha384`` of a small and a large file: stderr (a terminal)
    shows the compile, naming sha384, and the progress bar, never both in one segment of the
    line; the digests are sha384's."""
    import pty
    import select
    small, big = tmp_path / "small.txt", tmp_path / "big.bin"
    small.write_bytes(b"hello\n")
    big.write_bytes(os.urandom(1 << 20) * 8)    # well past the bar's first draw
    master, slave = pty.openpty()
    proc = subprocess.Popen([sys.executable, "-m", "jitdigest", "sum", "-a", "sha384",
                             str(small), str(big)], stdout=subprocess.PIPE, stderr=slave,
                            env=_child_env(tmp_path / "cache"))
    os.close(slave)
    seen = b""
    reader_done = threading.Event()

    def drain():
        nonlocal seen
        while True:
            try:
                if not select.select([master], [], [], 0.2)[0]:
                    if proc.poll() is not None and reader_done.is_set():
                        return
                    continue
                chunk = os.read(master, 4096)
            except OSError:
                return
            if not chunk:
                return
            seen += chunk

    reader = threading.Thread(target=drain, daemon=True)
    reader.start()
    out = proc.stdout.read()
    proc.wait(timeout=600)
    reader_done.set()
    reader.join(timeout=60)
    os.close(master)
    assert proc.returncode == 0
    assert out.splitlines() == [
        f"{hashlib.sha384(p.read_bytes()).hexdigest()}  {p}".encode() for p in (small, big)]
    text = seen.decode(errors="replace")
    segments = [s for s in re.split(r"[\r\n]", text) if s.strip(" \x1b[K")]
    compiling = [s for s in segments if "compiling" in s]
    bars = [s for s in segments if "% [" in s]
    assert any("compiling sha384 kernels" in s for s in compiling), text
    assert bars, text
    for segment in segments:
        assert not ("compiling" in segment and "% [" in segment), segment
        assert not ("compiling" in segment and "B/s" in segment), segment


def test_a_library_compile_is_named_after_the_algorithm_dispatch_chose():
    """Outside any ``asking`` block, the notice names the algorithm dispatch last chose kernels
    for on this thread when the compile is of its family (sha384's kernels are sha512's)."""
    import threading
    from jitdigest.base import algorithms as _algorithms
    from jitdigest.engine import dispatch as _dispatch, notice as _notice
    _dispatch.kernels_for(_algorithms.lookup("sha384"))
    assert _notice.label("sha512") == "sha384"
    assert _notice.label("md5") == "md5"                # another family: its own name
    _dispatch.batch_kernels_for(_algorithms.lookup("sha3_256"), 100)
    assert _notice.label("keccak") == "sha3_256"
    seen = []
    other = threading.Thread(target=lambda: seen.append(_notice.label("keccak")))
    other.start()
    other.join()
    assert seen == ["keccak"]                           # per thread
