"""jitdigest's public API used as a user would, for a type checker (tests/test_typing.py runs
mypy on it; the file is not a test of its own and is never run by pytest)."""
from __future__ import annotations

import hmac as std_hmac
import io
import uuid

import numpy as np
import numpy.typing as npt

import jitdigest
import jitdigest.hmac
from jitdigest import blake2b, blake2s
from jitdigest.blake3 import blake3
from jitdigest.hmac import HMAC


def hashlib_drop_in(data: bytes, view: memoryview, array: npt.NDArray[np.uint8]) -> list[str]:
    h = jitdigest.sha256(data)
    h.update(view)
    h.update(array)
    h.update(bytearray(b"more"))
    digest: bytes = h.digest()
    size: int = h.digest_size + h.block_size
    name: str = h.name
    other = h.copy()
    other.update(b"x")
    shake = jitdigest.shake_256(b"abc", usedforsecurity=False)
    squeezed: bytes = shake.copy().digest(64)
    hexes = [h.hexdigest(), other.hexdigest(), shake.hexdigest(16), digest.hex(), name]
    hexes.append(jitdigest.new("sha3_256", data).hexdigest())
    hexes.append(jitdigest.new("SHA-512").hexdigest())
    hexes.append(jitdigest.md5().hexdigest() + str(size) + squeezed.hex())
    constructor = jitdigest.sha1
    hexes.append(jitdigest.file_digest(io.BytesIO(data), "sha256").hexdigest())
    hexes.append(jitdigest.file_digest(io.BytesIO(data), constructor).hexdigest())
    return hexes


def blake2(data: bytes) -> bytes:
    b = blake2b(data, digest_size=32, key=b"k" * 16, salt=b"s", person=b"p")
    s = blake2s(person=b"me", usedforsecurity=False)
    s.update(data)
    return b.copy().digest() + s.digest() + bytes([blake2b.MAX_DIGEST_SIZE])


def with_blake3(data: bytes, key: bytes) -> str:
    h = blake3(data, key=key, max_threads=blake3.AUTO)
    h.update(b"more").update(memoryview(data))
    kdf = blake3(derive_key_context="example.com 2026 session keys")
    kdf.update(key)
    out: bytes = h.digest(64, seek=32) + kdf.copy().digest()
    h.reset()
    return out.hex() + h.hexdigest(length=8)


def macs(key: bytes, message: bytes) -> bool:
    mac = jitdigest.hmac.new(key, message, "sha256")
    mac.update(b"more")
    tag: bytes = mac.copy().digest()
    same = HMAC(key, message + b"more", jitdigest.sha256).hexdigest() == mac.hexdigest()
    one_shot = jitdigest.hmac.digest(key, message, "sha512")
    by_std = std_hmac.new(key, message, jitdigest.sha256).digest()
    return (same and jitdigest.hmac.compare_digest(tag, tag)
            and len(one_shot) == 64 and len(by_std) == 32 and mac.name == "hmac-sha256")


def derive(password: bytes, salt: bytes) -> bytes:
    key: bytes = jitdigest.pbkdf2_hmac("sha256", password, salt, 1000)
    key += jitdigest.pbkdf2_hmac("sha512", bytearray(password), salt, 10, dklen=16)
    key += jitdigest.scrypt(password, salt=salt, n=16, r=8, p=1, dklen=32)
    return key


def batches(rows: npt.NDArray[np.uint8], values: bytes,
            offsets: npt.NDArray[np.int64]) -> npt.NDArray[np.uint8]:
    digests = jitdigest.hash_many("sha256", rows)
    ragged = jitdigest.hash_many("blake2b", values, offsets, threads=2)
    macs = jitdigest.hmac_many("sha256", b"secret", [b"a", b"bc"])
    out: npt.NDArray[np.uint8] = np.empty((len(rows), 32), np.uint8)
    jitdigest.hmac_many("sha256", b"secret", rows, out=out)
    hexes = jitdigest.hash_many("sha1", [b"a", bytearray(b"b")], hex=True)
    strings = jitdigest.hexdigests(digests)
    ids = jitdigest.uuid5_many(uuid.NAMESPACE_DNS, ["example.com", b"example.org"])
    assert len(hexes) == len(strings) == len(jitdigest.uuid_strings(ids))
    return np.concatenate([digests[:1], ragged[:1, :32], macs, out])


def process() -> dict[str, object]:
    names: list[str] = jitdigest.backends("sha256")
    with jitdigest.backend(names[-1]):
        jitdigest.sha256(b"abc").digest()
    available: set[str] = set(jitdigest.algorithms_available) | jitdigest.algorithms_guaranteed
    return {"info": jitdigest.info(), "names": sorted(available), "version": jitdigest.__version__}
