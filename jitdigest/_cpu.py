"""The only place that asks what the CPU and Numba's compile target can do, and which
hardware paths the user switched off (``JITDIGEST_DISABLE``, read once at import)."""
import os

# Every name JITDIGEST_DISABLE understands; "all" switches off every hardware path.
SWITCHES = ("sha_ni", "avx2", "avx512")


def _parse_disable(text):
    names = {part.strip().lower() for part in text.split(",") if part.strip()}
    if "all" in names:
        return frozenset(SWITCHES)
    return frozenset(names & set(SWITCHES))


DISABLED = _parse_disable(os.environ.get("JITDIGEST_DISABLE", ""))
