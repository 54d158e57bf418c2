"""Run by tests/test_cuda_sim.py in a child process with README.md's simulator command
(NUMBA_ENABLE_CUDASIM=1 alone: Numba's CUDA simulator, in a child so that the flag never
reaches the rest of the suite). Prints one JSON object: per algorithm how many messages matched
hashlib in each layout, the exception each bad call raised, and whether the simulator and the
JIT were on."""
import hashlib
import json
import sys

import numpy as np
from numba import config, cuda

import jitdigest
import jitdigest.cuda as jc

# Lengths around every block size in the table (64, 128, and the sponge rates 72..168).
EDGES = sorted({0, 1, 2, 7, 8, 9} | {b + d for b in (55, 64, 72, 104, 111, 128, 136, 144, 168)
                                     for d in (-1, 0, 1)} | {255, 256, 257})
SHAKE_LENGTHS = {"shake_128": 200, "shake_256": 33}      # longer than a rate: two squeezes


def expected(name, msg):
    h = hashlib.new(name, bytes(msg))
    return h.digest(SHAKE_LENGTHS[name]) if name in SHAKE_LENGTHS else h.digest()


def matches(name, got, messages):
    got = got.copy_to_host()
    return sum(got[i].tobytes() == expected(name, m) for i, m in enumerate(messages))


def check_algorithm(name, rng, stream):
    kw = {"length": SHAKE_LENGTHS[name]} if name in SHAKE_LENGTHS else {}
    counts = {}
    lens = np.array(EDGES, dtype=np.int64)
    rng.shuffle(lens)
    offsets = np.concatenate(([0], np.cumsum(lens)))
    values = rng.integers(0, 256, int(offsets[-1]) + 3, dtype=np.uint8)
    msgs = [values[offsets[i]:offsets[i + 1]] for i in range(len(lens))]
    # host values and offsets, copied by the call
    counts["ragged_host"] = matches(name, jc.hash_many(name, values, offsets, **kw), msgs)
    # device values and device offsets (non-zero first offset: a suffix of the values)
    shifted = offsets + 3
    dev = jc.hash_many(name, cuda.to_device(np.concatenate((values[-3:], values))),
                       cuda.to_device(shifted), stream=stream, **kw)
    stream.synchronize()
    counts["ragged_device"] = matches(name, dev, msgs)
    # 2-D rows, host and device, into a given out
    rows = rng.integers(0, 256, (6, 137), dtype=np.uint8)
    out = cuda.device_array((6, len(expected(name, b""))), np.uint8)
    got = jc.hash_many(name, cuda.to_device(rows), out=out, **kw)
    counts["rows_device"] = matches(name, got, rows) if got is out else -1
    counts["rows_host"] = matches(name, jc.hash_many(name, rows[:, :64], **kw), rows[:, :64])
    counts["rows_empty"] = matches(name, jc.hash_many(name, np.zeros((3, 0), np.uint8), **kw),
                                   [b""] * 3)
    return counts


def error_of(call):
    try:
        call()
    except Exception as exc:                  # noqa: BLE001: the type is the answer
        return type(exc).__name__ + ": " + str(exc)
    return "no error"


def errors():
    v = np.zeros(10, np.uint8)
    rows = np.zeros((2, 8), np.uint8)
    bad_out = cuda.device_array((2, 31), np.uint8)
    dev_rows = cuda.to_device(np.zeros((2, 16), np.uint8))       # md5's digest shape
    return {
        "decreasing": error_of(lambda: jc.hash_many("sha256", v, [0, 5, 4])),
        "past_end": error_of(lambda: jc.hash_many("sha256", v, [0, 5, 11])),
        "negative": error_of(lambda: jc.hash_many("sha256", v, [-1, 5])),
        "past_end_device": error_of(lambda: jc.hash_many("sha256", cuda.to_device(v),
                                                         cuda.to_device(np.array([0, 12])))),
        "float_offsets": error_of(lambda: jc.hash_many("sha256", v, np.array([0.0, 5.0]))),
        "values_dtype": error_of(lambda: jc.hash_many("sha256", np.zeros(10, np.int32),
                                                      [0, 5])),
        "device_dtype": error_of(lambda: jc.hash_many("sha256",
                                                      cuda.to_device(np.zeros((2, 4), np.int16)))),
        "no_offsets": error_of(lambda: jc.hash_many("sha256", v)),
        "rows_offsets": error_of(lambda: jc.hash_many("sha256", rows, [0, 1, 2])),
        "three_d": error_of(lambda: jc.hash_many("sha256", np.zeros((2, 2, 2), np.uint8))),
        "out_shape": error_of(lambda: jc.hash_many("sha256", rows, out=bad_out)),
        "out_dtype": error_of(lambda: jc.hash_many("sha256", rows,
                                                   out=cuda.device_array((2, 32), np.uint32))),
        "out_host": error_of(lambda: jc.hash_many("sha256", rows, out=np.zeros((2, 32),
                                                                              np.uint8))),
        "out_overlap": error_of(lambda: jc.hash_many("md5", dev_rows, out=dev_rows)),
        "shake_no_length": error_of(lambda: jc.hash_many("shake_128", rows)),
        "length_not_shake": error_of(lambda: jc.hash_many("sha256", rows, length=3)),
        "unknown": error_of(lambda: jc.hash_many("sha0", rows)),
        "blake3": error_of(lambda: jc.hash_many("blake3", rows)),
    }


def main():
    rng = np.random.default_rng(int(sys.argv[1]) if len(sys.argv) > 1 else 21)
    stream = cuda.stream()
    result = {"algorithms": {name: check_algorithm(name, rng, stream)
                             for name in sorted(jc.algorithms_available)},
              "errors": errors(),
              "sizes": {name: len(expected(name, b"")) for name in jc.algorithms_available},
              "edges": len(EDGES),
              "simulator": bool(config.ENABLE_CUDASIM),
              "jit": not config.DISABLE_JIT,
              "guaranteed": sorted(jitdigest.algorithms_available - {"blake3"})}
    print(json.dumps(result))


if __name__ == "__main__":
    main()
