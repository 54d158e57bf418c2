"""Digests as strings and name-based UUIDs in batches: jitdigest.hexdigests and uuid_strings,
and uuid3_many/uuid5_many against the uuid module (ASCII, non-ASCII, bytes and mixed names)."""
import hashlib
import uuid

import numpy as np
import pytest

import jitdigest


# --- hex and UUID strings -------------------------------------------------------------------

def test_hexdigests():
    msgs = [bytes([i]) * i for i in range(100)]
    d = jitdigest.hash_many("sha512", msgs)
    hx = jitdigest.hexdigests(d)
    assert isinstance(hx, np.ndarray) and hx.dtype == np.dtype("<U128") and hx.shape == (100,)
    assert hx.tolist() == [hashlib.sha512(m).hexdigest() for m in msgs]
    assert jitdigest.hexdigests(d[:, ::3]).tolist() == [bytes(r[::3]).hex() for r in d]
    assert jitdigest.hexdigests(np.zeros((0, 16), np.uint8)).shape == (0,)
    assert jitdigest.hexdigests(np.zeros((2, 0), np.uint8)).tolist() == ["", ""]
    with pytest.raises(TypeError, match="uint8"):
        jitdigest.hexdigests(d.astype(np.int64))
    with pytest.raises(ValueError, match="2-D"):
        jitdigest.hexdigests(d[0])


def test_uuid_strings():
    us = [uuid.uuid4() for _ in range(50)]
    arr = np.array([list(u.bytes) for u in us], np.uint8)
    assert jitdigest.uuid_strings(arr).tolist() == [str(u) for u in us]
    with pytest.raises(ValueError, match="16 bytes"):
        jitdigest.uuid_strings(np.zeros((2, 15), np.uint8))


def _reference_uuid(version, namespace, name):
    data = namespace.bytes + (name.encode() if isinstance(name, str) else bytes(name))
    digest = (hashlib.md5 if version == 3 else hashlib.sha1)(data).digest()
    return uuid.UUID(bytes=digest[:16], version=version)


@pytest.mark.parametrize("version", [3, 5])
def test_uuid_many_against_uuid_module(version):
    func = jitdigest.uuid3_many if version == 3 else jitdigest.uuid5_many
    std = uuid.uuid3 if version == 3 else uuid.uuid5
    rng = np.random.default_rng(version)
    # 100k ASCII names of 0..60 characters: the one-join fast path
    sizes = rng.integers(0, 61, 100_000)
    pool = "abcdefghijklmnopqrstuvwxyz0123456789-._/:"
    chars = np.array(list(pool))[rng.integers(0, len(pool), int(sizes.sum()))]
    text = "".join(chars.tolist())
    ends = np.cumsum(sizes)
    names = [text[e - s:e] for s, e in zip(sizes.tolist(), ends.tolist())]
    got = func(uuid.NAMESPACE_DNS, names)
    assert got.shape == (100_000, 16) and got.dtype == np.uint8
    want = np.frombuffer(b"".join(std(uuid.NAMESPACE_DNS, n).bytes for n in names),
                         np.uint8).reshape(-1, 16)
    assert (got == want).all()
    strings = func(uuid.NAMESPACE_DNS, names[:1000], as_strings=True)
    assert strings.tolist() == [str(std(uuid.NAMESPACE_DNS, n)) for n in names[:1000]]
    # non-ASCII str, bytes and mixed names: the per-name encoding path
    odd = ["", "\u00e9", "na\u00efve", "\U0001F600" * 20, b"raw\xff\x00", bytearray(b"ba"),
           "x" * 300] * 7
    got = func(uuid.NAMESPACE_URL, odd, as_strings=True)
    assert got.tolist() == [str(_reference_uuid(version, uuid.NAMESPACE_URL, n)) for n in odd]
    assert got[0] == str(std(uuid.NAMESPACE_URL, ""))
    assert func(uuid.NAMESPACE_OID, []).shape == (0, 16)
    assert func(uuid.NAMESPACE_OID, (n for n in ["a", "b"])).shape == (2, 16)


def test_uuid_many_bad_input():
    with pytest.raises(TypeError, match="uuid.UUID"):
        jitdigest.uuid3_many("6ba7b810-9dad-11d1-80b4-00c04fd430c8", ["a"])
    with pytest.raises(TypeError, match="single str"):
        jitdigest.uuid5_many(uuid.NAMESPACE_DNS, "abc")
    with pytest.raises(TypeError, match="message 1"):
        jitdigest.uuid5_many(uuid.NAMESPACE_DNS, ["a", 3])
