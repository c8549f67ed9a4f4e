"""Isolated execution of generated Python analysis code (issue #4).

- :mod:`sandbox.models`: :class:`~sandbox.models.Sandbox` and
  :class:`~sandbox.models.SandboxSession` (the interfaces), limits, outcome.
- :mod:`sandbox.bubblewrap`: the real sandbox (bubblewrap, seccomp, rlimits, wall clock).
- :mod:`sandbox.fake`: an in-memory sandbox for unit tests of callers.
- :mod:`sandbox.ahead`: a one-shot sandbox started before its script exists (its start
  overlaps the step's SQL or the compute agent's call).
- :mod:`sandbox.spawn`: starts the isolated bootstrap with a channel (sessions, started runs).
- :mod:`sandbox.seccomp`: the seccomp program the host builds and the bootstrap installs.
- :mod:`sandbox.session`: the persistent session (one isolated process, many cells).
- :mod:`sandbox.cells`: what the real and the fake session share (inputs, a cell's outcome).
- :mod:`sandbox.protocol`: the ``{status, summary, result}`` output protocol.
- :mod:`sandbox.diagnosis`: classification of failures for the correction loop.
- :mod:`sandbox.runtime`: the sandbox's own Python runtime (``geoask sandbox setup``).
- ``sandbox/bootstrap.py``: runs inside the sandbox before the script or as the cell loop.
"""
