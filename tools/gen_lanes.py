#!/usr/bin/env python3
"""Generate the multi-buffer ("lanes") kernels: jitdigest/kernels/<family>/<tier>_x<N>.py.

This file is the command; the parts it renders sit beside it (tools/ is not a package, so it
puts its own folder on sys.path): ``lanes_common.py`` (word expressions, line wrapping, the
prefetch statements, each file's preamble), ``lanes_md.py`` (MD5, SHA-1, SHA-2),
``lanes_keccak.py``, ``lanes_blake2.py``, ``lanes_blake3.py`` (BLAKE3's chunk lanes are chunks of
one input, not messages: see there) and ``lanes_blake3_many.py`` (BLAKE3's ``many_*``: messages
of up to a chunk side by side, for ``hash_many``).

    python tools/gen_lanes.py            rewrite the files
    python tools/gen_lanes.py --check    exit 1 if a committed file differs from a fresh one
"""
# A lanes kernel hashes many messages at once, one message per SIMD lane: MD5, SHA-1, SHA-256
# (16 x uint32 lanes on 512-bit vectors, 8 on 256-bit ones), SHA-512, Keccak (SHA-3, SHAKE) and
# BLAKE2b (8 / 4 x uint64), BLAKE2s (16 / 8 x uint32). Each kernel is one file with one entry
# ``hash_rows(values, starts, lengths, rows, iv, out)`` (``_contract.SIGNATURES``), named by its
# tier and the messages it hashes at once (``avx512_x16.py``), its record built from the tier's
# row of ``kernels/_contract.TIERS`` (one file per tier in ``VECTOR_TIERS``). The helpers
# they share (word loaders, prefetch, the 512-bit preference) are hand-written in
# ``jitdigest/kernels/_lanes.py``; every constant comes from the kernel or table that owns it.
# It is plain Numba code that LLVM's loop vectoriser turns into vector code; what makes that
# happen, measured:
#
# * the block function is ONE loop ``for l in range(LW)`` over the lanes, innermost, whose body
#   is the whole straight-line compression (rounds written out here, words in locals; Keccak
#   alone keeps its round loop, outside the lane loop, 2 rounds per pass: as fast, far less code).
#   It is a kernel of its own, ``_block(buf)`` (``_permute`` for Keccak), called by both layouts
#   of ``hash_rows`` so that Numba types it once, and inlined into them by LLVM
#   (``lanes_common.block_function``);
# * the chaining state and the message words of every lane share ONE flat buffer ``buf``, word
#   ``i`` of lane ``l`` at ``buf[i * NL + l]`` (lanes innermost): with separate arrays, or with
#   loads at run-time offsets, LLVM cannot rule out overlap and gives up on the vector form;
# * a message word (or round constant) read at a constant index inside the loop stops it too:
#   values all lanes share are read into locals before the loop;
# * MD5, one serial dependency chain per message, runs ``G = 2`` independent groups of ``LW``
#   lanes in one loop body, statements interleaved (``NL = G * LW`` lanes in all); the others
#   have enough parallelism within a message (more groups only spilled and compiled slower);
# * LLVM's tuning for most AVX-512 Intel cores prefers 256-bit vectors, so the AVX-512 variants
#   set their function's "prefer-vector-width"="512" (``lanes_common.wide_vectors``); the AVX2
#   ones do not.
#
# Everything per message is scalar and per lane, around that loop: a lane that finished its
# message writes its digest and takes the next row (so rows of any mix of lengths keep every
# lane busy until the rows run out; lanes with nothing left compute garbage nobody reads), and
# each block is loaded (bytes -> words, one merged load per word) into the lane's column of
# ``buf``. Those scalar stores, one per word per lane, are what the vector code waits for (at
# 1 KiB about a fifth of the time), so the 512-bit variants of the 32-bit families store words
# in pairs (one 64-bit load and store per two words, deinterleaved by the vectoriser). An
# explicit transpose, gathers, lane-major layouts and a byte swap in the vector code were all
# slower in this loop as it was then (whole groups now load through a transpose: see below). A
# message's last block with data (its last bytes, the 0x80 byte, zeros, maybe the length) is
# written by those paired variants straight into the lane's column when it is loaded (zeros as
# a fixed run of 64-bit stores, then the data words in pairs): rows of up to a block
# or two pay one set of stores instead of a staging and a copy (16-55 B rows 2-17% faster). The
# word-by-word variants stage it when the row starts, in a per-lane buffer zeroed by vector
# stores, and copy it when loaded: built at load time, SHA-512 was 5-8% slower there.
# When ``values`` exceeds PF_MIN bytes the lanes also prefetch (PF_BLOCKS blocks ahead, and the
# first block of the row NL rows on): as many streams as lanes defeat the hardware prefetchers.
# A tail block without data (the pad-only block) is written straight from the length.
# The MD families' ``iv`` may carry one word past the state: a count of bytes (whole blocks)
# hashed before every message, which the length field includes -- HMAC's rows start from the
# state after its key block (``jitdigest/keyed_batch.py``).
#
# SHA-256's 16-lane kernel and SHA-1's lane kernels also have a second block function for the
# common case of rows of one length stepping in phase: when every busy lane is at the same
# pad-only block (the last block of an n-byte message when n % 64 is 0 or >= 56), the message
# schedule is the same for all lanes; it is computed once per length (``_pad_schedule``), the
# lanes' pad words are not even copied, and the rounds add K + W from locals (64-byte rows:
# SHA-256 +18%, SHA-1 +15-22%; each costs seconds of compile; ``lanes_md.UNIFORM``).
#
# MD5's and SHA-1's lane kernels also hash whole groups of rows of one length in phase (rows
# of a 2-D array, or any run of NL rows of one length; ``lanes_md.IN_PHASE``): with no lane
# busy and the next NL rows of one length, the lanes start together, load each whole block
# with no test per lane, write the words every lane shares (zeros, the 0x80 byte, the length)
# once for all of them and store their digests together; any other group goes to the lanes on
# their own, which then keep it to the end (MD5 64-byte rows 12-14% less time on Zen 3). In
# the 256-bit variants (AVX2) those whole blocks come 8 words of 8 lanes at a time,
# transposed in vector registers by LLVM shuffles (``_lanes.load_transposed``): on
# Zen 3 a further 15% off MD5's 64-byte rows and 13% off 1 KiB, SHA-1 6% and 10%. (SHA-256 and
# SHA-512, compute-bound there, gained too little for the longer compile: not done.)
# BLAKE2s's AVX2 kernel does the same (64-byte rows -18%; ``lanes_blake2.IN_PHASE``). These three
# AVX2 kernels also load that way on their own: a lane at a whole block notes where it is,
# and after the lane loop a group whose lanes all are loads through the transpose, others word
# by word (ragged rows of 500-1500 B: MD5 -11%, SHA-1 -7%, BLAKE2s -6%; 2.5-7.5 KB: MD5 -13%;
# 20-60 B even).
import os
import sys

TOOLS = os.path.dirname(os.path.abspath(__file__))
if TOOLS not in sys.path:
    sys.path.insert(0, TOOLS)
import emit  # noqa: E402
from lanes_blake2 import render_blake2  # noqa: E402
from lanes_blake3 import render_blake3  # noqa: E402
from lanes_blake3_many import render_blake3_many  # noqa: E402
from lanes_keccak import render_keccak  # noqa: E402
from lanes_md import FAMILIES, render_md  # noqa: E402


def render():
    """{path relative to the repository root: source} for every generated file."""
    files = {}
    for family in FAMILIES:
        files.update(render_md(family))
    files.update(render_keccak())
    files.update(render_blake2())
    files.update(render_blake3())
    files.update(render_blake3_many())
    return files


def main(argv):
    return emit.write_or_check(render(), argv, "gen_lanes.py")


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
