"""The ``jitdigest`` command line: ``sum`` (file fingerprints, coreutils-style output),
``warmup`` (compile and cache kernels ahead of time) and ``info`` (what serves each algorithm)."""
import argparse
import sys

from . import _algorithms


def _cmd_warmup(args):
    from . import _dispatch
    names = args.algorithms or sorted(_algorithms.SPECS)
    for name in names:
        spec = _algorithms.lookup(name)
        ks = _dispatch.kernels_for(spec)
        ks.compile_all()
        print(f"{spec.name}: {ks.name} kernels compiled and cached")
    return 0


def _cmd_info(args):
    from . import info
    for key, value in info().items():
        if isinstance(value, dict):
            print(f"{key}:")
            for k, v in value.items():
                print(f"  {k} = {v}")
        else:
            print(f"{key} = {value}")
    return 0


def _cmd_sum(args):
    from . import file_digest
    status = 0
    for path in args.files or ["-"]:
        try:
            if path == "-":
                digest = file_digest(sys.stdin.buffer, args.algorithm)
            else:
                with open(path, "rb") as f:
                    digest = file_digest(f, args.algorithm)
        except OSError as exc:
            print(f"jitdigest: {path}: {exc.strerror}", file=sys.stderr)
            status = 1
            continue
        hexdigest = digest.hexdigest(args.length // 8) if not digest.digest_size else digest.hexdigest()
        print(f"{hexdigest}  {path}")
    return status


def build_parser():
    parser = argparse.ArgumentParser(prog="jitdigest", description=__doc__.split("\n")[0])
    sub = parser.add_subparsers(dest="command", required=True)

    p_sum = sub.add_parser("sum", help="print checksums of FILEs, like sha256sum")
    p_sum.add_argument("files", nargs="*", metavar="FILE", help="files to hash ('-' or none: stdin)")
    p_sum.add_argument("-a", "--algorithm", default="sha256",
                       help="digest algorithm (default sha256); any name jitdigest.new() takes")
    p_sum.add_argument("-l", "--length", type=int, default=256,
                       help="output length in bits for SHAKE (default 256)")
    p_sum.set_defaults(func=_cmd_sum)

    p_warm = sub.add_parser("warmup", help="compile and cache the kernels of ALGOs (default: all)")
    p_warm.add_argument("algorithms", nargs="*", metavar="ALGO")
    p_warm.set_defaults(func=_cmd_warmup)

    p_info = sub.add_parser("info", help="versions, CPU features, switches and kernels in use")
    p_info.set_defaults(func=_cmd_info)
    return parser


def main(argv=None):
    args = build_parser().parse_args(argv)
    try:
        return args.func(args)
    except ValueError as exc:
        print(f"jitdigest: {exc}", file=sys.stderr)
        return 2
