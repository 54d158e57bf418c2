"""numpy, imported when first used by the modules a script's first digests pass through.

Why: a process whose digests are its first one-shot ones (``_native.FirstDigests``: the stored
kernels, no Numba) need not import numpy either, which would be most of a script printing one
digest (benchmarks/results/tunables.md). Such a module writes ``np = on_first_use(globals())``
where it would import numpy: the stand-in puts numpy itself in the module's ``np`` on its first
attribute lookup, so later uses cost what an imported module's do.
"""


class _OnFirstUse:
    __slots__ = ("_namespace",)

    def __init__(self, namespace):
        self._namespace = namespace

    def __getattr__(self, name):
        import numpy
        self._namespace["np"] = numpy
        return getattr(numpy, name)


def on_first_use(namespace):
    """A stand-in for numpy as the global ``np`` of the module whose ``globals()`` is
    ``namespace``."""
    return _OnFirstUse(namespace)
