"""jitdigest.hmac against RFC 2202 / RFC 4231 known answers and the standard library's hmac
(hypothesis: keys shorter than, equal to and longer than the block, empty keys and messages,
every algorithm HMAC takes; errors compared with the standard library's)."""
import array
import hashlib
import hmac
import threading
import types
from contextlib import nullcontext

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

import jitdigest
from conftest import outcome
from jitdigest import hmac as jhmac
from jitdigest.base.algorithms import SPECS
from jitdigest.engine import cpu as _cpu, dispatch as _dispatch

# every algorithm the standard library's HMAC takes (SHAKE it refuses)
HMAC_ALGORITHMS = sorted(n for n in jitdigest.algorithms_available if not n.startswith("shake"))
BLOCK = {name: hashlib.new(name).block_size for name in HMAC_ALGORITHMS}

_LONG_KEY_DATA = b"Test Using Larger Than Block-Size Key - Hash Key First"
_RFC4231_7 = (b"This is a test using a larger than block-size key and a larger than block-size "
              b"data. The key needs to be hashed before being used by the HMAC algorithm.")
_KEY_25 = bytes(range(1, 26))

# RFC 2202 section 2 (HMAC-MD5) and 3 (HMAC-SHA-1): (key, data, digest); case 5's digest is
# also given truncated to 96 bits there, here in full
RFC2202 = {
    "md5": [
        (b"\x0b" * 16, b"Hi There", "9294727a3638bb1c13f48ef8158bfc9d"),
        (b"Jefe", b"what do ya want for nothing?", "750c783e6ab0b503eaa86e310a5db738"),
        (b"\xaa" * 16, b"\xdd" * 50, "56be34521d144c88dbb8c733f0e8b3f6"),
        (_KEY_25, b"\xcd" * 50, "697eaf0aca3a3aea3a75164746ffaa79"),
        (b"\x0c" * 16, b"Test With Truncation", "56461ef2342edc00f9bab995690efd4c"),
        (b"\xaa" * 80, _LONG_KEY_DATA, "6b1ab7fe4bd7bf8f0b62e6ce61b9d0cd"),
        (b"\xaa" * 80, b"Test Using Larger Than Block-Size Key and Larger Than One "
                       b"Block-Size Data", "6f630fad67cda0ee1fb1f562db3aa53e"),
    ],
    "sha1": [
        (b"\x0b" * 20, b"Hi There", "b617318655057264e28bc0b6fb378c8ef146be00"),
        (b"Jefe", b"what do ya want for nothing?", "effcdf6ae5eb2fa2d27416d5f184df9c259a7c79"),
        (b"\xaa" * 20, b"\xdd" * 50, "125d7342b9ac11cd91a39af48aa17b4f63f175d3"),
        (_KEY_25, b"\xcd" * 50, "4c9007f4026250c6bc8414f9bf50c86c2d7235da"),
        (b"\x0c" * 20, b"Test With Truncation", "4c1a03424b55e07fe7f27be1d58bb9324a9a5a04"),
        (b"\xaa" * 80, _LONG_KEY_DATA, "aa4ae5e15272d00e95705637ce8a3b55ed402112"),
        (b"\xaa" * 80, b"Test Using Larger Than Block-Size Key and Larger Than One "
                       b"Block-Size Data", "e8e99d0f45237d786d6bbaa7965c7808bbff1a91"),
    ],
}

# RFC 4231 section 4: test cases 1-7, HMAC-SHA-224/256/384/512 (case 5: the first 128 bits)
_RFC4231_INPUTS = [
    (b"\x0b" * 20, b"Hi There"),
    (b"Jefe", b"what do ya want for nothing?"),
    (b"\xaa" * 20, b"\xdd" * 50),
    (_KEY_25, b"\xcd" * 50),
    (b"\x0c" * 20, b"Test With Truncation"),
    (b"\xaa" * 131, _LONG_KEY_DATA),
    (b"\xaa" * 131, _RFC4231_7),
]
_RFC4231_DIGESTS = {
    "sha224": [
        "896fb1128abbdf196832107cd49df33f47b4b1169912ba4f53684b22",
        "a30e01098bc6dbbf45690f3a7e9e6d0f8bbea2a39e6148008fd05e44",
        "7fb3cb3588c6c1f6ffa9694d7d6ad2649365b0c1f65d69d1ec8333ea",
        "6c11506874013cac6a2abc1bb382627cec6a90d86efc012de7afec5a",
        "0e2aea68a90c8d37c988bcdb9fca6fa8",
        "95e9a0db962095adaebe9b2d6f0dbce2d499f112f2d2b7273fa6870e",
        "3a854166ac5d9f023f54d517d0b39dbd946770db9c2b95c9f6f565d1",
    ],
    "sha256": [
        "b0344c61d8db38535ca8afceaf0bf12b881dc200c9833da726e9376c2e32cff7",
        "5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843",
        "773ea91e36800e46854db8ebd09181a72959098b3ef8c122d9635514ced565fe",
        "82558a389a443c0ea4cc819899f2083a85f0faa3e578f8077a2e3ff46729665b",
        "a3b6167473100ee06e0c796c2955552b",
        "60e431591ee0b67f0d8a26aacbf5b77f8e0bc6213728c5140546040f0ee37f54",
        "9b09ffa71b942fcb27635fbcd5b0e944bfdc63644f0713938a7f51535c3a35e2",
    ],
    "sha384": [
        "afd03944d84895626b0825f4ab46907f15f9dadbe4101ec682aa034c7cebc59c"
        "faea9ea9076ede7f4af152e8b2fa9cb6",
        "af45d2e376484031617f78d2b58a6b1b9c7ef464f5a01b47e42ec3736322445e"
        "8e2240ca5e69e2c78b3239ecfab21649",
        "88062608d3e6ad8a0aa2ace014c8a86f0aa635d947ac9febe83ef4e55966144b"
        "2a5ab39dc13814b94e3ab6e101a34f27",
        "3e8a69b7783c25851933ab6290af6ca77a9981480850009cc5577c6e1f573b4e"
        "6801dd23c4a7d679ccf8a386c674cffb",
        "3abf34c3503b2a23a46efc619baef897",
        "4ece084485813e9088d2c63a041bc5b44f9ef1012a2b588f3cd11f05033ac4c6"
        "0c2ef6ab4030fe8296248df163f44952",
        "6617178e941f020d351e2f254e8fd32c602420feb0b8fb9adccebb82461e99c5"
        "a678cc31e799176d3860e6110c46523e",
    ],
    "sha512": [
        "87aa7cdea5ef619d4ff0b4241a1d6cb02379f4e2ce4ec2787ad0b30545e17cde"
        "daa833b7d6b8a702038b274eaea3f4e4be9d914eeb61f1702e696c203a126854",
        "164b7a7bfcf819e2e395fbe73b56e0a387bd64222e831fd610270cd7ea250554"
        "9758bf75c05a994a6d034f65f8f0e6fdcaeab1a34d4a6b4b636e070a38bce737",
        "fa73b0089d56a284efb0f0756c890be9b1b5dbdd8ee81a3655f83e33b2279d39"
        "bf3e848279a722c806b485a47e67c807b946a337bee8942674278859e13292fb",
        "b0ba465637458c6990e5a8c5f61d4af7e576d97ff94b872de76f8050361ee3db"
        "a91ca5c11aa25eb4d679275cc5788063a5f19741120c4f2de2adebeb10a298dd",
        "415fad6271580a531d4179bc891d87a6",
        "80b24263c7c1a3ebb71493c1dd7be8b49b46d1f41b4aeec1121b013783f8f352"
        "6b56d037e05f2598bd0fd2215d6a1e5295e64f73f63f0aec8b915a985d786598",
        "e37b6a775dc87dbaa4dfa9f96e5e3ffddebd71f8867289865df5a32d20cdc944"
        "b6022cac3c4982b10d5eeb55c3e4de15134676fb6de0446065c97440fa8c6a58",
    ],
}
KNOWN_ANSWERS = [(name, key, data, digest) for name, cases in RFC2202.items()
                 for key, data, digest in cases]
KNOWN_ANSWERS += [(name, key, data, digest) for name, digests in _RFC4231_DIGESTS.items()
                  for (key, data), digest in zip(_RFC4231_INPUTS, digests, strict=True)]


@pytest.mark.parametrize("name,key,data,expected", KNOWN_ANSWERS)
def test_known_answers(name, key, data, expected):
    n = len(expected) // 2
    assert jhmac.digest(key, data, name)[:n].hex() == expected
    assert jhmac.new(key, data, name).hexdigest()[:2 * n] == expected
    h = jhmac.new(key, digestmod=getattr(jitdigest, name))
    for i in range(0, len(data), 7):
        h.update(data[i:i + 7])
    assert h.digest()[:n].hex() == expected


def _key(draw, name):
    bs = BLOCK[name]
    length = draw(st.one_of(st.just(0), st.integers(1, bs - 1), st.sampled_from([bs - 1, bs, bs + 1]),
                            st.integers(bs + 1, 3 * bs)))
    return draw(st.binary(min_size=length, max_size=length))


@settings(max_examples=300, deadline=None)
@given(st.data())
def test_against_stdlib(data):
    name = data.draw(st.sampled_from(HMAC_ALGORITHMS))
    key = _key(data.draw, name)
    msg = data.draw(st.one_of(st.just(b""), st.binary(max_size=3 * BLOCK[name] + 5),
                              st.binary(min_size=2040, max_size=2100)))
    cut = data.draw(st.integers(0, len(msg)))
    expected = hmac.new(key, msg, name).digest()
    assert jhmac.digest(key, msg, name) == expected
    assert jhmac.digest(bytearray(key), memoryview(msg), name) == expected
    h = jhmac.new(bytearray(key), msg[:cut], digestmod=name)
    c = h.copy()
    h.update(msg[cut:])
    assert h.digest() == expected
    assert h.hexdigest() == expected.hex()
    assert c.digest() == hmac.new(key, msg[:cut], name).digest()
    ref = hmac.new(key, msg[:cut], name)
    assert (h.name, h.digest_size, h.block_size) == (ref.name, ref.digest_size, ref.block_size)


@pytest.mark.parametrize("name", HMAC_ALGORITHMS)
def test_digestmod_forms(name):
    key, msg = b"k" * 70, b"message" * 30
    expected = hmac.new(key, msg, name).digest()
    forms = [name, types.SimpleNamespace(new=lambda d=b"": hashlib.new(name, d))]
    if hasattr(hashlib, name):          # a constructor in hashlib: jitdigest has it too
        forms += [getattr(hashlib, name), getattr(jitdigest, name)]
    for form in forms:
        assert jhmac.new(key, msg, form).digest() == expected
        assert jhmac.digest(key, msg, form) == expected


@pytest.mark.parametrize("name", HMAC_ALGORITHMS)
def test_digest_takes_any_buffer_as_key(name):
    """``digest(key, msg, d)``: a key of any bytes-like type, for every algorithm and for its
    name, hashlib's and jitdigest's constructor (the standard library's HMAC through OpenSSL
    takes them all; its pure-Python fallback, which jitdigest's follows for SHA-3 and BLAKE2,
    took only bytes)."""
    msg = b"message" * 30
    forms = [name]
    if hasattr(hashlib, name):          # a constructor in hashlib: jitdigest has it too
        forms += [getattr(hashlib, name), getattr(jitdigest, name)]
    for raw in (b"key", b"k" * 200):
        expected = hmac.digest(raw, msg, name)
        for key in (memoryview(raw), array.array("B", raw), np.frombuffer(raw, np.uint8),
                    bytearray(raw)):
            assert hmac.digest(key, msg, name) == expected
            for form in forms:
                assert jhmac.digest(key, msg, form) == expected, (form, type(key))


@pytest.mark.parametrize("name", ["shake_128", "shake_256"])
def test_shake_refused_in_every_form(name):
    """SHAKE as a name, hashlib's or jitdigest's constructor: the standard library's error for
    hashlib's, at ``new`` and ``digest`` (not an object that fails only at ``digest()``)."""
    theirs = outcome(lambda: hmac.new(b"k", b"m", getattr(hashlib, name)))
    assert theirs[0] == "ValueError"
    for form in (name, getattr(hashlib, name), getattr(jitdigest, name)):
        assert outcome(lambda: jhmac.new(b"k", b"m", form)) == theirs
        assert outcome(lambda: jhmac.digest(b"k", b"m", form)) == theirs


@pytest.mark.parametrize("name", sorted(hashlib.algorithms_guaranteed
                                         | (set(SPECS) & hashlib.algorithms_available)))
def test_every_algorithm_as_stdlib(name):
    """Every algorithm hashlib guarantees (and every other one of jitdigest's that this
    hashlib has): jitdigest's HMAC takes it where the standard library's does, with its digest,
    and refuses it where that refuses it, with its error."""
    key, msg = b"k" * 200, b"message" * 40
    theirs = outcome(lambda: hmac.new(key, msg, name).digest())
    assert outcome(lambda: jhmac.new(key, msg, name).digest()) == theirs
    assert outcome(lambda: jhmac.digest(key, msg, name)) == theirs
    assert (theirs[0] == "ok") == (name in HMAC_ALGORITHMS)


BAD_CALLS = [
    ("new", (b"k", b"m")), ("new", ("k", b"m", "sha256")), ("new", (memoryview(b"k"), b"m", "sha256")),
    ("new", (b"k", "m", "sha256")), ("new", (b"k", 5, "sha256")), ("new", (b"k", b"m", "foo")),
    ("new", (b"k", b"m", "shake_128")), ("new", (b"k", b"m", None)), ("new", (None, b"m", "md5")),
    ("digest", ("k", b"m", "sha256")), ("digest", (b"k", "m", "sha256")),
    ("digest", (5, b"m", "sha256")), ("digest", (b"k", None, "sha256")),
    ("digest", (b"k", b"m", "foo")), ("digest", (b"k", b"m", None)),
    ("digest", (b"k", b"m", "shake_256")), ("digest", (b"k", "m", "sha3_256")),
]


@pytest.mark.parametrize("func,args", BAD_CALLS)
def test_errors_as_stdlib(func, args):
    ours = outcome(lambda: getattr(jhmac, func)(*args))
    theirs = outcome(lambda: getattr(hmac, func)(*args))
    assert ours[0] != "ok"
    assert ours == theirs


def test_update_errors_as_stdlib():
    for bad in ("text", 5, None):
        ours = outcome(lambda: jhmac.new(b"k", digestmod="sha256").update(bad))
        theirs = outcome(lambda: hmac.new(b"k", digestmod="sha256").update(bad))
        assert ours[0] == theirs[0] == "TypeError"


def test_module_surface():
    assert jhmac.compare_digest is hmac.compare_digest
    assert jhmac.trans_5C == hmac.trans_5C and jhmac.trans_36 == hmac.trans_36
    assert jhmac.digest_size is None
    assert jitdigest.hmac is jhmac


# the Merkle-Damgard algorithms (RFC 1321, FIPS 180-4): those with keyed kernels
MERKLE_DAMGARD = ["md5", "sha1", "sha224", "sha256", "sha384", "sha512", "sha512_224",
                  "sha512_256"]


def _per_message_backends(name):
    """(name, backend) for every per-message backend this process can run for ``name``."""
    lanes_only = {b.name for b in _dispatch.batch_backends(SPECS[name].family)}
    return [pytest.param(name, b, id=f"{name}-{b}")
            for b in jitdigest.backends(name) if b not in lanes_only]


@pytest.mark.parametrize("name,backend", [p for name in MERKLE_DAMGARD
                                          for p in _per_message_backends(name)])
def test_every_backend_gives_stdlib_hmac(name, backend):
    """Each backend's keyed steps (the keyed states, the hash after the key block, the padded
    last block) run with its own block function and block size: with every backend forced,
    keys shorter than, as long as and longer than the block, and messages that end short of,
    at and across a block's length field, one-shot, streamed and copied, give the standard
    library's HMAC."""
    block = hashlib.new(name).block_size
    keys = [b"", b"k" * (block - 1), bytes(range(block)), bytes(range(256))[:block + 1] * 3]
    lengths = [0, 1, block - 9, block - 8, block, block + 1, 2 * block + 55, 1000]
    with jitdigest.backend(backend):
        for key in keys:
            for n in lengths:
                msg = bytes((7 * i + n) % 256 for i in range(n))
                expected = hmac.new(key, msg, name).digest()
                assert jhmac.digest(key, msg, name) == expected, (len(key), n)
                h = jhmac.new(key, msg[:n // 3], name)
                c = h.copy()
                h.update(msg[n // 3:])
                assert h.digest() == expected, (len(key), n)
                assert c.digest() == hmac.new(key, msg[:n // 3], name).digest()


def test_every_per_message_backend_is_checked():
    """The test above runs the portable kernels, and SHA-NI (SHA-1, SHA-256) and AVX2
    (SHA-512) where this CPU has them."""
    backends = {b for name in MERKLE_DAMGARD for _, b in
                (p.values for p in _per_message_backends(name))}
    assert "portable" in backends
    if _cpu.usable("sha", "sha_ni"):
        assert "sha_ni" in backends


def test_subclass_as_stdlib():
    # a subclass is made, updated and copied as a subclass of hmac.HMAC is (copy() keeps the
    # type), and its class attribute blocksize is the default for a digest without block_size;
    # on the hash objects' path hexdigest() is the digest object's own
    def subclass(base):
        class Sub(base):
            blocksize = 32
        return Sub

    class NoBlockSize:
        digest_size = 32

        def __init__(self, data=b""):
            self._h = hashlib.sha256(data)

        def update(self, data):
            self._h.update(data)

        def digest(self):
            return self._h.digest()

        def hexdigest(self):                # HMAC.hexdigest() is the outer hash's
            return self._h.hexdigest().upper()

        def copy(self):
            other = NoBlockSize()
            other._h = self._h.copy()
            return other

    for digestmod in ("sha256", "sha3_256", NoBlockSize):
        with pytest.warns(RuntimeWarning) if digestmod is NoBlockSize else nullcontext():
            ours = subclass(jhmac.HMAC)(b"key", b"msg", digestmod)
        with pytest.warns(RuntimeWarning) if digestmod is NoBlockSize else nullcontext():
            theirs = subclass(hmac.HMAC)(b"key", b"msg", digestmod)
        ours_copy, theirs_copy = ours.copy(), theirs.copy()
        assert type(ours_copy) is type(ours)
        ours_copy.update(b"more")
        theirs_copy.update(b"more")
        assert ours.block_size == theirs.block_size
        assert ours.hexdigest() == theirs.hexdigest()
        assert ours_copy.hexdigest() == theirs_copy.hexdigest()


@pytest.mark.parametrize("name", HMAC_ALGORITHMS)
def test_both_starts_as_stdlib(name):
    # _init_old (two hash objects) for every algorithm, _init_hmac (the keyed kernels) where
    # there are keyed kernels; the standard library's suite calls both by these names
    expected = hmac.new(b"k" * 70, b"data", name).hexdigest()
    old = jhmac.HMAC.__new__(jhmac.HMAC)
    old._init_old(b"k" * 70, b"data", name)
    assert old.hexdigest() == expected and old.name == f"hmac-{name}"
    fast = jhmac.HMAC.__new__(jhmac.HMAC)
    try:
        fast._init_hmac(b"k" * 70, b"data", name)
    except ValueError:
        assert jitdigest.engine.keyed.entry(jitdigest.base.algorithms.SPECS[name], "hmac_states") is None
    else:
        assert fast.hexdigest() == expected and fast.copy().hexdigest() == expected


@pytest.mark.parametrize("name", ["md5", "sha1", "sha256", "sha512"])
def test_an_object_not_started_yet_as_stdlib(name):
    # made with a bytes message (or none), an object keeps the key and the message until it
    # is updated: a bytearray key changed afterwards must not show, nor must a copy's updates
    key = bytearray(b"k" * 70)
    for msg in (None, b"", b"msg" * 50):
        h = jhmac.new(key, msg, name)
        key[:3] = b"xyz"
        ref = hmac.new(b"k" * 70, msg, name)
        c = h.copy()
        c.update(b"more")
        assert (h.name, h.digest_size, h.block_size) == (ref.name, ref.digest_size,
                                                         ref.block_size)
        assert h.digest() == ref.digest() and h.hexdigest() == ref.hexdigest()
        assert c.digest() == hmac.new(b"k" * 70, (msg or b"") + b"more", name).digest()
        h.update(b"tail")
        ref.update(b"tail")
        assert h.digest() == ref.digest()
        key[:3] = b"kkk"


def test_threads_starting_one_object_together():
    # eight threads update one object that has not started its inner hash: it starts once
    # and every update is in the digest
    for trial in range(30):
        h = jhmac.new(b"key", b"start", "sha256")
        barrier = threading.Barrier(8)
        digests = []

        def work():
            barrier.wait()
            h.update(b"chunk")
            digests.append(h.digest())

        threads = [threading.Thread(target=work) for _ in range(8)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        assert h.digest() == hmac.new(b"key", b"start" + b"chunk" * 8, "sha256").digest()
        possible = {hmac.new(b"key", b"start" + b"chunk" * i, "sha256").digest()
                    for i in range(1, 9)}
        assert len(digests) == 8 and set(digests) <= possible
