"""jitdigest standing in for the standard library: ``sys.modules["hashlib"] = jitdigest`` and
``sys.modules["hmac"] = jitdigest.hmac`` in a fresh process keep it working."""
import hashlib
import hmac
import json
import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
ENV = {**os.environ, "PYTHONPATH": os.pathsep.join(
    [str(ROOT)] + [p for p in os.environ.get("PYTHONPATH", "").split(os.pathsep) if p])}

# In a fresh process (Numba not imported yet), the swap first, then everything that imports
# lazily: Numba and the kernel cache (first digest), hashlib's keyword wording (an unknown
# keyword), hash_many's message errors, HMAC and PBKDF2 kernels, info().
STAND_IN = r"""
import json, sys
import jitdigest, jitdigest.hmac
sys.modules["hashlib"] = jitdigest
sys.modules["hmac"] = jitdigest.hmac
assert "numba" not in sys.modules
import hashlib, hmac
out = {"sha256": hashlib.sha256(b"abc").hexdigest(),
       "sha3_256": hashlib.new("sha3_256", b"abc").hexdigest(),
       "hmac": hmac.new(b"key", b"msg", "sha256").hexdigest(),
       "hmac_digest": hmac.digest(b"key", b"msg", "md5").hex(),
       "pbkdf2": hashlib.pbkdf2_hmac("sha1", b"pw", b"salt", 3).hex()}
try:
    hashlib.sha256(b"", bogus=1)
except TypeError as exc:
    out["keyword_error"] = str(exc)
try:
    jitdigest.hash_many("md5", [b"a", memoryview(b"abcd")[::2]])
except (BufferError, ValueError) as exc:
    out["strided_error"] = type(exc).__name__
out["info"] = sorted(jitdigest.info()["kernels"]) == sorted(jitdigest.algorithms_available)
print(json.dumps(out))
"""


def test_jitdigest_works_as_sys_modules_hashlib():
    proc = subprocess.run([sys.executable, "-c", STAND_IN], capture_output=True, text=True,
                          env=ENV, cwd=ROOT, timeout=300)
    assert proc.returncode == 0, proc.stderr[-3000:]
    out = json.loads(proc.stdout)
    assert "'bogus'" in out.pop("keyword_error")
    assert out == {
        "sha256": hashlib.sha256(b"abc").hexdigest(),
        "sha3_256": hashlib.sha3_256(b"abc").hexdigest(),
        "hmac": hmac.new(b"key", b"msg", "sha256").hexdigest(),
        "hmac_digest": hmac.digest(b"key", b"msg", "md5").hex(),
        "pbkdf2": hashlib.pbkdf2_hmac("sha1", b"pw", b"salt", 3).hex(),
        "strided_error": "BufferError",
        "info": True,
    }
    assert "CacheWarning" not in proc.stderr, proc.stderr[-3000:]
