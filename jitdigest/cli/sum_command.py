"""``jitdigest sum``: its options, help text and the run (the work is in ``jitdigest.sum``)."""
import argparse
import sys

from . import parser as _parser
from .parser import PROG, _say
from ..base import algorithms as _algorithms

# the row whose output, options and --check follow b3sum's (``AlgoSpec.sum_format``)
_B3 = next(name for name, spec in _algorithms.TABLE.items() if spec.sum_format == "b3sum")


# --- sum ----------------------------------------------------------------------------------------

SUM_DESCRIPTION = """\
Print or check message digests of FILEs, with the output of coreutils' sha256sum, md5sum,
sha1sum, sha512sum and b2sum byte for byte. With no FILE, or when FILE is -, read standard
input."""

SUM_EPILOG = f"""\
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

-a {_B3}: output, errors and --check as b3sum 1.2's, byte for byte: "HASH  NAME" lines,
  -l LEN counts BYTES, names shown as UTF-8 (invalid bytes as U+FFFD) with only backslash
  and newline escaped, errors "NAME: STRERROR (os error N)"; --check reads b3sum's lines
  (64 lowercase hex digits, two spaces) and takes --quiet only; --tag, -b, -t, -z are
  refused. --keyed, --derive-key apply to {_B3} in a list too (-a {_B3},sha256), whose
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
                        f"spellings such as SHA-256), sha3 with -l, or {_B3} (as b3sum: see "
                        "below). With -c, only lines of "
                        "this algorithm are checked; 'auto' checks BSD-tagged lines of any "
                        "algorithm (as cksum -c). A comma-separated list (-a sha256,md5,sha1) "
                        "reads each file once and writes a line per algorithm, in that order "
                        "(not with -c or --audit). Default: sha256")
    g.add_argument("-l", "--length", metavar="BITS",
                   help="digest length in bits for BLAKE2 and SHAKE, as b2sum -l: a multiple "
                        "of 8, at most 512 for blake2b and 256 for blake2s (0 or absent: the "
                        "maximum). SHAKE default: 256 bits for shake_128, 512 for shake_256. "
                        f"With -a sha3: 224, 256, 384 or 512. With -a {_B3} it counts BYTES, "
                        "as b3sum -l (default 32, any length). In a list it applies to the "
                        f"algorithms that take a length (not with {_B3} in the list)")
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
    g.add_argument("--dask", metavar="ADDRESS",
                   help="hash on a Dask cluster: a scheduler's ADDRESS, or local:N for N "
                        "local worker processes; the workers read the files (a filesystem "
                        "they share with this process), output is the same as without it. A "
                        f"file is one task, except with -a {_B3} alone: a large one is split "
                        "into subtrees hashed on several workers")
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
    g = p.add_argument_group(f"{_B3} (as b3sum)")
    g.add_argument("--keyed", action="store_true",
                   help="keyed mode: the 32-byte key is read from standard input (so '-' "
                        "cannot be hashed)")
    g.add_argument("--derive-key", metavar="CONTEXT",
                   help="key derivation mode with context string CONTEXT")
    g.add_argument("--no-names", action="store_true",
                   help=f"print digests only (-a {_B3} alone)")
    g.add_argument("--raw", action="store_true",
                   help=f"write the digest's raw bytes, no name (-a {_B3} alone, one FILE)")
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
