"""Fuzz cases for the batch API, run by tests/test_fuzz.py in child processes (a crash is then a
signal death the parent sees, not a dead test run).

    python tests/fuzz_batch.py EXAMPLES SEED LAST_CASE_FILE

Hypothesis draws random layouts, dtypes, offsets (int64 extremes included), subclasses with
lying ``len()``/``shape``, zero-width shapes, strided views and ``out=`` arrays (wrong, read-only,
lying, overlapping the input) for ``hash_many``, ``hmac_many``, ``uuid3_many``/``uuid5_many`` and
``hexdigests``. Every case must give hashlib's digest (the uuid module's rule, Python's hex)
for every row, or raise TypeError/ValueError/BufferError where the model below says the input
is bad. The model is written from the documented contract and hashlib, never from jitdigest's
output. Before each case its description goes to LAST_CASE_FILE, for the parent to show if
the child dies. Prints ``cases: N`` at the end.
"""
import hashlib
import hmac
import sys
import uuid

import numpy as np
from hypothesis import HealthCheck, Phase, given, seed, settings
from hypothesis import strategies as st

import jitdigest

NAMES = ["md5", "sha1", "sha256", "sha512", "sha3_256", "shake_128", "blake2s"]
HMAC_NAMES = ["md5", "sha1", "sha256", "sha512", "sha3_256", "blake2s"]   # one per input
SHAKE_LENGTH = 24
ERRORS = (TypeError, ValueError, BufferError)
HUGE = (ValueError, MemoryError)      # for 2**40 or more rows: numpy cannot allocate the output
INT64_MIN, INT64_MAX = -2 ** 63, 2 ** 63 - 1


class LyingBytes(bytes):
    def __len__(self):
        return 2 ** 62


class LyingBytearray(bytearray):
    def __len__(self):
        return 1


class LyingShape(np.ndarray):
    """An array whose Python-level shape claims 1000 more rows than it has."""
    @property
    def shape(self):
        real = np.ndarray.view(self, np.ndarray).shape
        return (real[0] + 1000,) + real[1:] if real else real

    def __repr__(self):
        return "LyingShape:" + repr(true_array(self))


def digest(name, data):
    h = hashlib.new(name, data)
    return h.digest(SHAKE_LENGTH) if name.startswith("shake") else h.digest()


def outlen(name):
    return SHAKE_LENGTH if name.startswith("shake") else hashlib.new(name).digest_size


def true_array(arr):
    """numpy's own (C-level) view of an array, whatever a subclass claims."""
    return np.ndarray.view(arr, np.ndarray)


# --- strategies ------------------------------------------------------------------------------

blobs = st.binary(max_size=300)
dtypes = st.sampled_from([np.uint8, np.uint8, np.uint8, np.int8, np.uint16, np.int32,
                          np.float64])


@st.composite
def shaped_array(draw, ndim=None):
    """An array of random dtype and shape (zero-width ones too), maybe strided, transposed or a
    subclass lying about its shape."""
    dtype = np.dtype(draw(dtypes))
    ndim = draw(st.sampled_from([1, 2, 2, 3])) if ndim is None else ndim
    shape = [draw(st.integers(0, 12)) for _ in range(ndim)]
    if 0 in shape and draw(st.booleans()):
        shape[draw(st.integers(0, ndim - 1))] = draw(st.sampled_from([2 ** 40, 2 ** 59][:4 - ndim]))
        if 0 not in shape:
            shape[-1] = 0
    size = int(np.prod(shape, dtype=object))
    raw = draw(st.binary(min_size=size * dtype.itemsize, max_size=size * dtype.itemsize)) \
        if size < 10_000 else b""
    arr = np.frombuffer(raw, dtype).reshape(shape) if size < 10_000 else np.empty(shape, dtype)
    arr = arr.copy()
    form = draw(st.sampled_from(["c", "c", "f", "strided", "transposed", "liar", "readonly"]))
    if form == "f":
        arr = np.asfortranarray(arr)
    elif form == "strided" and arr.shape[-1] > 1:
        arr = arr[..., ::2]
    elif form == "transposed":
        arr = arr.T
    elif form == "liar":
        arr = arr.view(LyingShape)
    elif form == "readonly":
        arr.setflags(write=False)
    return arr


@st.composite
def message_item(draw):
    data = draw(blobs)
    kind = draw(st.sampled_from(["bytes"] * 4 + ["bytearray", "memoryview", "strided_mv",
                                                   "array", "lying_bytes", "lying_bytearray",
                                                   "str", "int"]))
    if kind == "bytes":
        return data
    if kind == "bytearray":
        return bytearray(data)
    if kind == "memoryview":
        return memoryview(data)
    if kind == "strided_mv":
        return memoryview(data)[::draw(st.integers(1, 3))]
    if kind == "array":
        return draw(shaped_array())
    if kind == "lying_bytes":
        return LyingBytes(data)
    if kind == "lying_bytearray":
        return LyingBytearray(data)
    if kind == "str":
        return data.decode("latin-1")
    return len(data)


offset_value = st.one_of(st.integers(0, 400), st.integers(INT64_MIN, INT64_MAX),
                         st.sampled_from([INT64_MIN, INT64_MIN + 1, INT64_MAX, INT64_MAX - 1,
                                          -1, 2 ** 62, 2 ** 63, 2 ** 64 - 1]))


@st.composite
def offsets_for(draw, nvalues):
    """Offsets into ``nvalues`` bytes: mostly valid, else with random (extreme) entries."""
    n = draw(st.integers(0, 20))
    if draw(st.integers(0, 3)):
        off = sorted(draw(st.lists(st.integers(0, nvalues), min_size=n + 1, max_size=n + 1)))
        if draw(st.integers(0, 2)) == 0:
            off[draw(st.integers(0, n))] = draw(offset_value)
    else:
        off = draw(st.lists(offset_value, min_size=0, max_size=n + 1))
    form = draw(st.sampled_from(["list", "int64", "int32", "uint64", "uint8", "strided",
                                 "float", "2d"]))
    if form == "list":
        return off
    if form == "strided":
        wide = np.zeros(2 * len(off), object)
        wide[::2] = off
        try:
            return wide.astype(np.int64)[::2]
        except OverflowError:
            return off
    if form == "float":
        return np.array(off, np.float64)
    if form == "2d":
        return [off]
    dtype = np.dtype(form)
    info = np.iinfo(dtype)
    return np.array([min(max(v, info.min), info.max) for v in off], dtype)


# --- the model ----------------------------------------------------------------------------------

class Bad(Exception):
    """The model says the input is invalid: one of these exception types must be raised."""

    def __init__(self, *types):
        super().__init__(types)
        self.types = types


def model_offsets(offsets, nvalues):
    """The messages' (start, stop) pairs, or Bad."""
    arr = np.asarray(offsets) if not isinstance(offsets, np.ndarray) else offsets
    if arr.ndim != 1 or arr.shape[0] == 0:
        raise Bad(ValueError)
    if arr.dtype.kind not in "iu":
        raise Bad(TypeError)
    off = [int(v) for v in arr]
    if off[0] < 0 or any(b < a for a, b in zip(off, off[1:])) or off[-1] > nvalues:
        raise Bad(ValueError)
    return list(zip(off, off[1:]))


def model_values(values):
    if isinstance(values, np.ndarray):
        real = true_array(values)
        if real.ndim != 1:
            raise Bad(ValueError)
        if real.dtype != np.uint8:
            raise Bad(TypeError)
        if not real.flags.c_contiguous:
            raise Bad(ValueError)
        return real.tobytes()
    return bytes(values)


def model_item(item):
    """The bytes hashlib hashes for a list item, or Bad with hashlib's exception type."""
    try:
        hashlib.md5(item)
    except Exception as exc:          # noqa: BLE001 - the type is what the model keeps
        raise Bad(type(exc)) from None
    return memoryview(item).tobytes()


def model_out(out, n, width):
    if out is None:
        return
    if not isinstance(out, np.ndarray):
        raise Bad(TypeError)
    real = true_array(out)
    if real.dtype != np.uint8:
        raise Bad(TypeError)
    if real.shape != (n, width) or not real.flags.c_contiguous or not real.flags.writeable:
        raise Bad(ValueError)


# --- one case ----------------------------------------------------------------------------------

OUT_KINDS = ["none"] * 4 + ["good", "shape", "dtype", "fortran", "readonly", "liar", "overlap",
                            "list"]


def make_out(kind, where, n, width, base):
    """An ``out=`` argument of the drawn kind for n rows of ``width`` bytes; "overlap" carves it
    out of the input's own memory (at fraction ``where`` of it) when that is large enough."""
    if kind == "none":
        return None
    if kind == "overlap" and base is not None and base.nbytes >= n * width and n * width:
        start = int(where * (base.nbytes - n * width))
        flat = base.reshape(-1).view(np.uint8)
        return flat[start:start + n * width].reshape(n, width)
    if kind == "shape":
        return np.zeros((n + (1 if where < 0.5 or n == 0 else -1), width), np.uint8)
    if kind == "dtype":
        return np.zeros((n, width), np.int8)
    if kind == "fortran":
        return np.zeros((n, width), np.uint8, order="F")
    if kind == "readonly":
        out = np.zeros((n, width), np.uint8)
        out.setflags(write=False)
        return out
    if kind == "liar":
        return np.zeros((n, width), np.uint8).view(LyingShape)
    if kind == "list":
        return [[0] * width] * n
    return np.zeros((n, width), np.uint8)


@st.composite
def hash_many_case(draw):
    """One input layout, hashed with every algorithm of NAMES (one checked call each)."""
    layout = draw(st.sampled_from(["rows", "values", "list", "list", "object", "bytes"]))
    if layout == "rows":
        args = (draw(shaped_array(ndim=draw(st.sampled_from([2, 2, 2, 1, 3])))),)
    elif layout == "values":
        values = draw(st.one_of(shaped_array(ndim=1), blobs, blobs.map(bytearray)))
        nvalues = memoryview(values).nbytes if not isinstance(values, np.ndarray) \
            else true_array(values).nbytes
        args = (values, draw(offsets_for(nvalues)))
    elif layout == "bytes":         # all exact bytes: the compiled join (kernels/_pyobjects.py)
        items = draw(st.lists(st.binary(max_size=200), max_size=40))
        form = draw(st.sampled_from([list, tuple, "object"]))
        args = (np.array(items + [None], object)[:-1] if form == "object" else form(items),)
    else:
        items = draw(st.lists(message_item(), max_size=20))
        args = (items if layout == "list" else np.array(items + [None], object)[:-1],)
    return {"api": "hash_many", "layout": layout, "args": args,
            "out": draw(st.sampled_from(OUT_KINDS)), "where": draw(st.floats(0, 1)),
            "n_guess": draw(st.integers(0, 4)),
            "hmac": draw(st.sampled_from(HMAC_NAMES)),
            "key": draw(st.sampled_from([b"", b"key", b"k" * 200]))}


def model_messages(layout, args):
    """The messages hashlib should hash, read now (an overlapping out= changes the input), or
    Bad."""
    if layout == "rows":
        real = true_array(args[0])
        if real.ndim != 2:
            raise Bad(ValueError, TypeError)
        if real.dtype != np.uint8:
            raise Bad(TypeError)
        if not real.flags.c_contiguous:
            raise Bad(ValueError)
        if real.shape[0] > 10 ** 6:
            raise Bad(*HUGE)
        return [r.tobytes() for r in real]
    if layout == "values":
        values = model_values(args[0])
        return [values[a:b] for a, b in model_offsets(args[1], len(values))]
    return [model_item(m) for m in args[0]]


def _prepared(case, width):
    """(expected messages or None, allowed exception types, out) for one call on ``case``'s
    input with output rows of ``width`` bytes, made just before the call."""
    layout, args = case["layout"], case["args"]
    base = None
    if isinstance(args[0], np.ndarray) and args[0].dtype != object:
        real = true_array(args[0])
        base = real if real.flags.c_contiguous else None
    bad, messages = (), None
    try:
        messages = model_messages(layout, args)
        n = len(messages)
    except Bad as exc:
        bad, n = exc.types, case["n_guess"]
    out = make_out(case["out"], case["where"], n, width, base)
    try:
        model_out(out, n, width)
    except Bad as exc:                   # either error may come first
        bad += exc.types
    return messages, bad, out


def hash_many_calls(case):
    """(name, arguments, out, expected rows or Bad types) for each algorithm, made just before
    its call."""
    for name in NAMES:
        messages, bad, out = _prepared(case, outlen(name))
        yield name, case["args"], out, bad or [digest(name, m) for m in messages]


def hmac_many_call(case):
    """(out, expected rows or Bad types) for hmac_many on the case's input under its key."""
    name, key = case["hmac"], case["key"]
    messages, bad, out = _prepared(case, hashlib.new(name).digest_size)
    return out, bad or [hmac.new(key, m, name).digest() for m in messages]


@st.composite
def uuid_case(draw):
    """Names for uuid3_many and uuid5_many, each as bytes and as strings (four checked calls);
    the model is RFC 4122's: the hash of namespace bytes + name (str as UTF-8)."""
    names = draw(st.lists(st.one_of(st.text(max_size=30), blobs, message_item()), max_size=12))
    case = {"api": "uuid", "names": names, "want": {}, "bad": {3: (), 5: ()}}
    ns = uuid.NAMESPACE_DNS
    for version, ctor in ((3, hashlib.md5), (5, hashlib.sha1)):
        want = []
        try:
            for name in names:
                h = ctor(ns.bytes)
                if isinstance(name, str):
                    try:
                        name = name.encode("utf-8")
                    except UnicodeEncodeError:
                        raise Bad(ValueError) from None
                try:
                    h.update(name)
                except Exception as exc:     # noqa: BLE001 - hashlib's type is the model's
                    raise Bad(type(exc)) from None
                want.append(uuid.UUID(bytes=h.digest()[:16], version=version))
        except Bad as bad:
            case["bad"][version] = bad.types
        case["want"][version] = want
    return case


@st.composite
def hex_case(draw):
    arr = draw(st.one_of(shaped_array(), st.lists(st.binary(min_size=4, max_size=4))))
    case = {"api": "hexdigests", "arr": arr}
    if not isinstance(arr, np.ndarray):
        case["bad"] = (TypeError,)
        return case
    real = true_array(arr)
    if real.dtype != np.uint8:
        case["bad"] = (TypeError,)
    elif real.ndim != 2:
        case["bad"] = (ValueError,)
    elif real.shape[0] > 10 ** 6 or 8 * real.shape[1] > 2 ** 31 - 1:  # numpy's str size limit
        case["bad"] = HUGE
    else:
        case["want"] = [bytes(r).hex() for r in real]
    return case


def call_api(case):
    """Every (call, expected) pair of a case: expected is the rows, or a tuple of the exception
    types the model allows."""
    api = case["api"]
    if api == "hash_many":
        for name, args, out, want in hash_many_calls(case):
            length = SHAKE_LENGTH if name.startswith("shake") else None

            def call(name=name, args=args, out=out, length=length):
                got = jitdigest.hash_many(name, *args, out=out, length=length)
                if out is not None:
                    assert got is out, "out= not returned"
                return [bytes(r) for r in true_array(got)]
            yield call, want
        out, want = hmac_many_call(case)

        def keyed(out=out):
            got = jitdigest.hmac_many(case["hmac"], case["key"], *case["args"], out=out)
            if out is not None:
                assert got is out, "out= not returned"
            return [bytes(r) for r in true_array(got)]
        yield keyed, want
    elif api == "hexdigests":
        yield (lambda: list(jitdigest.hexdigests(case["arr"]))), case.get("bad") or case["want"]
    else:
        for many, version in ((jitdigest.uuid3_many, 3), (jitdigest.uuid5_many, 5)):
            want = case["bad"][version] or case["want"][version]
            for strings in (False, True):
                def call(many=many, strings=strings):
                    got = many(uuid.NAMESPACE_DNS, case["names"], as_strings=strings)
                    if strings:
                        return [uuid.UUID(s) for s in got]
                    return [uuid.UUID(bytes=bytes(r)) for r in got]
                yield call, want


def check(case, count):
    for call, want in call_api(case):
        try:
            _check(call, want)
        except AssertionError as exc:
            raise AssertionError(f"{exc} in {case!r}"[:3000]) from exc
        count[0] += 1


def _check(call, want):
    try:
        got = call()
    except ERRORS + (MemoryError,) as exc:
        if not isinstance(want, tuple):
            raise AssertionError(f"valid input raised {exc!r}") from exc
        assert isinstance(exc, want), f"raised {exc!r}, model says {want}"
        return
    assert not isinstance(want, tuple), f"invalid input ({want}) gave a result"
    assert got == want, "wrong rows: " + str(
        [i for i, (a, b) in enumerate(zip(got, want)) if a != b] or "row count")


def describe(obj):
    """A short description of a case (arrays by type, shape, dtype and strides; repr() of a
    big array costs more than its checks)."""
    if isinstance(obj, np.ndarray):
        real = true_array(obj)
        return (f"{type(obj).__name__}(shape={real.shape}, dtype={real.dtype}, "
                f"strides={real.strides}, writeable={real.flags.writeable}, "
                f"head={real.reshape(-1)[:8].tolist() if real.ndim and real.size else []})")
    if isinstance(obj, dict):
        return "{" + ", ".join(f"{k!r}: {describe(v)}" for k, v in obj.items()) + "}"
    if isinstance(obj, (list, tuple)):
        return type(obj).__name__ + "[" + ", ".join(map(describe, obj)) + "]"
    if isinstance(obj, memoryview):
        return f"memoryview({obj.obj!r:.60}, strides={obj.strides})"
    return f"{type(obj).__name__}:{obj!r:.80}"


def main():
    examples, run_seed, last_case = int(sys.argv[1]), int(sys.argv[2]), sys.argv[3]
    count = [0]
    log = open(last_case, "w")

    @seed(run_seed)
    @settings(max_examples=examples, deadline=None, database=None, derandomize=False,
              phases=[Phase.generate, Phase.shrink], suppress_health_check=list(HealthCheck))
    @given(st.one_of(hash_many_case(), hash_many_case(), uuid_case(), hex_case()))
    def fuzz(case):
        log.seek(0)
        log.write(describe(case)[:4000].ljust(4000))
        log.flush()
        check(case, count)

    fuzz()
    print("cases:", count[0])


if __name__ == "__main__":
    main()
