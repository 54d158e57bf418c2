"""The ``jitdigest`` command line (also ``python -m jitdigest``): argument parsing and the
subcommands' wiring. ``sum`` fingerprints files as coreutils' sha256sum/md5sum/b2sum do (the
work is in the ``sum`` package), ``warmup`` compiles and caches kernels, ``tune`` times the
batch kernels on this CPU, ``info`` says what serves each algorithm. A new subcommand is one
entry in COMMANDS."""
import argparse
import sys

from . import _config, _cpu

PROG = "jitdigest"


class _Parser(argparse.ArgumentParser):
    """Usage errors as coreutils reports them: the message, a pointer to --help, exit 1. Every
    argument added (to the parser or a group of it) is kept in ``arguments``, in order."""

    def __init__(self, *args, **kwargs):
        self.arguments = []                 # before argparse adds -h/--help
        super().__init__(*args, **kwargs)

    def add_argument(self, *args, **kwargs):
        action = super().add_argument(*args, **kwargs)
        self.arguments.append(action)
        return action

    def add_argument_group(self, *args, **kwargs):
        group = super().add_argument_group(*args, **kwargs)
        add = group.add_argument

        def add_argument(*args, **kwargs):
            action = add(*args, **kwargs)
            self.arguments.append(action)
            return action

        group.add_argument = add_argument
        return group

    def value_options(self):
        """The option strings that take a value ("-a", "--algorithm", ...)."""
        return {s for a in self.arguments if a.option_strings and a.nargs is None
                for s in a.option_strings}

    def operands(self):
        """The destination of the positional that gathers operands (nargs="*"), or None."""
        return next((a.dest for a in self.arguments
                     if not a.option_strings and a.nargs == "*"), None)

    def error(self, message):
        self.exit(1, f"{PROG}: {message}\nTry '{self.prog} --help' for more information.\n")

    # Long options of the coreutils programs a command stands in for: an abbreviation that
    # names one of them alone among those is that option, even where the command's own
    # options make it ambiguous ("--c" is --check for sha256sum, beside jitdigest's --cache).
    coreutils_long = frozenset()

    def coreutils_abbreviations(self, argv):
        """``argv`` with such abbreviations written out (values of options left alone)."""
        if not self.coreutils_long:
            return argv
        longs = {s for a in self.arguments for s in a.option_strings if s.startswith("--")}
        takes_value = self.value_options()
        out = []
        for i, arg in enumerate(argv):
            if arg.startswith("--") and len(arg) > 2 and not (i and argv[i - 1] in takes_value):
                name, eq, value = arg.partition("=")
                if name not in longs:
                    ours = [o for o in longs if o.startswith(name)]
                    theirs = [o for o in ours if o in self.coreutils_long]
                    if len(ours) > 1 and len(theirs) == 1:
                        arg = theirs[0] + eq + value
            out.append(arg)
        return out


# --- sum ----------------------------------------------------------------------------------------

SUM_DESCRIPTION = """\
Print or check message digests of FILEs, with the output of coreutils' sha256sum, md5sum,
sha1sum, sha512sum and b2sum byte for byte. With no FILE, or when FILE is -, read standard
input."""

SUM_EPILOG = """\
output: "HASH  NAME" lines (" *" before NAME with -b); --tag: "SHA256 (NAME) = HASH", the tag
  being MD5, SHA1, SHA224, SHA256, SHA384, SHA512, SHA512-224, SHA512-256, SHA3-224 ...,
  BLAKE2b or BLAKE2b-BITS, BLAKE2s or BLAKE2s-BITS, SHAKE128-BITS or SHAKE256-BITS. A name
  holding a backslash, newline or carriage return is written escaped (\\\\, \\n, \\r) and
  its line starts with a backslash, except with -z.

--check reads lines of either form (and escaped names) for the algorithm of -a (default
  sha256); a line of another algorithm is improperly formatted, as in sha256sum. With -a auto
  only tagged lines count, each checked with the algorithm its tag names (as cksum -c). For
  BLAKE2 and SHAKE the digest's length gives the output length. Prints "NAME: OK",
  "NAME: FAILED" or "NAME: FAILED open or read", then warnings on stderr.

-r walks directories in byte order of the full paths (as "find DIR -type f | LC_ALL=C sort"),
  hashing regular files and symlinks to files; symlinks to directories below an operand are
  not followed (so links cannot loop), special files are skipped. Without -r a directory is an error ("Is a directory"), as in coreutils.

--cache DB: output is the same as without it. A file counts as unchanged when device, inode,
  size, mtime and ctime (ns) equal the stored ones for the same algorithm and length; one whose
  mtime or ctime is within 2 s of the start of the run that stored it is read again (racy, as
  in git). A database that is damaged or locked costs hashing and a warning, never the run.
  With -a LIST each algorithm has its own row; a file is taken from the database only when
  all of them are there.

-a blake3: output, errors and --check as b3sum 1.2's, byte for byte: "HASH  NAME" lines,
  -l LEN counts BYTES, names shown as UTF-8 (invalid bytes as U+FFFD) with only backslash
  and newline escaped, errors "NAME: STRERROR (os error N)"; --check reads b3sum's lines
  (64 lowercase hex digits, two spaces) and takes --quiet only; --tag, -b, -t, -z are
  refused. --keyed, --derive-key apply to blake3 in a list too (-a blake3,sha256), whose
  lines follow the coreutils format. -r, -j, --json, --cache and --audit work as for the
  other algorithms.

--audit MANIFEST: one line per file, names escaped as in checksum lines:
  "MATCHED: NAME", "CHANGED: NAME" (other digest), "NEW: NAME" (not in MANIFEST),
  "MOVED: OLD -> NEW" (a new name with the digest of a missing one), "MISSING: NAME"
  (listed, not found), then "TOTAL: N matched, N changed, N new, N moved, N missing,
  N unreadable". Tree lines in walk order, then MISSING lines in MANIFEST order; names
  compared normalised (./a is a). Exit status 0 if all matched, 1 if not, 2 on a usage error.

Errors (a missing or unreadable file, a directory) are reported on stderr and the run goes on.
Exit status: 0 if every file was read (and, with --check, every checksum matched), else 1."""


def _configure_sum(p):
    # sha256sum's, md5sum's ... and b2sum's long options
    p.coreutils_long = frozenset(
        ["--binary", "--check", "--length", "--tag", "--text", "--zero", "--ignore-missing",
         "--quiet", "--status", "--strict", "--warn", "--help", "--version"])
    p.add_argument("files", nargs="*", metavar="FILE",
                   help="files (or directories, with -r) to hash; '-' or none: standard input")
    g = p.add_argument_group("digest")
    g.add_argument("-a", "--algorithm", default="sha256", metavar="ALGO",
                   help="digest algorithm: any name jitdigest.new() takes (md5, sha1, sha224, "
                        "sha256, sha384, sha512, sha512_224, sha512_256, sha3_224 ... "
                        "sha3_512, shake_128, shake_256, blake2b, blake2s, and OpenSSL's "
                        "spellings such as SHA-256), sha3 with -l, or blake3 (as b3sum: see "
                        "below). With -c, only lines of "
                        "this algorithm are checked; 'auto' checks BSD-tagged lines of any "
                        "algorithm (as cksum -c). A comma-separated list (-a sha256,md5,sha1) "
                        "reads each file once and writes a line per algorithm, in that order "
                        "(not with -c or --audit). Default: sha256")
    g.add_argument("-l", "--length", metavar="BITS",
                   help="digest length in bits for BLAKE2 and SHAKE, as b2sum -l: a multiple "
                        "of 8, at most 512 for blake2b and 256 for blake2s (0 or absent: the "
                        "maximum). SHAKE default: 256 bits for shake_128, 512 for shake_256. "
                        "With -a sha3: 224, 256, 384 or 512. With -a blake3 it counts BYTES, "
                        "as b3sum -l (default 32, any length). In a list it applies to the "
                        "algorithms that take a length (not with blake3 in the list)")
    g = p.add_argument_group("output")
    g.add_argument("-b", "--binary", dest="binary", action="store_const", const=1,
                   help="mark names with '*' (binary mode; no difference on POSIX systems)")
    g.add_argument("-t", "--text", dest="binary", action="store_const", const=0,
                   help="mark names with ' ' (text mode, the default)")
    g.add_argument("--tag", action=_TagAction, nargs=0,
                   help="write BSD-style lines: TAG (NAME) = HASH")
    g.add_argument("-z", "--zero", action="store_true",
                   help="end each output line with NUL, not newline, and do not escape names")
    g.add_argument("--json", action="store_true",
                   help="write one JSON object per line: path, algorithm, bits, hex, size "
                        "(path_b64 when the name is not UTF-8); a file that cannot be read "
                        "gives an object with 'error' and 'errno' instead of hex and size. "
                        "With several algorithms: path, digests (a list of {algorithm, bits, "
                        "hex}, in -a order), size")
    g = p.add_argument_group("files")
    g.add_argument("-r", "--recursive", action="store_true",
                   help="hash the files under directory operands (sorted; see below)")
    g.add_argument("-j", "--jobs", type=int, default=1, metavar="N",
                   help="hash N files at once on threads, output still in input order "
                        "(0: one per CPU; default 1; at most 4 per CPU, larger N means that)")
    g.add_argument("--no-batch", action="store_true",
                   help="hash every small file on its own, not in batches through "
                        "jitdigest.hash_many")
    g.add_argument("--no-progress", action="store_true",
                   help="never show the progress line (shown on a terminal's stderr once a run "
                        "has taken over a second)")
    g = p.add_argument_group("incremental runs")
    g.add_argument("--cache", metavar="DB",
                   help="keep digests in SQLite database DB (made if missing): a file whose "
                        "device, inode, size, mtime and ctime are those stored is not read "
                        "again (see below)")
    g.add_argument("--no-cache-read", action="store_true",
                   help="with --cache: read every file, but still update DB")
    g.add_argument("--audit", metavar="MANIFEST",
                   help="compare the files (with -r, the trees) with MANIFEST, a list of "
                        "checksums as --check reads, and report each file (see below)")
    g = p.add_argument_group("blake3 (as b3sum)")
    g.add_argument("--keyed", action="store_true",
                   help="keyed mode: the 32-byte key is read from standard input (so '-' "
                        "cannot be hashed)")
    g.add_argument("--derive-key", metavar="CONTEXT",
                   help="key derivation mode with context string CONTEXT")
    g.add_argument("--no-names", action="store_true",
                   help="print digests only (-a blake3 alone)")
    g.add_argument("--raw", action="store_true",
                   help="write the digest's raw bytes, no name (-a blake3 alone, one FILE)")
    g.add_argument("--num-threads", metavar="NUM",
                   help="threads for each file streamed (over 64 KiB), with -j 1 (0: one per "
                        "CPU; default 1: two measured no faster here)")
    g.add_argument("--no-mmap", action="store_true",
                   help="accepted for b3sum's sake: files are always read, never mapped")
    g = p.add_argument_group("checking")
    g.add_argument("-c", "--check", action="store_true",
                   help="read checksums from the FILEs and check them")
    g.add_argument("--ignore-missing", action="store_true",
                   help="don't fail or report status for missing files")
    g.add_argument("--quiet", dest="verbosity", action="store_const", const="quiet",
                   help="don't print OK for each successfully verified file")
    g.add_argument("--status", dest="verbosity", action="store_const", const="status",
                   help="don't output anything, status code shows success")
    g.add_argument("--strict", action="store_true",
                   help="exit non-zero for improperly formatted checksum lines")
    g.add_argument("-w", "--warn", dest="verbosity", action="store_const", const="warn",
                   help="warn about improperly formatted checksum lines")
    p.set_defaults(tag=False)


class _TagAction(argparse.Action):
    """--tag implies binary mode, as in coreutils (so "-t --tag" is fine, "--tag -t" not)."""

    def __call__(self, parser, namespace, values, option_string=None):
        namespace.tag = True
        namespace.binary = 1


def _cmd_sum(args):
    import signal
    from . import sum as engine
    if not hasattr(signal, "SIGPIPE"):
        return _sum(engine, args)
    # A closed pipe ends the run quietly, as it ends sha256sum. Put back after the run where
    # a program called main() (not console()): its own later writes to a closed pipe must
    # raise BrokenPipeError as Python's do, not kill it.
    previous = signal.signal(signal.SIGPIPE, signal.SIG_DFL)
    try:
        return _sum(engine, args)
    finally:
        if not _COMMAND and previous is not None:
            signal.signal(signal.SIGPIPE, previous)


def _sum(engine, args):
    import os
    try:
        return engine.run(args)
    except engine.UsageError as exc:
        _say(f"{PROG}: {exc}\nTry '{PROG} sum --help' for more information.\n")
        return 2 if args.audit is not None else 1
    except engine.FatalError as exc:
        _say("".join(f"{PROG}: {line}\n" for line in str(exc).split("\n")))
        return 1
    except BrokenPipeError:
        # No SIGPIPE here: stop quietly, without flushing into the closed pipe at exit.
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 1
    except OSError:
        # Files that cannot be read are reported inside; what gets here failed to write.
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        _say(f"{PROG}: write error\n")          # as coreutils 9.1 says it
        return 1


def _say(text):
    """A message on stderr, unless the process started with stderr closed."""
    if sys.stderr is not None:
        sys.stderr.write(text)


# --- warmup, info -----------------------------------------------------------------------

def _configure_warmup(p):
    p.add_argument("algorithms", nargs="*", metavar="ALGO",
                   help="algorithms to compile (any name jitdigest.new() takes; default: all)")
    p.add_argument("-j", "--jobs", type=int, default=0, metavar="N",
                   help="compile on N processes (default 0: one per CPU)")
    p.add_argument("--no-tune", action="store_true",
                   help="do not time the batch kernels (see 'tune')")


def _names(args):
    """The hashlib names asked for (all without any), and whether BLAKE3 is (all: yes)."""
    from . import _algorithms
    if not args.algorithms:
        return sorted(_algorithms.SPECS), True
    names = []
    for name in args.algorithms:
        # an unknown name: the usage error, up front
        if _algorithms.lookup_any(name) is not _algorithms.BLAKE3:
            names.append(_algorithms.lookup(name).name)
    return names, len(names) < len(args.algorithms)


def _cmd_warmup(args):
    import os
    from . import _warmup
    names, blake3 = _names(args)
    if args.jobs < 0:
        raise ValueError(f"invalid number of jobs: {args.jobs}")
    # interpreted (NUMBA_DISABLE_JIT=1) there is nothing to compile, and timing the
    # interpreter would take hours and pick nothing a compiled run could use
    return _warmup.run(names, args.jobs or os.cpu_count() or 1, blake3=blake3,
                       tune=not args.no_tune and _cpu.jit_enabled())


def _configure_tune(p):
    p.add_argument("algorithms", nargs="*", metavar="ALGO",
                   help="algorithms to time (any name jitdigest.new() takes; default: all)")
    p.add_argument("--quick", action="store_true",
                   help="a quarter of the data per length, turns half as long (faster, noisier)")


def _cmd_tune(args):
    names, _ = _names(args)
    if not _cpu.jit_enabled():
        print("nothing to time: the kernels run interpreted (NUMBA_DISABLE_JIT=1)")
    elif names:
        _tune(names, quick=args.quick, every=True)
    else:       # BLAKE3 alone: its batch kernel follows the CPU's features, no table
        print("nothing to time: BLAKE3's batch kernel is chosen by the CPU's features")
    return 0


def _tune(names, quick, every):
    import time
    from . import _calibration
    start = time.perf_counter()
    _, stored = _calibration.tune(
        names, quick=quick, every=every,
        report=lambda name, entry: print(_calibration.describe(name, entry), flush=True))
    where = _calibration.path() if stored else "not stored (see the warning above)"
    print(f"batch kernels timed in {time.perf_counter() - start:.1f} s; table: {where}")


def _configure_cache(p):
    p.add_argument("action", choices=("info", "clear"),
                   help="info: where compiled kernels are kept and how big they are; "
                        "clear: remove them (every version's)")


def _cmd_cache(args):
    from . import _cachedir
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
    from ._info import format_lines
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
    from . import __version__
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
        rest, tail = _split_at_double_dash(sub, argv[1:])
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


_COMMAND = False        # this process is the command (console()), not a program calling main()


def console():
    """The ``jitdigest`` command (and ``python -m jitdigest``): ``main()``, then the process
    ends at once. Everything it wrote is flushed first; what is skipped is the interpreter's
    teardown, whose final garbage collection over Numba's objects costs ~0.15 s, a quarter
    of a one-file ``jitdigest sum``."""
    import os
    import signal
    global _COMMAND
    _COMMAND = True
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
