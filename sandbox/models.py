"""What a sandbox run takes and returns, and the :class:`Sandbox` interface.

The question flow depends on :class:`Sandbox` only; :class:`sandbox.bubblewrap.BubblewrapSandbox`
is the real implementation and :class:`sandbox.fake.FakeSandbox` the in-memory one for tests.
:meth:`Sandbox.open_session` starts a :class:`SandboxSession`: one isolated Python process that
keeps its state between cells (:mod:`sandbox.session` is the real one).
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Literal, Protocol, runtime_checkable

from pydantic import BaseModel, ConfigDict, Field

if TYPE_CHECKING:
    from geoask.settings import Settings

#: Overall verdict of a run.
#: ``success``: exit 0 and a valid protocol object with status "success".
#: ``script_reported_error``: exit 0 and a valid protocol object with status "error".
#: ``exception``: an uncaught exception in the script (see :attr:`SandboxOutcome.error`).
#: ``protocol_error``: the script ended normally but its last output was not a valid object.
#: ``timeout``: the wall-clock limit expired; the whole process tree was killed.
#: ``limit_exceeded``: a CPU, memory, file-size, open-file, process or disk-space limit stopped
#: the script.
#: ``killed``: the script died from another signal (for example SIGSEGV from ctypes).
OutcomeStatus = Literal[
    "success", "script_reported_error", "exception", "protocol_error", "timeout",
    "limit_exceeded", "killed",
]

#: What went wrong, for the correction loop.
ErrorKind = Literal[
    "exception", "syntax_error", "missing_module", "missing_field", "forbidden_operation",
    "protocol", "timeout", "cpu_limit", "memory_limit", "file_size_limit", "open_files_limit",
    "process_limit", "disk_space_limit", "killed",
]


class SandboxLimits(BaseModel):
    """Resource limits of one run (defaults come from ``GEOASK_SANDBOX_*`` settings)."""

    model_config = ConfigDict(frozen=True)

    memory_mib: int = Field(default=2048, ge=256, description="Address space, MiB (RLIMIT_AS).")
    cpu_s: int = Field(default=60, ge=1, description="CPU time, s (RLIMIT_CPU; SIGKILL at +1 s).")
    timeout_s: float = Field(default=120.0, gt=0, description="Wall clock, s, enforced outside.")
    file_size_mib: int = Field(default=256, ge=1, description="Largest written file, MiB.")
    open_files: int = Field(default=256, ge=32, description="Open file descriptors.")
    max_tasks: int = Field(default=64, ge=8, description="Processes+threads of the run's uid.")
    tmp_mib: int = Field(default=64, ge=1, description="Size of the private /tmp, MiB.")
    scratch_mib: int = Field(
        default=512, ge=0, description="Size cap of /scratch, MiB (0: no cap, plain folder)."
    )

    @classmethod
    def from_settings(cls, settings: Settings) -> SandboxLimits:
        """Build the default limits from the ``GEOASK_SANDBOX_*`` settings."""
        return cls(**settings.values_for("sandbox_", cls.model_fields))

    @classmethod
    def for_session(cls, settings: Settings) -> SandboxLimits:
        """Default bounds of a whole session (see :meth:`Sandbox.open_session`).

        The script limits with the session's wall clock (``GEOASK_SANDBOX_SESSION_TIMEOUT_S``)
        and total CPU time (``GEOASK_SANDBOX_SESSION_CPU_S``).
        """
        return cls.from_settings(settings).model_copy(update={
            "timeout_s": settings.sandbox_session_timeout_s,
            "cpu_s": settings.sandbox_session_cpu_s,
        })


class ProtocolResult(BaseModel):
    """The JSON object a script prints last: exactly ``status``, ``summary`` and ``result``."""

    model_config = ConfigDict(extra="forbid", strict=True)

    status: Literal["success", "error"] = Field(description='"success" or "error".')
    summary: str = Field(description="Text for the user, in plain words.")
    result: dict[str, object] | list[object] = Field(description="Data as an object or array.")


class Artifact(BaseModel):
    """A regular file the script wrote under ``/scratch``, copied out through fsspec."""

    name: str = Field(description="Path relative to /scratch, '/'-separated.")
    uri: str = Field(description="fsspec URL of the copy.")
    size_bytes: int = Field(ge=0)
    media_type: str = Field(description="For example application/geo+json, text/csv, image/png.")


class TextExcerpt(BaseModel):
    """Part of a stream kept for the model, saying what was cut."""

    text: str
    total_chars: int = Field(ge=0, description="Length of the stream the excerpt was cut from.")
    truncated: bool
    note: str | None = Field(default=None, description="What was cut, when something was.")


class ScriptError(BaseModel):
    """A failed run, classified for the correction loop."""

    kind: ErrorKind
    exception_type: str | None = Field(default=None, description="For example KeyError.")
    line: int | None = Field(default=None, description="1-based line in the script.")
    message: str = Field(description="The error message (the exception's text).")
    missing_field: str | None = Field(
        default=None, description="Key or column the script expected but the data lacked."
    )
    hint: str = Field(description="What to change in the script.")


class SandboxOutcome(BaseModel):
    """Everything known about one sandboxed run."""

    status: OutcomeStatus
    protocol: ProtocolResult | None = Field(default=None, description="Valid protocol object.")
    error: ScriptError | None = Field(default=None, description="Set unless status is success.")
    artifacts: list[Artifact] = Field(default_factory=list)
    exit_code: int | None = Field(default=None, description="Exit status when not signalled.")
    signal: str | None = Field(default=None, description="Signal name when killed, e.g. SIGKILL.")
    wall_time_s: float = Field(ge=0)
    cpu_time_s: float = Field(ge=0, description="User+system CPU of the sandboxed processes.")
    peak_memory_mib: float = Field(
        ge=0, description="Memory the run held, MiB: the largest resident set of its process "
        "tree (every sandboxed process, reaped by bubblewrap) plus the RAM its files in "
        "/scratch occupy at the end (a tmpfs; such pages are in no process's resident set).")
    stdout: TextExcerpt
    stderr: TextExcerpt
    leftover_processes: int = Field(
        default=0, ge=0,
        description="Processes of the run's uid still alive after it ended (then killed); 0 "
        "when the namespaces did their job.",
    )
    artifacts_note: str | None = Field(
        default=None,
        description="What was not collected from /scratch (files past the cap, links, pipes).",
    )

    @property
    def ok(self) -> bool:
        """True when the script succeeded and reported success."""
        return self.status == "success"

    def failure_detail(self) -> str | None:
        """None for a success with a valid protocol; else one line saying what went wrong.

        ``<error kind> line <n>: <message>; hint: <hint>`` from the classified error, or
        ``sandbox status <status>`` when there is none - the text the compute agent's retry,
        the benchmark's verdict and ``geoask sandbox run`` all show.

        >>> SandboxOutcome.model_construct(status="timeout", protocol=None, error=ScriptError(
        ...     kind="timeout", message="wall clock 10 s exceeded", hint="do less work")
        ... ).failure_detail()
        'timeout: wall clock 10 s exceeded; hint: do less work'
        """
        if self.ok and self.protocol is not None:
            return None
        if self.ok:  # a session cell that succeeded without giving a result
            return None
        error = self.error
        if error is None:
            return f"sandbox status {self.status}"
        line = f" line {error.line}" if error.line else ""
        return f"{error.kind}{line}: {error.message}" + (f"; hint: {error.hint}" if error.hint
                                                          else "")

    @property
    def missing_fields(self) -> list[str]:
        """The input field a failed script could not find, as a list (empty when none)."""
        return [self.error.missing_field] if self.error and self.error.missing_field else []


@runtime_checkable
class StartedSandbox(Protocol):
    """A fresh sandbox started for one script still to come (:meth:`Sandbox.start`).

    Its :meth:`run` is :meth:`Sandbox.run` with the limits given at the start; it runs once.
    """

    def run(self, script: str, inputs: Sequence[Path] = ()) -> SandboxOutcome:
        """Run ``script`` with ``inputs`` (read as they are now) mounted at ``/input``.

        Raises:
            SandboxError: as :meth:`Sandbox.run`, or the started sandbox was used or closed.

        """
        ...

    def close(self) -> None:
        """End it; nothing of it is left running (idempotent)."""
        ...

    def __enter__(self) -> StartedSandbox:
        """Return itself (``with sandbox.start() as started:``)."""
        ...

    def __exit__(self, *exc: object) -> None:
        """Close it."""
        ...


class Sandbox(Protocol):
    """Runs one generated Python script in isolation."""

    def run(
        self, script: str, inputs: Sequence[Path] = (), limits: SandboxLimits | None = None
    ) -> SandboxOutcome:
        """Run ``script`` with ``inputs`` mounted read-only at ``/input/<file name>``.

        Args:
            script: Python source text.
            inputs: host files the script may read (copied; names must be unique).
            limits: resource limits; None means the configured defaults.

        Returns:
            The outcome; a failing script is an outcome, not an exception.

        Raises:
            SandboxError: the sandbox itself could not run (no bwrap, no runtime, bad input).

        """
        ...

    def start(self, limits: SandboxLimits | None = None) -> StartedSandbox:
        """Start the sandbox of one script before the script exists (:mod:`sandbox.ahead`).

        Its start (interpreter, seccomp, the common analysis imports) overlaps whatever the
        caller does until it hands the script to :meth:`StartedSandbox.run`.

        Args:
            limits: as for :meth:`run` (the wall clock counts from the hand-over).

        Raises:
            SandboxError: the sandbox could not start (as for :meth:`run`).

        """
        ...

    def open_session(self, limits: SandboxLimits | None = None) -> SandboxSession:
        """Start a persistent session (one isolated process that keeps state between cells).

        Args:
            limits: bounds of the whole session: ``timeout_s`` is its wall clock from start to
                close, ``cpu_s`` its total CPU time, ``memory_mib`` its process's address
                space, the others as for :meth:`run`. None means the configured session
                defaults (``GEOASK_SANDBOX_SESSION_*``). Per-cell wall/CPU bounds come from
                ``GEOASK_SANDBOX_CELL_*`` (never more than what is left of the session's).

        Raises:
            SandboxError: the sandbox could not start (as for :meth:`run`).

        """
        ...


@runtime_checkable
class SandboxSession(Protocol):
    """One isolated Python process that keeps its state between cells, like a Jupyter kernel.

    Variables, imported modules and loaded GeoDataFrames stay in memory from cell to cell.

    Contract (the real :class:`sandbox.session.BubblewrapSession` and the fake both keep it):

    - A cell runs in one namespace shared by all cells of the session (``__name__`` is
      ``"__main__"``); ``/scratch`` and ``/tmp`` persist too, ``/input`` grows.
    - A failing cell is an outcome (``status``/``error`` filled as by :meth:`Sandbox.run`,
      line numbers relative to the cell), not an exception; the session survives it.
    - A cell gives a result with the same protocol as a script (its stdout ends with the
      ``{status, summary, result}`` object): ``protocol`` is set and ``status`` is
      ``success`` or ``script_reported_error``. A cell whose output does not end with a JSON
      object holding a ``"status"`` key gave no result: ``status`` is ``success`` and
      ``protocol`` is None (its prints are in ``stdout``). A final object that attempts the
      protocol but breaks it is a ``protocol_error``.
    - A cell that exceeds its wall clock, the session's wall clock or CPU time, or crashes the
      process (segfault, ``os._exit``) ends the session: its outcome says why (status
      ``timeout``, ``limit_exceeded`` or ``killed``), everything of the session is killed, and
      later calls raise ``SandboxError("session ended: ...")``. A ``MemoryError`` inside the
      memory limit is an ordinary failing cell (the session survives it).
    - :meth:`close` is idempotent and leaves nothing of the session running.
    """

    def run_cell(
        self, code: str, inputs: Sequence[Path] = (), timeout_s: float | None = None
    ) -> SandboxOutcome:
        """Run ``code`` in the session's namespace.

        Args:
            code: Python source of the cell.
            inputs: host files made readable at ``/input/<file name>`` from this cell on
                (copied; a name already added with other content is refused).
            timeout_s: this cell's wall clock (s); None means ``GEOASK_SANDBOX_CELL_TIMEOUT_S``;
                never more than what is left of the session's wall clock.

        Returns:
            The cell's outcome (see the class docstring).

        Raises:
            SandboxError: the session has ended or was closed (``"session ended: <why>"``), an
                input is missing or clashes with an earlier one.

        """
        ...

    @property
    def ended(self) -> str | None:
        """Why the session ended, or None while cells can still run.

        For example ``"closed"`` or ``"cell 3 ran longer than its wall clock of 5 s"``.
        """
        ...

    def close(self) -> None:
        """End the session and its process; nothing of it is left running (idempotent)."""
        ...

    def __enter__(self) -> SandboxSession:
        """Return the session itself (``with sandbox.open_session() as session:``)."""
        ...

    def __exit__(self, *exc: object) -> None:
        """Close the session."""
        ...


class SessionHost(Protocol):
    """What a session takes from the sandbox that opens it (``BubblewrapSandbox``)."""

    runtime_dir: Path
    work_dir: Path
    artifacts_url: str
    stdout_tail_chars: int
    stderr_chars: int
    cell_timeout_s: float
    cell_cpu_s: int

    def check_prerequisites(self) -> tuple[str, str]:
        """``(bwrap, prlimit)`` paths; raises SandboxError when one is missing."""
        ...

    def allocate_uid(self) -> int:
        """A free sandbox UID for the session's process."""
        ...

    def prepare_run_dir(self, run_dir: Path, script: str, inputs: Sequence[Path], uid: int,
                        limits: SandboxLimits) -> None:
        """Create ``run_dir`` with the script and inputs, owned by ``uid``."""
        ...
