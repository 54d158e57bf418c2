"""The engine: which kernel serves a call, and the Python work around a kernel call.

Dispatch over backend records (``dispatch``, ``keyed``), what this process may run (``cpu``),
batch layout and bounds (``layout``), the threading layer (``parallel``), the calibration table
(``calibration``), compile notices (``notice``) and GPU detection (``gpu``). Nothing here
imports the public API above it.
"""
