"""Section 13 of ``_internals``: a compiled kernel as a first-class function argument whose
address is looked up once (``numba.experimental.function_type._get_wrapper_address``).

``kernels/_rows.over_chunks`` takes the backend's kernel as an argument of Numba's
``FunctionType``. Passed a dispatcher, Numba's unboxing looks up two addresses of the compiled
function in Python at every call (``_get_wrapper_address`` and ``_get_jit_address``): about
100 us a call, measured on AMD EPYC (znver1), against a few us for the documented wrapper
address protocol (an object with ``__wrapper_address__()``), which this object implements with
the address Numba's own function gave once. Called through that address (the compiled
function's C wrapper) an exception raised in the kernel is printed, not raised: the batch
driver proves every bound before the call (``jitdigest.engine.layout``).

Part of the one package that touches Numba's and llvmlite's private internals (see
``__init__``); tested in tests/test_internals.py."""
from numba.experimental.function_type import _get_wrapper_address


class KernelAddress:
    """``kernel`` (a dispatcher) compiled for ``signature``, as a first-class function value."""

    __slots__ = ("kernel", "address")

    def __init__(self, kernel, signature):
        self.kernel = kernel                # holds the compiled code the address points into
        self.address = _get_wrapper_address(kernel, signature)

    def __wrapper_address__(self):
        return self.address
