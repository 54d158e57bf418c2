"""The standard library's ``hashlib`` and ``hmac``, as they were when jitdigest was imported.

Why: jitdigest stands in for them, down to ``sys.modules["hashlib"] = jitdigest`` and
``sys.modules["hmac"] = jitdigest.hmac``. After such a swap an ``import hashlib`` run later (in
a module jitdigest imports lazily, such as its kernel cache, or in Numba, which checksums its
cache with ``hashlib.sha256``) would find jitdigest, whose kernels need that cache: a recursion.
So jitdigest's modules take the real modules from here, and Numba is imported inside
``real_modules()`` (``jitdigest.engine.cpu.import_numba``).
"""
import contextlib
import hashlib
import hmac
import sys

MODULES = {"hashlib": hashlib, "hmac": hmac}


@contextlib.contextmanager
def swapped(modules):
    """Within: ``sys.modules`` maps each name of ``modules`` to its value (None hides a module);
    what it held before is put back after."""
    saved = {name: sys.modules.get(name) for name in modules}
    sys.modules.update(modules)
    try:
        yield
    finally:
        for name, module in saved.items():
            if module is None:
                sys.modules.pop(name, None)
            else:
                sys.modules[name] = module


def real_modules():
    """Within: ``sys.modules`` maps "hashlib" and "hmac" to the standard library's modules (what
    it held before is put back after). Another thread importing them meanwhile gets the real
    ones too, as it would without jitdigest."""
    return swapped(MODULES)
