"""Isolated execution of generated Python analysis code (issue #4).

- :mod:`sandbox.models`: :class:`~sandbox.models.Sandbox` (the interface), limits, outcome.
- :mod:`sandbox.bubblewrap`: the real sandbox (bubblewrap, seccomp, rlimits, wall clock).
- :mod:`sandbox.fake`: an in-memory sandbox for unit tests of callers.
- :mod:`sandbox.protocol`: the ``{status, summary, result}`` output protocol.
- :mod:`sandbox.diagnosis`: classification of failures for the correction loop.
- :mod:`sandbox.runtime`: the sandbox's own Python runtime (``geoask sandbox setup``).
- ``sandbox/bootstrap.py``: runs inside the sandbox before the script (not imported).
"""
