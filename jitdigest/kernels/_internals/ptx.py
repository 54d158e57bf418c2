"""Section 9 of ``_internals``: CUDA kernels compiled to PTX on a machine with no GPU
(numba-cuda's ``compile_device`` asks the current device for its compute capability).

Part of the one package that touches Numba's and llvmlite's private internals (see
``__init__``); tested in tests/test_internals.py."""
from .threads import compiler_lock


def ptx_without_gpu(kernel, signature, cc):
    """The PTX of the Python function ``kernel`` for argument types ``signature`` and compute
    capability ``cc``, its device functions compiled for ``cc`` too (``numba.cuda.compile_ptx``
    alone asks a GPU for theirs): for tests of the CUDA lowering on a machine without one."""
    import sys
    from types import SimpleNamespace

    from numba import cuda
    module = sys.modules[type(cuda.jit(device=True)(lambda: None)).__module__]
    with compiler_lock():
        saved = module.get_current_device
        module.get_current_device = lambda: SimpleNamespace(compute_capability=cc)
        try:
            return cuda.compile_ptx(kernel, signature, cc=cc)[0]
        finally:
            module.get_current_device = saved
