"""hash_many on text and fixed-width bytes: pandas string Series and pyarrow string arrays are
hashed as UTF-8, Python str elsewhere keeps hashlib's TypeError, nulls raise ValueError naming
the first null row, numpy ``S`` arrays are hashed item by item as numpy reads them; and
``hex=True``, whose peak memory is counted in bytes. Expected values come from hashlib."""
import hashlib
import tracemalloc

import numpy as np
import pytest

import jitdigest

pd = pytest.importorskip("pandas")
pa = pytest.importorskip("pyarrow")

WORDS = ["", "a", "bc", "h\u00e9llo w\u00f6rld", "\u6f22\u5b57" * 40, "\U0001F600 emoji",
         "x" * 300, "tab\tand\nnewline", "\u00ff" * 64]
NAMES = sorted(jitdigest.algorithms_guaranteed)
PANDAS_DTYPES = ["str", "string[python]", "string[pyarrow]"]


def _length(name):
    return {"length": 21} if name.startswith("shake") else {}


def _want(name, messages):
    kw = _length(name)
    return [hashlib.new(name, m).digest(*kw.values()) for m in messages]


def _rows(digests):
    return [bytes(r) for r in digests]


def _arrow_types():
    types = [pa.string(), pa.large_string()]
    if hasattr(pa, "string_view"):
        types.append(pa.string_view())
    return types


@pytest.mark.parametrize("name", NAMES)
def test_pandas_and_arrow_text_is_utf8(name):
    want = _want(name, [w.encode() for w in WORDS])
    kw = _length(name)
    for dtype in PANDAS_DTYPES:
        series = pd.Series(WORDS, dtype=dtype)
        assert _rows(jitdigest.hash_many(name, series, **kw)) == want, dtype
    for typ in _arrow_types():
        arr = pa.array(WORDS, pa.string()).cast(typ)
        assert _rows(jitdigest.hash_many(name, arr, **kw)) == want, typ


def test_other_pandas_text_forms():
    want = _want("sha256", [w.encode() for w in WORDS])
    assert _rows(jitdigest.hash_many("sha256", pd.Series(WORDS))) == want   # default dtype
    assert _rows(jitdigest.hash_many("sha256", pd.Index(WORDS, dtype="string"))) == want
    assert _rows(jitdigest.hash_many("sha256", pd.array(WORDS, dtype="string"))) == want
    arrow = pd.Series(WORDS, dtype=pd.ArrowDtype(pa.large_string()))
    assert _rows(jitdigest.hash_many("sha256", arrow)) == want
    # a slice of a Series: its own rows only
    assert _rows(jitdigest.hash_many("sha256", pd.Series(WORDS, dtype="str")[2:5])) == want[2:5]
    data = [w.encode() + b"\x00" for w in WORDS]
    binary = pd.Series(data, dtype=pd.ArrowDtype(pa.binary()))
    assert _rows(jitdigest.hash_many("sha256", binary)) == _want("sha256", data)
    assert jitdigest.hash_many("md5", pd.Series([], dtype="str")).shape == (0, 16)
    with pytest.raises(TypeError, match="offsets go with"):
        jitdigest.hash_many("md5", pd.Series(["a"], dtype="str"), [0, 1])


@pytest.mark.parametrize("messages", [
    ["a", "bc"],
    ("a",),
    np.array(["a", "bc"], dtype=object),
    np.array(["a", "bc"]),                                 # a numpy U array
], ids=["list", "tuple", "object-array", "U-array"])
def test_python_str_keeps_hashlibs_type_error(messages):
    with pytest.raises(TypeError, match="Strings must be encoded before hashing"):
        jitdigest.hash_many("md5", messages)


def test_object_series_of_str_keeps_hashlibs_type_error():
    with pytest.raises(TypeError, match="Strings must be encoded before hashing"):
        jitdigest.hash_many("md5", pd.Series(["a", "bc"], dtype=object))


@pytest.mark.parametrize("dtype", PANDAS_DTYPES)
@pytest.mark.parametrize("null", [None, float("nan"), pd.NA], ids=["None", "NaN", "NA"])
def test_nulls_in_pandas_text(dtype, null):
    series = pd.Series(["a", "b", null, "c", null], dtype=dtype)
    with pytest.raises(ValueError, match=r"2 null entries \(the first at row 2\)"):
        jitdigest.hash_many("sha256", series)
    assert _rows(jitdigest.hash_many("sha256", series.dropna())) == \
        _want("sha256", [b"a", b"b", b"c"])


def test_nulls_in_arrow_text():
    for typ in _arrow_types() + [pa.binary()]:
        arr = pa.array(["a", None, "b"], pa.string()).cast(typ)
        with pytest.raises(ValueError, match=r"1 null entry \(the first at row 1\)"):
            jitdigest.hash_many("md5", arr)
    chunked = pa.chunked_array([["a", "b"], [], ["c", None, None]])
    with pytest.raises(ValueError, match=r"2 null entries \(the first at row 3\)"):
        jitdigest.hash_many("md5", chunked)
    sliced = pa.array([None, "a", "b"])[1:]                 # the null is outside the slice
    assert _rows(jitdigest.hash_many("md5", sliced)) == _want("md5", [b"a", b"b"])


def test_fixed_width_bytes_as_numpy_reads_them():
    items = [b"a", b"bc", b"a\x00", b"\x00b", b"", b"abc", b"a\x00b", b"\x00\x00\x00"]
    arr = np.array(items, dtype="S3")
    # numpy strips trailing NUL bytes: the messages are arr[i], arr.tolist()
    assert arr.tolist()[2] == b"a" and arr.tolist()[7] == b""
    for name in ("md5", "sha256", "blake2b"):
        assert _rows(jitdigest.hash_many(name, arr)) == _want(name, arr.tolist())
    strided = arr[::3]
    assert _rows(jitdigest.hash_many("sha1", strided)) == _want("sha1", strided.tolist())
    full = np.array([b"abcd", b"efgh", b"ij\x00k"], dtype="S4")          # every item 4 bytes
    assert _rows(jitdigest.hash_many("sha1", full)) == _want("sha1", full.tolist())
    assert jitdigest.hash_many("md5", np.array([], dtype="S5")).shape == (0, 16)
    # all the itemsize bytes, trailing NULs included: the 2-D uint8 view
    grid = arr.view(np.uint8).reshape(len(items), 3)
    assert _rows(jitdigest.hash_many("md5", grid)) == \
        _want("md5", [i.ljust(3, b"\x00") for i in items])


def test_other_1d_arrays_say_what_to_pass():
    with pytest.raises(TypeError, match="needs offsets"):
        jitdigest.hash_many("md5", np.zeros(4, np.uint8))
    with pytest.raises(TypeError, match="dtype int32 cannot be hashed"):
        jitdigest.hash_many("md5", np.zeros(4, np.int32))


@pytest.mark.parametrize("name", NAMES)
def test_hex(name):
    messages = [bytes(range(i % 256)) * (1 + i // 256) for i in range(700)]
    kw = _length(name)
    hx = jitdigest.hash_many(name, messages, hex=True, **kw)
    want = [hashlib.new(name, m).hexdigest(*kw.values()) for m in messages]
    size = len(want[0]) // 2
    assert isinstance(hx, np.ndarray) and hx.dtype == np.dtype(f"S{2 * size}")
    assert hx.shape == (700,) and hx.nbytes == 700 * 2 * size
    assert [h.decode() for h in hx] == want
    digests = jitdigest.hash_many(name, messages, **kw)
    assert jitdigest.hexdigests(digests, as_bytes=True).tolist() == [w.encode() for w in want]
    assert jitdigest.hexdigests(digests).tolist() == want         # str, as before


def test_hex_edges():
    assert jitdigest.hash_many("md5", [], hex=True).shape == (0,)
    assert jitdigest.hash_many("shake_128", [b"a"], length=0, hex=True).tolist() == [b""]
    text = pd.Series(WORDS, dtype="str")
    assert [h.decode() for h in jitdigest.hash_many("sha1", text, hex=True)] == \
        [hashlib.sha1(w.encode()).hexdigest() for w in WORDS]
    with pytest.raises(TypeError, match="hex=True"):
        jitdigest.hash_many("md5", [b"a"], hex=True, out=np.empty((1, 16), np.uint8))
    assert jitdigest.hexdigests(np.zeros((2, 0), np.uint8), as_bytes=True).tolist() == \
        [b"", b""]


def test_hex_peak_memory_is_about_the_text():
    """1 M SHA-256 rows: the hex text is 64 MB; the call's traced peak stays under 1.5 times
    that (the digests are hashed into the text's own memory and made hex in place)."""
    n = 1_000_000
    rows = np.arange(n * 8, dtype=np.uint16).view(np.uint8).reshape(n, 16)
    first = jitdigest.hash_many("sha256", rows, hex=True)      # kernels compiled or loaded
    text = n * 64
    assert first.nbytes == text
    assert first[12345].decode() == hashlib.sha256(rows[12345].tobytes()).hexdigest()
    del first
    tracemalloc.start()
    try:
        base = tracemalloc.get_traced_memory()[0]
        tracemalloc.reset_peak()
        hx = jitdigest.hash_many("sha256", rows, hex=True)
        peak = tracemalloc.get_traced_memory()[1] - base
    finally:
        tracemalloc.stop()
    assert hx.nbytes == text
    assert text <= peak < 1.5 * text, peak
    assert hx[-1].decode() == hashlib.sha256(rows[-1].tobytes()).hexdigest()
