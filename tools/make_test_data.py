#!/usr/bin/env python3
"""Make tests/data/: a small subset of the published known answers, kept in the repository so
that a clone without the full NIST CAVP files still runs a known-answer test for every algorithm.

From the full byte-oriented CAVP files (``JITDIGEST_VECTORS``, default ``../shared/vectors``
beside the repository; each file checked against the sha256 in its ``MANIFEST.txt`` first) it
copies, verbatim and in the same format, a few records per file (the ``pick_*`` functions say
which). The RFC 1321 MD5 suite is copied whole; the BLAKE2 examples of RFC 7693 (``RFC7693``),
which are not among the CAVP files, are written from the values printed in the RFC; BLAKE3's
official ``test_vectors.json`` gives a JSON file of the same form holding the cases of a few
input lengths (its first key names the source). Every file starts with a line naming the source.

    python tools/make_test_data.py            (re)write tests/data/
    python tools/make_test_data.py --check    exit 1 if tests/data/ differs from a fresh subset
"""
import argparse
import difflib
import hashlib
import json
import os
import pathlib
import sys

ROOT = pathlib.Path(__file__).resolve().parent.parent
DEFAULT_SOURCE = pathlib.Path(os.environ.get("JITDIGEST_VECTORS",
                                             ROOT.parent / "shared" / "vectors"))
DEFAULT_OUTPUT = ROOT / "tests" / "data"
GENERATOR = "tools/make_test_data.py"

# CAVP file stem -> (folder, block or rate in bytes, fewest bytes the padding adds)
STEMS = {
    "SHA1": ("shabytetestvectors", 64, 9),
    "SHA224": ("shabytetestvectors", 64, 9),
    "SHA256": ("shabytetestvectors", 64, 9),
    "SHA384": ("shabytetestvectors", 128, 17),
    "SHA512": ("shabytetestvectors", 128, 17),
    "SHA512_224": ("shabytetestvectors", 128, 17),
    "SHA512_256": ("shabytetestvectors", 128, 17),
    "SHA3_224": ("sha-3bytetestvectors", 144, 1),
    "SHA3_256": ("sha-3bytetestvectors", 136, 1),
    "SHA3_384": ("sha-3bytetestvectors", 104, 1),
    "SHA3_512": ("sha-3bytetestvectors", 72, 1),
    "SHAKE128": ("shakebytetestvectors", 168, 1),
    "SHAKE256": ("shakebytetestvectors", 136, 1),
}
KINDS = ("ShortMsg", "LongMsg", "Monte")
MD5_SUITE = "md5/rfc-1321.txt"
BLAKE2_FILE = "blake2/rfc-7693.txt"
BLAKE3_FILE = "blake3/test_vectors.json"
# BLAKE3 input lengths kept: empty, one byte, one block and one more byte, one chunk and one more
# byte, and the first lengths whose tree needs a parent of parents (3 chunks) and a deeper stack.
BLAKE3_LENGTHS = (0, 1, 64, 65, 1024, 1025, 2049, 4097)

MONTE_CHECKPOINTS = 3
LONG_SHORTEST = 3
LONG_AT_LEAST = 1024            # bytes: one LongMsg record of many blocks

# RFC 7693, as printed: Appendix A (BLAKE2b-512 of "abc"), Appendix B (BLAKE2s-256 of "abc"),
# Appendix E (the self-test: digest and input lengths, and the grand hash of its results).
RFC7693 = (
    ("blake2b", "ba80a53f981c4d0d6a2797b69f12f6e94c212f14685ac4b74b12bb6fdbffa2d1"
                "7d87c5392aab792dc252d5de4533cc9518d38aa8dbf1925ab92386edd4009923",
     (20, 32, 48, 64), (0, 3, 128, 129, 255, 1024),
     "c23a7800d98123bd10f506c61e29da5603d763b8bbad2e737f5e765a7bccd475"),
    ("blake2s", "508c5e8c327c14e2e1a72ba34eeb452f37458b209ed63a294d999b4c86675982",
     (16, 20, 28, 32), (0, 3, 64, 65, 255, 1024),
     "6a411f08ce25adcdfb02aba641451cec53c598b24f4fc787fbdc88797f4c1dfe"),
)


# --- reading a CAVP file as text blocks ------------------------------------------------------

def blocks(text):
    """The file as (kind, lines) blocks in order: "comment" (# lines), "header" ([...] lines) or
    "record" (KEY = VALUE lines up to the next blank line, comment or header)."""
    out, current = [], None
    for raw in text.splitlines():
        line = raw.rstrip()
        if not line.strip():
            current = None
            continue
        kind = "comment" if line.startswith("#") else "header" if line.startswith("[") \
            else "record"
        if current is None or current[0] != kind or kind == "header":
            current = (kind, [])
            out.append(current)
        current[1].append(line)
    return out


def fields(lines):
    return dict((part.strip() for part in line.split("=", 1)) for line in lines)


def nbytes(rec):
    return int(rec["Len"]) // 8


# --- choosing records -----------------------------------------------------------------------

def pick_short(records, block, pad):
    """ShortMsg: Len = 0, 1 and 3 bytes, and the lengths around the block (rate) and its padding
    edge (for Merkle-Damgard the last length whose length field still fits the final block and
    the first that does not), once and twice the block where the file has them."""
    wanted = {0, 1, 3}
    for k in (1, 2):
        wanted |= {k * block - pad, k * block - pad + 1, k * block - 1, k * block,
                   k * block + 1}
    return [i for i, rec in enumerate(records) if nbytes(rec) in wanted]


def pick_long(records, block, pad):
    """LongMsg: the three shortest messages and the first of at least 1 KiB."""
    order = sorted(range(len(records)), key=lambda i: nbytes(records[i]))
    chosen = set(order[:LONG_SHORTEST])
    chosen.add(next(i for i in order if nbytes(records[i]) >= LONG_AT_LEAST))
    return sorted(chosen)


def pick_monte(records, block, pad):
    """Monte: the seed (a record without COUNT) and the first checkpoints, COUNT 0, 1, ...
    (each depends on the one before)."""
    keep, checkpoints = [], 0
    for i, rec in enumerate(records):
        if "COUNT" not in rec:
            keep.append(i)
        elif int(rec["COUNT"]) == checkpoints and checkpoints < MONTE_CHECKPOINTS:
            keep.append(i)
            checkpoints += 1
    return keep


def pick_variable(records, block, pad):
    """VariableOut (SHAKE): the first record of each interesting output length: the shortest
    and longest, 32 bytes, and the rate - 1, rate and rate + 1 where the file reaches them."""
    lengths = [len(rec["Output"]) // 2 for rec in records]
    wanted = {min(lengths), max(lengths), 32, block - 1, block, block + 1}
    keep, seen = [], set()
    for i, n in enumerate(lengths):
        if n in wanted and n not in seen:
            keep.append(i)
            seen.add(n)
    return keep


PICKERS = {"ShortMsg": pick_short, "LongMsg": pick_long, "Monte": pick_monte,
           "VariableOut": pick_variable}


# --- writing ----------------------------------------------------------------------------------

def header_line(source, digest, kept, total):
    return (f"# generated by {GENERATOR} from {source} (sha256 {digest[:16]}...): "
            f"{kept} of {total} records; do not edit")


def subset(rel, text, digest, picker, block, pad):
    """The subset file's text: the header line, the source's comments and [..] settings, and
    the chosen records verbatim, each followed by a blank line."""
    parts = blocks(text)
    records = [fields(lines) for kind, lines in parts if kind == "record"]
    chosen = set(picker(records, block, pad))
    counted = [i for i in sorted(chosen) if "MD" in records[i] or "Output" in records[i]]
    if not counted:
        raise SystemExit(f"{rel}: no records chosen")
    total = sum(1 for rec in records if "MD" in rec or "Output" in rec)
    out = [header_line(rel, digest, len(counted), total)]
    index, previous = 0, None
    for kind, lines in parts:
        if kind == "record":
            keep = index in chosen
            index += 1
            if not keep:
                continue
        if previous == "header" and kind != "header":
            out.append("")
        out.extend(lines)
        if kind != "header":
            out.append("")
        previous = kind
    return "\n".join(out).rstrip("\n") + "\n"


def rfc7693_text():
    out = [f"# generated by {GENERATOR} from RFC 7693 (Appendix A and B: the digest of \"abc\"; "
           "Appendix E: the self-test grand hash); do not edit", ""]
    for name, abc, md_lens, in_lens, grand in RFC7693:
        out += [f"Algorithm = {name}", "Len = 24", "Msg = 616263", f"MD = {abc}", ""]
    for name, abc, md_lens, in_lens, grand in RFC7693:
        out += [f"Algorithm = {name}", "Selftest = Appendix E",
                f"Outlens = {','.join(map(str, md_lens))}",
                f"Inlens = {','.join(map(str, in_lens))}", f"MD = {grand}", ""]
    return "\n".join(out).rstrip("\n") + "\n"


def blake3_subset(text, digest):
    """The BLAKE3 subset: the source's fields and the cases of BLAKE3_LENGTHS, in its order."""
    doc = json.loads(text)
    cases = [case for case in doc["cases"] if case["input_len"] in BLAKE3_LENGTHS]
    if len(cases) != len(BLAKE3_LENGTHS):
        raise SystemExit(f"{BLAKE3_FILE}: lengths {BLAKE3_LENGTHS} not all found")
    out = {"_generated": header_line(BLAKE3_FILE, digest, len(cases), len(doc["cases"]))[2:]}
    out.update((k, v) for k, v in doc.items() if k != "cases")
    out["cases"] = cases
    return json.dumps(out, indent=2) + "\n"


def manifest(source):
    """{relative path: sha256} from the source's MANIFEST.txt."""
    sums = {}
    for line in (source / "MANIFEST.txt").read_text().splitlines():
        parts = line.split()
        if len(parts) == 3 and not line.startswith("#"):
            sums[parts[2].removeprefix("./")] = parts[0]
    return sums


def read_source(source, sums, rel):
    data = (source / rel).read_bytes()
    digest = hashlib.sha256(data).hexdigest()
    if sums.get(rel) != digest:
        raise SystemExit(f"{source / rel}: sha256 {digest} is not the one in MANIFEST.txt "
                         f"({sums.get(rel)})")
    return data.decode("ascii"), digest


def generate(source):
    """{relative path: text} of every file tests/data/ should hold."""
    source = pathlib.Path(source)
    sums = manifest(source)
    files = {}
    for stem, (folder, block, pad) in STEMS.items():
        kinds = KINDS + (("VariableOut",) if stem.startswith("SHAKE") else ())
        for kind in kinds:
            rel = f"{folder}/{stem}{kind}.rsp"
            text, digest = read_source(source, sums, rel)
            files[rel] = subset(rel, text, digest, PICKERS[kind], block, pad)
    text, digest = read_source(source, sums, MD5_SUITE)
    total = text.count("MD =")
    files[MD5_SUITE] = header_line(MD5_SUITE, digest, total, total) + "\n" + text
    files[BLAKE2_FILE] = rfc7693_text()
    text, digest = read_source(source, sums, BLAKE3_FILE)
    files[BLAKE3_FILE] = blake3_subset(text, digest)
    return files


def differences(files, output):
    """Lines of a unified diff between ``files`` and what ``output`` holds (and the names of
    files there that should not be)."""
    output = pathlib.Path(output)
    diff = []
    for rel, text in sorted(files.items()):
        path = output / rel
        old = path.read_text() if path.is_file() else ""
        if old != text:
            diff += difflib.unified_diff(old.splitlines(), text.splitlines(),
                                         f"{rel} (committed)", f"{rel} (fresh)", lineterm="")
    present = {p.relative_to(output).as_posix() for p in output.rglob("*") if p.is_file()}
    diff += [f"unexpected file {rel}" for rel in sorted(present - set(files))]
    return diff


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--vectors", default=str(DEFAULT_SOURCE),
                        help="folder of the full vectors (default: %(default)s)")
    parser.add_argument("--output", default=str(DEFAULT_OUTPUT),
                        help="folder to write (default: %(default)s)")
    parser.add_argument("--check", action="store_true",
                        help="write nothing; exit 1 if the output folder differs")
    args = parser.parse_args(argv)
    files = generate(args.vectors)
    if args.check:
        diff = differences(files, args.output)
        if diff:
            print("\n".join(diff[:200]))
            print(f"{args.output} is stale: run python {GENERATOR}")
            return 1
        print(f"{args.output}: {len(files)} files, up to date")
        return 0
    output = pathlib.Path(args.output)
    for rel, text in files.items():
        path = output / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    size = sum(len(t) for t in files.values())
    print(f"wrote {len(files)} files, {size} bytes, under {output}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
