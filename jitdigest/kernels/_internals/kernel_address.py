"""Section 13 of ``_internals``: a compiled kernel as a first-class function argument whose
address is looked up once (its C wrapper's, ``CodeLibrary.get_pointer_to_function``).

``kernels/_rows.over_chunks`` takes the backend's kernel as an argument of Numba's
``FunctionType``. Passed a dispatcher, Numba's unboxing looks up two addresses of the compiled
function in Python at every call (``_get_wrapper_address`` and ``_get_jit_address``), many
times the cost of the documented wrapper address protocol (an object with
``__wrapper_address__()``), which this object implements with the address
``_get_wrapper_address`` gives, looked up once. Called through that address (the compiled
function's C wrapper) an exception raised in the kernel is printed, not raised: the batch
driver proves every bound before the call (``jitdigest.engine.layout``).

Part of the one package that touches Numba's and llvmlite's private internals (see
``__init__``); tested in tests/test_internals.py."""


class KernelAddress:
    """``kernel`` (a dispatcher) compiled for ``signature``, as a first-class function value."""

    __slots__ = ("kernel", "address")

    def __init__(self, kernel, signature):
        self.kernel = kernel                # holds the compiled code the address points into
        kernel.compile(signature)
        compiled = kernel.overloads[tuple(signature.args)]
        self.address = compiled.library.get_pointer_to_function(
            compiled.fndesc.llvm_cfunc_wrapper_name)

    def __wrapper_address__(self):
        return self.address
