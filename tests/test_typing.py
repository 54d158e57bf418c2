"""Types for users: the ``py.typed`` marker, annotations that ``typing.get_type_hints`` resolves
at run time, signatures without sentinel objects, and mypy (``--strict``) on
``tests/typing_usage.py``, the public API used as a user would."""
import importlib.util
import inspect
import subprocess
import sys
import typing
from pathlib import Path

import pytest

import jitdigest
import jitdigest.hmac

ROOT = Path(__file__).resolve().parent.parent

# The public callables and classes whose signatures users see (``help``, ``inspect``).
PUBLIC = ["new", "file_digest", "md5", "sha1", "sha224", "sha256", "sha384", "sha512",
          "sha3_224", "sha3_256", "sha3_384", "sha3_512", "shake_128", "shake_256",
          "blake2b", "blake2s", "pbkdf2_hmac", "scrypt", "hmac_many", "backends", "backend",
          "info"]

# mypy's settings: --strict on the usage file; jitdigest itself is read for its types, its
# own modules' errors not reported (as for an installed package).
MYPY_CONFIG = f"""\
[mypy]
strict = True
mypy_path = {ROOT}

[mypy-jitdigest.*]
follow_imports = silent
"""


def public_objects():
    objects = {name: getattr(jitdigest, name) for name in PUBLIC}
    objects.update({f"hmac.{name}": getattr(jitdigest.hmac, name)
                    for name in ("new", "digest", "HMAC", "compare_digest")})
    from jitdigest.blake3 import blake3
    objects["blake3.blake3"] = blake3
    for cls in (jitdigest.sha256(), jitdigest.shake_128(), jitdigest.blake2b(), blake3(),
                jitdigest.hmac.new(b"k", None, "sha256")):
        for method in ("update", "digest", "hexdigest", "copy"):
            objects[f"{type(cls).__name__}.{method}"] = getattr(cls, method)
    return objects


def test_py_typed_marker_in_the_package():
    assert (Path(jitdigest.__file__).parent / "py.typed").is_file()


@pytest.mark.parametrize("name", ["new", "file_digest", "sha256", "md5", "sha3_512",
                                  "shake_128", "pbkdf2_hmac", "hash_many", "hexdigests",
                                  "uuid3_many", "uuid5_many", "uuid_strings"])
def test_type_hints_resolve(name):
    hints = typing.get_type_hints(getattr(jitdigest, name))
    assert hints and "return" in hints, hints


def test_type_hints_of_hmac_and_classes():
    from jitdigest.blake3 import blake3
    for func in (jitdigest.hmac.new, jitdigest.hmac.digest, jitdigest.hmac.HMAC.__init__,
                 jitdigest.blake2b.__init__, blake3.__init__, blake3.digest,
                 type(jitdigest.sha256()).update, type(jitdigest.shake_256()).digest,
                 jitdigest.hmac_many, jitdigest.backends, jitdigest.backend):
        assert typing.get_type_hints(func), func


def test_signatures_show_no_sentinel():
    for name, obj in public_objects().items():
        try:
            signature = inspect.signature(obj)
        except ValueError:              # a builtin without a text signature
            continue
        assert "object at 0x" not in str(signature), (name, signature)
    assert str(inspect.signature(jitdigest.sha256)).startswith("(data: 'ReadableBuffer' = b''")
    assert inspect.signature(jitdigest.sha256).parameters["data"].default == b""
    assert list(inspect.signature(jitdigest.scrypt).parameters)[:2] == ["password", "salt"]


def test_import_stays_light():
    code = ("import sys, jitdigest; "
            "print(sorted({'numpy', 'numba', 'typing'} & set(sys.modules)))")
    out = subprocess.run([sys.executable, "-S", "-c", code], capture_output=True, text=True,
                         cwd=ROOT, check=True, env={"PYTHONPATH": f"{ROOT}:{site_packages()}"})
    assert out.stdout.strip() == "[]", out.stdout


def site_packages():
    import numpy
    return str(Path(numpy.__file__).resolve().parent.parent)


def test_mypy_strict_on_typing_usage(tmp_path):
    if importlib.util.find_spec("mypy") is None:
        pytest.skip("mypy is not installed (it comes with the test extra)")
    config = tmp_path / "mypy.ini"
    config.write_text(MYPY_CONFIG)
    result = subprocess.run(
        [sys.executable, "-m", "mypy", "--config-file", str(config),
         "--cache-dir", str(tmp_path / "cache"), str(ROOT / "tests" / "typing_usage.py")],
        capture_output=True, text=True, cwd=tmp_path)
    assert result.returncode == 0, result.stdout + result.stderr
