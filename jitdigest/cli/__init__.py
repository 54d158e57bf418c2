"""The ``jitdigest`` command line (also ``python -m jitdigest``): argument parsing and the
subcommands' wiring. ``sum`` fingerprints files as coreutils' sha256sum/md5sum/b2sum do (the
work is in the ``sum`` package), ``warmup`` compiles and caches kernels, ``tune`` times the
batch kernels on this CPU, ``info`` says what serves each algorithm. A new subcommand is one
entry in COMMANDS."""
import argparse
import sys

from . import parser as _parser
from .parser import PROG, _Parser
from ..base import config as _config
from ..engine import cpu as _cpu
from .sum_command import SUM_DESCRIPTION, SUM_EPILOG, _cmd_sum, _configure_sum


# --- warmup, info -----------------------------------------------------------------------

def _configure_warmup(p):
    p.add_argument("algorithms", nargs="*", metavar="ALGO",
                   help="algorithms to compile (any name jitdigest.new() takes; default: all)")
    p.add_argument("-j", "--jobs", type=int, default=0, metavar="N",
                   help="compile on N processes (default 0: one per CPU)")
    p.add_argument("--no-tune", action="store_true",
                   help="do not time the batch kernels (see 'tune')")


def _names(args):
    """The canonical names asked for (every row of the table without any; an unknown name:
    the usage error, up front)."""
    from ..base import algorithms as _algorithms
    if not args.algorithms:
        return sorted(_algorithms.TABLE)
    return list(dict.fromkeys(_algorithms.lookup_any(name).name for name in args.algorithms))


def _cmd_warmup(args):
    import os
    from .. import _warmup
    names = _names(args)
    if args.jobs < 0:
        raise ValueError(f"invalid number of jobs: {args.jobs}")
    # interpreted (NUMBA_DISABLE_JIT=1) there is nothing to compile, and timing the
    # interpreter would take hours and pick nothing a compiled run could use
    return _warmup.run(names, args.jobs or os.cpu_count() or 1,
                       tune=not args.no_tune and _cpu.jit_enabled())


def _configure_tune(p):
    p.add_argument("algorithms", nargs="*", metavar="ALGO",
                   help="algorithms to time (any name jitdigest.new() takes; default: all)")
    p.add_argument("--quick", action="store_true",
                   help="a quarter of the data per length, turns half as long (faster, noisier)")


def _cmd_tune(args):
    from ..base import algorithms as _algorithms
    names = _names(args)
    timed = [name for name in names if _algorithms.TABLE[name].hashlib]
    if not _cpu.jit_enabled():
        print("nothing to time: the kernels run interpreted (NUMBA_DISABLE_JIT=1)")
    elif timed:
        _tune(timed, quick=args.quick, every=True)
    else:       # rows hashlib lacks: their batch kernels follow the CPU's features, no table
        print(f"nothing to time: {_algorithms.TABLE[names[0]].bsd_tag}'s batch kernel is "
              "chosen by the CPU's features")
    return 0


def _tune(names, quick, every):
    import time
    from .. import _tune as tuning
    start = time.perf_counter()
    _, stored = tuning.tune(
        names, quick=quick, every=every,
        report=lambda name, entry: print(tuning.describe(name, entry), flush=True))
    from ..engine import calibration
    where = calibration.path() if stored else "not stored (see the warning above)"
    print(f"batch kernels timed in {time.perf_counter() - start:.1f} s; table: {where}")


def _configure_cache(p):
    p.add_argument("action", choices=("info", "clear"),
                   help="info: where compiled kernels are kept and how big they are; "
                        "clear: remove them (every version's)")


def _cmd_cache(args):
    from ..base import cachedir as _cachedir
    if args.action == "clear":
        removed, size = _cachedir.clear()
        print(f"removed {removed} folder{'' if removed == 1 else 's'} "
              f"({size / 1e6:.1f} MB) from {_cachedir.root()}")
        return 0
    data = _cachedir.describe()
    print(f"root {data['root']}")
    print(f"this version {data['directory']}")
    for entry in data["entries"]:
        mark = "  (this version)" if entry["current"] else ""
        print(f"{entry['name']}  {entry['files']} files  {entry['bytes'] / 1e6:.1f} MB{mark}")
    total = sum(e["bytes"] for e in data["entries"])
    print(f"total {total / 1e6:.1f} MB in {len(data['entries'])} folder"
          f"{'' if len(data['entries']) == 1 else 's'}")
    return 0


def _configure_info(p):
    pass


def _cmd_info(args):
    from .._info import format_lines
    print("\n".join(format_lines()))
    return 0


# name: (one-line help, description, epilog, configure(parser), run(args) -> exit status)
COMMANDS = {
    "sum": ("print or check message digests of files, like sha256sum",
            SUM_DESCRIPTION, SUM_EPILOG, _configure_sum, _cmd_sum),
    "warmup": ("compile and cache the kernels of ALGOs (default: all)",
               "Compile every kernel this CPU will use for the named algorithms (the "
               "per-message ones and the batch ones behind hash_many), on all cores, and store "
               "them in the kernel cache, so that later runs load them and compile nothing; "
               "meanwhile, time the batch kernels (as 'tune --quick' does, the widest lanes, "
               "interleaved SHA-NI and the per-message kernel).",
               None, _configure_warmup, _cmd_warmup),
    "tune": ("time every batch kernel on this CPU and keep the fastest per message length",
             "Time each batch kernel this CPU can run (every SIMD lane width and the "
             "per-message kernel, e.g. SHA-NI) on rows of 16 B to 16 KiB, one core, and store "
             "per algorithm and length the fastest (a kernel replaces the built-in choice only "
             f"when it is at least {round((_config.TUNE_MARGIN - 1) * 100)}% faster in the "
             "median) in the kernel cache, where "
             "hash_many reads it. 'warmup' does this too, for the kernels it compiles.",
             None, _configure_tune, _cmd_tune),
    "cache": ("show where compiled kernels are kept, or remove them",
              "Compiled kernels are kept per user, outside the installed package: in "
              "$JITDIGEST_CACHE_DIR, else $NUMBA_CACHE_DIR/jitdigest, else the user cache "
              "directory (~/.cache/jitdigest on Linux), one folder per version.",
              None, _configure_cache, _cmd_cache),
    "info": ("versions, CPU features, switches and the kernel serving each algorithm",
             "Print versions, whether the JIT is on, CPU and target features, the "
             "JITDIGEST_DISABLE switches in force and the kernel serving each algorithm.",
             None, _configure_info, _cmd_info),
}


def build_parser():
    """The top-level parser; its subparsers are in ``parser.commands`` by name."""
    from .. import __version__
    parser = _Parser(prog=PROG, description="Message digests of files and the kernels behind "
                     "them (hashlib's algorithms as Numba kernels). 'jitdigest COMMAND --help' "
                     "describes each command.")
    parser.add_argument("--version", action="version", version=f"{PROG} {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", required=True,
                                parser_class=_Parser)
    parser.commands = {}
    for name, (help_, description, epilog, configure, run) in COMMANDS.items():
        p = sub.add_parser(name, help=help_, description=description, epilog=epilog,
                           formatter_class=argparse.RawDescriptionHelpFormatter)
        configure(p)
        p.set_defaults(func=run)
        parser.commands[name] = p
    return parser


def _split_at_double_dash(parser, argv):
    """(arguments before the first "--" that is not an option's value, operands after it)."""
    takes_value = parser.value_options()
    for i, arg in enumerate(argv):
        if arg == "--" and not (i and argv[i - 1] in takes_value):
            return argv[:i], argv[i + 1:]
    return argv, []


def main(argv=None):
    argv = sys.argv[1:] if argv is None else list(argv)
    parser = build_parser()
    if argv and argv[0] in parser.commands:
        # Options and operands may be mixed after the command, as in coreutils; everything
        # after "--" is an operand (argparse's intermixed parsing mishandles "--" itself).
        sub = parser.commands[argv[0]]
        rest, tail = _split_at_double_dash(sub, sub.fill_optional_values(argv[1:]))
        rest = sub.coreutils_abbreviations(rest)
        args = sub.parse_intermixed_args(rest)
        if tail:
            dest = sub.operands()
            if dest is None:
                sub.error(f"unrecognized arguments: {' '.join(tail)}")
            setattr(args, dest, list(getattr(args, dest) or []) + tail)
        args.command = argv[0]
    else:
        args = parser.parse_args(argv)
    try:
        status = args.func(args)
        if sys.stdout is not None:
            sys.stdout.flush()              # a closed pipe shows here, not at exit
        return status
    except BrokenPipeError:
        # The reader went away (``jitdigest info | head``): stop quietly, as coreutils do.
        import os
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 1
    except ValueError as exc:
        print(f"{PROG}: {exc}", file=sys.stderr)
        return 2


def console():
    """The ``jitdigest`` command (and ``python -m jitdigest``): ``main()``, then the process
    ends at once. Everything it wrote is flushed first; what is skipped is the interpreter's
    teardown, whose final garbage collection over Numba's objects costs a good share
    of a one-file ``jitdigest sum``."""
    import os
    import signal
    _parser.COMMAND = True
    interrupted = []

    def on_sigint(signum, frame):
        interrupted.append(signum)
        raise KeyboardInterrupt

    # Ctrl-C ends the command by SIGINT whatever it interrupts: an import that turns the
    # KeyboardInterrupt into another error (numpy's C extensions raise ImportError) too.
    if signal.getsignal(signal.SIGINT) is signal.default_int_handler:
        signal.signal(signal.SIGINT, on_sigint)
    try:
        status = main()
    except KeyboardInterrupt:
        _die_by_sigint()
    except BaseException:
        if interrupted:
            _die_by_sigint()
        raise
    if interrupted:
        _die_by_sigint()
    for stream in (sys.stdout, sys.stderr):
        try:
            if stream is not None:
                stream.flush()
        except (OSError, ValueError):
            status = status or 1
    os._exit(status if isinstance(status, int) else 1)


def _die_by_sigint():
    """End as a C program killed by Ctrl-C does (sha256sum reading a terminal): by SIGINT
    itself, not an exit status, so that a calling shell loop stops too. What was written so
    far is flushed first; no traceback."""
    import os
    import signal
    try:
        if sys.stdout is not None:
            sys.stdout.flush()
    except (OSError, ValueError):
        pass
    signal.signal(signal.SIGINT, signal.SIG_DFL)
    signal.pthread_sigmask(signal.SIG_UNBLOCK, [signal.SIGINT])
    os.kill(os.getpid(), signal.SIGINT)
    os._exit(130)                           # only if SIGINT could not end the process
