"""Batch kernels stored as machine code and run without Numba (``jitdigest/runtime/native.py``):
``jitdigest sum`` through them prints hashlib's digests and imports neither Numba nor numpy; a
run that had to go through Numba stores its kernel for the next; a missing, damaged or
foreign stored kernel costs only the way through Numba, never a wrong digest or a crash. The
stored kernels live in contexts of their own here (``context()`` digests every
``JITDIGEST_*`` setting), so the rest of the suite never meets them."""
import hashlib
import json
import os
import shutil
import subprocess
import sys
from array import array

import pytest

from jitdigest.runtime import native as _native

# every kernel family: SHA-NI or portable (sha256), 32- and 64-bit lanes, sponge, BLAKE2's
# parameter block as its initial state
STORED = ("sha256", "md5", "sha512", "sha3_256", "shake_128", "blake2s")
SIZES = [0, 1, 55, 56, 63, 64, 65, 127, 128, 135, 136, 1000, 4096, 16384, 65536]

RUN_SUM = ("import sys\n"
           "from jitdigest import cli\n"
           "status = cli.main(['sum', *sys.argv[1:]])\n"
           "sys.stdout.flush()\n"
           "heavy = sorted({m.split('.')[0] for m in sys.modules} & {'numba', 'numpy'})\n"
           "print(status, heavy, file=sys.stderr)\n")


def _env(context):
    env = {k: v for k, v in os.environ.items() if k != "JITDIGEST_DISABLE"}
    env["JITDIGEST_NATIVE_TEST"] = context
    return env


def _python(code, context, *argv):
    return subprocess.run([sys.executable, "-c", code, *map(str, argv)], env=_env(context),
                          capture_output=True, timeout=900)


def _folder(context):
    proc = _python("from jitdigest.runtime import native as _native; print(_native.folder())", context)
    assert proc.returncode == 0, proc.stderr.decode()
    return proc.stdout.decode().strip()


@pytest.fixture(scope="module")
def stored():
    """The batch kernels of STORED, stored by a process of their own (as warmup's workers do),
    in a folder emptied first (what an earlier run stored there is not among them)."""
    shutil.rmtree(_folder("stored"), ignore_errors=True)
    code = ("from jitdigest.base import algorithms as _algorithms\n"
            "from jitdigest.runtime import native_write\n"
            "print([native_write.store(_algorithms.SPECS[n]) for n in %r])\n" % (STORED,))
    proc = _python(code, "stored")
    assert proc.returncode == 0, proc.stderr.decode()
    assert proc.stdout.decode().split() == ["[True,"] + ["True,"] * (len(STORED) - 2) + ["True]"]
    return _folder("stored")


@pytest.fixture
def files(tmp_path):
    """{path: content}: files of every interesting size below the streaming limit."""
    found = {}
    for i, size in enumerate(SIZES):
        path = tmp_path / f"f{i:02d}.bin"
        data = bytes((i * 31 + j * 7) % 256 for j in range(size))
        path.write_bytes(data)
        found[str(path)] = data
    return found


def _lines(files, name, length=None):
    def digest(data):
        h = hashlib.new(name, data)
        return h.hexdigest(length) if length else h.hexdigest()
    return b"".join(f"{digest(d)}  {p}\n".encode() for p, d in files.items())


@pytest.mark.parametrize("name", ["sha256", "md5", "sha512", "sha3_256", "blake2s"])
def test_sum_through_stored_kernels_imports_neither_numba_nor_numpy(stored, files, name):
    proc = _python(RUN_SUM, "stored", "-a", name, *files)
    assert proc.stderr.decode().splitlines()[-1] == "0 []", proc.stderr.decode()
    assert proc.stdout == _lines(files, name)
    assert len(proc.stdout.splitlines()) == len(SIZES)


@pytest.mark.skipif(not _native.ELF_LOADER, reason="the ELF loader serves x86-64 Linux")
def test_stored_kernels_load_without_llvm(stored, files):
    """On x86-64 Linux the stored objects are linked by ``jitdigest/runtime/elf.py``: a run through
    them imports neither Numba nor llvmlite.binding (a large part of a one-file run), and
    every stored algorithm's kernel loads that way."""
    code = RUN_SUM + ("print(sorted(m for m in sys.modules if m.startswith('llvmlite.binding')),"
                      " file=sys.stderr)\n"
                      "from jitdigest.runtime import native as _native\n"
                      "print(all(_native.rows(n) is not None for n in %r), file=sys.stderr)\n"
                      "print('llvmlite.binding' in sys.modules, file=sys.stderr)\n" % (STORED,))
    proc = _python(code, "stored", *files)
    assert proc.stderr.decode().splitlines()[-4:] == ["0 []", "[]", "True", "False"], \
        proc.stderr.decode()
    assert proc.stdout == _lines(files, "sha256")


def test_shake_lengths_several_algorithms_and_one_file(stored, files):
    proc = _python(RUN_SUM, "stored", "-a", "shake_128", "-l", "808", *files)
    assert proc.stderr.decode().splitlines()[-1] == "0 []", proc.stderr.decode()
    assert proc.stdout == _lines(files, "shake_128", 101)
    proc = _python(RUN_SUM, "stored", "-a", "sha256,md5", *files)
    assert proc.stderr.decode().splitlines()[-1] == "0 []", proc.stderr.decode()
    expected = b"".join(a + b for a, b in zip(_lines(files, "sha256").splitlines(True),
                                             _lines(files, "md5").splitlines(True)))
    assert proc.stdout == expected
    first = next(iter(files))
    proc = _python(RUN_SUM, "stored", first)
    assert proc.stderr.decode().splitlines()[-1] == "0 []"
    assert proc.stdout == _lines({first: files[first]}, "sha256")


def test_an_algorithm_not_stored_and_a_large_file_go_through_numba(stored, files, tmp_path):
    """(A large file's entry is not among the stored fixture's: the run stores it after.)"""
    big = tmp_path / "big.bin"
    big.write_bytes(bytes(range(256)) * 1000)           # streamed: over SUM_SMALL_FILE
    every = dict(files, **{str(big): big.read_bytes()})
    for name in ("sha256", "sha1"):                      # stored / not stored
        proc = _python(RUN_SUM, "stored", "-a", name, *every)
        assert proc.stderr.decode().splitlines()[-1] == "0 ['numba', 'numpy']"
        assert proc.stdout == _lines(every, name)


STREAM_BUFFERS = ("import array, hashlib, sys\n"
                  "from jitdigest.runtime import stream\n"
                  "h = stream.new(sys.argv[1]); parts = []\n"
                  "for part in (b'abc', bytearray(range(200)), memoryview(bytes(range(99))),\n"
                  "             array.array('I', range(40)), b'', bytes(300)):\n"
                  "    h.update(part); parts.append(bytes(memoryview(part).cast('B')))\n"
                  "    assert h.digest() == hashlib.new(sys.argv[1], b''.join(parts)).digest()\n"
                  "try:\n"
                  "    h.update(memoryview(bytearray(100))[::2])\n"
                  "except TypeError:\n"
                  "    print('refused')\n"
                  "print(h.hexdigest() == hashlib.new(sys.argv[1], b''.join(parts)).hexdigest(),\n"
                  "      h.name, h.digest_size, 'numba' in sys.modules, 'numpy' in sys.modules)\n")


def test_large_files_stream_through_stored_entries(tmp_path):
    """A run that streamed a large file through Numba stores the hash objects' entries
    (``jitdigest/runtime/stream.py``); the next run streams through them, importing neither
    Numba nor numpy: SHA-256 and SHA-512 over one read, SHA-224 on SHA-256's entry, standard
    input, the tree hash plain, keyed and at another length, with small files beside (its
    batch kernel stored by the same run); a Stream takes any contiguous buffer; a damaged entry
    costs only the way through Numba. Every digest is hashlib's or the ``blake3`` package's."""
    from blake3 import blake3
    context = "streamed"
    folder = _folder(context)
    shutil.rmtree(folder, ignore_errors=True)
    data = bytes(range(256)) * 1201 + b"not whole blocks"       # over SUM_SMALL_FILE
    big = tmp_path / "big.bin"
    big.write_bytes(data)

    def run(*argv, stdin=data):
        proc = subprocess.run([sys.executable, "-c", RUN_SUM, *argv], input=stdin,
                              env=_env(context), capture_output=True, timeout=900)
        assert proc.returncode == 0, proc.stderr.decode()
        return proc.stdout, proc.stderr.decode().splitlines()[-1]

    def lines(*names):
        return b"".join(f"{hashlib.new(n, data).hexdigest()}  {p}\n".encode()
                        for p in (str(big), "-") for n in names)

    assert run("-a", "sha256,sha512", big, "-") == (lines("sha256", "sha512"),
                                                    "0 ['numba', 'numpy']")
    assert run("-a", "sha256,sha512", big, "-") == (lines("sha256", "sha512"), "0 []")
    assert run("-a", "sha224", big, "-") == (lines("sha224"), "0 []")
    small = {}
    for size in (0, 1, 1024, 1025, 5000):               # a chunk, a tree of two, of five
        path = tmp_path / f"small{size}"
        path.write_bytes(data[:size])
        small[path] = data[:size]
    files = {**small, big: data}

    def tree(**mode):
        length = mode.pop("length", 32)
        return b"".join(f"{blake3(d, **mode).hexdigest(length)}  {p}\n".encode()
                        for p, d in files.items())
    assert run("-a", "blake3", *files) == (tree(), "0 ['numba', 'numpy']")
    assert run("-a", "blake3", *files) == (tree(), "0 []")
    key = bytes(range(100, 132))
    assert run("-a", "blake3", "--keyed", *files, stdin=key) == (tree(key=key), "0 []")
    assert run("-a", "blake3", "-l", "100", *files) == (tree(length=100), "0 []")
    proc = _python(STREAM_BUFFERS, context, "sha512")
    assert proc.stdout.decode().split() == ["refused", "True", "sha512", "64", "False",
                                            "False"], proc.stderr.decode()
    with open(os.path.join(folder, "stream.sha256-uint32.o"), "r+b") as f:
        f.truncate(1000)
    assert run("-a", "sha256", big, "-") == (lines("sha256"), "0 ['numba', 'numpy']")
    shutil.rmtree(folder, ignore_errors=True)


FIRST = ("import sys\n"
         "had_inspect = 'inspect' in sys.modules   # (site imports it in some environments)\n"
         "import hashlib, jitdigest\n"
         "from jitdigest.runtime import native as _native\n"
         "msgs = [bytes(range(i % 256)) * (i // 7 + 1) for i in range(40)]\n"
         "got = [jitdigest.sha256(m).hexdigest() for m in msgs[:3]]\n"
         "c = jitdigest.sha256(msgs[3]).copy(); got.append(c.hexdigest())\n"
         "print('numpy' in sys.modules, 'inspect' in sys.modules and not had_inspect)\n"
         "t = jitdigest.sha256(msgs[2])           # made on the stored kernel, streams below\n"
         "got.append(jitdigest.shake_128(msgs[3]).hexdigest(100))\n"
         "empty = jitdigest.shake_128(msgs[3])     # made now, asked for no output below\n"
         "h = jitdigest.md5(); h.update(msgs[4]); got.append(h.hexdigest())\n"
         "print('numba' in sys.modules)\n"
         "got += [jitdigest.sha256(m).hexdigest() for m in msgs[5:5 + _native.FIRST_DIGESTS]]\n"
         "print('numba' in sys.modules)\n"
         "s = jitdigest.sha256(msgs[30]); s.update(bytearray(msgs[31])); got.append(s.hexdigest())\n"
         "t.update(msgs[6] * 300); got.append(t.hexdigest())\n"
         "exp = [hashlib.sha256(m).hexdigest() for m in msgs[:4]]\n"
         "exp.append(hashlib.shake_128(msgs[3]).hexdigest(100))\n"
         "exp.append(hashlib.md5(msgs[4]).hexdigest())\n"
         "exp += [hashlib.sha256(m).hexdigest() for m in msgs[5:5 + _native.FIRST_DIGESTS]]\n"
         "exp.append(hashlib.sha256(msgs[30] + msgs[31]).hexdigest())\n"
         "exp.append(hashlib.sha256(msgs[2] + msgs[6] * 300).hexdigest())\n"
         "print(got == exp, len(got), empty.digest(0) == b'')\n")


def test_a_process_first_digests_need_no_numba(stored):
    """A script's first one-shot digests (SHA-NI or portable, sponge, lanes: what is stored)
    go through the stored kernels, with neither numpy nor ``inspect`` imported; after
    FIRST_DIGESTS of an algorithm, or for anything but a one-shot digest of bytes, the kernels
    come through Numba; every digest is hashlib's."""
    proc = _python(FIRST, "stored")
    assert proc.returncode == 0, proc.stderr.decode()
    assert proc.stdout.decode().split() == ["False", "False", "False", "True", "True",
                                            str(8 + _native.FIRST_DIGESTS), "True"]


FIRST_HMAC = ("import hmac, sys\n"
              "import jitdigest.hmac as jh\n"
              "keys = [b'', b'key', b'k' * 64, b'k' * 65, b'k' * 200]\n"
              "msgs = [b'', b'msg', b'm' * 55, b'm' * 64, b'm' * 1000]\n"
              "got, exp = [], []\n"
              "for name in ('sha256', 'md5'):\n"
              "    for key, msg in zip(keys, msgs):\n"
              "        got.append(jh.digest(key, msg, name))\n"
              "        exp.append(hmac.digest(key, msg, name))\n"
              "a = jh.new(b'key', b'abc', 'sha256'); b = a.copy(); c = jh.new(b'key', None, 'md5')\n"
              "got += [a.hexdigest(), b.digest(), c.hexdigest(), a.name, a.digest_size]\n"
              "exp += [hmac.new(b'key', b'abc', 'sha256').hexdigest(),\n"
              "        hmac.new(b'key', b'abc', 'sha256').digest(),\n"
              "        hmac.new(b'key', None, 'md5').hexdigest(), 'hmac-sha256', 32]\n"
              "print('numba' in sys.modules, 'numpy' in sys.modules)\n"
              "s3 = jh.new(b'key', b'abc', 'sha3_256'); got.append(s3.copy().digest())\n"
              "exp.append(hmac.new(b'key', b'abc', 'sha3_256').digest())\n"
              "b.update(b'def'); c.update(bytearray(b'x')); s3.update(b'def')\n"
              "got.append(s3.hexdigest()); exp.append(hmac.new(b'key', b'abcdef', 'sha3_256').hexdigest())\n"
              "got += [b.hexdigest(), c.digest(), a.hexdigest()]\n"
              "exp += [hmac.new(b'key', b'abcdef', 'sha256').hexdigest(),\n"
              "        hmac.new(b'key', b'x', 'md5').digest(),\n"
              "        hmac.new(b'key', b'abc', 'sha256').hexdigest()]\n"
              "print('numba' in sys.modules, got == exp, len(got))\n")


def test_a_process_first_hmacs_need_no_numba(stored):
    """A script's first HMACs of bytes (``hmac.digest`` and objects, for keys shorter and
    longer than a block) are digests of the stored kernels: no Numba, no numpy; an object
    made then streams through the kernels afterwards; SHA-3's (no keyed kernel) takes hash
    objects as before; every result is the standard library's."""
    assert _native.FIRST_DIGESTS >= 16           # the sha256 HMACs below take 16 digests
    proc = _python(FIRST_HMAC, "stored")
    assert proc.returncode == 0, proc.stderr.decode()
    assert proc.stdout.decode().split() == ["False", "False", "True", "True", "20"]


FIRST_UPDATES = ("import hashlib, io, sys, threading, jitdigest\n"
                 "h = jitdigest.sha256(); h.update(b'a' * 100); h.update(b'b' * 2000)\n"
                 "c = h.copy(); h.update(b'c'); c.update(b'd' * 70)\n"
                 "m = jitdigest.md5(b'x'); m.update(b'')\n"
                 "f = jitdigest.file_digest(open(sys.argv[1], 'rb'), 'sha256')\n"
                 "b = jitdigest.file_digest(io.BytesIO(b'hello' * 100), 'md5')\n"
                 "shared = jitdigest.sha256()\n"
                 "def work():\n"
                 "    for _ in range(50):\n"
                 "        shared.update(b'y' * 10)\n"
                 "threads = [threading.Thread(target=work) for _ in range(4)]\n"
                 "[t.start() for t in threads]; [t.join() for t in threads]\n"
                 "got = [h.hexdigest(), c.hexdigest(), m.hexdigest(), f.hexdigest(), b.hexdigest(),\n"
                 "       shared.hexdigest()]\n"
                 "print('numba' in sys.modules, 'numpy' in sys.modules)\n"
                 "big = jitdigest.sha256(b'q' * 60000); big.update(b'r' * 10000)\n"
                 "h.update(memoryview(b'e' * 10))\n"
                 "got += [big.hexdigest(), h.hexdigest()]\n"
                 "exp = [hashlib.sha256(b'a' * 100 + b'b' * 2000 + b'c').hexdigest(),\n"
                 "       hashlib.sha256(b'a' * 100 + b'b' * 2000 + b'd' * 70).hexdigest(),\n"
                 "       hashlib.md5(b'x').hexdigest(),\n"
                 "       hashlib.sha256(open(sys.argv[1], 'rb').read()).hexdigest(),\n"
                 "       hashlib.md5(b'hello' * 100).hexdigest(),\n"
                 "       hashlib.sha256(b'y' * 2000).hexdigest(),\n"
                 "       hashlib.sha256(b'q' * 60000 + b'r' * 10000).hexdigest(),\n"
                 "       hashlib.sha256(b'a' * 100 + b'b' * 2000 + b'c' + b'e' * 10).hexdigest()]\n"
                 "print('numba' in sys.modules, got == exp, len(got))\n")


def test_a_process_first_updates_and_small_files_need_no_numba(stored, files):
    """On the first digests, ``bytes`` updates are joined into one message (copies too, and
    from four threads at once: none lost) and ``file_digest`` of a small file reads it as
    such: no Numba, no numpy; past ``FIRST_DIGEST_JOIN`` bytes, or with another buffer, the
    object streams through the kernels; every digest is hashlib's."""
    small = next(p for p, d in files.items() if 0 < len(d) < 5000)
    proc = _python(FIRST_UPDATES, "stored", small)
    assert proc.returncode == 0, proc.stderr.decode()
    assert proc.stdout.decode().split() == ["False", "False", "True", "True", "8"]


def test_a_run_through_numba_stores_its_kernel_for_the_next(files):
    context = "stored by sum"
    shutil.rmtree(_folder(context), ignore_errors=True)
    first = _python(RUN_SUM, context, "-a", "sha1", *files)
    assert first.stderr.decode().splitlines()[-1] == "0 ['numba', 'numpy']"
    second = _python(RUN_SUM, context, "-a", "sha1", *files)
    assert second.stderr.decode().splitlines()[-1] == "0 []"
    assert first.stdout == second.stdout == _lines(files, "sha1")
    shutil.rmtree(_folder(context), ignore_errors=True)


def _damage(folder, how):
    index = json.loads(open(os.path.join(folder, "index.json"), "rb").read())
    base = os.path.join(folder, index["sha256"])
    if how == "object truncated":
        code = open(base + ".o", "rb").read()
        open(base + ".o", "wb").write(code[:len(code) // 2])
    elif how == "object garbage":
        size = os.path.getsize(base + ".o")
        open(base + ".o", "wb").write(os.urandom(size))
    elif how == "description garbage":
        open(base + ".json", "wb").write(b"{\"format\": 1, \"symbol\": ")
    elif how == "object missing":
        os.unlink(base + ".o")
    elif how == "index garbage":
        open(os.path.join(folder, "index.json"), "wb").write(os.urandom(40))
    elif how == "initial state cut":
        meta = json.loads(open(base + ".json", "rb").read())
        meta["iv"]["sha256"] = meta["iv"]["sha256"][:2]
        open(base + ".json", "w").write(json.dumps(meta))
    elif how == "unknown symbol":                       # described honestly: still refused
        meta = json.loads(open(base + ".json", "rb").read())
        meta["uses"].append("jitdigest_no_such_function")
        meta["sha256"] = _native._digest(open(base + ".o", "rb").read(), meta)
        open(base + ".json", "w").write(json.dumps(meta))
    else:
        raise ValueError(how)


DAMAGES = ["object truncated", "object garbage", "description garbage", "object missing",
           "index garbage", "initial state cut", "unknown symbol"]


@pytest.mark.parametrize("how", DAMAGES)
def test_a_damaged_stored_kernel_costs_only_the_numba_path(stored, files, how):
    context = "damaged " + how
    folder = _folder(context)
    shutil.rmtree(folder, ignore_errors=True)
    shutil.copytree(stored, folder)
    proc = _python(RUN_SUM, context, *files)
    assert proc.stderr.decode().splitlines()[-1] == "0 []"          # the copy works as is
    _damage(folder, how)
    proc = _python(RUN_SUM, context, *files)
    assert proc.returncode == 0, proc.stderr.decode()
    assert proc.stderr.decode().splitlines()[-1] == "0 ['numba', 'numpy']"
    assert proc.stdout == _lines(files, "sha256")
    shutil.rmtree(folder, ignore_errors=True)


def test_rows_checks_what_it_is_given():
    def never(*args):
        raise AssertionError("the kernel must not be called")
    rows = _native.Rows(never, [1, 2, 3, 4], "uint32", 16)
    with pytest.raises(ValueError):
        rows.hash(b"abc", array("q", [1, 1]), 16)           # lengths do not add up
    with pytest.raises(ValueError):
        rows.hash(b"abc", array("q", [4, -1]), 16)          # a negative length
    with pytest.raises(ValueError):
        rows.hash(b"abc", array("q", [3]), 32)              # not this kernel's digest size
    with pytest.raises(TypeError):
        rows.hash(bytearray(b"abc"), array("q", [3]), 16)   # values must be bytes
    assert _native._addresses(["PyErr_Clear", "llvm.memset.p0.i64", "numba_gil_ensure"])
    assert _native._addresses(["PyErr_Clear", "jitdigest_no_such_function"]) is None


def test_disabled_jit_and_other_switches_use_nothing_stored(stored, files):
    """Another setting is another context: SHA-NI switched off, the kernel stored with it on is
    not used (the run goes through Numba, then stores its own, not SHA-NI's); interpreted
    (NUMBA_DISABLE_JIT=1), nothing is used or stored."""
    def run(extra):
        full = dict(_env("stored"), **extra)
        proc = subprocess.run([sys.executable, "-c", RUN_SUM, *files], env=full,
                              capture_output=True, timeout=900)
        assert proc.returncode == 0, proc.stderr.decode()
        assert proc.stdout == _lines(files, "sha256")
        return proc.stderr.decode().splitlines()[-1]

    def folder_of(extra):
        code = "from jitdigest.runtime import native as _native; print(_native.folder())"
        full = dict(_env("stored"), **extra)
        proc = subprocess.run([sys.executable, "-c", code], env=full, capture_output=True,
                              text=True, timeout=600)
        return proc.stdout.strip()

    switched = {"JITDIGEST_DISABLE": "sha_ni"}
    other = folder_of(switched)
    assert other != stored
    shutil.rmtree(other, ignore_errors=True)
    assert run(switched) == "0 ['numba', 'numpy']"
    index = json.loads(open(os.path.join(other, "index.json"), "rb").read())
    assert not index["sha256"].startswith("sha256.sha_ni")        # not the SHA-NI kernel
    assert run(switched) == "0 []"
    shutil.rmtree(other, ignore_errors=True)
    interpreted = {"NUMBA_DISABLE_JIT": "1"}
    shutil.rmtree(folder_of(interpreted), ignore_errors=True)
    assert run(interpreted) == "0 ['numba', 'numpy']"
    assert not os.path.exists(folder_of(interpreted))
