"""The calls of tools/soak.py: one function per kind, ``call_KIND(rng)``, drawing everything from
``rng`` and checking each result against hashlib, hmac, uuid or the blake3 package (``check``).
Imported by soak.py after it sets JITDIGEST_CACHE_DIR."""
import hashlib
import hmac as std_hmac
import io
import os
import threading
import uuid

import blake3 as b3ref
import numpy as np

import jitdigest as jd
import jitdigest.blake3
import jitdigest.hmac

try:
    import pyarrow as pa
except ImportError:
    pa = None

ALGOS = sorted(jd.algorithms_guaranteed) + [
    n for n in ("sha512_224", "sha512_256") if n in hashlib.algorithms_available]
MACS = [n for n in ALGOS if not n.startswith("shake")]
SUM_ALGOS = ALGOS + ["blake3"]
BOUNDARIES = (55, 56, 63, 64, 65, 111, 112, 127, 128, 129, 1023, 1024, 1025)
MB = 1 << 20
NAMESPACES = (uuid.NAMESPACE_DNS, uuid.NAMESPACE_URL, uuid.NAMESPACE_OID, uuid.NAMESPACE_X500)

# kind -> weight in the workers' mix (soak.py runs forks, `sum` children and cache removals)
WEIGHTS = {"oneshot": 12, "stream": 8, "file": 3, "hash_many": 8, "uuid": 2, "hmac": 6,
           "hmac_many": 4, "pbkdf2": 3, "scrypt": 2, "blake3": 6, "blake3_many": 4,
           "shared": 2}
# warm-up before the timed period: (kind, calls); enough to reach each algorithm and layout
WARMUP = [(k, 3 * len(ALGOS)) for k in ("oneshot", "stream", "file")] + [
    ("hash_many", 10 * len(ALGOS)), ("uuid", 8), ("hmac", 6 * len(MACS)),
    ("hmac_many", 8 * len(MACS)), ("pbkdf2", 3 * len(MACS)), ("scrypt", 3), ("blake3", 30),
    ("blake3_many", 30), ("shared", 6), ("fork", 2), ("sum", 3), ("sum_sigint", 1)]

WORK = check = note = soak = None


def init(work, harness):
    global WORK, check, note, soak
    WORK, soak, check, note = work, harness, harness.check, harness.note


def count(event):
    soak.S.count(event, event=True)


def fail(kind, detail):
    soak.S.fail(kind, soak.current(), detail)


# -- random inputs ------------------------------------------------------------------------------

def size(rng, big=0.02, cap=4 * MB):
    r = rng.random()
    if r < 0.05:
        return 0
    if r < 0.40:
        return rng.choice(BOUNDARIES)
    if r < 0.65:
        return rng.randrange(300)
    if r < 1 - big:
        return rng.randrange(300, 70000)
    return rng.randrange(MB, cap)


def buf(rng, b):
    """b as a random kind of C-contiguous buffer holding the same bytes."""
    k = rng.randrange(8)
    if k == 1:
        return bytearray(b)
    if k == 2:
        return memoryview(b)
    if k == 3:
        return memoryview(bytearray(b"xy" + b + b"z"))[2:2 + len(b)]
    if k == 4:
        return np.frombuffer(b, np.uint8)
    if k >= 5:
        dt = np.dtype(rng.choice((np.uint16, np.int32, np.float64, np.uint64)))
        if len(b) % dt.itemsize == 0:
            a = np.frombuffer(bytearray(b), dt)
            return a.reshape(2, -1) if k == 7 and a.size % 2 == 0 else a
    return b


def text(rng, n):
    pick = (lambda: rng.randrange(32, 127), lambda: rng.randrange(0xA0, 0x800),
            lambda: rng.randrange(0x800, 0xD800), lambda: rng.randrange(0x10000, 0x110000))
    return "".join(chr(rng.choice(pick)()) for _ in range(n))


def blake2_params(rng, name):
    if not name.startswith("blake2") or rng.random() < 0.3:
        return {}
    big = name == "blake2b"
    p = {}
    if rng.random() < 0.5:
        p["digest_size"] = rng.randint(1, 64 if big else 32)
    for field, most, chance in (("key", 64, .4), ("salt", 16, .3), ("person", 16, .3)):
        if rng.random() < chance:
            p[field] = rng.randbytes(rng.randint(0, most if big else most // 2))
    return p


def out(h, length):
    """digest() and hexdigest() of a hashlib-style object (SHAKE: of length bytes)."""
    if h.name.startswith("shake"):
        return h.digest(length), h.hexdigest(length)
    return h.digest(), h.hexdigest()


def xof_length(rng):
    return rng.choice((0, 1, 16, 32, 64, 136, 168, rng.randrange(1, 600), rng.randrange(5000)))


def cuts(rng, total):
    """Random chunk boundaries of 0..total (zero-length chunks and block boundaries too)."""
    points = [rng.randrange(total + 1) for _ in range(rng.randint(0, 12))]
    points += [b for b in BOUNDARIES if b <= total and rng.random() < 0.2]
    points = sorted(points + [0, total])
    return list(zip(points, points[1:]))


def layout(rng, cap=4 * MB):
    """(messages, offsets, list of bytes, description) in one of hash_many's layouts."""
    n = rng.choice((0, 1, rng.randrange(2, 20), rng.randrange(20, 300), rng.randrange(300, 3000)))
    kinds = ["2d", "offsets", "list"] + (["arrow"] if pa is not None else [])
    kind = rng.choice(kinds)
    if kind == "2d":
        width = min(size(rng, big=0), cap // max(n, 1))
        raw = rng.randbytes(n * width)
        arr = np.frombuffer(bytearray(raw) if rng.random() < .5 else raw, np.uint8)
        arr = arr.reshape(n, width)
        return arr, None, [raw[i * width:(i + 1) * width] for i in range(n)], f"2d {n}x{width}"
    lens = [min(size(rng, big=0), cap // max(n, 1)) for _ in range(n)]
    if kind == "arrow" and rng.random() < 0.3:
        strs = [text(rng, ln // 3) for ln in lens]
        msgs = [s.encode() for s in strs]
        arr = pa.array(strs, type=rng.choice((pa.string(), pa.large_string())))
        return arr, None, msgs, f"arrow {arr.type} n={n}"
    msgs = [rng.randbytes(ln) for ln in lens]
    if kind == "offsets":
        pad = rng.randbytes(rng.choice((0, 0, 3, 64)))
        offs = np.cumsum([len(pad)] + lens, dtype=np.int64)
        values = pad + b"".join(msgs) + rng.randbytes(rng.choice((0, 5)))
        values = values if rng.random() < .3 else np.frombuffer(values, np.uint8)
        return values, (offs if rng.random() < .8 else offs.tolist()), msgs, f"offsets n={n}"
    if kind == "list":
        return [buf(rng, m) for m in msgs], None, msgs, f"list n={n}"
    extra = rng.random() < 0.3
    arr = pa.array(([b"skip"] if extra else []) + msgs,
                   type=rng.choice((pa.binary(), pa.large_binary())))
    return (arr.slice(1) if extra else arr), None, msgs, f"arrow binary n={n} sliced={extra}"


def agree(api, ours, theirs, extra=""):
    """ours() must return theirs()'s value, or raise the same exception type."""
    try:
        want = theirs()
    except Exception as exc:
        try:
            got = ours()
        except Exception as mine:
            return check(api, type(mine).__name__, type(exc).__name__, extra)
        return check(api, got, f"{type(exc).__name__}: {exc}", extra)
    return check(api, ours(), want, extra)


def threads_arg(rng):
    return rng.choice((None, 1, 2))


# -- one-shot, streaming, files ----------------------------------------------------------------

def message(rng):
    """(algorithm, its BLAKE2 parameters, a message, a SHAKE length), noted for a report."""
    name = rng.choice(ALGOS)
    p = blake2_params(rng, name)
    data = rng.randbytes(size(rng))
    length = xof_length(rng)
    note(f"{name} {p} len={len(data)} xof={length}")
    return name, p, data, length


def call_oneshot(rng):
    name, p, data, length = message(rng)
    ctor = getattr(jd, name, None)
    if ctor is None or rng.random() < 0.3:
        h, api = jd.new(name, buf(rng, data), **p), "new()"
    else:
        h, api = ctor(buf(rng, data), **p), "constructors"
    ref = hashlib.new(name, data, **p)
    check(api, out(h, length), out(ref, length), name)
    if rng.random() < 0.1:
        check("attributes", (h.name, h.digest_size, h.block_size),
              (ref.name, ref.digest_size, ref.block_size), call=False)


def call_stream(rng):
    name, p, data, length = message(rng)
    h, ref = jd.new(name, **p), hashlib.new(name, **p)
    for a, b in cuts(rng, len(data)):
        h.update(buf(rng, data[a:b]))
        ref.update(data[a:b])
        if rng.random() < 0.15:
            c, rc = h.copy(), ref.copy()
            check("copy", out(c, length), out(rc, length), f"at {b}")
            if rng.random() < 0.5:
                more = rng.randbytes(size(rng, big=0))
                c.update(more)
                rc.update(more)
                check("copy", out(c, length), out(rc, length), f"at {b} +{len(more)}")
    check("update/digest", out(h, length), out(ref, length))
    check("update/digest", out(h, length), out(ref, length), "digest twice", call=False)


def call_file(rng):
    name = rng.choice(ALGOS)
    p = blake2_params(rng, name)
    data = rng.randbytes(size(rng, big=0.05, cap=6 * MB))
    length = xof_length(rng)
    note(f"{name} {p} len={len(data)}")
    digest = name if not p and rng.random() < .7 else (lambda: jd.new(name, **p))
    if rng.random() < 0.2:
        h = jd.file_digest(io.BytesIO(data), digest)
    else:
        path = os.path.join(WORK, f"file-{threading.get_ident()}")
        with open(path, "wb") as f:
            f.write(data)
        with open(path, "rb") as f:
            h = jd.file_digest(f, digest)
    check("file_digest", out(h, length), out(hashlib.new(name, data, **p), length), name)


# -- batches -----------------------------------------------------------------------------------

def batch(api, rng, name, msgs, expected, kw):
    messages, offsets, raw, desc = msgs
    n = len(raw)
    width = len(expected(b""))
    given = np.empty((n, width), np.uint8) if rng.random() < 0.3 else None
    note(f"{name} {desc} out={given is not None} "
         + " ".join(f"{k}={len(v) if k == 'key' else v}" for k, v in kw.items()))
    if given is not None:
        kw = dict(kw, out=given)
    got = (jd.hash_many(name, messages, offsets, **kw) if api != "hmac_many"
           else jd.hmac_many(name, kw.pop("key"), messages, offsets, **kw))
    want = [expected(m) for m in raw]
    check(api, (got.shape, got.tobytes()), ((n, width), b"".join(want)), f"{name} {desc}")
    if given is not None:
        check(api, got is given, True, "out= returned", call=False)
    if rng.random() < 0.3:
        check("hexdigests", list(jd.hexdigests(got)), [w.hex() for w in want])


def call_hash_many(rng):
    name = rng.choice(ALGOS)
    kw = {"threads": threads_arg(rng)}
    if name.startswith("shake"):
        kw["length"] = length = rng.randint(1, 300)
        expected = lambda m: hashlib.new(name, m).digest(length)
    else:
        expected = lambda m: hashlib.new(name, m).digest()
    batch("hash_many", rng, name, layout(rng), expected, kw)


def call_hmac_many(rng):
    name = rng.choice(MACS)
    key = rng.randbytes(rng.choice((0, 16, 32, 64, 65, 128, 129, 200)))
    kw = {"threads": threads_arg(rng), "key": bytearray(key) if rng.random() < .2 else key}
    batch("hmac_many", rng, name, layout(rng),
          lambda m: std_hmac.new(key, m, name).digest(), kw)


def call_blake3_many(rng):
    kw, params = {"threads": threads_arg(rng)}, blake3_params(rng)
    length = rng.choice((None, None, 1, 31, 33, 64, rng.randrange(1, 300)))
    if length is not None:
        kw["length"] = length
    batch("hash_many(blake3)", rng, "blake3", layout(rng, cap=2 * MB),
          lambda m: b3ref.blake3(m, **params).digest(length or 32), dict(kw, **params))


def call_uuid(rng):
    version = rng.choice((3, 5))
    ns = rng.choice(NAMESPACES + (uuid.UUID(int=rng.getrandbits(128)),))
    n = rng.choice((0, 1, rng.randrange(2, 50), rng.randrange(50, 2000)))
    names = [text(rng, rng.randrange(60)) if rng.random() < .7 else rng.randbytes(
        rng.choice((0, 1, 55, 64, rng.randrange(200)))) for _ in range(n)]
    as_strings = rng.random() < 0.5
    note(f"uuid{version} {ns} n={n} as_strings={as_strings}")
    many = jd.uuid3_many if version == 3 else jd.uuid5_many
    got = many(ns, names, as_strings=as_strings, threads=threads_arg(rng))

    def expected(name):
        if isinstance(name, str):
            return (uuid.uuid3 if version == 3 else uuid.uuid5)(ns, name)
        h = (hashlib.md5 if version == 3 else hashlib.sha1)(ns.bytes + name).digest()
        return uuid.UUID(bytes=h[:16], version=version)
    want = [expected(name) for name in names]
    if as_strings:
        check(f"uuid{version}_many", [str(s) for s in got], [str(u) for u in want])
    else:
        check(f"uuid{version}_many", (got.shape, got.tobytes()),
              ((n, 16), b"".join(u.bytes for u in want)))


# -- keyed -------------------------------------------------------------------------------------

def call_hmac(rng):
    name = rng.choice(MACS)
    key = rng.randbytes(rng.choice((0, 1, 20, 64, 65, 128, 129, rng.randrange(300))))
    data = rng.randbytes(size(rng))
    mode = rng.randrange(4)
    note(f"{name} key={len(key)} len={len(data)} mode={mode}")
    if mode == 0:
        check("hmac.digest", jd.hmac.digest(key, buf(rng, data), name),
              std_hmac.digest(key, data, name))
        return
    if mode == 1:
        a = rng.randbytes(rng.randrange(70))
        b = a if rng.random() < 0.5 else bytearray(rng.randbytes(len(a)))
        if rng.random() < 0.3:
            a, b = a.hex(), (b.hex() if rng.random() < .7 else bytes(b).hex().upper())
        agree("hmac.compare_digest", lambda: jd.hmac.compare_digest(a, b),
              lambda: std_hmac.compare_digest(a, b))
        return
    dm = rng.choice((name, getattr(jd, name, name), getattr(hashlib, name, name)))
    first = data if rng.random() < 0.5 else None
    h = jd.hmac.new(bytearray(key) if rng.random() < .2 else key, first, dm)
    ref = std_hmac.new(key, first, name)
    for a, b in cuts(rng, len(data)) if first is None else ():
        h.update(buf(rng, data[a:b]))
        ref.update(data[a:b])
        if rng.random() < 0.1:
            check("hmac copy", out(h.copy(), 0), out(ref.copy(), 0))
    check("hmac.new", out(h, 0), out(ref, 0), name)
    check("hmac.new", (h.name, h.digest_size, h.block_size),
          (ref.name, ref.digest_size, ref.block_size), "attributes", call=False)


def call_pbkdf2(rng):
    name = rng.choice(MACS)
    password = rng.randbytes(rng.choice((0, 1, 64, 65, 128, 129, rng.randrange(200))))
    salt = rng.randbytes(rng.choice((0, 8, 16, rng.randrange(100))))
    iters = rng.choice((1, 2, rng.randrange(3, 2000)))
    dklen = rng.choice((None, 1, rng.randrange(1, 200)))
    note(f"{name} pw={len(password)} salt={len(salt)} it={iters} dklen={dklen}")
    agree("pbkdf2_hmac", lambda: jd.pbkdf2_hmac(name, password, salt, iters, dklen),
          lambda: hashlib.pbkdf2_hmac(name, password, salt, iters, dklen), name)


def call_scrypt(rng):
    pw, salt = rng.randbytes(rng.randrange(80)), rng.randbytes(rng.randrange(40))
    kw = dict(n=2 ** rng.randint(1, 10), r=rng.randint(1, 8), p=rng.randint(1, 3),
              dklen=rng.choice((1, 32, 64, rng.randrange(1, 200))))
    note(f"pw={len(pw)} salt={len(salt)} {kw}")
    agree("scrypt", lambda: jd.scrypt(pw, salt=salt, **kw),
          lambda: hashlib.scrypt(pw, salt=salt, **kw))


# -- BLAKE3 ------------------------------------------------------------------------------------

def blake3_params(rng):
    mode = rng.randrange(3)
    if mode == 1:
        return {"key": rng.randbytes(32)}
    if mode == 2:
        return {"derive_key_context": text(rng, rng.randrange(40))}
    return {}


def call_blake3(rng):
    params = blake3_params(rng)
    big = rng.random() < 0.08
    data = rng.randbytes(rng.randrange(MB, 6 * MB) if big else size(rng, big=0.05))
    threads = rng.choice((1, 2, jd.blake3.blake3.AUTO)) if big else rng.choice((1, 1, 2))
    length = rng.choice((32, 0, 1, 31, 33, 64, 65, rng.randrange(1, 2000)))
    seek = rng.choice((0, 0, 1, 63, 64, rng.randrange(1 << 40)))
    note(f"{params} len={len(data)} threads={threads} length={length} seek={seek}")
    mode = rng.randrange(3)
    if mode == 0:
        h = jd.blake3.blake3(buf(rng, data), max_threads=threads, **params)
    elif mode == 1:
        h = jd.new("blake3", data, max_threads=threads, **params)
    else:
        h = jd.blake3.blake3(max_threads=threads, **params)
        for a, b in cuts(rng, len(data)):
            check("blake3.update", h.update(buf(rng, data[a:b])) is h, True)
    ref = b3ref.blake3(data, **params)
    check("blake3", (h.digest(length, seek=seek), h.hexdigest(length=length, seek=seek),
                     h.digest()), (ref.digest(length, seek=seek),
                                   ref.hexdigest(length=length, seek=seek), ref.digest()))
    if rng.random() < 0.3:
        more = rng.randbytes(size(rng, big=0))
        c, rc = h.copy(), ref.copy()
        c.update(more)
        rc.update(more)
        check("blake3 copy", c.digest(length), rc.digest(length))
        h.reset()
        rc = b3ref.blake3(**params)
        h.update(more)
        rc.update(more)
        check("blake3 reset", h.digest(length), rc.digest(length))


# -- threads, forks, children ------------------------------------------------------------------

def call_shared(rng):
    """One object updated by 4 threads with the same chunk: any order gives chunk * k; copies
    taken meanwhile must be a whole number of chunks."""
    kind = rng.choice(("hash", "hash", "blake3", "hmac"))
    chunk = rng.randbytes(rng.choice(BOUNDARIES + (0, 1, 7, rng.randrange(2000),
                                                   rng.randrange(2000, 70000))))
    per, writers = rng.randint(1, 25), 4
    name = rng.choice(ALGOS if kind == "hash" else MACS)
    key = rng.randbytes(rng.randrange(100))
    note(f"{kind} {name} chunk={len(chunk)} x {per} x {writers}")
    if kind == "hash":
        h, ref = jd.new(name), hashlib.new(name)
    elif kind == "blake3":
        h, ref = jd.blake3.blake3(max_threads=rng.choice((1, 2))), b3ref.blake3()
    else:
        h, ref = jd.hmac.new(key, None, name), std_hmac.new(key, None, name)
    value = (lambda o: o.digest(32)) if name.startswith("shake") else (lambda o: o.digest())
    prefixes = []
    for _ in range(per * writers + 1):
        prefixes.append(value(ref.copy()))
        ref.update(chunk)
    failed = []

    def write():
        try:
            for _ in range(per):
                h.update(chunk)
        except Exception as exc:
            failed.append(exc)
    helpers = [threading.Thread(target=write) for _ in range(writers - 1)]
    for t in helpers:
        t.start()
    write()
    while any(t.is_alive() for t in helpers):
        check("shared copy", value(h.copy()) in prefixes, True)
    for t in helpers:
        t.join()
    if failed:
        raise failed[0]
    check("shared object", value(h), prefixes[-1])


# the calls that run other processes (they use this module's helpers)
from soak_children import call_fork, call_sum, call_sum_sigint  # noqa: E402,F401
