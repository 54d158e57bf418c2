"""``hash_many`` on a CUDA GPU: digests of many messages held in device memory (Numba device
arrays, CuPy, torch: anything with ``__cuda_array_interface__``) or copied there from the host,
computed by the CPU kernels' own source compiled for CUDA, one thread per message.

Needs numba-cuda (``pip install 'jitdigest[cuda]'``) and a CUDA GPU, or Numba's simulator
(``NUMBA_ENABLE_CUDASIM=1``: the same kernels on the CPU, slowly). Importing this module
without either raises ImportError saying what is missing; ``import jitdigest`` never imports it.

As on the CPU, the kernels do not check bounds: every row's bytes are proved to lie inside the
values before a launch, on the host (device offsets are copied to the host once for that).
"""
from __future__ import annotations

from typing import Any

import numpy as np

from .engine import gpu as _gpu

_problem = _gpu.missing()
if _problem is not None:
    raise ImportError(_problem)

from numba import cuda  # noqa: E402

from .base import algorithms as _algorithms, config as _config  # noqa: E402
from .engine import layout as _layout
from .batch import _out_length, initial_state  # noqa: E402
from .kernels._rows_cuda import FAMILIES, rows_kernel  # noqa: E402

__all__ = ["hash_many", "algorithms_available"]

# Every algorithm a CUDA kernel serves (one thread a message: no tree hash).
algorithms_available = frozenset(name for name, spec in _algorithms.SPECS.items()
                                 if spec.family in FAMILIES)


def _device_array(obj, what):
    """``obj`` as a Numba device array (no copy) if it lives on the device, else None."""
    if cuda.devicearray.is_cuda_ndarray(obj):            # Numba's own (or the simulator's)
        return obj
    if hasattr(obj, "__cuda_array_interface__"):
        return cuda.as_cuda_array(obj)
    return None


def _bytes_view(arr, what):
    """Check a device array is C-contiguous uint8 (ValueError/TypeError as numpy words them)."""
    if arr.dtype != np.uint8:
        raise TypeError(f"{what} must have dtype uint8, not {arr.dtype}")
    if not arr.is_c_contiguous():
        raise ValueError(f"{what} must be C-contiguous")
    return arr


def _host_bytes(obj, what):
    """A host array or bytes-like object as a C-contiguous uint8 ndarray (no copy if it is)."""
    if isinstance(obj, np.ndarray):
        if obj.dtype != np.uint8:
            raise TypeError(f"{what} must have dtype uint8, not {obj.dtype}")
        return np.ascontiguousarray(obj)
    try:
        return np.frombuffer(memoryview(obj).cast("B"), np.uint8)
    except TypeError:
        raise TypeError(f"{what} must be a device array, a uint8 ndarray or bytes-like, not "
                        f"{type(obj).__name__}") from None


def _layout_of(messages, offsets, stream):
    """(values, starts, lengths, n): 1-D device ``values`` and either int64 device arrays
    ``starts``/``lengths`` or one int each (rows of ``lengths`` bytes every ``starts``), every
    row proved inside ``values``."""
    dev = _device_array(messages, "messages")
    if dev is not None:
        _bytes_view(dev, "messages")
        ndim = dev.ndim
    else:
        host = _host_bytes(messages, "messages")
        ndim = host.ndim
    if ndim == 2:
        if offsets is not None:
            raise TypeError("offsets are for 1-D values, not 2-D rows")
        n, width = (dev if dev is not None else host).shape
        if dev is None:
            dev = cuda.to_device(host, stream=stream)
        return dev.reshape(n * width), width, width, n
    if ndim != 1:
        raise ValueError(f"messages must be 2-D rows or 1-D values, not {ndim}-D")
    if offsets is None:
        raise TypeError("1-D values need offsets (n + 1 integers)")
    dev_offsets = _device_array(offsets, "offsets")
    host_offsets = offsets if dev_offsets is None else dev_offsets.copy_to_host(stream=stream)
    if dev_offsets is not None and stream != 0:
        stream.synchronize()                  # the offsets are needed on the host now
    starts, lengths = _rows_of(host_offsets, (dev if dev is not None else host).shape[0])
    if dev is None:
        dev = cuda.to_device(host, stream=stream)
    n = starts.shape[0]
    return (dev, cuda.to_device(starts, stream=stream), cuda.to_device(lengths, stream=stream),
            n)


def _rows_of(offsets, size):
    """(starts, lengths) int64 of the rows ``offsets`` (host, n + 1 integers) names in ``size``
    bytes, each row proved inside them (the CPU batch's checks and messages)."""
    starts, lengths = _layout.proved_rows(offsets, size)
    return np.ascontiguousarray(starts), lengths


def _check_out(out, n, outlen, stream):
    if out is None:
        return cuda.device_array((n, outlen), np.uint8, stream=stream)
    dev = _device_array(out, "out")
    if dev is None:
        raise TypeError(f"out must be a device array, not {type(out).__name__}")
    _bytes_view(dev, "out")
    if dev.shape != (n, outlen):
        raise ValueError(f"out has shape {dev.shape}, expected {(n, outlen)}")
    return dev


def _span(arr):
    """The device address range [first, end) of ``arr``'s bytes."""
    if hasattr(arr, "__cuda_array_interface__"):
        ptr = arr.__cuda_array_interface__["data"][0]
    else:                                   # the simulator's arrays are host arrays
        ptr = arr.__array_interface__["data"][0]
    return ptr, ptr + arr.nbytes


def hash_many(name: str, messages: Any, offsets: Any = None, *, length: int | None = None,
              out: Any = None, stream: Any = None) -> Any:
    """Digests of many messages on the GPU: a device array (n, digest_size) of uint8 whose row
    i is ``hashlib.new(name, message_i).digest()``.

    ``messages``: a 2-D C-contiguous uint8 array (n messages of equal length), or 1-D uint8
    ``values`` with ``offsets`` (n + 1 integers, host or device: message i is
    ``values[offsets[i]:offsets[i+1]]``); on the device (``__cuda_array_interface__``), or on
    the host (numpy, bytes-like: copied to the device).
    ``length``: for SHAKE, the output bytes per message (required, as for its digest()).
    ``out``: a C-contiguous (n, digest_size) uint8 device array to write into and return; it
    may not overlap the messages.
    ``stream``: the CUDA stream for copies and the launch (default: the default stream); the
    call returns once the launch is queued, before the digests are ready.
    """
    spec = _algorithms.lookup_any(name.lower() if isinstance(name, str) else name)
    if spec.family not in FAMILIES:
        raise NotImplementedError(f"jitdigest.cuda has no kernel for {spec.name} (a thread "
                                  "hashes one message, which a tree hash does not fit); it "
                                  f"serves {', '.join(sorted(algorithms_available))}")
    outlen = _out_length(spec, length)
    stream = 0 if stream is None else stream
    values, starts, lengths, n = _layout_of(messages, offsets, stream)
    if isinstance(starts, int) and starts * n > values.shape[0]:      # cannot happen: a reshape
        raise ValueError(f"{n} rows of {starts} bytes do not fit in {values.shape[0]} bytes")
    target = _check_out(out, n, outlen, stream)
    if n == 0 or outlen == 0:
        return target
    (a, b), (c, d) = _span(target), _span(values)
    if a < d and c < b and values.nbytes:
        raise ValueError("out overlaps the messages")
    iv = cuda.to_device(np.ascontiguousarray(initial_state(spec)), stream=stream)
    threads = _config.CUDA_THREADS_PER_BLOCK
    launch = rows_kernel(spec.family)[-(-n // threads), threads, stream]
    launch(values, starts, lengths, n, iv, target)
    return target
