"""Every tunable number in jitdigest, in one place, each with the measurement (or the reason)
that set it. The kernels compile in the first two (and tools/gen_lanes.py writes PF_BLOCKS into
the lane kernels), so the kernel cache key covers this file; the rest are read at call time.
The measurements, with the CPU that made them: benchmarks/results/tunables.md."""

# The package version (pyproject.toml's; jitdigest.__version__, the cache folder's name).
VERSION = "0.1.0"

# A kernel releases the GIL around its long part from this many bytes: hashlib's
# HASHLIB_GIL_MINSIZE (below it, releasing and retaking the GIL is a sizeable share of a small call:
# benchmarks/results/tunables.md).
GIL_MINSIZE = 2048

# Lane kernels prefetch when ``values`` exceeds this many bytes: in cache the prefetches cost,
# out of cache they gain (benchmarks/results/tunables.md).
PF_MIN = 1 << 20
# ... running this many blocks ahead of a lane's loads (the distance the out-of-cache gains were
# measured with; other distances not compared).
PF_BLOCKS = 4

# hash_many: chunk boundaries fall on multiples of this many sorted rows, so lane groups (up to
# 2 x 16 messages) stay whole in every chunk but the last.
ALIGN = 64
# ... fewer threads below this much work (blocks) per thread: that much hashing is well above the
# cost of a thread hand-off (benchmarks/results/tunables.md); not tuned further.
MIN_BLOCKS_PER_THREAD = 2048
# ... at most about this many blocks per kernel call (a short call: benchmarks/results/tunables.md),
# so Ctrl-C is seen between calls.
CHUNK_BLOCKS = 1 << 16

# ... and rows of one width (a 2-D array) go to a kernel this many at a time, with index arrays
# of this many rows made once per call and shared by every window (96 KiB: in cache; index
# arrays for a whole batch cost a large share of the hashing in page faults:
# benchmarks/results/tunables.md); a multiple of ALIGN, so lane groups stay whole.
GRID_WINDOW = 4096

# Up to this many rows, a batch's index checks and block counts are worked out on Python ints:
# a numpy reduction has a fixed cost however short the array, and a one-row hash_many of a list
# would make several of them (benchmarks/results/tunables.md).
FEW_ROWS = 64

# ... and the chunks of a parallel batch go to the threading layer this many per thread per call
# (waves), so that Ctrl-C is seen between calls as it is between chunks.
CHUNKS_PER_CALL = 1

# A fork waits at most this long (seconds) for another thread's compile or cache load to end
# (Numba's compiler lock), so that the child does not inherit the lock held (it would hang).
FORK_WAIT = 600.0

# SHAKE output from this many bytes on is squeezed straight into the bytes object returned
# (one allocation of the output, where a bytearray and then bytes() take two).
DIRECT_OUTPUT_MIN = 1 << 16

# A hash object gathers ``bytes`` updates shorter than this in a bytearray and hands them to
# the kernel together once this many bytes have come (or its state is read): a kernel call per
# small update costs many times hashlib's update (benchmarks/results/tunables.md).
GATHER_UPDATES = 1024

# file_digest reads into one reused buffer of this size (hashlib's own _bufsize).
FILE_BUFFER = 1 << 18

# While a process's first digests go through the stored kernels (no Numba imported yet:
# ``_native.FirstDigests``), a hash object's ``bytes`` updates are joined into one message up
# to this many bytes, and an HMAC's message is copied behind its key block, so that they stay
# one-shot digests; past it the object streams through the kernels (Numba loaded, once:
# benchmarks/results/tunables.md).
FIRST_DIGEST_JOIN = 64 * 1024

# The "compiling ... once per machine" line appears only after a compile ran this long (seconds):
# loading a cached kernel takes well under this and must print nothing
# (benchmarks/results/tunables.md).
NOTICE_DELAY = 0.3

# jitdigest sum: files up to this size are read whole and hashed in batches of many files (one
# batch call per SUM_BATCH_FILES files or SUM_BATCH_BYTES bytes); larger ones stream through one
# reused SUM_CHUNK buffer per thread (coreutils reads 128 KiB at a time). Not tuned;
# benchmarks/bench_cli.py times the command against sha256sum.
SUM_SMALL_FILE = 64 * 1024
SUM_CHUNK = 256 * 1024
SUM_BATCH_FILES = 256
SUM_BATCH_BYTES = 4 * 1024 * 1024

# jitdigest sum -j is capped at this many threads per CPU: more only add memory (each holds a
# batch in flight) and contention (peak memory at a huge -j: benchmarks/results/tunables.md).
SUM_JOBS_PER_CPU = 4
# A tree hash with max_threads above 1: the input is cut into subtrees of up to this many
# bytes, one task each (its groups of chunks through the lanes, then its parents in lanes), at
# least 4 tasks a thread, so that only one chaining value a subtree is left to merge on the
# calling thread (smaller tasks leave more serial merging: benchmarks/results/tunables.md).
TREE_SUBTREE_BYTES = 256 * 1024
TREE_TASKS_PER_THREAD = 4
# jitdigest sum -j 1 with a tree hash: max_threads of files streamed (above SUM_SMALL_FILE bytes).
# 1: a second thread gained nothing on a large file (per block, threads only split groups of
# chunks, so a block's worth of work is small for them): benchmarks/results/tunables.md.
SUM_TREE_THREADS = 1

# jitdigest sum --cache: a file changed within this long (ns) of the start of the run that read
# it is not stored (git's "racy" rule: the value is FAT's timestamp granularity and covers
# clocks a little apart, as on NFS); another run's write lock is waited for this long (s) before
# hashing goes on without storing; digests are committed every so many files (a killed run keeps
# those); the entries of so many directories are held in memory at once; a directory's rows of
# one algorithm (one a commit) are merged into one past so many.
SUM_CACHE_RACY_NS = 2_000_000_000
SUM_CACHE_BUSY_S = 2.0
SUM_CACHE_COMMIT_FILES = 2000
SUM_CACHE_DIRS_KEPT = 256
SUM_CACHE_ROWS_KEPT = 8

# Processes meeting one cold kernel cache (Dask workers, pytest-xdist workers, `jitdigest warmup`
# -j N) take a lock file per cache entry while they compile it: the others wait for that compile
# and load its result instead of compiling the same kernel at once. A lock held longer than this
# (s; well past the longest kernel compile: benchmarks/results/tunables.md) is not waited for.
KERNEL_LOCK_WAIT_S = 300.0

# jitdigest tune: every batch kernel this CPU can run is timed at these message lengths, on this
# many bytes of rows per length (a quarter with --quick, as in `jitdigest warmup`), each turn
# repeating the call for at least TUNE_MIN_SECONDS (half that with --quick), the median of
# TUNE_REPEATS turns. Single short calls are too noisy to rank kernels; TUNE_MIN_SECONDS is the
# shorter of two turn lengths that made the same choices (benchmarks/results/tunables.md). A
# kernel replaces the built-in choice only when its median time times TUNE_MARGIN is still below
# the built-in's: a smaller gain is not worth a choice that noise could have made.
TUNE_LENGTHS = (16, 64, 256, 1024, 4096, 16384)
TUNE_BYTES = 8 << 20
TUNE_REPEATS = 5
TUNE_MIN_SECONDS = 0.01
TUNE_MARGIN = 1.05
# ... and a kernel whose fastest turn was slower than TUNE_DROP times the leader's slowest, after
# two turns, takes no more at that length (the portable kernels beside the lanes, far slower:
# most of a warmup's timing; benchmarks/results/tunables.md).
TUNE_DROP = 1.5
# A large batch of an algorithm this CPU's table lacks times, there and then, the batch kernels
# it can run without compiling another (the built-in choice, which it compiles anyway, and
# those already loaded or in the kernel cache: engine/autocal.py), at AUTO_LENGTHS (the lengths
# the choice must be right at) on AUTO_BYTES of rows each (at least ALIGN rows), each turn at
# least AUTO_MIN_SECONDS, the median of TUNE_REPEATS turns, TUNE_DROP and TUNE_MARGIN as in a
# tune. Small, so that it stays a fraction of the compile that batch waits for; a MiB a length
# and all of TUNE_LENGTHS took several times as long (benchmarks/results/bench_defaults-*.txt).
AUTO_LENGTHS = (64, 1024, 16384)
AUTO_BYTES = 1 << 18
AUTO_MIN_SECONDS = 0.002

# jitdigest.dask joins an object column of bytes into buffers that each worker thread keeps for
# its next partition, up to this many bytes (bigger ones are freed): a fresh buffer under Dask's
# MALLOC_TRIM_THRESHOLD_ (64 KiB: every large block mapped anew) makes the join several times
# slower (benchmarks/results/tunables.md).
JOIN_SCRATCH_BYTES = 256 << 20

# jitdigest.cuda launches this many threads (one message each) per block: a multiple of the
# 32-thread warp that leaves room for several blocks per multiprocessor. Not yet measured on a GPU.
CUDA_THREADS_PER_BLOCK = 128
