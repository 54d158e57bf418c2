"""Runs CPython's own ``test_hmac`` / ``test_hashlib`` with jitdigest standing in for ``hashlib``
and jitdigest.hmac for ``hmac``, and prints one JSON object: each test's outcome.

Why a script: the stand-ins must be in ``sys.modules`` before the suite module (and the
``test.support`` helpers it imports) first import ``hashlib``/``hmac``, so the suite runs in a
process of its own (``tests/test_stdlib_suites.py`` starts it and judges the outcomes).

    python tests/stdlib_runner.py test.test_hmac [test.test_hashlib ...] [--skip ID ...]

Tests named by ``--skip`` (unittest ids) are not run: they are reported as "excluded". The
JSON: ``tests`` (id -> outcome, detail, seconds), ``seconds`` (the run), ``modules`` (which
hashlib/hmac each suite module holds) and ``unknown_skips`` (``--skip`` ids no suite has).
"""
import importlib
import importlib.abc
import importlib.util
import json
import sys
import time
import unittest
import warnings

import jitdigest
import jitdigest.base.stdlib
import jitdigest.hmac

STAND_INS = {"hashlib": jitdigest, "hmac": jitdigest.hmac}

# CPython's built-in hash modules and its OpenSSL binding. HashLibTestCase.__init__ collects,
# besides hashlib.<name> and hashlib.new, each algorithm's constructors from these modules
# (through the private ``hashlib.__get_builtin_constructor`` for the built-in ones). Those
# would test CPython's own code, not the stand-in, so they are hidden while the tests are made:
# the suite's own path for a Python built without them ("Did a C extension fail to compile?").
# They stay importable while the suite module itself is imported (its module-level names, such
# as ``_hashlib.HASH`` for isinstance checks, and the skips that depend on them, are kept).
PRIVATE_HASH_MODULES = ("_hashlib", "_md5", "_sha1", "_sha2", "_sha256", "_sha512", "_sha3",
                        "_blake2")            # _sha2: 3.12 on (_sha256 and _sha512 before)


class _StandInFinder(importlib.abc.MetaPathFinder, importlib.abc.Loader):
    """Any later import of ``hashlib``/``hmac`` yields the stand-in again: the suite makes
    "fresh" copies of hashlib (``import_fresh_module``, which removes the ``sys.modules``
    entry and imports again) to test ``pbkdf2_hmac`` with and without OpenSSL; here both copies
    are jitdigest."""

    def find_spec(self, name, path=None, target=None):
        if name in STAND_INS:
            return importlib.util.spec_from_loader(name, self)
        return None

    def create_module(self, spec):
        return STAND_INS[spec.name]

    def exec_module(self, module):
        pass


def install_stand_ins():
    for name, module in STAND_INS.items():
        sys.modules[name] = module
    sys.meta_path.insert(0, _StandInFinder())


class JSONResult(unittest.TestResult):
    """Collects (id, outcome, detail, seconds) per test."""

    def __init__(self):
        super().__init__()
        self.records = {}
        self._started = {}

    def startTest(self, test):
        super().startTest(test)
        self._started[test.id()] = time.perf_counter()

    def _record(self, test, outcome, detail=""):
        started = self._started.get(test.id(), time.perf_counter())
        self.records[test.id()] = {"outcome": outcome, "detail": detail,
                                   "seconds": round(time.perf_counter() - started, 3)}

    def addSuccess(self, test):
        super().addSuccess(test)
        self._record(test, "passed")

    def addFailure(self, test, err):
        super().addFailure(test, err)
        self._record(test, "failed", self._exc_info_to_string(err, test))

    def addError(self, test, err):
        super().addError(test, err)
        self._record(test, "error", self._exc_info_to_string(err, test))

    def addSkip(self, test, reason):
        super().addSkip(test, reason)
        self._record(test, "skipped", reason)

    def addExpectedFailure(self, test, err):
        super().addExpectedFailure(test, err)
        self._record(test, "expected failure")

    def addUnexpectedSuccess(self, test):
        super().addUnexpectedSuccess(test)
        self._record(test, "unexpected success")

    def addSubTest(self, test, subtest, err):
        super().addSubTest(test, subtest, err)
        if err is not None:       # a failing subtest fails its test
            kind = "failed" if issubclass(err[0], test.failureException) else "error"
            self._record(test, kind, self._exc_info_to_string(err, test))


def _flatten(suite):
    for item in suite:
        if isinstance(item, unittest.TestSuite):
            yield from _flatten(item)
        else:
            yield item


def stand_in_report(modules):
    """For each suite module (and ``test.support.hashlib_helper``), its globals that are
    hashlib/hmac modules: "stand-in" (jitdigest) or "stdlib" (the real one: a test through it
    would not test jitdigest)."""
    real = {id(module): name for name, module in jitdigest.base.stdlib.MODULES.items()}
    stand_in = {id(module): name for name, module in STAND_INS.items()}
    report = {}
    for module in modules:
        found = {}
        for attr, value in vars(module).items():
            if id(value) in stand_in:
                found[attr] = "stand-in " + stand_in[id(value)]
            elif id(value) in real:
                found[attr] = "stdlib " + real[id(value)]
        report[module.__name__] = found
    return report


def load(modules):
    """The suites' tests, made while CPython's private hash modules are hidden (see above)."""
    with jitdigest.base.stdlib.swapped(dict.fromkeys(PRIVATE_HASH_MODULES)), \
            warnings.catch_warnings():
        warnings.filterwarnings("ignore", "Did a C extension fail to compile")
        loader = unittest.TestLoader()
        return [t for m in modules for t in _flatten(loader.loadTestsFromModule(m))]


def main(argv):
    names, skip = [], set()
    args = iter(argv)
    for arg in args:
        if arg == "--skip":
            skip.add(next(args))
        else:
            names.append(arg)
    install_stand_ins()
    from test import support
    support.use_resources = []        # as regrtest without -u: no network, no big memory
    modules = [importlib.import_module(name) for name in names]
    tests = load(modules)
    result = JSONResult()
    for test in tests:
        if test.id() in skip:
            result.records[test.id()] = {"outcome": "excluded", "detail": "", "seconds": 0}
    started = time.perf_counter()
    unittest.TestSuite([t for t in tests if t.id() not in skip]).run(result)
    from test.support import hashlib_helper
    report = {"tests": result.records,
              "seconds": round(time.perf_counter() - started, 3),
              "modules": stand_in_report(modules + [hashlib_helper]),
              "unknown_skips": sorted(skip - {t.id() for t in tests})}
    json.dump(report, sys.stdout, indent=1, sort_keys=True)
    print()


if __name__ == "__main__":
    main(sys.argv[1:])
