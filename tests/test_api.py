"""hashlib's contract: names, aliases, constructors, attributes, buffers and errors."""
import array
import hashlib
import hmac as std_hmac
import io
import pickle

import numpy as np
import pytest

import jitdigest
import jitdigest.hmac
from conftest import FIXED, outcome

CONSTRUCTORS = ["md5", "sha1", "sha224", "sha256", "sha384", "sha512",
                "sha3_224", "sha3_256", "sha3_384", "sha3_512", "shake_128", "shake_256"]


def test_algorithm_sets_cover_hashlib():
    assert jitdigest.algorithms_guaranteed >= hashlib.algorithms_guaranteed
    assert isinstance(jitdigest.algorithms_guaranteed, frozenset)
    assert isinstance(jitdigest.algorithms_available, frozenset)
    assert jitdigest.algorithms_available >= jitdigest.algorithms_guaranteed


NAME_CANDIDATES = sorted({v for n in FIXED + [
    "sha-1", "sha-224", "sha2-224", "sha-256", "sha2-256", "sha-384", "sha2-384", "sha-512",
    "sha2-512", "sha512-224", "sha-512/224", "sha2-512/224", "sha512-256", "sha-512/256",
    "sha2-512/256", "sha3-224", "sha3-256", "sha3-384", "sha3-512", "shake128", "shake-128",
    "shake256", "shake-256", "ssl3-md5", "ssl3-sha1", "sha512/224", "md-5", "sha256 ", "",
    "whirlpool"] for v in (n, n.upper(), n.capitalize())})


@pytest.mark.parametrize("name", NAME_CANDIDATES)
def test_names_resolve_as_hashlib(name):
    try:
        expected = hashlib.new(name).name
    except ValueError:
        with pytest.raises(ValueError, match="unsupported hash type"):
            jitdigest.new(name)
        return
    assert jitdigest.new(name).name == expected


def test_every_public_name_of_hashlib():
    """A drop-in: every public name of this Python's hashlib (scrypt and file_digest where it
    has them) is on jitdigest too, callables as callables."""
    names = [n for n in dir(hashlib) if not n.startswith("_")]
    assert len(names) >= 19 and "pbkdf2_hmac" in names          # 19 on 3.10, 20 from 3.11
    assert [n for n in names if not hasattr(jitdigest, n)] == []
    assert [n for n in names if callable(getattr(hashlib, n)) != callable(getattr(jitdigest, n))] == []


@pytest.mark.parametrize("name", FIXED)
def test_attributes_match_hashlib(name):
    ours, ref = jitdigest.new(name), hashlib.new(name)
    assert (ours.name, ours.digest_size, ours.block_size) == (ref.name, ref.digest_size, ref.block_size)


@pytest.mark.parametrize("name", CONSTRUCTORS)
def test_constructors(name):
    ctor, ref = getattr(jitdigest, name), getattr(hashlib, name)
    h = ctor(b"abc", usedforsecurity=False)
    assert h.name == ref().name
    size = 32 if name.startswith("shake") else None
    args = (size,) if size else ()
    assert h.digest(*args) == ref(b"abc").digest(*args)
    assert ctor().hexdigest(*args) == ref().hexdigest(*args)


@pytest.mark.parametrize("keyword", ["data", "string"])
def test_data_keyword_as_running_hashlib(keyword):
    try:
        expected = hashlib.sha256(**{keyword: b"abc"}).digest()
    except TypeError:
        with pytest.raises(TypeError):
            jitdigest.sha256(**{keyword: b"abc"})
    else:
        assert jitdigest.sha256(**{keyword: b"abc"}).digest() == expected
    with pytest.raises(TypeError):
        jitdigest.sha256(b"abc", **{keyword: b"abc"})


@pytest.mark.parametrize("name", ["md5", "sha256", "sha3_256", "shake_128", "blake2b"])
def test_bad_keyword_message_as_running_hashlib(name):
    # hashlib's wording changed in 3.13; its C functions are named openssl_<name>()
    with pytest.raises(TypeError) as ref_exc:
        getattr(hashlib, name)(b"", foo=1)
    with pytest.raises(TypeError) as our_exc:
        getattr(jitdigest, name)(b"", foo=1)
    assert str(our_exc.value) == str(ref_exc.value).replace(f"openssl_{name}()", f"{name}()")
    with pytest.raises(TypeError) as ref_exc:
        hashlib.new(name, b"", foo=1)
    with pytest.raises(TypeError) as our_exc:
        jitdigest.new(name, b"", foo=1)
    assert str(our_exc.value) == str(ref_exc.value)


BUFFERS = [
    b"hello", bytearray(b"hello"), memoryview(b"hello"), array.array("i", [1, 2, 3]),
    np.arange(10, dtype=np.int32), np.arange(12, dtype=np.float64).reshape(3, 4),
    np.zeros(0, np.uint8), np.arange(6, dtype=">u2"), np.array(5, dtype=np.int64),
]


@pytest.mark.parametrize("buf", BUFFERS, ids=lambda b: type(b).__name__)
@pytest.mark.parametrize("name", ["md5", "sha256", "sha512", "sha3_256"])
def test_any_contiguous_buffer_is_its_raw_bytes(name, buf):
    assert jitdigest.new(name, buf).digest() == hashlib.new(name, buf).digest()
    h = jitdigest.new(name)
    h.update(buf)
    assert h.digest() == hashlib.new(name, bytes(memoryview(buf))).digest()


def test_read_only_numpy_array():
    arr = np.arange(100, dtype=np.uint8)
    arr.setflags(write=False)
    assert jitdigest.sha256(arr).digest() == hashlib.sha256(arr.tobytes()).digest()


@pytest.mark.parametrize("bad, error", [
    ("text", TypeError), (None, TypeError), (1, TypeError), (1.5, TypeError),
    (memoryview(b"abcd")[::2], BufferError), (np.arange(10)[::2], ValueError),
    (np.zeros((3, 4)).T, ValueError),
])
def test_errors_match_hashlib(bad, error):
    with pytest.raises(error) as ref_exc:
        hashlib.sha256(bad)
    with pytest.raises(error) as our_exc:
        jitdigest.sha256(bad)
    assert str(our_exc.value) == str(ref_exc.value)
    h = jitdigest.sha256()
    with pytest.raises(error):
        h.update(bad)


@pytest.mark.parametrize("name", sorted(hashlib.algorithms_guaranteed))
def test_update_takes_its_data_positionally_only(name):
    """hashlib's ``update(data, /)``: ``update(data=...)`` is a TypeError there and here."""
    with pytest.raises(TypeError):
        hashlib.new(name).update(data=b"x")
    h = jitdigest.new(name)
    with pytest.raises(TypeError):
        h.update(data=b"x")
    h.update(b"x")
    length = (8,) if name.startswith("shake") else ()
    assert h.hexdigest(*length) == hashlib.new(name, b"x").hexdigest(*length)


@pytest.mark.parametrize("name", sorted(hashlib.algorithms_guaranteed))
def test_public_attributes_and_usedforsecurity_as_hashlib(name):
    """The same public attributes as hashlib's object (no helper of the class showing), and
    ``usedforsecurity``'s truth value taken as hashlib takes it (an error from it raised)."""
    def public(obj):
        return {a for a in dir(obj) if not a.startswith("_")}
    assert public(jitdigest.new(name)) == public(hashlib.new(name))

    class Truth:
        def __bool__(self):
            raise ZeroDivisionError
    ctor = getattr(jitdigest, name)
    with pytest.raises(ZeroDivisionError):
        getattr(hashlib, name)(usedforsecurity=Truth())
    with pytest.raises(ZeroDivisionError):
        ctor(usedforsecurity=Truth())
    length = (8,) if name.startswith("shake") else ()
    assert ctor(b"abc", usedforsecurity=False).hexdigest(*length) == \
        hashlib.new(name, b"abc").hexdigest(*length)


def test_str_message():
    with pytest.raises(TypeError, match="Strings must be encoded before hashing"):
        jitdigest.md5("abc")


def test_names_only_hashlib_serves():
    """hashlib's names jitdigest has no kernels for (OpenSSL's own algorithms, OIDs): ``new``
    and ``file_digest`` give what hashlib gives, as hmac and pbkdf2_hmac already did."""
    import io
    names = sorted(hashlib.algorithms_available - jitdigest.algorithms_available)
    names += ["2.16.840.1.101.3.4.2.1"]          # SHA-256's OID, as OpenSSL spells it
    checked = 0
    for name in names:
        try:
            expected = hashlib.new(name, b"abc").hexdigest()
        except ValueError:
            continue                             # listed, but refused by this OpenSSL
        assert jitdigest.new(name, b"abc").hexdigest() == expected
        assert jitdigest.file_digest(io.BytesIO(b"abc"), name).hexdigest() == expected
        checked += 1
    assert checked >= 1


def test_unknown_name():
    with pytest.raises(ValueError, match="unsupported hash type"):
        jitdigest.new("sha-257")
    with pytest.raises(TypeError):
        jitdigest.new(256)


@pytest.mark.parametrize("name", FIXED)
def test_pickling_is_typeerror(name):
    with pytest.raises(TypeError):
        pickle.dumps(jitdigest.new(name, b"abc"))


def _objects():
    """(what, a jitdigest object, its standard library twin or None) for every kind of object
    the public API hands out."""
    import blake3 as package

    from jitdigest import hmac as jhmac
    from jitdigest.blake3 import blake3
    yield "blake2b", jitdigest.blake2b(b"x", key=b"k"), hashlib.blake2b(b"x", key=b"k")
    yield "blake2s", jitdigest.blake2s(b"x"), hashlib.blake2s(b"x")
    yield "shake_128", jitdigest.shake_128(b"x"), hashlib.shake_128(b"x")
    yield "streaming sha256", _streamed(jitdigest.sha256()), _streamed(hashlib.sha256())
    for digestmod in ("sha256", "md5", "sha3_256", "blake2b", hashlib.sha512):
        yield (f"hmac {digestmod}", jhmac.new(b"k", b"m", digestmod),
               std_hmac.new(b"k", b"m", digestmod))
        yield (f"hmac {digestmod}, updated", _streamed(jhmac.new(b"k", digestmod=digestmod)),
               _streamed(std_hmac.new(b"k", digestmod=digestmod)))
    yield "hmac subclass", _TaggedOurs(), _TaggedTheirs()
    yield "blake3", blake3(b"x"), package.blake3(b"x")
    yield "blake3 keyed", blake3(b"x", key=bytes(32)), package.blake3(b"x", key=bytes(32))
    yield ("blake3 derive_key", blake3(derive_key_context="c"),
           package.blake3(derive_key_context="c"))


class _TaggedOurs(jitdigest.hmac.HMAC):
    """An HMAC subclass whose objects carry an attribute of their own."""
    def __init__(self):
        super().__init__(b"k", b"m", "sha256")
        self.tag = "mine"


class _TaggedTheirs(std_hmac.HMAC):
    """The same, of the standard library's HMAC."""
    def __init__(self):
        super().__init__(b"k", b"m", "sha256")
        self.tag = "mine"


def _streamed(h):
    for chunk in (b"a" * 100, b"b" * 7):
        h.update(chunk)
    return h


@pytest.mark.parametrize("protocol", [0, 2, pickle.HIGHEST_PROTOCOL])
def test_every_object_refuses_pickling_with_a_typeerror(protocol):
    """``pickle.dumps`` of every jitdigest object raises ``TypeError``, as it does for the
    standard library's (and the ``blake3`` package's); ``copy.copy`` and ``copy.deepcopy``
    fail or work as they do for those."""
    import copy
    checked = 0
    for what, ours, theirs in _objects():
        if protocol >= 2:          # (protocol 0 "pickles" some of OpenSSL's hashlib objects)
            with pytest.raises(TypeError):
                pickle.dumps(theirs, protocol)
        with pytest.raises(TypeError, match="cannot pickle"):
            pickle.dumps(ours, protocol)
        for act in (copy.copy, copy.deepcopy):
            assert outcome(lambda: act(ours))[0] == outcome(lambda: act(theirs))[0], (what, act)
        if what.startswith("hmac"):             # a shallow copy of each, attributes and all
            assert copy.copy(ours).digest() == copy.copy(theirs).digest() == theirs.digest()
            assert getattr(copy.copy(ours), "tag", None) == getattr(theirs, "tag", None)
        checked += 1
    assert checked


def test_digest_does_not_finalise_and_copy_is_independent():
    h = jitdigest.sha256(b"a" * 100)
    first = h.digest()
    assert h.digest() == first
    c = h.copy()
    h.update(b"b")
    assert c.digest() == first
    assert h.digest() == hashlib.sha256(b"a" * 100 + b"b").digest()
    assert h.hexdigest() == h.digest().hex()


@pytest.mark.parametrize("name", FIXED)
def test_one_shot_digests_are_new_bytes_objects(name):
    """The one-shot kernel writes into a bytes object ``digest()`` has just made: each call
    gets its own, equal to hashlib's, and never one of CPython's shared short bytes (the
    digest sizes served so are 16 bytes or more; SHAKE and BLAKE2 choose theirs and go
    through a bytearray)."""
    shared = [bytes([i]) for i in range(256)] + [b""]
    before = [tuple(s) for s in shared]
    args = (1,) if name.startswith("shake") else ()
    for data in (b"", b"abc", bytes(range(256)) * 5):
        h = jitdigest.new(name, data)
        first, second = h.digest(*args), h.digest(*args)
        assert first == second == hashlib.new(name, data).digest(*args)
        assert first is not second and type(first) is bytes
        if not args:
            assert type(h).digest is jitdigest._hashobj.Hash.digest
            assert h.digest_size >= 16
    assert [tuple(s) for s in shared] == before


def test_one_shot_output_of_a_chosen_size():
    """BLAKE2's digest_size and SHAKE's length: from 2 bytes the output is a new bytes object
    the kernel fills, below through a bytearray (0 and 1 byte: CPython's shared objects)."""
    shared = [bytes([i]) for i in range(256)] + [b""]
    before = [tuple(s) for s in shared]
    cases = 0
    for data in (b"", b"abc", bytes(range(256)) * 3):
        for size in (1, 2, 3, 16, 32, 64):
            for name in ("blake2b", "blake2s"):
                if size > hashlib.new(name).digest_size:
                    continue
                ours, ref = (getattr(m, name)(data, digest_size=size, key=b"k" * (size % 3))
                             for m in (jitdigest, hashlib))
                first, second = ours.digest(), ours.digest()
                assert first == second == ref.digest() and first is not second
                cases += 1
        for length in (0, 1, 2, 3, 64, 200):
            for name in ("shake_128", "shake_256"):
                ours, ref = jitdigest.new(name, data), hashlib.new(name, data)
                assert ours.digest(length) == ours.digest(length) == ref.digest(length)
                cases += 1
    assert cases == 3 * (11 + 12)
    assert [tuple(s) for s in shared] == before


@pytest.mark.parametrize("name", FIXED)
def test_prototype_copy_idiom(name):
    """hashlib's ``p = proto.copy(); p.update(data); p.digest()``: a copy of an object holding
    unhashed bytes shares them; later updates of any buffer type hash on from there."""
    size = 20 if name.startswith("shake") else None
    args = (size,) if size else ()
    proto, ref = jitdigest.new(name), hashlib.new(name)
    for data in (b"", b"abc", bytes(range(200)) * 3):
        p, r = proto.copy(), ref.copy()
        p.update(data)
        r.update(data)
        q, s = p.copy(), r.copy()
        assert p.digest(*args) == r.digest(*args)
        for more in (b"x" * 70, bytearray(b"yz"), np.arange(9, dtype=np.uint16)):
            q.update(more)
            s.update(more)
            assert q.digest(*args) == s.digest(*args)
        assert p.digest(*args) == r.digest(*args)      # the copy left p alone
    assert proto.digest(*args) == ref.digest(*args)


def test_shake_needs_a_length():
    h = jitdigest.shake_128(b"abc")
    assert h.digest_size == 0
    with pytest.raises(TypeError):
        h.digest()
    with pytest.raises(TypeError):
        h.hexdigest()
    with pytest.raises(ValueError):
        h.digest(-1)
    assert h.digest(0) == b""
    assert h.hexdigest(1000) == hashlib.shake_128(b"abc").hexdigest(1000)


@pytest.mark.parametrize("name", ["sha256", "md5", "sha3_512"])
def test_file_digest_as_hashlib(name, tmp_path):
    data = bytes(range(256)) * 3000
    path = tmp_path / "f.bin"
    path.write_bytes(data)
    expected = hashlib.new(name, data).digest()
    with open(path, "rb") as f:
        assert jitdigest.file_digest(f, name).digest() == expected
    with open(path, "rb") as f:
        assert jitdigest.file_digest(f, getattr(jitdigest, name)).digest() == expected
    assert jitdigest.file_digest(io.BytesIO(data), name).digest() == expected
    with open(path, "r") as f, pytest.raises(ValueError):
        jitdigest.file_digest(f, name)


def test_repr_names_the_algorithm():
    assert "sha256" in repr(jitdigest.sha256())
