"""``jitdigest sum --dask``: on a real LocalCluster of two worker processes, the output and exit
status are those of the same run without --dask (plain, --tag, --json, two algorithms, --check
of a manifest with a wrong line) for a tree of 5,000 files with odd names; a worker killed
with SIGKILL in the middle of a run costs no line; a run stopped by SIGINT half-way and started
again with the same --cache reads only the files whose digests it had not stored.

One cluster serves the module (its address given to --dask); ``--dask local:2`` itself, which
starts a cluster of its own, runs once. Reads are counted in the workers by an audit hook
(``AuditOpens``: every ``open`` event under a directory, logged with the worker's pid), which
also slows the reads of one tree so that a kill or an interrupt lands while tasks run.
"""
import os
import signal
import subprocess
import sys
import time

import pytest

pytest.importorskip("distributed")

from distributed import WorkerPlugin  # noqa: E402

from cli_cases import interactive_sigint  # noqa: E402
from jitdigest.base.config import SUM_CACHE_RACY_NS  # noqa: E402

FILES = 5000
SLOW_FILES = 1200
DELAY_S = 0.002             # per read of the slow tree, in the workers
TIMEOUT_S = 180             # any one command
RACY_S = SUM_CACHE_RACY_NS / 1e9 + 0.5     # --cache trusts files older than this


class AuditOpens(WorkerPlugin):
    """Each worker logs ``pid<TAB>path`` for every file opened under ``prefixes`` (to the log
    file ``log``), sleeping ``delay`` seconds after each open under ``slow``."""

    name = "test-audit-opens"

    def __init__(self, log, prefixes, slow, delay):
        self.log, self.prefixes, self.slow, self.delay = log, prefixes, slow, delay

    def setup(self, worker):
        fd = os.open(self.log, os.O_WRONLY | os.O_APPEND | os.O_CREAT | os.O_CLOEXEC, 0o644)
        prefixes = tuple(os.fsencode(p) for p in self.prefixes)
        slow, delay = os.fsencode(self.slow), self.delay

        def hook(event, args):
            if event != "open" or not args or not isinstance(args[0], (str, bytes)):
                return
            path = os.fsencode(args[0])
            if path.startswith(prefixes):
                os.write(fd, b"%d\t%s\0" % (os.getpid(), path))
                if path.startswith(slow):
                    time.sleep(delay)

        sys.addaudithook(hook)


def _odd_name(i):
    kinds = [b"plain%d", b"sp ace %d", b"new\nline%d", b"back\\slash%d", b"cr\rret%d",
             b"\xff\xfe-not-utf8-%d", "ünï-çødé-%d".encode(), b"-dash%d", b"tab\t%d",
             b"par(en)%d", b"star*%d", b"=eq %d = x"]
    kind = kinds[i % len(kinds)]
    return kind % i if b"%d" in kind else kind + b"%d" % i


def _make_tree(root, n):
    """``n`` files with odd names in 10 directories (sizes 0 to about 3 KB, one in 250 over
    the small-file limit), a dangling symlink and a symlink to a file."""
    os.makedirs(root)
    for d in range(10):
        os.mkdir(os.path.join(root, b"d%d" % d))
    for i in range(n):
        path = os.path.join(root, b"d%d" % (i % 10), _odd_name(i))
        size = 70_000 + i if i % 250 == 7 else (i * 37) % 3000
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o644)
        os.write(fd, (b"%d:" % i) * (size // 5 + 1))
        os.close(fd)
    os.symlink(b"nowhere", os.path.join(root, b"d0", b"dangling"))
    os.symlink(os.path.join(root, b"d1", _odd_name(1)), os.path.join(root, b"d2", b"link"))


@pytest.fixture(scope="module")
def trees(tmp_path_factory):
    base = tmp_path_factory.mktemp("sum-dask")
    slow = os.fsencode(base / "slow")
    os.makedirs(slow)
    for d in range(6):
        os.mkdir(os.path.join(slow, b"s%d" % d))
        for i in range(SLOW_FILES // 6):
            with open(os.path.join(slow, b"s%d" % d, b"f%04d" % i), "wb") as f:
                f.write(b"%d-%d" % (d, i) * (i % 50))
    made = time.time()
    odd = os.fsencode(base / "odd")
    _make_tree(odd, FILES)
    return {"base": base, "odd": odd, "slow": slow, "slow_made": made,
            "log": str(base / "opens.log")}


@pytest.fixture(scope="module")
def cluster(trees):
    """A LocalCluster of two worker processes (one thread each), the audit plugin on each."""
    from distributed import Client, LocalCluster
    with LocalCluster(n_workers=2, processes=True, threads_per_worker=1,
                      dashboard_address=":0", timeout=60) as lc, \
            Client(lc, timeout=60) as client:
        client.register_plugin(AuditOpens(trees["log"], [os.fsdecode(trees["odd"]),
                                                         os.fsdecode(trees["slow"])],
                                          os.fsdecode(trees["slow"]), DELAY_S))
        yield lc, client
        client.close(timeout=30)


def _sum(*args, cwd=None):
    return subprocess.run([sys.executable, "-m", "jitdigest", "sum", *args],
                          capture_output=True, timeout=TIMEOUT_S, cwd=cwd)


def _same(plain, dask):
    assert dask.stdout == plain.stdout
    assert dask.stderr == plain.stderr
    assert dask.returncode == plain.returncode


def _opens(trees, since=0):
    """[(pid, path)] logged by the workers from byte ``since`` of the log, and its end."""
    try:
        with open(trees["log"], "rb") as f:
            f.seek(since)
            data = f.read()
    except FileNotFoundError:
        return [], since
    end = since + data.rfind(b"\0") + 1
    entries = [e.split(b"\t", 1) for e in data[:end - since].split(b"\0") if e]
    return [(int(pid), path) for pid, path in entries], end


def test_plain_output_matches_coreutils_with_local_cluster(trees):
    """``--dask local:2`` (a cluster of its own): sha256sum's lines over the same files (find
    | sort, coreutils as the oracle), and the output and status of the run without --dask."""
    top = trees["odd"]
    listed = subprocess.run(f"find {os.fsdecode(top)!r} \\( -type f -o -type l \\) -print0 "
                            "| LC_ALL=C sort -z", shell=True, capture_output=True,
                            check=True).stdout.split(b"\0")[:-1]
    oracle = subprocess.run(["sha256sum", "--", *listed], capture_output=True)
    plain = _sum("-r", top)
    dask = _sum("-r", "--dask", "local:2", top)
    _same(plain, dask)
    assert dask.stdout == oracle.stdout
    assert dask.stdout.count(b"\n") >= FILES


@pytest.mark.parametrize("options", [["--tag"], ["--json"], ["-a", "sha256,md5"]],
                         ids=" ".join)
def test_formats_are_those_without_dask(trees, cluster, options):
    address = cluster[0].scheduler_address
    top = trees["odd"]
    _same(_sum("-r", *options, top), _sum("-r", *options, "--dask", address, top))


def test_check_of_a_manifest_with_a_wrong_line(trees, cluster, tmp_path):
    top = trees["odd"]
    lines = _sum("-r", top).stdout.split(b"\n")
    wrong = next(i for i, line in enumerate(lines) if line[:1] in b"0123456789abcdef")
    lines[wrong] = (b"0" if lines[wrong][:1] != b"0" else b"1") + lines[wrong][1:]
    manifest = tmp_path / "manifest"
    manifest.write_bytes(b"\n".join(lines))
    plain = _sum("-c", manifest)
    dask = _sum("-c", "--dask", cluster[0].scheduler_address, manifest)
    _same(plain, dask)
    assert dask.returncode == 1 and b": FAILED\n" in dask.stdout


def _pids(client):
    return sorted(client.run(os.getpid).values())


def _run_until(trees, args, opened, stop):
    """Start ``jitdigest sum ARGS``, wait until the workers logged ``opened`` reads of the slow
    tree since now, then call ``stop(process)``; the process's (stdout, stderr, status)."""
    _, start = _opens(trees)
    # (PYTHONUNBUFFERED gives the output its own buffer, which a SIGINT leaves unwritten)
    env = {k: v for k, v in os.environ.items() if k != "PYTHONUNBUFFERED"}
    proc = subprocess.Popen([sys.executable, "-m", "jitdigest", "sum", *args],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env,
                            preexec_fn=interactive_sigint)
    try:
        deadline = time.monotonic() + TIMEOUT_S
        while time.monotonic() < deadline and proc.poll() is None:
            seen, _ = _opens(trees, start)
            if sum(path.startswith(trees["slow"]) for _, path in seen) >= opened:
                stop(proc)
                break
            time.sleep(0.02)
        out, err = proc.communicate(timeout=TIMEOUT_S)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    return out, err, proc.returncode, start


def test_sigint_then_rerun_reads_only_the_rest(trees, cluster, tmp_path):
    """Stopped by SIGINT once 60% of the reads were logged (each worker past its first task),
    the run leaves in --cache what it had printed; the rerun reads none of those files, and
    every other one, and prints what a run without --dask prints."""
    lc, client = cluster
    address = lc.scheduler_address
    slow = trees["slow"]
    # --cache does not store a file changed too close to the run's start (racy, as in git)
    time.sleep(max(0.0, trees["slow_made"] + RACY_S - time.time()))
    db = tmp_path / "cache.db"
    args = ["-r", "--dask", address, "--cache", str(db), slow]
    out, _, status, _ = _run_until(trees, args, SLOW_FILES * 3 // 5,
                                   lambda p: p.send_signal(signal.SIGINT))
    assert status == -signal.SIGINT
    printed = {line.split(b"  ", 1)[1] for line in out.split(b"\n") if line}
    assert 0 < len(printed) < SLOW_FILES
    _, start = _opens(trees)
    again = _sum(*args)
    opened, _ = _opens(trees, start)
    read = {path for _, path in opened if path.startswith(slow)}
    everything = _sum("-r", slow)
    assert again.stdout == everything.stdout and again.returncode == everything.returncode == 0
    every = {line.split(b"  ", 1)[1] for line in everything.stdout.split(b"\n") if line}
    assert read and not read & printed
    # every file not printed is read, but the one the interrupted run may have stored as
    # it stopped (stored before it is printed)
    assert len(every - printed - read) <= 1 and read <= every - printed


def test_worker_killed_mid_run(trees, cluster):
    """SIGKILL to a worker process once a quarter of the reads were logged: the run completes
    (the nanny starts a new worker, Dask runs the lost tasks again), output identical."""
    lc, client = cluster
    victim = _pids(client)[0]
    slow = trees["slow"]
    killed = []

    def kill(proc):
        os.kill(victim, signal.SIGKILL)
        killed.append(True)

    out, err, status, start = _run_until(trees, ["-r", "--dask", lc.scheduler_address, slow],
                                         SLOW_FILES // 4, kill)
    assert killed
    plain = _sum("-r", slow)
    assert (out, status) == (plain.stdout, plain.returncode)
    opened, _ = _opens(trees, start)
    assert victim in {pid for pid, _ in opened}          # it was working when killed
    client.wait_for_workers(2, timeout=60)
    assert victim not in _pids(client)


def test_unreachable_scheduler_is_an_error(monkeypatch):
    monkeypatch.setenv("DASK_DISTRIBUTED__COMM__TIMEOUTS__CONNECT", "2s")
    done = _sum("--dask", "tcp://127.0.0.1:9", os.devnull)
    assert done.returncode == 1 and not done.stdout
    assert b"--dask tcp://127.0.0.1:9" in done.stderr


def test_local_needs_a_number():
    done = _sum("--dask", "local:x", os.devnull)
    assert done.returncode == 1 and b"local:N" in done.stderr
