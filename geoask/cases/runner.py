"""Run a reference (or cross-check) program for real: guard, read-only executor, export, sandbox.

Each SQL statement goes through :func:`geoask.sql.step.run_statement` - guard under the
program's spatial policy, read-only execution, export to ``<work_dir>/<name>.geojson|json``
(``.parquet`` for a large vector result) -
as in the question flow; each Python step runs in a :class:`sandbox.models.Sandbox`
with its named inputs mounted at ``/input/``, and its protocol ``result`` is saved as
``<work_dir>/<name>.json``. A Python step's sandbox is started ahead (:meth:`Sandbox.start`)
when the steps before it begin, so its start overlaps their SQL; it gets the files they wrote
when its turn comes, and is never reused. The output of the last step (records or an object)
is returned for projection (only the last step's records are read); a statement exported
as GeoTIFF gives one record, the raster's facts.
"""

from __future__ import annotations

import contextlib
import dataclasses
import json
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from geoask.cases.model import Program, PythonStep, SqlStep
from geoask.compute.step import run_compute, select_inputs
from geoask.errors import DatabaseError, GeoaskError
from geoask.sql.context import GuardContext, SpatialPolicy
from geoask.sql.executor import SqlRunner
from geoask.sql.step import run_statement
from geoask.vocabulary.evidence import exported_records
from sandbox.models import Sandbox, StartedSandbox


class ProgramFailedError(GeoaskError):
    """A step of a benchmark program failed; the message names the step and the cause."""


@dataclass
class ProgramRun:
    """What running a program produced.

    Attributes:
        output: the last step's output: a list of records (SQL) or the protocol ``result``.
        artifacts: artifact name -> file path, in production order.
        seconds: wall time of the whole program (s).

    """

    output: Any
    artifacts: dict[str, Path] = field(default_factory=dict)
    seconds: float = 0.0


@dataclass
class ProgramRunner:
    """Runs :class:`Program` steps against a SQL runner and a sandbox.

    Args:
        sql_runner: executes guard-checked SQL (``PostgresSqlRunner`` as the reader role).
        sandbox: runs Python steps (``BubblewrapSandbox``).
        guard: the guard's row cap and catalog names; each program sets its own policy.

    """

    sql_runner: SqlRunner
    sandbox: Sandbox
    guard: GuardContext = field(default_factory=GuardContext)

    def run(self, program: Program, policy: SpatialPolicy | str, work_dir: Path) -> ProgramRun:
        """Run every step of ``program`` in order, writing artifacts into ``work_dir``.

        Raises:
            ProgramFailedError: the guard rejected a statement, the database failed it, the
                export failed, or a script did not succeed.
            DatabaseError: the database cannot be reached (not a failure of the program).
            SandboxError: the sandbox itself cannot run (not a failure of the program).

        """
        started = time.perf_counter()
        work_dir.mkdir(parents=True, exist_ok=True)
        context = dataclasses.replace(self.guard, policy=SpatialPolicy(policy))
        run = ProgramRun(output=None)
        steps = program.steps
        with contextlib.ExitStack() as started_ahead:
            started_ahead.callback(self.sql_runner.close)  # no idle session outlives a program
            ahead: StartedSandbox | None = None
            for number, step in enumerate(steps, start=1):
                if ahead is None and any(isinstance(s, PythonStep) for s in steps[number - 1:]):
                    ahead = started_ahead.enter_context(self.sandbox.start())
                if isinstance(step, SqlStep):
                    run.output = self._run_sql(step, context, work_dir, run.artifacts, number,
                                               last=number == len(steps))
                else:
                    assert ahead is not None  # started at this step at the latest
                    run.output = self._run_python(step, work_dir, run.artifacts, number, ahead)
                    ahead = None
        run.seconds = time.perf_counter() - started
        return run

    def _run_sql(
        self,
        step: SqlStep,
        context: GuardContext,
        work_dir: Path,
        artifacts: dict[str, Path],
        number: int,
        *,
        last: bool,
    ) -> Any:
        """Run the step's statements; the last one's records when this is the last step."""
        output: Any = None
        for statement in step.statements:
            where = f"step {number} (sql) statement {statement.name!r}"
            try:
                run = run_statement(statement.sql, context, self.sql_runner, str(work_dir),
                                    name=statement.name)
            except DatabaseError:
                raise  # the database is unreachable: stop, this is not a case failure
            except GeoaskError as error:
                raise ProgramFailedError(f"{where}: {error}") from None
            path = Path(run.exported.data_path)
            artifacts[statement.name] = path
            output = exported_records(run.exported, _read_bytes) if last else None
        return output

    def _run_python(
        self, step: PythonStep, work_dir: Path, artifacts: dict[str, Path], number: int,
        started: StartedSandbox,
    ) -> Any:
        """Run the step's script in ``started`` (the sandbox started ahead for it)."""
        where = f"step {number} (python {step.name!r})"
        run = run_compute(step.script, select_inputs(step.inputs, artifacts), started)
        if run.failure is not None:
            raise ProgramFailedError(f"{where}: {run.outcome.status}: {run.failure}")
        path = work_dir / f"{step.name}.json"
        path.write_text(json.dumps(run.result), encoding="utf-8")
        artifacts[step.name] = path
        return run.result


def _read_bytes(url: str) -> bytes:
    return Path(url).read_bytes()
