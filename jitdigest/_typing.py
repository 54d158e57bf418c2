"""The names jitdigest's annotations use, for type checkers and ``typing.get_type_hints``.

``ReadableBuffer``: any object with the buffer protocol (``collections.abc.Buffer`` from
Python 3.12; before it, a Protocol of ``__buffer__`` or a numpy array for the checker, and
``bytes | bytearray | memoryview`` at run time, for ``get_type_hints``). The Protocols are for
the checker only (``_constructors`` has those of the constructors). Nothing here imports
``typing`` at run time (type checkers read ``TYPE_CHECKING`` below as true), so that
``import jitdigest`` costs what it did.
"""
from __future__ import annotations

import io
import sys

TYPE_CHECKING = False

if TYPE_CHECKING:
    from typing import Any, Protocol, Union

    import numpy as np

    if sys.version_info >= (3, 12):
        from collections.abc import Buffer as ReadableBuffer
    else:
        class _Buffer(Protocol):
            def __buffer__(self, flags: int, /) -> memoryview: ...

        # (numpy's stubs give arrays ``__buffer__`` from Python 3.12 only)
        ReadableBuffer = Union[_Buffer, "np.ndarray[Any, Any]"]

    class BinaryReader(Protocol):
        """A file object open for binary reading (``file_digest``)."""

        def readinto(self, buffer: bytearray, /) -> int | None: ...

        def readable(self) -> bool: ...
else:
    if sys.version_info >= (3, 12):
        from collections.abc import Buffer as ReadableBuffer
    else:
        ReadableBuffer = bytes | bytearray | memoryview
    BinaryReader = io.BufferedIOBase


class EmptyDefault(bytes):
    """The default of a constructor's ``data``: an empty ``bytes`` (shown as ``b''`` by
    ``inspect.signature`` and ``help``) that is not the ``b""`` a caller may pass, so that
    the constructor can tell data given from data left out."""

    __slots__ = ()


def public_signature(cls):
    """``inspect.signature`` of a hash class as its reference module shows it (hashlib's
    ``blake2b``, the tree hash's package): ``__init__``'s parameters without ``self``,
    ``*args``, ``**kwargs`` and annotations, an ``EmptyDefault`` as ``b""``."""
    import inspect
    params = [p.replace(annotation=p.empty,
                        default=b"" if isinstance(p.default, EmptyDefault) else p.default)
              for p in inspect.signature(cls.__init__).parameters.values()
              if p.name != "self" and p.kind not in (p.VAR_POSITIONAL, p.VAR_KEYWORD)]
    return inspect.Signature(params)
