"""``--match KNOWN`` / ``--no-match KNOWN`` (hashdeep's -m and -x): of the files hashed, print
the lines of those whose digest is (or is not) in a known set, the union of one or more
manifests in any format ``manifest`` reads. Names in KNOWN play no part, only digests. The
algorithm is -a's, or, without -a, the one the known manifests' tags or --json lines name."""
import os

from . import algos, b3sum, manifest as _manifest
from .errors import FatalError, UsageError
from .output import write_sums


def select(inputs, args, algo, explicit, hashed, out):
    """Hash the Items ``inputs`` and write the lines of those selected; True if every file
    and every KNOWN manifest was read."""
    if args.match is not None and args.no_match is not None:
        raise UsageError("--match and --no-match cannot be combined")
    paths = args.match if args.match is not None else args.no_match
    want = args.match is not None
    b3 = isinstance(algo, algos.Keyed)
    if isinstance(algo, algos.Several):
        raise UsageError("--match and --no-match take one algorithm")
    known = []
    ok = True
    for path in paths:
        found = _manifest.read(os.fsencode(path), out, algo,
                               strict=explicit or b3, b3=b3)
        if found is None:
            ok = False
        else:
            known.append(found)
    if not known:
        raise FatalError("no known digests to compare with")
    kinds = list(dict.fromkeys(k for m in known for k in m.algorithms()))
    if len(kinds) > 1:
        raise FatalError("the known manifests hold digests of several algorithms ("
                         + ", ".join(f"{name}:{bits}" for name, bits in kinds)
                         + "); choose one with -a")
    algo = next(iter(known[0].entries.values())).algo
    digests = {e.digest for m in known for e in m.entries.values()}

    def selected(items):
        for item in hashed(items):
            if item.error is not None or (bytes(item.digest) in digests) == want:
                yield item

    if b3 and args.audit is None and not args.json:
        return b3sum.write_sums(_with(inputs, algo), algo, args, selected, out) and ok
    return write_sums(inputs, args, algo, selected, out) and ok


def _with(items, algo):
    for item in items:
        item.algo = algo
        yield item
