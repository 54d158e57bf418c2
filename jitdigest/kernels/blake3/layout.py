"""BLAKE3's domain flags and the layout of the state array a ``jitdigest.blake3`` object owns:
read by the kernels and by the Python object, so that neither repeats the other's numbers.
Imports no Numba.

State (uint32 words): the key words and the mode's flag (the *parameters*, all Python writes:
zeros elsewhere start an empty input), then the current chunk (its chaining value, its 64-bit
counter as two words, how many of its 64-byte blocks are compressed), then the chaining-value
stack of completed subtrees (its depth, then up to ``MAX_DEPTH`` values of 8 words). A chunk
with no block compressed yet starts from the key words, so its chaining value slot is only read
once written.
"""

# Domain flags (BLAKE3 specification, table 3).
CHUNK_START = 1 << 0
CHUNK_END = 1 << 1
PARENT = 1 << 2
ROOT = 1 << 3
KEYED_HASH = 1 << 4
DERIVE_KEY_CONTEXT = 1 << 5
DERIVE_KEY_MATERIAL = 1 << 6

BLOCK_LEN = 64          # bytes per compression
CHUNK_LEN = 1024        # bytes per chunk (leaf)
CHUNK_BLOCKS = CHUNK_LEN // BLOCK_LEN
KEY_LEN = 32            # bytes of a key, a chaining value and the default output
# Completed subtrees waiting for a right sibling: at most one per bit of the chunk count, and
# an input is under 2**64 bytes, so under 2**54 chunks.
MAX_DEPTH = 54

KEY = 0                 # state[KEY:KEY + 8]: the key words (IV, key, or derived context key)
FLAGS = 8               # state[FLAGS]: 0, KEYED_HASH or DERIVE_KEY_* (the mode)
PARAMS = 9              # the words above: what Python sets, the rest starts at zero
CV = 9                  # state[CV:CV + 8]: the current chunk's chaining value so far
COUNTER = 17            # state[COUNTER], state[COUNTER + 1]: the chunk's index, low word first
BLOCKS = 19             # state[BLOCKS]: blocks of the chunk compressed (0..15)
DEPTH = 20              # state[DEPTH]: chaining values on the stack
STACK = 21              # state[STACK + 8 * i: STACK + 8 * i + 8]: the i-th value, oldest first
STATE_WORDS = STACK + 8 * MAX_DEPTH


def params(key=None, flags=0):
    """A mode's parameters, the state's first PARAMS words: the words of a 32-byte ``key``
    (little-endian) or the IV (SHA-256's, from the algorithm table), then ``flags``."""
    import struct
    from ...base.algorithms import SPECS
    words = SPECS["sha256"].iv if key is None else struct.unpack("<8I", key)
    return tuple(words) + (flags,)
