"""The keyed kernels interpreted (NUMBA_DISABLE_JIT=1, a fresh child process): HMAC, PBKDF2,
hmac_many and a shared object under threads, against the standard library."""
import os
import subprocess
import sys

CHILD = r"""
import hashlib, hmac, os, threading, warnings
warnings.simplefilter("error")
import numpy as np
import jitdigest
from jitdigest.engine import cpu as _cpu; from jitdigest import hmac as jhmac
assert not _cpu.jit_enabled()
checked = 0
for name in ["md5", "sha1", "sha256", "sha384", "sha3_256"]:
    for key in (b"", b"k" * 64, os.urandom(150)):
        msg = os.urandom(100)
        expected = hmac.new(key, msg, name).digest()
        h = jhmac.new(key, msg[:30], name)
        h.update(msg[30:])
        assert jhmac.digest(key, msg, name) == expected and h.digest() == expected, name
        checked += 1
    if name != "sha3_256":
        assert jitdigest.pbkdf2_hmac(name, b"pw", b"salt", 3, 40) == \
            hashlib.pbkdf2_hmac(name, b"pw", b"salt", 3, 40)
        checked += 1
    rows = [os.urandom(i * 7) for i in range(12)]
    got = jitdigest.hmac_many(name, b"key", rows)
    assert [bytes(r) for r in got] == [hmac.new(b"key", r, name).digest() for r in rows], name
    checked += 1
h = jitdigest.sha256()
chunk = memoryview(os.urandom(3000))
def feed():
    for _ in range(5):
        h.update(chunk)
threads = [threading.Thread(target=feed) for _ in range(4)]
for t in threads: t.start()
for t in threads: t.join()
assert h.digest() == hashlib.sha256(bytes(chunk) * 20).digest()
print("checked", checked)
"""


def test_keyed_interpreted():
    env = dict(os.environ, NUMBA_DISABLE_JIT="1")
    proc = subprocess.run([sys.executable, "-c", CHILD], env=env, capture_output=True,
                          text=True, timeout=600)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "checked 24" in proc.stdout
