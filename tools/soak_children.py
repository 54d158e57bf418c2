"""The calls of tools/soak.py that run other processes: a child forked while the workers hash,
and ``jitdigest sum`` children (some interrupted by SIGINT), each checked against hashlib, hmac
and the blake3 package. Helpers and state are ``soak_calls``' (read at call time: ``init``
sets them after jitdigest is imported)."""
import contextlib
import hashlib
import hmac as std_hmac
import json
import os
import select
import shutil
import signal
import subprocess
import sys
import threading
import time
import traceback

import blake3 as b3ref
import numpy as np

import jitdigest as jd
import jitdigest.blake3  # noqa: F401
import jitdigest.hmac  # noqa: F401
import soak_calls as calls


def call_fork(rng):
    """A child forked while the workers hash computes digests and sends them through a pipe;
    half the time its one-shot digests use the portable kernels, which this process has not
    compiled: the child compiles them, its cache folder perhaps removed."""
    items = [(rng.choice(calls.ALGOS), rng.randbytes(calls.size(rng, big=0))) for _ in range(4)]
    rows = np.frombuffer(rng.randbytes(64 * 200), np.uint8).reshape(200, 64)
    big = rng.randbytes(rng.randrange(calls.MB, 3 * calls.MB))
    key, portable = rng.randbytes(32), rng.random()
    calls.note(f"{[(n, len(d)) for n, d in items]} blake3 {len(big)} portable={portable < .5}")
    hexd = lambda h: h.hexdigest(32) if h.name.startswith("shake") else h.hexdigest()
    want = [hexd(hashlib.new(n, d)) for n, d in items] + [
        [hashlib.sha256(r.tobytes()).hexdigest() for r in rows],
        b3ref.blake3(big, key=key).hexdigest(), std_hmac.digest(key, big, "sha1").hex()]
    calls.count("fork")
    r, w = os.pipe()
    pid = os.fork()
    if pid == 0:                                    # the child
        status = 1
        try:
            os.close(r)
            with jd.backend("portable") if portable < .5 else contextlib.nullcontext():
                got = [hexd(jd.new(n, d)) for n, d in items]
            got += [list(jd.hexdigests(jd.hash_many("sha256", rows, threads=2))),
                    jd.blake3.blake3(big, key=key, max_threads=2).hexdigest(),
                    jd.hmac.digest(key, big, "sha1").hex()]
            os.write(w, json.dumps(got).encode())
            status = 0
        except BaseException:
            os.write(w, ("ERROR " + traceback.format_exc()).encode())
        finally:
            os._exit(status)
    os.close(w)
    chunks, deadline, done = [], time.monotonic() + 60, 0
    with os.fdopen(r, "rb", buffering=0) as pipe:
        while select.select([pipe], [], [], max(0.0, deadline - time.monotonic()))[0]:
            chunks.append(pipe.read(1 << 16))
            if not chunks[-1]:
                break
        while not done and time.monotonic() < deadline + 1:
            done, status = os.waitpid(pid, os.WNOHANG)
            time.sleep(0.02)
    if not done:
        os.kill(pid, signal.SIGKILL)
        os.waitpid(pid, 0)
        return calls.fail("hang", f"forked child not done in 60 s (pid {pid}): killed")
    reply, status = b"".join(chunks).decode(errors="replace"), os.waitstatus_to_exitcode(status)
    if status != 0 or reply.startswith("ERROR"):
        return calls.fail("error", f"forked child: exit status {status}: {reply[:3000]}")
    calls.check("forked child", json.loads(reply), want)


def sum_run(rng):
    """Temporary files, a `jitdigest sum -a ALGOS [-j 2] FILES...` command, its expected lines."""
    folder = os.path.join(calls.WORK, f"sum-{threading.get_ident()}")
    shutil.rmtree(folder, ignore_errors=True)
    os.makedirs(folder)
    algos = rng.sample(calls.SUM_ALGOS, rng.choice((1, 1, 1, 2, 3)))
    cmd = [sys.executable, "-m", "jitdigest", "sum", "-a", ",".join(algos)]
    cmd += ["-j", "2"] if rng.random() < 0.3 else []
    lines, files = [], []
    for i in range(rng.randint(1, 5)):
        data = rng.randbytes(calls.size(rng, big=0.1, cap=8 * calls.MB))
        files.append(os.path.join(folder, f"f{i}.bin"))
        with open(files[-1], "wb") as f:
            f.write(data)
        for a in algos:
            h = b3ref.blake3(data) if a == "blake3" else hashlib.new(a, data)
            length = {"shake_128": 32, "shake_256": 64}.get(a)
            lines.append(f"{h.hexdigest(length) if length else h.hexdigest()}  {files[-1]}")
    calls.note(f"{' '.join(cmd[4:])} sizes={[os.path.getsize(f) for f in files]}")
    calls.count("sum child")
    return cmd + files, lines


def call_sum(rng):
    cmd, lines = sum_run(rng)
    try:
        res = subprocess.run(cmd, capture_output=True, timeout=110)
    except subprocess.TimeoutExpired:
        return calls.fail("hang", "jitdigest sum not done in 110 s: killed")
    if res.returncode != 0:
        return calls.fail("error", f"jitdigest sum exit {res.returncode}: {res.stderr[-3000:]!r}")
    calls.check("jitdigest sum", res.stdout.decode().splitlines(), lines)


def call_sum_sigint(rng):
    """SIGINT at a random moment: the child must exit (by SIGINT, 130 or KeyboardInterrupt) or
    have finished with the right output, before the ``communicate`` timeout below."""
    cmd, lines = sum_run(rng)
    child = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    time.sleep(rng.uniform(0, 1.5))
    child.send_signal(signal.SIGINT)
    try:
        stdout, stderr = child.communicate(timeout=30)
    except subprocess.TimeoutExpired:
        child.kill()
        child.communicate()
        return calls.fail("hang", "jitdigest sum not exited 30 s after SIGINT: killed")
    rc = child.returncode
    if rc == 0:
        calls.count("sum done before SIGINT")
        calls.check("jitdigest sum", stdout.decode().splitlines(), lines)
    elif rc in (-signal.SIGINT, 130) or (rc == 1 and b"KeyboardInterrupt" in stderr):
        calls.count("sum interrupted by SIGINT")
    else:
        calls.fail("error", f"jitdigest sum after SIGINT: exit {rc}: {stderr[-3000:]!r}")
