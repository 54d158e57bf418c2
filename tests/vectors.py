"""Reading the NIST CAVP byte-oriented .rsp files and the RFC 1321 suite.

The files live beside the repository in ``../shared/vectors`` (never copied into it);
``JITDIGEST_VECTORS`` points elsewhere. Tests skip with the reason when they are absent.
"""
import os
import pathlib

import pytest

REPO = pathlib.Path(__file__).resolve().parent.parent
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


def vector_path(algorithm, kind):
    """Path of a vector file, or a pytest skip naming what is missing."""
    if algorithm == "md5":
        path = VECTORS / "md5" / "rfc-1321.txt"
    else:
        folder, stem = NIST_FILES[algorithm]
        path = VECTORS / folder / f"{stem}{kind}.rsp"
    if not path.is_file():
        pytest.skip(f"test vectors not found: {path} (set JITDIGEST_VECTORS to the folder "
                    f"holding the NIST CAVP byte-oriented files)")
    return path


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


def messages(algorithm, kind):
    """[(message bytes, expected digest bytes, output length in bytes)] from a ShortMsg,
    LongMsg or VariableOut file (or the MD5 suite)."""
    header, records = parse_rsp(vector_path(algorithm, kind))
    out = []
    for rec in records:
        if "Msg" not in rec:
            continue
        nbits = int(rec.get("Len", header.get("Input Length", "0")))
        msg = bytes.fromhex(rec["Msg"])[: nbits // 8]
        expected = bytes.fromhex(rec.get("MD") or rec["Output"])
        out.append((msg, expected, len(expected)))
    return out


def monte(algorithm):
    """(header, seed bytes, [expected checkpoint bytes, output length bits or None])."""
    header, records = parse_rsp(vector_path(algorithm, "Monte"))
    seed = None
    checkpoints = []
    for rec in records:
        if "Seed" in rec:
            seed = bytes.fromhex(rec["Seed"])
        elif "Msg" in rec and "COUNT" not in rec:
            seed = bytes.fromhex(rec["Msg"])
        if "COUNT" in rec:
            value = rec.get("MD") or rec["Output"]
            checkpoints.append((bytes.fromhex(value), rec.get("Outputlen")))
    return header, seed, checkpoints
