"""``jitdigest sum``: its options, help text and the run (the work is in ``jitdigest.sum``)."""
import argparse
import sys

from . import parser as _parser
from .parser import PROG, _say
from ..base import algorithms as _algorithms, config as _config

# the row whose output, options and --check follow b3sum's (``AlgoSpec.sum_format``)
_B3 = next(name for name, spec in _algorithms.TABLE.items() if spec.sum_format == "b3sum")
_RACY = f"{_config.SUM_CACHE_RACY_NS / 1e9:g} s"   # --update's and --cache's racy window


# --- sum ---------------------------------------------------------------------------------------

SUM_DESCRIPTION = """\
Print or check message digests of FILEs (directories with -r), byte for byte as
coreutils' sha256sum, md5sum, b2sum and cksum. No FILE, or '-': standard input."""

SUM_EPILOG = f"""\
Lines are "HASH  NAME" (--tag: "SHA256 (NAME) = HASH"); a name with a '\\',
newline or CR is escaped, its line starting with a backslash (not with -z).
--check reads both forms, of -a's algorithm only (auto: tagged lines of any;
sha3: every SHA3 length). ALGO: any name jitdigest.new() takes, sha3 with -l,
{_B3} (as b3sum 1.2; -l in BYTES); -a sha256,md5 reads each file once.

-r walks in byte order of paths (find | LC_ALL=C sort). Symlinks to files are
hashed, to directories followed with -L only (a loop: a warning); broken links,
fifos, sockets, devices in a walk are skipped (--verbose names them). GLOB, as
rsync: without '/' it matches a name at any depth, with '/' the path from the
operand; '*', '?' stop at '/', '**' not; 'DIR/' matches directories only. An
excluded directory is not entered; --exclude wins over --include; named FILEs
are filtered by name and size too. SIZE: bytes, K, M, G (1024s), KB, MB ...
-j alone: one job if the first files are mostly small, else one per CPU.

--update MANIFEST rewrites it atomically in its format (plain, --tag, --json,
{_B3}; made if missing): new files added, gone ones dropped, others re-read
only if their mtime or ctime is past MANIFEST's, less {_RACY} (with --cache: as
the database says); counts on stderr. KNOWN: a manifest in any such format.
--audit: MATCHED/CHANGED/NEW/MOVED/MISSING lines, a TOTAL (usage error: 2).
--cache: a file whose device, inode, size, mtime, ctime match is not re-read.

Exit status: 0 if every file was read (with --check: and matched), else 1."""


def _configure_sum(p):
    # sha256sum's, md5sum's ... and b2sum's long options
    p.coreutils_long = frozenset(
        ["--binary", "--check", "--length", "--tag", "--text", "--zero", "--ignore-missing",
         "--quiet", "--status", "--strict", "--warn", "--help", "--version"])
    p.usage = f"{PROG} sum [OPTION]... [FILE]..."
    p.formatter_class = _parser.Formatter
    p.optional_values = {"-j": _AUTO, "--jobs": _AUTO}
    p.add_argument("files", nargs="*", metavar="FILE", help=argparse.SUPPRESS)
    # the first screen: the options most runs need
    p._optionals.title = "common options"
    p.add_argument("--version", action="version", version=_version(),
                   help="print the version and exit")
    p.add_argument("-a", "--algorithm", metavar="ALGO",
                   help=f"sha256 (default), md5, sha1, blake2b, {_B3} (below)")
    p.add_argument("-c", "--check", action="store_true",
                   help="read checksums from the FILEs and check them")
    p.add_argument("-r", "--recursive", action="store_true",
                   help="hash the files under directory operands")
    p.add_argument("-j", "--jobs", type=_jobs, default=1, metavar="N",
                   help="N files at once (0: one per CPU; no N: the fastest)")
    p.add_argument("--tag", action=_TagAction, nargs=0,
                   help="write BSD-style lines: TAG (NAME) = HASH")
    p.add_argument("--json", action="store_true",
                   help="JSON lines: path, algorithm, bits, hex, size")
    p.add_argument("--exclude", action="append", metavar="GLOB",
                   help="skip files and directories GLOB matches (below)")
    p.add_argument("--files0-from", metavar="FILE",
                   help="hash the NUL-separated names in FILE (-: stdin)")
    p.add_argument("--update", metavar="MANIFEST",
                   help="bring MANIFEST up to date with the FILEs (see below)")
    p.add_argument("--match", action="append", metavar="KNOWN",
                   help="print only files whose digest is in KNOWN")
    g = p.add_argument_group("output")
    g.add_argument("-l", "--length", metavar="BITS",
                   help="digest length: BLAKE2, SHAKE; sha3: 224, 256, 384, 512")
    g.add_argument("-b", "--binary", dest="binary", action="store_const", const=1,
                   help="mark names with '*' (binary mode)")
    g.add_argument("-t", "--text", dest="binary", action="store_const", const=0,
                   help="mark names with ' ' (text mode, the default)")
    g.add_argument("-z", "--zero", action="store_true",
                   help="end lines with NUL, not newline; no escaping")
    g.add_argument("--no-progress", action="store_true",
                   help="no progress line (else on a terminal after 1 s)")
    g.add_argument("--verbose", action="store_true",
                   help="name what a walk skips, on stderr")
    g = p.add_argument_group("checking")
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
    g = p.add_argument_group("choosing files")
    g.add_argument("--files-from", metavar="FILE",
                   help="hash the names in FILE, one a line (-: stdin)")
    g.add_argument("--include", action="append", metavar="GLOB",
                   help="hash only files GLOB matches")
    g.add_argument("--min-size", metavar="SIZE", help="skip files smaller than SIZE")
    g.add_argument("--max-size", metavar="SIZE", help="skip files larger than SIZE")
    g.add_argument("--one-file-system", action="store_true",
                   help="with -r, stay on each operand's file system")
    g.add_argument("-L", "--dereference", action="store_true",
                   help="with -r, follow symlinks to directories")
    g.add_argument("-P", "--no-dereference", dest="dereference", action="store_false",
                   help="with -r, don't (the default)")
    g = p.add_argument_group("manifests")
    g.add_argument("--no-match", action="append", metavar="KNOWN",
                   help="print only files whose digest is not in KNOWN")
    g.add_argument("--audit", metavar="MANIFEST",
                   help="compare the FILEs with MANIFEST, file by file")
    g.add_argument("--cache", metavar="DB",
                   help="keep digests in SQLite DB; skip unchanged files")
    g.add_argument("--no-cache-read", action="store_true",
                   help="with --cache: read every file, still update DB")
    g = p.add_argument_group("speed")
    g.add_argument("--no-batch", action="store_true",
                   help="hash small files one by one, not in batches")
    g.add_argument("--dask", metavar="ADDRESS",
                   help="hash on a Dask cluster: a scheduler's ADDRESS, or local:N for N "
                        "local worker processes; the workers read the files (a filesystem "
                        "they share with this process), output is the same as without it. A "
                        f"file is one task, except with -a {_B3} alone: a large one is split "
                        "into subtrees hashed on several workers")
    g = p.add_argument_group(f"{_B3} (as b3sum)")
    g.add_argument("--keyed", action="store_true",
                   help="keyed mode, the 32-byte key read from stdin")
    g.add_argument("--derive-key", metavar="CONTEXT",
                   help="key derivation mode with context CONTEXT")
    g.add_argument("--no-names", action="store_true", help="print digests only")
    g.add_argument("--raw", action="store_true", help="write the raw digest (one FILE)")
    g.add_argument("--num-threads", metavar="NUM",
                   help="threads per large file (0: all)")
    g.add_argument("--no-mmap", action="store_true", help="accepted; files are always read")
    p.set_defaults(tag=False, dereference=False)


def _version():
    from .. import __version__
    return f"{PROG} sum {__version__}"


_AUTO = "auto"          # -j with no number: what the run is given (jitdigest.sum takes None)


def _jobs(text):
    """-j's value: a number, or None for "auto" (-j with no number)."""
    if text == _AUTO:
        return None
    try:
        return int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"invalid int value: {text!r}") from None


class _TagAction(argparse.Action):
    """--tag implies binary mode, as in coreutils (so "-t --tag" is fine, "--tag -t" not)."""

    def __call__(self, parser, namespace, values, option_string=None):
        namespace.tag = True
        namespace.binary = 1


def _cmd_sum(args):
    import signal
    from .. import sum as engine
    if not hasattr(signal, "SIGPIPE"):
        return _sum(engine, args)
    # A closed pipe ends the run quietly, as it ends sha256sum. Put back after the run where
    # a program called main() (not console()): its own later writes to a closed pipe must
    # raise BrokenPipeError as Python's do, not kill it.
    previous = signal.signal(signal.SIGPIPE, signal.SIG_DFL)
    try:
        return _sum(engine, args)
    finally:
        if not _parser.COMMAND and previous is not None:
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
