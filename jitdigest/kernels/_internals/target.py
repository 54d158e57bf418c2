"""Section 4 of ``_internals``: the CPU model and features Numba's JIT compiles for
(``numba.core.codegen.JITCPUCodegen``'s decision).

Part of the one package that touches Numba's and llvmlite's private internals (see
``__init__``); tested in tests/test_internals.py."""
import llvmlite.binding as ll
import numba

from numba.core import codegen


def jit_target():
    """``(cpu_name, features)``: the CPU model and the LLVM feature string (``"+sse2,-avx,..."``)
    Numba's JIT hands LLVM, decided as ``numba.core.codegen.JITCPUCodegen`` does
    (``_get_host_cpu_name``, ``_get_host_cpu_features``) without building a code generator:
    ``NUMBA_CPU_NAME`` or the host's model; ``NUMBA_CPU_FEATURES`` when set (``NUMBA_CPU_NAME=
    generic`` sets it to ""), else every host feature, ``avx*`` off under
    ``NUMBA_ENABLE_AVX=0``. The features override what the model implies."""
    config = numba.core.config
    name = ll.get_host_cpu_name() if config.CPU_NAME is None else config.CPU_NAME
    if config.CPU_FEATURES is not None:
        return name, config.CPU_FEATURES
    return name, codegen.get_host_cpu_features()


def compiled_target():
    """``(cpu_name, features)`` as Numba's JIT code generator actually has them (builds the CPU
    target context if no kernel did yet): what ``jit_target()`` must agree with."""
    from numba.core.registry import cpu_target
    _, name, features = cpu_target.target_context.codegen().magic_tuple()
    return name, features
