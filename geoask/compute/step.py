"""One Python script of a step: inputs -> sandbox or session -> outcome -> outputs, for all.

The mirror of :mod:`geoask.sql.step`. The question flow's Python task, the benchmark's program
runner, the REACT baseline's ``run_cell`` tool and ``geoask sandbox run|cells`` all run a script
through :func:`run_compute`: its named inputs are resolved to host files
(:func:`select_inputs`), it runs in a fresh sandbox (:class:`sandbox.models.Sandbox`) or as a
cell of a persistent session (:class:`sandbox.models.SandboxSession`), and the outcome is read
into a :class:`ComputeRun`, whose :meth:`ComputeRun.outputs` are the artifact references a
caller registers. Each caller records the events it cares about through ``on_event`` and maps a
failure to its own outcome.
"""

from __future__ import annotations

import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from geoask.base.formats import JSON
from geoask.errors import GeoaskError
from geoask.sql.step import ToolEvent
from geoask.vocabulary.artifacts import ArtifactRef
from geoask.vocabulary.evidence import python_evidence
from sandbox.models import (
    ProtocolResult,
    Sandbox,
    SandboxLimits,
    SandboxOutcome,
    SandboxSession,
    StartedSandbox,
)

NO_RESULT = "no result object"
"""The ``sandbox`` event's detail for a session cell that succeeded without a result object."""


class UnknownInputError(GeoaskError):
    """A script names inputs that are not among the available files.

    Attributes:
        unknown: the names not found, in the order given.

    """

    def __init__(self, unknown: list[str]) -> None:
        """Name the unknown inputs."""
        super().__init__(f"unknown inputs: {', '.join(unknown)}")
        self.unknown = unknown


@dataclass(frozen=True)
class ComputeRun:
    """A script or cell that ran, whether it succeeded or not.

    Attributes:
        outcome: everything the sandbox reported.
        milliseconds: wall time of the call, as the caller saw it.

    """

    outcome: SandboxOutcome
    milliseconds: float

    @property
    def failure(self) -> str | None:
        """None when the script succeeded; else the one-line failure detail."""
        return self.outcome.failure_detail()

    @property
    def protocol(self) -> ProtocolResult | None:
        """The script's protocol object (None for a failure or a cell without a result)."""
        return self.outcome.protocol

    @property
    def result(self) -> Any:
        """The protocol ``result`` (records or an object).

        Raises:
            GeoaskError: the run gave no protocol object (check :attr:`failure` first).

        """
        if self.outcome.protocol is None:
            raise GeoaskError(f"the script gave no result (status {self.outcome.status})")
        return self.outcome.protocol.result

    def outputs(self, result_url: str, max_chars: int = 2000) -> list[ArtifactRef]:
        """The references to register: the saved protocol result, then the files written.

        Args:
            result_url: where the caller saved the protocol result (JSON).
            max_chars: longest preview of the result.

        Raises:
            GeoaskError: the run gave no protocol object.

        """
        result = self.result
        summary = self.outcome.protocol.summary if self.outcome.protocol else ""
        fields = sorted(result) if isinstance(result, dict) else sorted(
            {k for row in result if isinstance(row, dict) for k in row})
        reference = ArtifactRef(
            name="result", url=result_url, format=JSON.name, fields=fields,
            row_count=len(result) if isinstance(result, list) else None,
            preview=python_evidence(summary, result, max_chars=max_chars),
        )
        files = [ArtifactRef(name=f.name, url=f.uri, format=f.media_type)
                 for f in self.outcome.artifacts]
        return [reference, *files]


def select_inputs(names: Sequence[str], available: Mapping[str, Path]) -> list[Path]:
    """The host files of the inputs ``names``, in order.

    Raises:
        UnknownInputError: some names are not in ``available``.

    """
    unknown = [name for name in names if name not in available]
    if unknown:
        raise UnknownInputError(unknown)
    return [available[name] for name in names]


def run_compute(
    script: str,
    inputs: Sequence[Path],
    host: Sandbox | SandboxSession | StartedSandbox,
    *,
    limits: SandboxLimits | None = None,
    on_event: ToolEvent | None = None,
) -> ComputeRun:
    """Run ``script`` with ``inputs`` readable at ``/input/<file name>``; read its outcome.

    Args:
        script: Python source (a whole script, or a cell of ``host``'s session).
        inputs: host files the script reads (copied into the sandbox).
        host: a sandbox (a fresh isolated run), one started ahead for this script (its
            limits set when it started), or an open session (a cell; state kept).
        limits: a fresh run's resource limits (None: the configured defaults; unused for a
            started sandbox or a session, whose bounds were set when they started).
        on_event: called once with the ``sandbox`` tool's outcome: ``error`` and the failure
            detail, or ``ok`` and the protocol summary (:data:`NO_RESULT` without one).

    Raises:
        SandboxError: the sandbox could not run, or the session has ended (nothing recorded).

    """
    begin = time.perf_counter()
    if isinstance(host, SandboxSession):
        outcome = host.run_cell(script, inputs)
    elif isinstance(host, StartedSandbox):
        outcome = host.run(script, inputs)
    else:
        outcome = host.run(script, inputs, limits)
    run = ComputeRun(outcome, (time.perf_counter() - begin) * 1000)
    if on_event is not None:
        on_event("sandbox", *_event(run), run.milliseconds)
    return run


def _event(run: ComputeRun) -> tuple[str, str]:
    """The ``(status, detail)`` of the ``sandbox`` event of ``run``."""
    failure = run.failure
    if failure is not None:
        return "error", failure
    return "ok", run.protocol.summary if run.protocol is not None else NO_RESULT
