"""The per-CPU batch kernel table (``jitdigest/engine/calibration.py``, ``jitdigest tune``): the
margin rule, the choice by mean length, dispatch reading the table (digests still hashlib's),
tables of other CPUs and damaged files ignored, and one real (small) measurement; the table
measured automatically on a first large batch (``engine/autocal.py``): written once, read by
the next process, never where switched off or untrusted, one valid table under threads,
processes and fork, and what ``jitdigest info`` says."""
import contextlib
import os
import hashlib
import json
import warnings

import numpy as np
import pytest

import jitdigest
from jitdigest.base import algorithms as _algorithms, cachedir as _cachedir, config as _config
from jitdigest.engine import calibration as _calibration, cpu as _cpu, dispatch as _dispatch
from jitdigest import _tune, cli


@pytest.fixture
def table_file(tmp_path, monkeypatch):
    """A private table file (the kernels still load from the suite's cache); nothing measured
    automatically (the ``auto`` fixture switches it on)."""
    from jitdigest.engine import autocal
    monkeypatch.setenv(autocal.ENV, "0")
    where = str(tmp_path / "calibration-test.json")
    monkeypatch.setattr(_calibration, "path", lambda: where)
    monkeypatch.setattr(_calibration, "_TABLE", {})
    monkeypatch.setattr(_dispatch, "COMPILE_BATCH", True)   # an in-process 'sum' turns it off
    return where


def write(where, algos):
    import os
    os.makedirs(os.path.dirname(where), exist_ok=True)
    with open(where, "w") as f:
        json.dump({"cpu": "x", "features": [], "made": "now", "algorithms": algos}, f)


def test_a_kernel_replaces_the_default_only_beyond_the_margin():
    margin = _config.TUNE_MARGIN
    seconds = {"lanes16": [1.0, 1.0, 1.0], "sha_ni": [1.0 / margin * 1.01, 1.0 / margin * 0.99,
                                                       2.0]}
    assert _tune.decide("lanes16", seconds) == ["lanes16", "sha_ni", "lanes16"]


def test_a_kernel_far_behind_takes_no_more_turns(monkeypatch):
    """``measure``: after two rounds a kernel whose fastest turn is slower than ``TUNE_DROP``
    times the leader's slowest stops; one within it takes every turn. Turns timed by a stand-in
    (seconds by the backend in use), the medians over the turns each took."""
    from jitdigest import batch
    per_turn = {"lanes8": [1.0, 1.1, 1.0, 1.0, 1.05], "portable": [2.0, 1.9, 2.0, 2.0, 2.0],
                "close": [1.2, 1.3, 1.2, 1.2, 1.2], "late": [9.0, 1.2, 0.5, 0.5, 0.5]}
    seen = {name: 0 for name in per_turn}
    in_use = []

    @contextlib.contextmanager
    def backend(name):
        in_use.append(name)
        yield
        in_use.pop()

    def per_call(func, calls):
        name = in_use[-1]
        seen[name] += 1
        return 1e-3 if seen[name] == 1 else per_turn[name][seen[name] - 2]   # first: the probe

    monkeypatch.setattr(_config, "TUNE_DROP", 1.5)
    monkeypatch.setattr(_tune, "backend", backend)
    monkeypatch.setattr(batch, "hash_many", lambda *a, **k: None)
    monkeypatch.setattr(_tune, "_per_call", per_call)
    sets = [type("Set", (), {"name": n})() for n in per_turn]
    seconds = _tune.measure(_algorithms.lookup("md5"), sets, [64], 1 << 12, 5, 0.0)
    assert {name: n - 1 for name, n in seen.items()} == {
        "lanes8": 5, "portable": 2, "close": 5, "late": 5}
    assert seconds == {"lanes8": [1.0], "portable": [2.0], "close": [1.2], "late": [0.5]}


def test_choice_by_mean_length(table_file):
    write(table_file, {"sha256": {"lengths": [64, 1024], "best": ["lanes16", "sha_ni"]}})
    spec = _algorithms.lookup("sha256")
    picks = [_calibration.choice(spec, m) for m in (0, 64, 65, 1024, 10 ** 9)]
    assert picks == ["lanes16", "lanes16", "sha_ni", "sha_ni", "sha_ni"]
    assert _calibration.choice(_algorithms.lookup("md5"), 64) is None


def test_dispatch_follows_the_table_and_digests_stay_right(table_file):
    for name in ("md5", "sha1", "sha256"):         # md5's lanes need AVX2; SHA-NI serves sha*
        spec = _algorithms.lookup(name)
        default = _dispatch.default_batch_kernels(spec)
        other = next((ks for ks in _dispatch.batch_kernel_sets(spec)
                      if ks.name != default.name), None)
        if other is not None:
            break
    else:
        pytest.skip("no algorithm has two usable batch kernels here")
    write(table_file, {name: {"lengths": [64, 16384], "best": [other.name, default.name]}})
    assert _dispatch.batch_kernels_for(spec, 1000, 40).name == other.name
    assert _dispatch.batch_kernels_for(spec, 1000, 4000).name == default.name
    assert _dispatch.batch_kernels_for(spec).name == default.name        # no length: the rule
    rng = np.random.default_rng(5)
    msgs = [rng.bytes(int(k)) for k in rng.integers(0, 80, 500)]
    got = jitdigest.hash_many(name, msgs, threads=1)
    assert [bytes(r) for r in got] == [hashlib.new(name, m).digest() for m in msgs]
    with jitdigest.backend(default.name):                                # forcing wins
        assert _dispatch.batch_kernels_for(spec, 1000, 40).name == default.name


def test_the_table_is_named_after_the_cpu(monkeypatch):
    monkeypatch.setattr(_calibration, "_PATH", {})
    here = _calibration.path()
    assert here.startswith(_cachedir.directory()) and _cpu.host_cpu_name() in here
    monkeypatch.setattr(_calibration, "_PATH", {})
    monkeypatch.setattr(_cpu, "host_cpu_name", lambda: "some-other-cpu")
    assert _calibration.path() != here


def test_a_damaged_table_is_ignored_with_one_warning(table_file):
    with open(table_file, "w") as f:
        f.write('{"algorithms": {"md5": {"lengths": [64]')               # cut short
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        assert _calibration.table() == {} and _calibration.table() == {}
    assert [w.category for w in caught] == [_cachedir.CacheWarning]
    spec = _algorithms.lookup("md5")
    assert _dispatch.batch_kernels_for(spec, 1000, 64).name == \
        _dispatch.default_batch_kernels(spec).name


def test_tune_measures_and_stores(table_file, monkeypatch, capsys):
    monkeypatch.setattr(_config, "TUNE_LENGTHS", (64, 2048))
    monkeypatch.setattr(_config, "TUNE_BYTES", 1 << 18)
    monkeypatch.setattr(_config, "TUNE_REPEATS", 3)
    monkeypatch.setattr(_config, "TUNE_MIN_SECONDS", 0.002)
    cli._tune(["md5"], quick=False, every=False)          # what warmup times (in its workers)
    printed = capsys.readouterr().out
    assert "md5: 64 B " in printed and "table: " + table_file in printed
    with open(table_file) as f:
        stored = json.load(f)["algorithms"]["md5"]
    spec = _algorithms.lookup("md5")
    names = {ks.name for ks in _tune.candidates(spec, every=False)}
    assert stored["lengths"] == [64, 2048] and set(stored["best"]) <= names
    assert set(stored["seconds"]) == names and all(
        len(t) == 2 and min(t) > 0 for t in stored["seconds"].values())
    info = jitdigest.info()
    assert info["calibration"].endswith(table_file) and info["tuned"]["md5"][64] in names


def test_no_cache_folder_means_no_table_and_tune_keeps_it_in_memory(monkeypatch, capsys):
    import os
    where = os.devnull + "/jitdigest/calibration-test.json"    # below a file: never a folder
    monkeypatch.setattr(_calibration, "path", lambda: where)
    monkeypatch.setattr(_calibration, "_TABLE", {})
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        assert _calibration.table() == {}                      # the cache said so already
    assert caught == []
    monkeypatch.setattr(_config, "TUNE_LENGTHS", (64,))
    monkeypatch.setattr(_config, "TUNE_BYTES", 1 << 16)
    monkeypatch.setattr(_config, "TUNE_REPEATS", 1)
    monkeypatch.setattr(_config, "TUNE_MIN_SECONDS", 0.001)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        cli._tune(["md5"], quick=True, every=False)
    assert [w.category for w in caught] == [_cachedir.CacheWarning]
    assert "not stored" in capsys.readouterr().out
    assert _calibration.table()["md5"]["lengths"] == [64]     # used by this process


def test_algorithms_on_the_same_kernels_and_blocks_are_timed_once(table_file, monkeypatch):
    """sha224 runs sha256's kernels on the same 64-byte blocks (sha384 sha512's, shake_256
    sha3_256's rate): one timing serves both, stored under each name; other families and other
    rates are timed apart."""
    groups = _tune.classes(["sha224", "sha256", "sha384", "sha512", "sha3_256",
                                   "shake_256", "sha3_512", "md5"], every=False)
    assert sorted(groups.values()) == [["md5"], ["sha224", "sha256"], ["sha384", "sha512"],
                                       ["sha3_256", "shake_256"], ["sha3_512"]]
    timed = []

    def measure(name, quick=False, every=True):
        timed.append(name)
        return {"lengths": [64], "best": ["x" + name], "seconds": {"x" + name: [1.0]}}
    monkeypatch.setattr(_tune, "measure_algorithm", measure)
    reported = []
    algos, stored = _tune.tune(["sha256", "sha224", "md5"], every=False,
                                      report=lambda name, entry: reported.append(name))
    assert stored and timed == ["sha256", "md5"] and reported == ["sha256", "sha224", "md5"]
    assert algos["sha224"] == algos["sha256"] == {"lengths": [64], "best": ["xsha256"],
                                                  "seconds": {"xsha256": [1.0]}}
    with open(table_file) as f:
        assert set(json.load(f)["algorithms"]) == {"sha224", "sha256", "md5"}


@pytest.mark.skipif(not _cpu.usable("sha", "sha_ni"), reason="no SHA-NI here")
def test_warmup_times_the_interleaved_sha_ni_kernels():
    """The interleaved SHA-NI batch kernels, never the built-in rule's choice, are among what
    warmup compiles and times, next to the widest lanes and the per-message kernel."""
    from jitdigest import _warmup
    for name, interleaved in (("sha256", "sha_ni_x2"), ("sha1", "sha_ni_x4")):
        spec = _algorithms.lookup(name)
        names = [ks.name for ks in _tune.candidates(spec, every=False)]
        assert interleaved in names and "sha_ni" in names, names
        tasks, _ = _warmup.plan([name], tune=True)
        assert [t for t in tasks if t[1] == interleaved], tasks
        untimed, _ = _warmup.plan([name])
        assert not [t for t in untimed if t[1] == interleaved]


def test_warmup_on_one_process_times_each_class_once_after_compiling(table_file, monkeypatch):
    """``jitdigest warmup -j 1``: every kernel set compiled first, then one timing per class of
    algorithms, reported under each name and stored in the table."""
    import io
    from jitdigest import _warmup
    calls = []
    monkeypatch.setattr(_warmup, "compile_one", lambda *task: calls.append(task) or 0.0)
    monkeypatch.setattr(_warmup, "_store_index", lambda names: [])
    entry = {"lengths": [64], "best": ["portable"], "seconds": {"portable": [1.0]}}
    monkeypatch.setattr(_warmup, "tune_one", lambda name: calls.append(name) or (entry, 0.5))
    out = io.StringIO()
    assert _warmup.run(["sha256", "sha224", "md5"], 1, out=out, err=io.StringIO(),
                       tune=True) == 0
    compiled = [c for c in calls if isinstance(c, tuple)]
    timed = [c for c in calls if isinstance(c, str)]
    assert compiled and calls == compiled + timed       # every kernel compiled before timing
    assert timed == ["sha256", "md5"]    # SHA-224 is SHA-256 from another IV (FIPS 180-4)
    assert len(set(compiled)) == len(compiled)          # no kernel set compiled twice
    families = {task[0] for task in compiled}           # the kernel packages compiled from
    assert {"sha256", "md5"} <= families
    assert not families & ({s.family for s in _algorithms.SPECS.values()} - {"sha256", "md5"})
    lines = out.getvalue().splitlines()
    assert [ln.split(":")[0] for ln in lines[-4:-1]] == ["sha256", "sha224", "md5"]
    assert lines[-1].startswith("batch kernels timed in 1.0 s") and table_file in lines[-1]
    with open(table_file) as f:
        assert json.load(f)["algorithms"]["sha224"] == entry


# --- measured automatically (engine/autocal.py) ----------------------------------------------

@pytest.fixture
def auto(table_file, monkeypatch):
    """A private table, nothing tried yet in this process, measuring switched on and small:
    (table file, the algorithms ``autocal.measure`` was called for)."""
    from jitdigest.engine import autocal
    if _cpu.DISABLED or not _cpu.jit_enabled():
        pytest.skip("switches off or interpreted: nothing is measured (test_nothing_measured)")
    monkeypatch.delenv(autocal.ENV, raising=False)
    monkeypatch.setattr(_calibration, "TRIED", set())
    monkeypatch.setattr(_config, "AUTO_LENGTHS", (64, 1024))
    monkeypatch.setattr(_config, "AUTO_BYTES", 1 << 14)
    monkeypatch.setattr(_config, "TUNE_REPEATS", 3)
    monkeypatch.setattr(_config, "AUTO_MIN_SECONDS", 0.0005)
    measured = []
    inner = autocal.measure
    monkeypatch.setattr(autocal, "measure",
                        lambda spec, sets: measured.append(spec.name) or inner(spec, sets))
    return table_file, measured


def test_a_measured_kernel_replaces_the_rule_only_when_every_turn_beat_it():
    """``autocal.decide``: another kernel is taken only where each of its turns, by the margin,
    beat the rule's fastest turn; of several such, the lowest median."""
    from jitdigest.engine import autocal
    m = _config.TUNE_MARGIN
    rule = [1.0, 1.2, 1.1]
    assert autocal.decide("rule", {"rule": rule, "a": [0.5, 0.5, 1.0 / m * 1.01]}) == "rule"
    assert autocal.decide("rule", {"rule": rule, "a": [0.9 / m, 0.8 / m, 0.99 / m]}) == "a"
    assert autocal.decide("rule", {"rule": rule, "a": [0.9 / m, 0.8 / m, 0.95 / m],
                                   "b": [0.7, 0.7, 0.7], "c": [0.1, 0.1, 5.0]}) == "b"
    assert autocal.decide("rule", {"rule": rule}) == "rule"


def two_kernels():
    """(algorithm, rule's kernel set, another) for the first of md5, sha1, sha256 with two
    batch kernels here, the other's ``hash_rows`` loaded (a one-row batch runs it), so that
    a large batch has two to compare without compiling more."""
    for name in ("md5", "sha1", "sha256"):
        spec = _algorithms.lookup(name)
        rule = _dispatch.default_batch_kernels(spec)
        single = _dispatch.default_batch_kernels(spec, 1)
        if single.name != rule.name:
            jitdigest.hash_many(name, [b"x"], threads=1)
            return name, rule, single
    pytest.skip("no algorithm has a second batch kernel here")


def grid(n=512, length=64):
    return np.random.default_rng(3).integers(0, 256, (n, length), dtype=np.uint8)


def check(name, rows, got):
    assert [bytes(r) for r in got] == [hashlib.new(name, bytes(r)).digest() for r in rows]


def test_a_first_large_batch_measures_once_and_stores_the_table(auto, monkeypatch):
    where, measured = auto
    name, rule, single = two_kernels()
    writes = []
    write_whole = _cachedir.write_whole
    monkeypatch.setattr(_cachedir, "write_whole",
                        lambda *a: writes.append(a[0]) or write_whole(*a))
    rows = grid()
    check(name, rows, jitdigest.hash_many(name, rows, threads=1))
    check(name, rows, jitdigest.hash_many(name, rows, threads=1))
    assert measured == [name] and writes == [where]
    with open(where) as f:
        entry = json.load(f)["algorithms"][name]
    assert entry["auto"] is True and entry["lengths"] == [64, 1024]
    timed = set(entry["seconds"])       # these two, and any other batch kernel loaded here
    assert {rule.name, single.name} <= timed and set(entry["best"]) <= timed
    assert timed <= {ks.name for ks in _dispatch.batch_kernel_sets(_algorithms.lookup(name))}
    # another process: reads the table, measures nothing
    monkeypatch.setattr(_calibration, "_TABLE", {})
    monkeypatch.setattr(_calibration, "TRIED", set())
    assert _dispatch.batch_kernels_for(_algorithms.lookup(name), 512, 64).name == \
        entry["best"][0]
    check(name, rows, jitdigest.hash_many(name, rows, threads=1))
    assert measured == [name] and writes == [where]


def test_info_says_where_each_choice_comes_from(auto):
    from jitdigest import _info
    where, measured = auto
    name, _, _ = two_kernels()
    info = jitdigest.info()
    assert info["calibration"].startswith("built-in rule") and name not in info["batch_sources"]
    jitdigest.hash_many(name, grid(), threads=1)
    info = jitdigest.info()
    assert info["batch_sources"][name] == "measured automatically"
    assert "measured automatically for 1 algorithm" in info["calibration"]
    assert where in info["calibration"]
    assert any(line.split()[:2] == ["measured", name] for line in _info.format_lines(info))
    # a tune replaces it; a later automatic measurement does not replace the tuned entry
    tuned = {"lengths": [64], "best": ["portable"], "seconds": {"portable": [1.0]}}
    _calibration.store({name: tuned})
    _calibration.store({name: dict(tuned, auto=True, best=["x"])}, automatic=True)
    info = jitdigest.info()
    assert info["batch_sources"][name] == "tuned" and info["tuned"][name] == {64: "portable"}
    assert any(line.split()[:2] == ["tuned", name] for line in _info.format_lines(info))


def test_an_entry_another_process_stored_meanwhile_is_used_not_measured(auto):
    where, measured = auto
    name, rule, single = two_kernels()
    assert _calibration.table() == {}                    # read: none yet
    write(where, {name: {"lengths": [16384], "best": [single.name], "auto": True}})
    assert _dispatch.batch_kernels_for(_algorithms.lookup(name), 512, 64).name == single.name
    assert measured == []


@pytest.mark.parametrize("why", ["switched off", "untrusted folder", "no compiles", "interpreted",
                                 "switches off"])
def test_nothing_measured(why, table_file, monkeypatch, tmp_path):
    """``JITDIGEST_AUTO_CALIBRATE=0``; a table folder others could write (a table planted
    there is not read either); ``COMPILE_BATCH`` off (``jitdigest sum``); NUMBA_DISABLE_JIT;
    switches off (a table measured so would be wrong for the whole CPU)."""
    from jitdigest.engine import autocal
    monkeypatch.setattr(_calibration, "TRIED", set())
    monkeypatch.delenv(autocal.ENV, raising=False)
    measured = []
    monkeypatch.setattr(autocal, "measure", lambda spec, sets: measured.append(spec) or {})
    monkeypatch.setattr(autocal, "candidates", lambda rule, by_name: [rule, rule])
    spec = _algorithms.lookup("md5")
    if why == "switched off":
        monkeypatch.setenv(autocal.ENV, "0")
    elif why == "untrusted folder":
        folder = tmp_path / "open"
        folder.mkdir()
        folder.chmod(0o777)
        where = str(folder / "calibration-test.json")
        write(where, {"md5": {"lengths": [64], "best": ["planted"]}})
        monkeypatch.setattr(_calibration, "path", lambda: where)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", _cachedir.CacheWarning)
            assert _calibration.table() == {}
    elif why == "no compiles":
        monkeypatch.setattr(_dispatch, "COMPILE_BATCH", False)
    elif why == "interpreted":
        monkeypatch.setattr(_cpu, "jit_enabled", lambda: False)
    else:
        monkeypatch.setattr(_cpu, "DISABLED", frozenset({"avx512"}))
        assert not autocal.enabled()
        return              # (dispatch itself would then choose under those switches)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", _cachedir.CacheWarning)
        _dispatch.batch_kernels_for(spec, 512, 64)
    assert measured == []
    assert not os.path.exists(table_file)


def test_concurrent_first_batches_measure_once_and_leave_one_valid_table(auto):
    """Threads: one measures, the others take the rule meanwhile (never wait); every digest
    right; one entry in a table that parses."""
    import threading
    where, measured = auto
    name, rule, single = two_kernels()
    rows = grid()
    start = threading.Barrier(4)
    results, errors = [], []

    def work():
        try:
            start.wait()
            results.append(jitdigest.hash_many(name, rows, threads=1))
        except BaseException as exc:            # pragma: no cover - reported below
            errors.append(exc)
    threads = [threading.Thread(target=work) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert errors == [] and len(results) == 4
    for got in results:
        check(name, rows, got)
    assert measured == [name]
    with open(where) as f:
        assert json.load(f)["algorithms"][name]["auto"] is True


def test_processes_measuring_at_once_leave_one_valid_table(tmp_path):
    """Two processes (as Dask workers) meeting one table-less cache at once: whatever each
    measured, the file is whole JSON and holds the algorithm; each process's digests right.
    The kernels load from the suite's cache; the table goes to a private file."""
    import subprocess
    import sys
    where = str(tmp_path / "calibration-test.json")
    code = (
        "import hashlib, sys, time, numpy as np, jitdigest\n"
        "from jitdigest.base import config\n"
        "from jitdigest.engine import calibration, dispatch\n"
        f"calibration.path = lambda: {where!r}\n"
        "config.AUTO_BYTES, config.AUTO_LENGTHS = 1 << 14, (64, 1024)\n"
        "name = sys.argv[1]\n"
        "jitdigest.hash_many(name, [b'x'], threads=1)\n"
        "rows = np.arange(512 * 64, dtype=np.uint64).astype(np.uint8).reshape(512, 64)\n"
        "from jitdigest.base.algorithms import lookup\n"
        "spec = lookup(name)\n"
        "dispatch.default_batch_kernels(spec).hash_rows\n"     # the rule's kernel loaded
        "import os, pathlib\n"
        "ready = pathlib.Path(sys.argv[2])\n"
        "(ready / str(os.getpid())).touch()\n"
        "end = time.time() + 60\n"
        "while len(list(ready.iterdir())) < 2 and time.time() < end:\n"    # both loaded
        "    time.sleep(0.005)\n"
        "got = jitdigest.hash_many(name, rows, threads=1)\n"
        "assert all(bytes(got[i]) == hashlib.new(name, bytes(rows[i])).digest()\n"
        "           for i in range(512))\n"
        "print(sorted(calibration.table()))\n")
    name = "md5" if _cpu.usable("avx2", "avx2") else "sha256"
    env = dict(os.environ)
    env.pop("JITDIGEST_AUTO_CALIBRATE", None)
    ready = tmp_path / "ready"
    ready.mkdir()
    procs = [subprocess.Popen([sys.executable, "-c", code, name, str(ready)], env=env,
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
             for _ in range(2)]
    outs = [p.communicate(timeout=600) for p in procs]
    assert [p.returncode for p in procs] == [0, 0], outs
    if _cpu.DISABLED:
        assert not os.path.exists(where)        # nothing measured under switches off
        return
    with open(where) as f:
        assert json.load(f)["algorithms"][name]["auto"] is True
    assert not [p for p in tmp_path.iterdir() if p.name.endswith(".tmp")]


def test_a_forked_child_can_measure_though_a_thread_held_the_lock():
    import os as _os
    from jitdigest.engine import autocal
    if not hasattr(_os, "fork"):
        pytest.skip("no fork here")
    with autocal._LOCK:
        pid = _os.fork()
        if pid == 0:                                            # pragma: no cover - child
            _os._exit(0 if autocal._LOCK.acquire(blocking=False) else 1)
    _, status = _os.waitpid(pid, 0)
    assert _os.waitstatus_to_exitcode(status) == 0
