"""hashlib's type contract: the algorithm sets, hash types that cannot be instantiated
directly and cannot be changed. Every expectation is hashlib's own behaviour."""
import hashlib

import pytest

import jitdigest

CONSTRUCTED = sorted(jitdigest.algorithms_available)


def test_algorithm_sets():
    assert jitdigest.algorithms_guaranteed == hashlib.algorithms_guaranteed
    assert jitdigest.algorithms_available - jitdigest.algorithms_guaranteed == {
        "sha512_224", "sha512_256"}
    assert jitdigest.algorithms_available & hashlib.algorithms_available == \
        jitdigest.algorithms_available


def _error(fn):
    with pytest.raises(Exception) as info:
        fn()
    return info.type, str(info.value)


def _type_name(t):
    return f"{t.__module__}.{t.__qualname__}"


def _same_error(ours, theirs, our_type, their_type):
    """Our error equals hashlib's with our type's name in place of hashlib's."""
    assert ours[0] is theirs[0]
    assert ours[1] == theirs[1].replace(_type_name(their_type), _type_name(our_type))


@pytest.mark.parametrize("name", CONSTRUCTED)
def test_type_not_instantiable(name):
    ours, theirs = type(jitdigest.new(name)), type(hashlib.new(name))
    if name.startswith("blake2"):           # hashlib's blake2 types are its constructors
        assert ours is getattr(jitdigest, name)
        assert type(ours()) is ours
        return
    for args in ((), (b"abc",)):
        _same_error(_error(lambda: ours(*args)), _error(lambda: theirs(*args)), ours, theirs)
    assert _error(lambda: ours())[1].startswith("cannot create '")


@pytest.mark.parametrize("name", CONSTRUCTED)
@pytest.mark.parametrize("attr", ["x", "digest", "name", "__doc__"])
def test_type_immutable(name, attr):
    ours, theirs = type(jitdigest.new(name)), type(hashlib.new(name))
    _same_error(_error(lambda: setattr(ours, attr, 1)), _error(lambda: setattr(theirs, attr, 1)),
                ours, theirs)
    if attr != "x":
        _same_error(_error(lambda: delattr(ours, attr)), _error(lambda: delattr(theirs, attr)),
                    ours, theirs)
    assert _error(lambda: setattr(ours, attr, 1))[0] is TypeError


def test_objects_still_work():
    h = jitdigest.sha256(bytearray(b"abc"))      # the non-bytes constructor path
    h.update(memoryview(b"def"))
    assert h.digest() == hashlib.sha256(b"abcdef").digest()
    assert jitdigest.new("sha512_256", b"x").digest() == hashlib.new("sha512_256", b"x").digest()
