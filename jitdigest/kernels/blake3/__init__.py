"""BLAKE3 kernels, one module per backend, each exporting the same entry points.

Per message: ``portable`` (loop form, runs interpreted and compiled). The state layout and the
domain flags both the kernels and ``jitdigest.blake3`` read are in ``layout``. Importing this
package imports no backend (and no Numba).
"""


def backends():
    """The per-message backends, best first: the first one this process can run serves."""
    from . import portable
    return (portable,)
