"""The engine of ``jitdigest sum``: coreutils' sha256sum/md5sum/b2sum output and ``--check``
rules byte for byte, plus recursion, JSON lines, -j and batching; cli.py calls ``run(args)``."""
# Names are bytes from end to end (os.fsencode of argv, sys.stdout.buffer for output), so file
# names that are not UTF-8 come out exactly as they went in. The reference is GNU coreutils 9.1
# (sha256sum, md5sum, b2sum ...); its quirks are noted where copied. One module per job:
# quote (names in messages and lines), algos (-a, -l, BSD tags), walk (operands, -r), filters
# (what a walk keeps), filelist (--files-from), hasher, check (--check), manifest (reading
# them back), update (--update), known (--match), audit, progress, output; errors holds the
# two ways a run stops early.
import errno
import itertools
import os
import sys

from ..base import config as _config
from ..engine import cpu as _cpu, dispatch as _dispatch
from . import algos, b3sum, filelist, progress as _progress
from .check import CheckState, check_file
from .errors import FatalError, UsageError
from .hasher import Hasher
from .output import Output, write_sums
from .quote import quote
from .filters import Rules
from .walk import FILE, expand_operands

AUTO_SAMPLE = 64                        # files -j with no number looks at to choose

__all__ = ["run", "UsageError", "FatalError"]


def run(args):
    """``jitdigest sum``: the exit status (0 all good, 1 anything failed or mismatched)."""
    stdin_closed = _hold_closed_stdin()
    explicit = args.algorithm is not None       # --update/--match take the manifest's else
    if not explicit:
        args.algorithm = algos.DEFAULT
    _check_options(args)
    b3sum.check_options(args)
    _dispatch.COMPILE_BATCH = False     # lane kernels when cached ("jitdigest warmup"), else
                                        # the per-message ones: no minute-long first run
    listed = args.files_from if args.files_from is not None else args.files0_from
    operands = [os.fsencode(f) for f in args.files] or [b"-"]
    progress = None
    if _progress.wanted(args):
        total = None
        if not args.recursive and not args.check and listed is None:
            try:
                total = sum(os.stat(p).st_size for p in operands if p != b"-")
            except OSError:
                total = None
        progress = _progress.Progress(sys.stderr, total)
    out = Output(progress)
    rules = Rules(args, out.error)
    names = operands
    if listed is not None:
        names = filelist.names(os.fsencode(listed), args.files0_from is not None)
    inputs = expand_operands(names, args.recursive, rules)
    cpus = os.cpu_count() or 1
    if args.jobs is None:             # -j with no number
        jobs, inputs = _auto_jobs(inputs, cpus, args.check)
    else:
        jobs = min(args.jobs or cpus, _config.SUM_JOBS_PER_CPU * cpus)
    if progress is not None and progress.total is None and args.recursive and listed is None:
        progress.count(expand_operands(operands, True, rules.quiet()))
    mode = None
    if b3sum.NAME in args.algorithm.lower().split(","):
        mode = b3sum.mode(args, jobs)
    algo = algos.from_list(args.algorithm, args.length, args.check,
                           args.audit is not None or args.update is not None, mode=mode)
    if algo is None and args.update is not None:        # -a auto: the manifest's algorithm
        algo, explicit = algos.from_option(algos.DEFAULT, None), False
    b3 = isinstance(algo, algos.Keyed)      # b3sum's formats and check mode
    if b3 and not algo.length_ok and (args.json or args.audit is not None
                                      or args.update is not None):
        raise FatalError(f"invalid length: {quote(args.length)}")
    if getattr(args, "dask", None) is not None:
        from .dask_hasher import DaskHasher
        hasher = DaskHasher(args.dask, progress=progress)
    else:
        hasher = Hasher(jobs, batch=not args.no_batch, progress=progress,
                        overlap=isinstance(algo, algos.Several))
    cache = None
    if args.cache is not None:
        from .cache import Cache
        cache = Cache(os.fsencode(args.cache), out.error, read=not args.no_cache_read)
    hashed = hasher.run if cache is None else (lambda items: cache.run(hasher, items))
    if args.keyed:                      # standard input held the key
        hashed_any = hashed
        hashed = lambda items: hashed_any(b3sum.keyed_stdin(items))   # noqa: E731
    state = CheckState()
    try:
        if args.check and b3:
            ok = b3sum.check_files(operands, args, algo, hasher, out)
        elif args.update is not None:
            from .update import update
            ok = update(os.fsencode(args.update), inputs, args, algo, explicit, hashed, out,
                        cache is not None)
        elif args.match is not None or args.no_match is not None:
            from .known import select
            ok = select(inputs, args, algo, explicit, hashed, out)
        elif b3 and args.audit is None and not args.json:
            ok = b3sum.write_sums(_with_algo(inputs, algo), algo, args, hashed, out)
        elif args.check:
            ok = all([check_file(cf, args, algo, hasher, out, state) for cf in operands])
        elif args.audit is not None:
            from .audit import audit
            ok = audit(os.fsencode(args.audit), inputs, args, algo, hashed, out)
        else:
            ok = write_sums(inputs, args, algo, hashed, out)
    except BaseException:
        out.flush_lines()                   # Ctrl-C: the lines already made go out
        hasher.close(wait=False)
        if cache is not None:
            cache.close()
        if progress is not None:
            progress.close(complete=False)
        raise
    out.flush_lines()                       # all made: a Ctrl-C from here loses none
    hasher.close()
    if cache is not None:
        cache.close()
    if progress is not None:
        progress.close()
    out.finish()
    if stdin_closed and not (b3 or args.keyed) and (
            (listed is None and b"-" in operands) or state.stdin_listed):
        # coreutils' close_stdin at exit, when standard input was to be read and was closed
        out.error("standard input: " + os.strerror(errno.EBADF))
        ok = False
    _store_native(hasher.through_numba, hasher.streamed)
    return 0 if ok else 1


def _auto_jobs(inputs, cpus, check):
    """-j with no number: the jobs for these inputs and the inputs (the first few looked at).
    Small files are hashed fastest on one thread (a run of them is one batch call, whose
    share of the work does not split); large ones stream on one thread each. So: one job,
    unless files over SUM_SMALL_FILE hold most of the bytes of the first AUTO_SAMPLE
    files, then one per CPU (benchmarks/bench_sum_jobs.py measures the choice)."""
    if check:
        return 1, inputs
    sample = list(itertools.islice(inputs, AUTO_SAMPLE))
    large = small = 0
    for item in sample:
        if item.kind == FILE:
            try:
                size = os.stat(item.path).st_size
            except OSError:
                continue
            if size > _config.SUM_SMALL_FILE:
                large += size
            else:
                small += size
    return (cpus if large > small else 1), itertools.chain(sample, inputs)


def _hold_closed_stdin():
    """Started with standard input closed (``<&-``): the first file opened would get fd 0, and
    reading '-' would read it (a check list naming '-' then checked the list itself: a false
    OK). fd 0 is taken by /dev/null opened write-only instead, so reading '-' fails with
    EBADF, "Bad file descriptor", as in coreutils. True if it was closed."""
    try:
        os.fstat(0)
    except OSError:
        fd = os.open(os.devnull, os.O_WRONLY)
        if fd != 0:                     # fd 0 was open after all (a race): leave it
            os.close(fd)
        return fd == 0
    return False


def _store_native(names, streamed=()):
    """Store what this run had to reach through Numba as machine code, once per algorithm and
    machine (after the output is written), so that later runs hash without importing Numba:
    the batch kernels of ``names`` (small files, ``jitdigest/runtime/native_write.py``) and the
    hash objects' entries of ``streamed`` (large files, ``jitdigest/runtime/stream.py``)."""
    if not (names or streamed) or not _cpu.jit_enabled():
        return
    from ..base import algorithms as _algorithms
    from ..runtime import native_write as _native_write, stream as _stream
    for store, group in ((_native_write.store, names), (_stream.store, streamed)):
        for name in sorted(group):
            try:
                store(_algorithms.lookup_any(name))
            except OSError:
                pass                    # an unwritable cache: later runs go through Numba too


def _with_algo(items, algo):
    for item in items:
        item.algo = algo
        yield item


def _check_options(args):
    """coreutils' option conflicts, in its order."""
    check = args.check
    if args.tag and args.binary == 0:
        raise UsageError("--tag does not support --text mode")
    if args.zero and check:
        raise UsageError("the --zero option is not supported when verifying checksums")
    if args.tag and check:
        raise UsageError("the --tag option is meaningless when verifying checksums")
    if args.binary is not None and check:
        raise UsageError("the --binary and --text options are meaningless when verifying "
                         "checksums")
    if args.ignore_missing and not check:
        raise UsageError("the --ignore-missing option is meaningful only when verifying "
                         "checksums")
    if args.verbosity and not check:
        raise UsageError(f"the --{args.verbosity} option is meaningful only when verifying "
                         "checksums")
    if args.strict and not check:
        raise UsageError("the --strict option is meaningful only when verifying checksums")
    if args.json and (check or args.tag or args.zero):
        raise UsageError("--json cannot be combined with --check, --tag or --zero")
    if args.recursive and check:
        raise UsageError("the --recursive option is meaningless when verifying checksums")
    if args.cache is not None and check:
        raise UsageError("the --cache option is meaningless when verifying checksums")
    if args.no_cache_read and args.cache is None:
        raise UsageError("the --no-cache-read option is meaningful only with --cache")
    if args.audit is not None:
        if check or args.tag or args.zero or args.json or args.binary is not None:
            raise UsageError("--audit cannot be combined with --check, --tag, --zero, --json, "
                             "--binary or --text")
        if not (args.files or args.files_from is not None or args.files0_from is not None) \
                or b"-" in [os.fsencode(f) for f in args.files]:
            raise UsageError("--audit needs FILE or DIR operands (not standard input)")
    if args.jobs is not None and args.jobs < 0:
        raise UsageError(f"invalid number of jobs: {quote(args.jobs)}")
    filelist.check_options(args)
    listed = args.files_from is not None or args.files0_from is not None
    if check and (args.exclude or args.include or args.min_size or args.max_size
                  or args.one_file_system or args.dereference):
        raise UsageError("the walk's filters are meaningless when verifying checksums")
    picked = [o for o, v in (("--audit", args.audit), ("--update", args.update),
                             ("--match", args.match), ("--no-match", args.no_match))
              if v is not None]
    if len(picked) > 1:
        raise UsageError(f"{picked[0]} and {picked[1]} cannot be combined")
    if picked and picked[0] != "--audit":
        if check:
            raise UsageError(f"{picked[0]} cannot be combined with --check")
        if not (args.files or listed) or b"-" in [os.fsencode(f) for f in args.files]:
            raise UsageError(f"{picked[0]} needs FILE or DIR operands (not standard input)")
    if args.update is not None and (args.tag or args.zero or args.json
                                    or args.binary is not None):
        raise UsageError("--update writes lines in the manifest's own format: no --tag, "
                         "--zero, --json, --binary or --text")
    if args.keyed and args.files0_from == "-" or args.keyed and args.files_from == "-":
        raise UsageError("--keyed reads the key from standard input: the list of files "
                         "cannot come from there too")
