"""Section 17 of ``_internals``: Numba's highlighted error text (``errors.HighlightColorScheme
._markup``) built without colorama wrapping and unwrapping the standard streams each time;
replaced, on import, by a function that returns the same text.

Part of the one package that touches Numba's and llvmlite's private internals (see
``__init__``); tested in tests/test_internals_compile.py."""

# Numba builds a highlighted message for every exception it raises while typing, most of them
# caught again: a global that has no Numba type (``typeof`` tries it and raises ValueError), an
# overload that does not match. Each message is marked up inside colorama's ``init()`` and
# ``deinit()``, which wrap sys.stdout and sys.stderr (reading the environment for each) and put
# them back: nothing is written meanwhile, so the text is all that comes of it. Profiled over a
# whole warmup (AMD EPYC znver3): 163,000 markups, 326,000 stream wrappers. The text is the
# style codes, the message and colorama's reset code, as Numba's ``reset_terminal`` appends
# it, through UTF-8 and back (so a message that cannot be encoded still raises). One thing
# goes with the wrapping: colorama's exit handler (registered by its first ``init()``), which
# writes a reset code to a terminal's standard output as the process ends.
from numba.core import errors as _errors

_SCHEME = getattr(_errors, "HighlightColorScheme", None)       # absent without colorama
NUMBA_MARKUP = getattr(_SCHEME, "_markup", None)


if NUMBA_MARKUP is not None:
    _RESET = _errors.Style.RESET_ALL
    _BRIGHT = _errors.Style.BRIGHT

    def markup(self, msg, color=None, style=_BRIGHT):
        features = ""
        if color:
            features += color
        if style:
            features += style
        return (features.encode("utf-8") + msg.encode("utf-8")
                + _RESET.encode("utf-8")).decode("utf-8")

    _SCHEME._markup = markup
else:
    markup = None
