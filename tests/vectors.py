"""Reading the known answers: the NIST CAVP byte-oriented .rsp files, the RFC 1321 MD5 suite and
the BLAKE2 examples of RFC 7693, all in the CAVP text format; and BLAKE3's official
``test_vectors.json``.

Two folders hold them. The full files live beside the repository in ``../shared/vectors``
(``JITDIGEST_VECTORS`` points elsewhere) and are never copied in; ``tests/data`` holds a small
subset of them made by ``tools/make_test_data.py`` (and RFC 7693's examples, which only it has).
Each file is read from the full folder when it is there and from ``tests/data`` otherwise, so a
clone without the full files still checks known answers for every algorithm. Every reader
counts what it read against the file's answer lines (a plain count, independent of the parser)
and fails, never skips, when a file is missing or yields no answer.
"""
import json
import os
import pathlib
import re

REPO = pathlib.Path(__file__).resolve().parent.parent
DATA = REPO / "tests" / "data"
VECTORS = pathlib.Path(os.environ.get("JITDIGEST_VECTORS", REPO.parent / "shared" / "vectors"))

# algorithm -> (folder, file stem)
NIST_FILES = {
    "sha1": ("shabytetestvectors", "SHA1"),
    "sha224": ("shabytetestvectors", "SHA224"),
    "sha256": ("shabytetestvectors", "SHA256"),
    "sha384": ("shabytetestvectors", "SHA384"),
    "sha512": ("shabytetestvectors", "SHA512"),
    "sha512_224": ("shabytetestvectors", "SHA512_224"),
    "sha512_256": ("shabytetestvectors", "SHA512_256"),
    "sha3_224": ("sha-3bytetestvectors", "SHA3_224"),
    "sha3_256": ("sha-3bytetestvectors", "SHA3_256"),
    "sha3_384": ("sha-3bytetestvectors", "SHA3_384"),
    "sha3_512": ("sha-3bytetestvectors", "SHA3_512"),
    "shake_128": ("shakebytetestvectors", "SHAKE128"),
    "shake_256": ("shakebytetestvectors", "SHAKE256"),
}
MD5_SUITE = "md5/rfc-1321.txt"
BLAKE2_EXAMPLES = "blake2/rfc-7693.txt"
BLAKE3_VECTORS = "blake3/test_vectors.json"

_ANSWER = re.compile(r"^\s*(MD|Output)\s*=", re.MULTILINE)


def relative_path(algorithm, kind):
    """The file's path under either folder."""
    if algorithm == "md5":
        return MD5_SUITE
    if algorithm.startswith("blake2"):
        return BLAKE2_EXAMPLES
    if algorithm == "blake3":
        return BLAKE3_VECTORS
    folder, stem = NIST_FILES[algorithm]
    return f"{folder}/{stem}{kind}.rsp"


def vector_path(algorithm, kind):
    """The full file when present, else the subset in tests/data (which must be there)."""
    rel = relative_path(algorithm, kind)
    full = VECTORS / rel
    if full.is_file():
        return full
    path = DATA / rel
    if not path.is_file():
        raise FileNotFoundError(f"known answers missing: neither {full} nor {path} exists "
                                f"(tests/data is made by tools/make_test_data.py)")
    return path


def source_of(path):
    """"tests/data" or "full" (the folder JITDIGEST_VECTORS names)."""
    return "tests/data" if pathlib.Path(path).is_relative_to(DATA) else "full"


def label(algorithm, kind, part=""):
    """What a test read, for its report: ("sha256", "ShortMsg", "tests/data"); the MD5 and
    BLAKE2 files are named by their RFC, with ``part`` added when a test reads only part."""
    source = source_of(vector_path(algorithm, kind))
    if not kind:
        kind = {"md5": "RFC 1321", "blake3": "test_vectors.json"}.get(algorithm, "RFC 7693")
    return (algorithm, f"{kind} {part}".strip(), source)


def answer_lines(path):
    """How many ``MD =`` / ``Output =`` lines the file has: the number of answers in it."""
    return len(_ANSWER.findall(pathlib.Path(path).read_text()))


def parse_rsp(path):
    """(header, records): header is the [K = V] settings, records are dicts of KEY = VALUE
    lines, one per blank-line-separated group; a record inherits no header values."""
    header, records, current = {}, [], {}
    for raw in pathlib.Path(path).read_text().splitlines():
        line = raw.strip()
        if not line or line.startswith("#"):
            if current:
                records.append(current)
                current = {}
            continue
        if line.startswith("["):
            body = line.strip("[]")
            if "=" in body:
                key, value = body.split("=", 1)
                header[key.strip()] = value.strip()
            continue
        key, value = line.split("=", 1)
        current[key.strip()] = value.strip()
    if current:
        records.append(current)
    return header, records


def _counted(path, found, what):
    expected = answer_lines(path)
    assert found == expected, f"{path}: read {found} {what}, the file has {expected} answers"
    assert found > 0, f"{path}: no {what}"
    return found


def messages(algorithm, kind):
    """[(message bytes, expected digest bytes, output length in bytes)] from a ShortMsg,
    LongMsg or VariableOut file (or the MD5 suite): every answer in the file."""
    path = vector_path(algorithm, kind)
    header, records = parse_rsp(path)
    out = []
    for rec in records:
        if "Msg" not in rec:
            continue
        nbits = int(rec.get("Len", header.get("Input Length", "0")))
        msg = bytes.fromhex(rec["Msg"])[: nbits // 8]
        assert len(msg) * 8 == nbits, f"{path}: Len = {nbits} but Msg is shorter"
        expected = bytes.fromhex(rec.get("MD") or rec["Output"])
        if "Outputlen" in rec:
            assert len(expected) * 8 == int(rec["Outputlen"]), f"{path}: Outputlen {rec}"
        out.append((msg, expected, len(expected)))
    _counted(path, len(out), "messages")
    return out


def monte(algorithm):
    """(header, seed bytes, [(expected checkpoint bytes, output length bits or None)]): the
    checkpoints in order, COUNT = 0, 1, ... without a gap, and every one in the file."""
    path = vector_path(algorithm, "Monte")
    header, records = parse_rsp(path)
    seed = None
    checkpoints = []
    for rec in records:
        if "Seed" in rec:
            seed = bytes.fromhex(rec["Seed"])
        elif "Msg" in rec and "COUNT" not in rec:
            seed = bytes.fromhex(rec["Msg"])
        if "COUNT" in rec:
            assert int(rec["COUNT"]) == len(checkpoints), f"{path}: COUNT out of order: {rec}"
            value = rec.get("MD") or rec["Output"]
            checkpoints.append((bytes.fromhex(value), rec.get("Outputlen")))
    assert seed is not None, f"{path}: no seed"
    _counted(path, len(checkpoints), "Monte checkpoints")
    return header, seed, checkpoints


def blake2_examples(algorithm):
    """RFC 7693's examples for blake2b or blake2s: ([(message, expected digest)], (digest
    lengths, input lengths, expected grand hash) of the Appendix E self-test)."""
    path = vector_path(algorithm, "")
    _, records = parse_rsp(path)
    mine = [rec for rec in records if rec.get("Algorithm") == algorithm]
    cases = [(bytes.fromhex(rec["Msg"])[: int(rec["Len"]) // 8], bytes.fromhex(rec["MD"]))
             for rec in mine if "Msg" in rec]
    selftests = [(tuple(int(v) for v in rec["Outlens"].split(",")),
                  tuple(int(v) for v in rec["Inlens"].split(",")), bytes.fromhex(rec["MD"]))
                 for rec in mine if "Selftest" in rec]
    _counted(path, sum(1 for rec in records if "Algorithm" in rec), "RFC 7693 examples")
    assert cases and len(selftests) == 1, f"{path}: {algorithm}: {len(cases)} examples, " \
                                          f"{len(selftests)} self-tests"
    return cases, selftests[0]


def blake3_input(length):
    """The input of BLAKE3's official vectors: bytes 0, 1, ..., 250 repeated."""
    return bytes(range(251)) * (length // 251) + bytes(range(length % 251))


def blake3_vectors():
    """(key bytes, context string, [(input length, {"hash"|"keyed_hash"|"derive_key": expected
    extended output bytes})]): every case of BLAKE3's test_vectors.json (or of its subset)."""
    path = vector_path("blake3", "")
    text = pathlib.Path(path).read_text()
    doc = json.loads(text)
    cases = [(case["input_len"], {mode: bytes.fromhex(case[mode])
                                  for mode in ("hash", "keyed_hash", "derive_key")})
             for case in doc["cases"]]
    _counted_cases(path, len(cases), text.count('"input_len"'))
    return doc["key"].encode("ascii"), doc["context_string"], cases


def _counted_cases(path, found, expected):
    assert found == expected, f"{path}: read {found} cases, the file has {expected}"
    assert found > 0, f"{path}: no cases"
