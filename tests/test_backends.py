"""The public way to choose a tier: ``jitdigest.backends(name)`` lists what this process can run,
``with jitdigest.backend(name):`` forces one for objects, one-shot digests and ``hash_many``.
Every forced backend must still give hashlib's digests."""
import hashlib

import numpy as np
import pytest

import jitdigest
from jitdigest.base import algorithms as _algorithms
from jitdigest.engine import cpu as _cpu, dispatch as _dispatch

ALGORITHMS = sorted(jitdigest.algorithms_available)


def digest_of(h, n=40):
    return h.digest(n) if h.name.startswith("shake") else h.digest()


@pytest.mark.parametrize("name", ALGORITHMS)
def test_every_listed_backend_gives_hashlib_digests(name):
    names = jitdigest.backends(name)
    assert "portable" in names
    assert len(names) == len(set(names))
    data = bytes(range(256)) * 5
    rows = np.frombuffer(data[:1200], np.uint8).reshape(40, 30)
    kw = {"length": 40} if name.startswith("shake") else {}
    want_rows = [digest_of(hashlib.new(name, r.tobytes())) for r in rows]
    batch_only = {b.name for b in _dispatch.batch_backends(_algorithms.SPECS[name].family)}
    for backend in names:
        with jitdigest.backend(backend):
            if backend not in batch_only:
                h = jitdigest.new(name, data)
                assert h._kernels.name == backend
                assert digest_of(h) == digest_of(hashlib.new(name, data)), backend
            got = jitdigest.hash_many(name, rows, **kw)
        assert [bytes(r) for r in got] == want_rows, backend


def test_lane_backends_come_after_per_message_ones():
    names = jitdigest.backends("sha256")
    batch_only = {b.name for b in _dispatch.batch_backends("sha256")}
    lanes = [i for i, n in enumerate(names) if n in batch_only]
    assert lanes == list(range(len(names) - len(lanes), len(names)))


def test_forcing_is_undone_on_exit_and_objects_keep_their_kernels():
    default = jitdigest.sha256()._kernels.name
    with jitdigest.backend("portable"):
        inside = jitdigest.sha256(b"a")
        with jitdigest.backend("portable"):
            pass
        assert jitdigest.sha256()._kernels.name == "portable"      # the inner block restored it
    assert jitdigest.sha256()._kernels.name == default
    inside.update(b"bc")
    assert inside._kernels.name == "portable"
    assert inside.digest() == hashlib.sha256(b"abc").digest()


def test_bad_names():
    with pytest.raises(ValueError, match="unknown backend"):
        with jitdigest.backend("no-such-tier"):
            pass
    with pytest.raises(TypeError):
        with jitdigest.backend(3):
            pass
    with pytest.raises(ValueError, match="unsupported hash type"):
        jitdigest.backends("sha4")


def test_a_backend_the_algorithm_lacks_is_an_error_not_a_silent_fallback():
    with jitdigest.backend("unrolled"):          # SHA-3 and BLAKE2 have one, MD5 does not
        assert jitdigest.sha3_256(b"")._kernels.name == "unrolled"
        with pytest.raises(ValueError, match="does not serve md5"):
            jitdigest.md5(b"")
        assert jitdigest.info()["kernels"]["md5"] is None      # info() still answers


@pytest.mark.skipif(not _cpu.usable("sha", "sha_ni"), reason="CPU or Numba target lacks SHA-NI")
def test_switched_off_backends_are_not_listed_and_cannot_be_forced():
    assert "sha_ni" in jitdigest.backends("sha256")
    with _cpu.disabled("sha_ni"):
        assert "sha_ni" not in jitdigest.backends("sha256")
        with jitdigest.backend("sha_ni"):
            with pytest.raises(ValueError, match="cannot run"):
                jitdigest.sha256(b"")


def test_the_batch_choice_follows_forcing_and_switches():
    """The batch rule is worked out once per switch set: a forced backend, a switch turned off
    and each one undone must each be seen by the next batch call."""
    spec = _algorithms.SPECS["sha256"]
    before = _dispatch.batch_kernels_for(spec, 1000, 64)
    assert _dispatch.batch_kernels_for(spec, 1000, 64) is before
    for name in jitdigest.backends("sha256"):
        with jitdigest.backend(name):
            assert _dispatch.batch_kernels_for(spec, 1000, 64).name == name
            assert _dispatch.default_batch_kernels(spec, 1).name == name
        assert _dispatch.batch_kernels_for(spec, 1000, 64) is before
    with _cpu.disabled("all"):
        assert _dispatch.batch_kernels_for(spec, 1000, 64).name == "portable"
        assert _dispatch.batch_kernels_for(spec, 1, 64).name == "portable"
    assert _dispatch.batch_kernels_for(spec, 1000, 64) is before


# What the lane backends' names meant before they were named by tier: ``lanes<N>``, N state
# words side by side, so one old name is AVX2 for one family and AVX-512 for another.
OLD_LANE_NAMES = {
    ("md5", "lanes16"): "avx512_x32", ("md5", "lanes8"): "avx2_x16",
    ("sha1", "lanes16"): "avx512_x16", ("sha1", "lanes8"): "avx2_x8",
    ("sha256", "lanes16"): "avx512_x16", ("sha256", "lanes8"): "avx2_x8",
    ("blake2s", "lanes16"): "avx512_x16", ("blake2s", "lanes8"): "avx2_x8",
    ("sha512", "lanes8"): "avx512_x8", ("sha512", "lanes4"): "avx2_x4",
    ("sha3_256", "lanes8"): "avx512_x8", ("sha3_256", "lanes4"): "avx2_x4",
    ("blake2b", "lanes8"): "avx512_x8", ("blake2b", "lanes4"): "avx2_x4",
}


@pytest.mark.parametrize("name, old", sorted(OLD_LANE_NAMES), ids="-".join)
def test_old_lane_names_are_read_per_family(name, old):
    """``lanes16``/``lanes8``/``lanes4`` still force the backend they meant for the family, and
    its digests are hashlib's."""
    spec = _algorithms.SPECS[name]
    new = OLD_LANE_NAMES[name, old]
    assert new in {b.name for b in _dispatch.batch_backends(spec.family)}
    if new not in jitdigest.backends(name):
        pytest.skip(f"{new} is not usable on this CPU")
    rows = np.arange(20 * 64, dtype=np.uint8).reshape(20, 64)
    with jitdigest.backend(old):
        assert _dispatch.batch_kernels_for(spec, 20).name == new
        got = jitdigest.hash_many(name, rows)
    assert [bytes(g) for g in got] == [hashlib.new(name, bytes(r)).digest() for r in rows]
