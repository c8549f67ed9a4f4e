"""An in-memory :class:`sandbox.models.Sandbox` for unit tests of the components that call it.

>>> fake = FakeSandbox()
>>> fake.run('print("hi")').status
'success'
>>> fake.calls[0].script
'print("hi")'
>>> with fake.open_session() as session:
...     _ = session.run_cell("n = 41")
...     session.run_cell('import json; print(json.dumps({"status": "success", '
...                      '"summary": "n", "result": {"n": n + 1}}))').protocol.result
{'n': 42}
"""

from __future__ import annotations

import contextlib
import io
import tempfile
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from geoask.errors import SandboxError
from sandbox.bootstrap import error_report
from sandbox.cells import cell_outcome, check_cell_timeout, stage_inputs
from sandbox.models import ProtocolResult, SandboxLimits, SandboxOutcome, TextExcerpt

#: File name the fake compiles cells under (tracebacks keep only its frames).
FAKE_CELL_PATH = "<cell>"


@dataclass(frozen=True)
class FakeCall:
    """One recorded :meth:`FakeSandbox.run` call."""

    script: str
    inputs: tuple[Path, ...]
    limits: SandboxLimits | None


@dataclass(frozen=True)
class FakeCellCall:
    """One recorded :meth:`FakeSession.run_cell` call (``session``: index in ``sessions``)."""

    session: int
    code: str
    inputs: tuple[Path, ...]
    timeout_s: float | None


def success_outcome(
    result: dict[str, object] | list[object], summary: str = "done"
) -> SandboxOutcome:
    """Build the outcome of a script that printed ``{"status": "success", ...}``."""
    protocol = ProtocolResult(status="success", summary=summary, result=result)
    text = protocol.model_dump_json()
    return SandboxOutcome(
        status="success", protocol=protocol, exit_code=0, wall_time_s=0.0, cpu_time_s=0.0,
        peak_memory_mib=0.0, stdout=TextExcerpt(text=text, total_chars=len(text), truncated=False),
        stderr=TextExcerpt(text="", total_chars=0, truncated=False),
    )


@dataclass
class FakeSandbox:
    """Returns scripted outcomes without running anything and records every call.

    Args:
        respond: maps a script to its outcome; by default every script succeeds with
            ``result={}``. Use it to script failures for the correction loop.
        respond_cell: maps a session cell's code to its outcome; None (the default) runs the
            cell in this process (see :class:`FakeSession`).

    """

    respond: Callable[[str], SandboxOutcome] = field(default=lambda _script: success_outcome({}))
    calls: list[FakeCall] = field(default_factory=list)
    respond_cell: Callable[[str], SandboxOutcome] | None = None
    cell_calls: list[FakeCellCall] = field(default_factory=list)
    sessions: list[FakeSession] = field(default_factory=list)

    def run(
        self, script: str, inputs: Sequence[Path] = (), limits: SandboxLimits | None = None
    ) -> SandboxOutcome:
        """Record the call and return ``respond(script)``."""
        self.calls.append(FakeCall(script, tuple(Path(path) for path in inputs), limits))
        return self.respond(script)

    def start(self, limits: SandboxLimits | None = None) -> FakeStarted:
        """A :class:`FakeStarted` whose one script runs as :meth:`run` runs it."""
        return FakeStarted(self, limits)

    def open_session(self, limits: SandboxLimits | None = None) -> FakeSession:
        """Start a :class:`FakeSession` (recorded in :attr:`sessions`)."""
        session = FakeSession(self, len(self.sessions), limits)
        self.sessions.append(session)
        return session


@dataclass
class FakeStarted:
    """A :class:`sandbox.models.StartedSandbox` of the fake: one :meth:`run`, then closed."""

    sandbox: FakeSandbox
    limits: SandboxLimits | None
    closed: bool = False

    def run(self, script: str, inputs: Sequence[Path] = ()) -> SandboxOutcome:
        """The fake sandbox's :meth:`FakeSandbox.run` (recorded there), once.

        Raises:
            SandboxError: it ran or was closed already.

        """
        if self.closed:
            raise SandboxError("a sandbox started ahead runs one script; start another")
        self.closed = True
        return self.sandbox.run(script, inputs, self.limits)

    def close(self) -> None:
        """Close it (idempotent)."""
        self.closed = True

    def __enter__(self) -> FakeStarted:
        """Itself."""
        return self

    def __exit__(self, *exc: object) -> None:
        """Close it."""
        self.close()


class FakeSession:
    """A :class:`sandbox.models.SandboxSession` for unit tests: no isolation at all.

    Unless the sandbox has ``respond_cell``, a cell is compiled and ``exec``-uted in this
    process in a namespace kept between cells, with stdout/stderr captured; the literal text
    ``/input/`` in a cell is rewritten to the fake's own staging folder, where inputs are
    copied. Only for test code a test wrote: model output runs in the real sandbox only.
    Errors are classified as the real session classifies them; a cell outcome with status
    ``timeout`` or ``killed`` or with a ``signal`` (a CPU limit: ``SIGXCPU``), scripted through
    ``respond_cell``, ends the session as the real one would. Wall/CPU/memory bounds are not
    enforced.
    """

    def __init__(self, sandbox: FakeSandbox, index: int, limits: SandboxLimits | None) -> None:
        self.sandbox = sandbox
        self.index = index
        self.limits = limits
        self.namespace: dict[str, object] = {"__name__": "__main__"}
        self.cells = 0
        self._ended: str | None = None
        self._staging = tempfile.TemporaryDirectory(prefix="geoask-fake-session-")
        self.input_dir = Path(self._staging.name)

    @property
    def ended(self) -> str | None:
        """Why the session ended, or None while it is open."""
        return self._ended

    def run_cell(
        self, code: str, inputs: Sequence[Path] = (), timeout_s: float | None = None
    ) -> SandboxOutcome:
        """Record the cell, stage its inputs and return its outcome (see the class docstring).

        Raises:
            SandboxError: the session ended, an input is missing or clashes with an earlier one.

        """
        if self._ended is not None:
            raise SandboxError(f"session ended: {self._ended}")
        check_cell_timeout(timeout_s)
        paths = tuple(Path(path) for path in inputs)
        self.sandbox.cell_calls.append(FakeCellCall(self.index, code, paths, timeout_s))
        stage_inputs(self.input_dir, paths)
        self.cells += 1
        if self.sandbox.respond_cell is not None:
            outcome = self.sandbox.respond_cell(code)
        else:
            outcome = self._execute(code.replace("/input/", f"{self.input_dir}/"))
        if outcome.status in ("timeout", "killed") or outcome.signal is not None:
            self._ended = f"cell {self.cells} ended the session: {outcome.failure_detail()}"
            self._staging.cleanup()
        return outcome

    def _execute(self, code: str) -> SandboxOutcome:
        stdout, stderr = io.StringIO(), io.StringIO()
        report: dict[str, object] | None = None
        with contextlib.redirect_stdout(stdout), contextlib.redirect_stderr(stderr):
            try:
                exec(compile(code, FAKE_CELL_PATH, "exec"), self.namespace)  # noqa: S102
            except SystemExit as stop:
                if stop.code not in (None, 0):
                    report = error_report(stop, FAKE_CELL_PATH)
            except Exception as error:  # a failing cell is an outcome
                report = error_report(error, FAKE_CELL_PATH)
        return cell_outcome(stdout.getvalue(), stderr.getvalue(), report)

    def close(self) -> None:
        """End the session (idempotent); later cells raise SandboxError."""
        if self._ended is None:
            self._ended = "closed"
        self._staging.cleanup()

    def __enter__(self) -> FakeSession:
        """Return the session."""
        return self

    def __exit__(self, *exc: object) -> None:
        """Close the session."""
        self.close()
