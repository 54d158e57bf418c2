"""``jitdigest sum -r``'s progress line on a pseudo-terminal, over 5,000 files: the totals of the
walk (bytes and files) and an ETA once they are known, a bar of the same width in every frame,
and a last frame with the bar full. The child shows the line at once (no delay before it) so
that the test does not depend on how fast the machine hashes."""
import os
import pty
import re
import subprocess
import sys

import pytest

from cli_cases import ENV

NFILES = 5000

# the command with the progress line drawn from the start and redrawn often
CHILD = """\
import sys
from jitdigest.sum import progress
init = progress.Progress.__init__
def eager(self, stream, total=None, delay=1.0, interval=0.25):
    init(self, stream, total, delay=0.0, interval=0.02)
progress.Progress.__init__ = eager
import jitdigest.cli as cli
sys.argv[0] = "jitdigest"
cli.console()
"""


@pytest.fixture(scope="module")
def many(tmp_path_factory):
    root = tmp_path_factory.mktemp("progress")
    for d in range(50):
        folder = root / "t" / f"d{d:02d}"
        folder.mkdir(parents=True)
        for i in range(NFILES // 50):
            (folder / f"f{i:03d}").write_bytes(b"%d.%d\n" % (d, i) * (1 + i % 40))
    return root


def test_progress_shows_total_eta_and_ends_full(many):
    master, slave = pty.openpty()
    try:
        proc = subprocess.Popen([sys.executable, "-c", CHILD, "sum", "-r", "t"], cwd=many,
                                env=dict(ENV, COLUMNS="120"), stdin=subprocess.DEVNULL,
                                stdout=subprocess.PIPE, stderr=slave)
        os.close(slave)
        slave = None
        out = proc.stdout.read()
        proc.wait(timeout=120)
        seen = b""
        while True:
            try:
                chunk = os.read(master, 65536)
            except OSError:
                break
            if not chunk:
                break
            seen += chunk
    finally:
        os.close(master)
        if slave is not None:
            os.close(slave)
    assert proc.returncode == 0
    assert out.count(b"\n") == NFILES
    frames = [f for f in re.split(rb"[\r\n]", seen.replace(b"\x1b[K", b"")) if f.strip()]
    with_total = [f for f in frames if b"/%d files" % NFILES in f]
    assert with_total, frames[-5:]
    # (the total comes from a counting walk beside the hashing: on a busy machine the count
    # may end as the last files are hashed, so frames with an ETA may all precede it)
    assert any(b"ETA " in f for f in frames), frames[-5:]
    bars = {len(m.group(1)) for f in frames for m in [re.search(rb"\[([#.]*)\]", f)] if m}
    assert len(bars) == 1, bars                 # one width, however the numbers grow
    # the progress line's last frame (a compile notice may follow it, when the run stores
    # the kernels it compiled)
    last = [f for f in frames if b" files" in f][-1]
    assert last.startswith(b"100% [" + b"#" * bars.pop() + b"]"), last
    assert b"%d/%d files" % (NFILES, NFILES) in last
    # it stays on the screen (the terminal writes its newline as CR LF)
    assert re.search(re.escape(last) + rb"\r?\n", seen.replace(b"\x1b[K", b""))
