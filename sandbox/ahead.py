"""A one-shot sandbox started before its script exists, so its start overlaps other work.

A fresh sandbox's fixed cost - bwrap's namespaces and mounts, the interpreter, the seccomp
filter, importing geopandas and its stack - is most of a Python step's time when the step's
SQL screen is itself quick. :meth:`sandbox.bubblewrap.BubblewrapSandbox.start` pays it while
the caller does something else (runs the step's SQL, asks the compute agent): the process
starts as ``bootstrap.py --ahead MODULE...`` (:func:`sandbox.bootstrap.await_script`), imports
the modules and waits on its channel. :meth:`StartedRun.run` then writes the script and copies
the inputs into the run folder - the files the SQL step wrote, as they are at that moment -
and tells the process to go; from there it is :meth:`~sandbox.bubblewrap.BubblewrapSandbox.run`:
the same script path, protocol, error report, outcome and artifact collection.

What does not change: one process per script, never reused (:meth:`StartedRun.run` runs once;
the folder, the uid and every process of it are gone afterwards, or at :meth:`StartedRun.close`
when no script came); the isolation (:func:`sandbox.spawn.spawn_with_channel`: the same bwrap
options, prlimit limits and uid as a fresh run); the limits: memory and CPU as for a fresh run
(the preloaded imports count against them, as a script's own imports do), the wall clock from
the hand-over of the script. Inputs are mounted at ``/input`` from the start but hold nothing
until the hand-over.

In a process that asks many questions such runs are started before anyone asks, and handed out
one per script, by :mod:`sandbox.ready`.
"""

from __future__ import annotations

import contextlib
import shutil
import socket
import subprocess
import time
import uuid
from collections.abc import Sequence
from pathlib import Path
from typing import Protocol

from geoask.errors import SandboxError
from sandbox.host import Finished, kill_uid_processes, release_uid, unmount, wait
from sandbox.models import SandboxLimits, SandboxOutcome, SessionHost
from sandbox.protocol import send_message
from sandbox.spawn import spawn_with_channel


class AheadHost(SessionHost, Protocol):
    """What a started run takes from its sandbox (``BubblewrapSandbox``): a session's, and more."""

    def stage_job(self, run_dir: Path, script: str, inputs: Sequence[Path], uid: int) -> None:
        """Write the script and copy the inputs into ``run_dir``."""
        ...

    def read_outcome(self, run_dir: Path, run_id: str, finished: Finished,
                     limits: SandboxLimits) -> SandboxOutcome:
        """The outcome of the run that ended as ``finished``."""
        ...


class StartedRun:
    """A sandbox started for one script still to come (see the module docstring).

    Use it as a context manager (or call :meth:`close`): a run that never got its script is
    ended there. Start it from a thread that lives until the script ran (bwrap's
    ``--die-with-parent`` follows the starting thread).

    Attributes:
        run_id: 16 hex digits; artifacts go to ``<artifacts_url>/<run_id>/``.
        limits: the run's limits (its wall clock counts from :meth:`run`).

    """

    def __init__(self, sandbox: AheadHost, limits: SandboxLimits,
                 preload: Sequence[str]) -> None:
        """Start the process; it imports ``preload`` and waits for its script.

        Raises:
            SandboxError: a prerequisite is missing or bubblewrap could not be started.

        """
        tools = sandbox.check_prerequisites()
        self.sandbox, self.limits = sandbox, limits
        self.run_id = uuid.uuid4().hex[:16]
        self.uid = sandbox.allocate_uid()
        self.run_dir = sandbox.work_dir / self.run_id
        self._process: subprocess.Popen[bytes] | None = None
        self._channel: socket.socket | None = None
        self._done = False
        try:
            sandbox.prepare_run_dir(self.run_dir, "", (), self.uid, limits)
            self._process, self._channel = spawn_with_channel(
                sandbox.runtime_dir, self.run_dir, self.uid, limits, tools,
                ["--ahead", *preload])
        except BaseException:
            self.close()
            raise

    def run(self, script: str, inputs: Sequence[Path] = ()) -> SandboxOutcome:
        """Hand ``script`` and ``inputs`` over and wait for the outcome (as a fresh run's).

        Raises:
            SandboxError: the run was used or closed already, an input is missing or two share
                a name, or the sandbox failed before the script ran.

        """
        if self._done or self._process is None or self._channel is None:
            raise SandboxError("a sandbox started ahead runs one script; start another")
        self._done = True
        try:
            self.sandbox.stage_job(self.run_dir, script, inputs, self.uid)
            started = time.monotonic()
            with contextlib.suppress(OSError):  # a process that died is reported by its outcome
                send_message(self._channel, {"run": True})
            self._channel.close()
            finished = wait(self._process, self.uid, self.limits, started)
            self._process = None
            return self.sandbox.read_outcome(self.run_dir, self.run_id, finished, self.limits)
        finally:
            self.close()

    def alive(self) -> bool:
        """True while the process waits for its script (not run, closed or died)."""
        return not self._done and self._process is not None and self._process.poll() is None

    def close(self) -> None:
        """End the run: its process (if no script ran), its uid's processes, its folder."""
        self._done = True
        if self._channel is not None:
            self._channel.close()
        if self._process is not None:
            kill_uid_processes(self.uid, sparing=self._process.pid)
            self._process.kill()
            self._process.wait()
            self._process = None
        kill_uid_processes(self.uid, wait_s=2.0)  # gone before the uid is released
        unmount(self.run_dir / "rw")
        shutil.rmtree(self.run_dir, ignore_errors=True)
        release_uid(self.uid)

    def __enter__(self) -> StartedRun:
        """The started run."""
        return self

    def __exit__(self, *exc: object) -> None:
        """Close the run."""
        self.close()

