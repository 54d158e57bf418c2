"""Whether this process can run ``jitdigest.cuda``, asked without raising and without importing
numba-cuda when it is not installed: for ``jitdigest.cuda``'s import and ``jitdigest info``."""
from importlib.util import find_spec
import os


def simulator():
    """Whether Numba's CUDA simulator is on (``NUMBA_ENABLE_CUDASIM=1``: kernels run on the
    CPU, one Python thread per CUDA thread)."""
    return os.environ.get("NUMBA_ENABLE_CUDASIM", "0") not in ("", "0")


def missing():
    """None when ``jitdigest.cuda`` can run here, else a sentence saying what is missing."""
    if find_spec("numba_cuda") is None:
        return ("jitdigest.cuda needs the numba-cuda package: pip install 'jitdigest[cuda]' "
                "(NUMBA_ENABLE_CUDASIM=1 then runs it on the CPU, without a GPU)")
    if simulator():
        return None
    from numba import cuda
    if not cuda.is_available():
        return ("jitdigest.cuda found no usable CUDA GPU and driver (numba.cuda.is_available() "
                "is False); NUMBA_ENABLE_CUDASIM=1 runs it on the CPU's simulator instead")
    return None


def describe():
    """One line for ``jitdigest info``: the GPU found, the simulator, or what is missing."""
    problem = missing()
    if problem is not None:
        if find_spec("numba_cuda") is None:
            return "none (numba-cuda not installed)"
        return "none (no usable CUDA GPU or driver)"
    if simulator():
        return "simulator (NUMBA_ENABLE_CUDASIM=1)"
    from numba import cuda
    gpu = cuda.get_current_device()
    name = gpu.name.decode() if isinstance(gpu.name, bytes) else gpu.name
    return f"{name} (compute capability {'.'.join(map(str, gpu.compute_capability))})"
