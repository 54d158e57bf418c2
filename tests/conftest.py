"""Shared fixtures: every test that takes ``kernel`` runs once per kernel set this CPU can run
(portable always; hardware and unrolled forms where registered and usable)."""
import hashlib

import pytest

from jitdigest import _algorithms, _dispatch, _hashobj

FIXED = [name for name, spec in _algorithms.SPECS.items() if not spec.family.startswith("blake2")]
CORE = ["md5", "sha1", "sha224", "sha256", "sha384", "sha512", "sha512_224", "sha512_256"]


def kernel_params(names):
    """pytest params (algorithm, kernel set), one per usable backend, ids like sha256-sha_ni;
    registered backends the CPU lacks appear as skips."""
    params = []
    for name in names:
        spec = _algorithms.SPECS[name]
        for backend in _dispatch.backends(spec.family):
            marks = () if backend.usable() else (
                pytest.mark.skip(reason=f"{backend.name} not usable on this CPU/target"),)
            ks = _dispatch._kernel_set(backend, spec.word)
            params.append(pytest.param(name, ks, id=f"{name}-{backend.name}", marks=marks))
    return params


def make(name, kernels, data=b""):
    """A jitdigest hash object for ``name`` served by ``kernels``."""
    spec = _algorithms.SPECS[name]
    cls = _hashobj.ShakeHash if spec.digest_size == 0 else _hashobj.Hash
    return cls(spec, data, kernels=kernels)


def oracle(name, data=b""):
    return hashlib.new(name, data)


def out_of(h, length=None):
    """digest() for fixed-size algorithms, digest(length) for SHAKE."""
    return h.digest() if h.digest_size else h.digest(length)


def outcome(fn):
    """("ok", result) or (exception type name, message): to compare errors with the stdlib's."""
    try:
        return ("ok", fn())
    except Exception as exc:
        return (type(exc).__name__, str(exc))
