"""The tools of the REACT baseline: inspect the schema, run checked SQL, run a session cell.

One :class:`ReactToolbox` serves one question run of the ``REACT`` variant
(:mod:`geoask.run.variants`). The agent module (``agents/react.py``) registers its methods as
pydantic-ai tools; nothing here is model-specific:

- :meth:`ReactToolbox.inspect`: the catalog's tables, or the columns of named tables (the
  schema-inspection-first rule: :meth:`ReactToolbox.run_sql` refuses to run before it);
- :meth:`ReactToolbox.run_sql`: one statement through the same guard, read-only executor and
  export as the staged pipeline (:func:`geoask.sql.step.run_statement`), under the variant's
  policy; the result is named and readable by later cells at ``/input/<name>.<ext>``;
- :meth:`ReactToolbox.run_cell`: Python code in the question's persistent sandbox session
  (:class:`sandbox.models.SandboxSession`), its state kept between cells.

Every failed call is remembered in an :class:`ErrorMemory` (error class and fix hint) that the
agent's instructions repeat on every later request. Tool results are the evidence texts of
:mod:`geoask.vocabulary.evidence` (all records up to ``GEOASK_FLOW_EVIDENCE_ROWS``, else a
preview), so
the final answer is checked against what the tools returned.
"""

from __future__ import annotations

import re
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath
from typing import Protocol

from geoask.catalog.model import Catalog
from geoask.compute.step import UnknownInputError, run_compute, select_inputs
from geoask.errors import CrsError, QueryExecutionError, QueryRejectedError, SandboxError
from geoask.records.execution_log import ExecutionRecorder
from geoask.records.run_artifacts import Markdown, RunArtifacts, code_block
from geoask.retrieval.retriever import SchemaSubset
from geoask.sql.context import GuardContext
from geoask.sql.executor import SqlRunner
from geoask.sql.step import run_statement
from geoask.vocabulary.evidence import exported_records, python_evidence, sql_evidence
from sandbox.models import SandboxSession

STAGE = "react"
"""The execution-log stage of every tool use of a REACT run."""
INSPECT_FIRST = ("inspect the schema first: call inspect_schema with the tables you will query "
                 "(the schema-inspection-first rule), then run the query again")
TRACE_NAMES = {"inspect_schema": "inspect", "run_sql": "guard", "run_cell": "sandbox"}
"""Each tool's name in the execution log's tool trace (a refused query counts as the guard's)."""
BUDGET_USED = ("the step budget is used up; give the final answer now from the results you "
               "have (FinalAnswer), or AnswerRefusal saying what is missing")
_NAME = re.compile(r"[a-z][a-z0-9_]{0,39}")
_STDOUT_CHARS = 2000
_TRANSCRIPT_CHARS = 1500


class SchemaLookup(Protocol):
    """What the toolbox needs of the schema retriever (``SchemaRetriever``)."""

    def retrieve(self, query: str, intent: None = None, within: Sequence[str] | None = None,
                 geometry: bool = True) -> SchemaSubset:
        """The schema subset of exactly the tables ``within``, columns ranked for ``query``."""
        ...


@dataclass(frozen=True)
class RememberedError:
    """One failed tool call: which tool, its error class and how to fix it."""

    tool: str
    error_class: str
    hint: str


@dataclass
class ErrorMemory:
    """The failed calls of a run, in order (GISclaw's Error-Memory).

    >>> memory = ErrorMemory()
    >>> memory.add("run_sql", "undefined_column", "column pop does not exist; use population")
    >>> print(memory.text())
    Errors so far (do not repeat them):
    1. run_sql: undefined_column: column pop does not exist; use population
    """

    entries: list[RememberedError] = field(default_factory=list)

    def add(self, tool: str, error_class: str, hint: str) -> None:
        """Remember a failed call (the hint is kept to 300 characters)."""
        self.entries.append(RememberedError(tool, error_class, " ".join(hint.split())[:300]))

    def text(self) -> str:
        """The block the agent's instructions carry ('' while nothing failed)."""
        if not self.entries:
            return ""
        lines = [f"{n}. {e.tool}: {e.error_class}: {e.hint}"
                 for n, e in enumerate(self.entries, start=1)]
        return "Errors so far (do not repeat them):\n" + "\n".join(lines)


@dataclass(frozen=True)
class SqlResult:
    """A named result of :meth:`ReactToolbox.run_sql`: its exported file, fields and rows."""

    name: str
    local_path: Path
    fields: tuple[str, ...]
    rows: int


class ReactToolbox:
    """The tools of one REACT question run (see the module docstring).

    Args:
        question: the question (schema columns are ranked for it).
        catalog: the semantic catalog (table list, valid table names).
        schema: retrieves a schema subset (``retrieve(query, within=tables)``).
        sql_runner: the read-only SQL runner.
        guard: the guard context (the variant's policy, row cap, catalog names).
        session: the question's persistent sandbox session (owned by the caller).
        store: the run's artifact folder (exports go to ``react/call-<n>/``).
        recorder: the run's execution log (one trace entry per tool use, stage ``react``).
        preview_rows: rows kept in an export's preview.
        evidence_rows: most records a tool result lists in full (more: the preview).
        max_calls: the step budget's tool calls (``GEOASK_REACT_MAX_STEPS`` less the final
            answer's request); a call past it is not run and says to answer now.

    """

    def __init__(self, *, question: str, catalog: Catalog, schema: SchemaLookup,
                 sql_runner: SqlRunner, guard: GuardContext, session: SandboxSession,
                 store: RunArtifacts, recorder: ExecutionRecorder, preview_rows: int = 5,
                 evidence_rows: int = 50, max_calls: int = 23) -> None:
        """Hold the parts; nothing inspected, run or remembered yet."""
        self.question = question
        self.catalog = catalog
        self.schema = schema
        self.sql_runner = sql_runner
        self.guard = guard
        self.session = session
        self.store = store
        self.recorder = recorder
        self.preview_rows = preview_rows
        self.evidence_rows = evidence_rows
        self.max_calls = max_calls
        self.memory = ErrorMemory()
        self.inspected: list[str] = []
        self.results: dict[str, SqlResult] = {}
        self.outputs: list[str] = []
        self.transcript: list[Markdown] = []
        self.calls = 0
        self.cells = 0
        self.failures = 0

    # -- tools -------------------------------------------------------------------------------

    def inspect(self, tables: Sequence[str] = ()) -> str:
        """The columns (name, type, key, unit) of ``tables``; the table list when none given.

        Unknown names are an error result naming the tables that exist.
        """
        return self._noted("inspect_schema", ", ".join(tables) or "(catalog)", "",
                           self._inspect(tables))

    def run_sql(self, name: str, sql: str) -> str:
        """Check, run and export one read-only statement; its rows (or a preview) as text.

        ``name`` (lower-case identifier, new in the run) names the result: later cells read
        it at ``/input/<name>.json`` (``.geojson`` with geometry) after naming it in
        ``inputs``. Before :meth:`inspect` has named a table, the call is refused.
        """
        return self._noted("run_sql", f"{name}:\n{sql}", "sql", self._run_sql(name, sql))

    def run_cell(self, code: str, inputs: Sequence[str] = ()) -> str:
        """Run ``code`` in the session (state kept); the protocol result or the prints.

        ``inputs``: names of SQL results the cell reads (made readable under ``/input``).
        """
        return self._noted("run_cell", f"# inputs: {', '.join(inputs) or 'none'}\n{code}",
                           "python", self._run_cell(code, inputs))

    def _inspect(self, tables: Sequence[str]) -> str:
        if self._over_budget():
            return self.reject("inspect_schema", "step_budget", BUDGET_USED)
        known = {table.name: table for table in self.catalog.tables}
        wanted = [name.split(".")[-1].strip().strip('"') for name in tables]
        if not wanted:
            self.recorder.tool(STAGE, TRACE_NAMES["inspect_schema"], "ok", "catalog")
            return "Tables:\n" + "\n".join(f"{t.name}: {t.title}" for t in self.catalog.tables)
        unknown = [name for name in wanted if name not in known]
        if unknown:
            return self.reject("inspect_schema", "unknown_table",
                               f"no table {', '.join(unknown)}; the tables are "
                               f"{', '.join(known)}")
        begin = time.perf_counter()
        subset = self.schema.retrieve(self.question, within=wanted, geometry=True)
        self.inspected = list(dict.fromkeys([*self.inspected, *wanted]))
        self.recorder.tool(STAGE, TRACE_NAMES["inspect_schema"], "ok", ", ".join(wanted),
                           (time.perf_counter() - begin) * 1000)
        return subset.prompt_text

    def _run_sql(self, name: str, sql: str) -> str:
        if self._over_budget():
            return self.reject("run_sql", "step_budget", BUDGET_USED)
        if not self.inspected:
            return self.reject("run_sql", "inspect_first", INSPECT_FIRST)
        if not _NAME.fullmatch(name):
            return self.reject("run_sql", "bad_name", f"name {name!r} must be a lower-case "
                               "identifier (letters, digits, _; at most 40)")
        if name in self.results:
            return self.reject("run_sql", "name_taken", f"a result named {name!r} exists; "
                               "give the new result another name and read that one")
        folder = self.store.url(f"{STAGE}/call-{self.calls}")
        try:
            run = run_statement(sql, self.guard, self.sql_runner, folder, name=name,
                                preview_rows=self.preview_rows,
                                on_event=lambda *event: self.recorder.tool(STAGE, *event))
        except QueryRejectedError as error:
            return self.reject("run_sql", f"guard:{error.rule}", str(error), traced=True)
        except QueryExecutionError as error:
            return self.reject("run_sql", f"database:{error.kind}", str(error), traced=True)
        except CrsError as error:
            return self.reject("run_sql", "crs", str(error), traced=True)
        exported = run.exported
        preview = exported.preview
        fields = [c["name"] for c in preview.columns if c["name"] != preview.geometry_column]
        if preview.geometry_column:
            fields.append("geometry")
        self.results[name] = SqlResult(name, self.store.local_path(exported.data_path),
                                       tuple(fields), preview.row_count)
        records = exported_records(exported, self.store.read_text)
        text = sql_evidence(name, records, preview.to_text(), self.evidence_rows)
        readable = f"/input/{PurePosixPath(exported.data_path).name}"
        return self._output(f"{text}\n(cells read it at {readable} after naming {name!r} "
                            "in inputs)")

    def _run_cell(self, code: str, inputs: Sequence[str]) -> str:
        if self._over_budget():
            return self.reject("run_cell", "step_budget", BUDGET_USED)
        try:
            paths = select_inputs(inputs, {n: r.local_path for n, r in self.results.items()})
        except UnknownInputError as error:
            known = "; ".join(f"{r.name} ({r.rows} rows: {', '.join(r.fields)})"
                              for r in self.results.values()) or "none yet"
            return self.reject("run_cell", "unknown_input", f"no SQL result named "
                               f"{', '.join(error.unknown)} (results: {known})")
        self.cells += 1
        try:
            run = run_compute(code, paths, self.session,
                              on_event=lambda *event: self.recorder.tool(STAGE, *event))
        except SandboxError as error:
            return self.reject("run_cell", "session", str(error))
        self.store.write_text(f"{STAGE}/cell-{self.cells}.py", code)
        outcome = run.outcome
        if run.failure is not None:
            kind = outcome.error.kind if outcome.error else outcome.status
            hint = run.failure + (f" Fix: {outcome.error.hint}" if outcome.error else "")
            return self.reject("run_cell", kind, hint, traced=True)
        if run.protocol is not None:
            return self._output(python_evidence(run.protocol.summary, run.protocol.result))
        printed = outcome.stdout.text[-_STDOUT_CHARS:] or "(no output)"
        return self._output(f"cell ran (no result object); output:\n{printed}")

    # -- bookkeeping -------------------------------------------------------------------------

    def reject(self, tool: str, error_class: str, message: str, *,
               traced: bool = False) -> str:
        """Remember a failed call of ``tool`` and return its error text for the model.

        The call is added to the execution log's tool trace under the tool's trace name
        (:data:`TRACE_NAMES`, status ``rejected``) unless the tool already traced it
        (``traced``).
        """
        self.failures += 1
        self.memory.add(tool, error_class, message)
        if not traced:
            self.recorder.tool(STAGE, TRACE_NAMES[tool], "rejected", f"{error_class}: {message}")
        return f"ERROR ({error_class}): {message}"

    @property
    def evidence(self) -> str:
        """Every successful tool result so far, in order (what the final answer may cite)."""
        return "\n\n".join(self.outputs)

    @property
    def used_sandbox(self) -> bool:
        """True once a cell ran in the session."""
        return self.cells > 0

    def transcript_markdown(self) -> Markdown:
        """The run's tool calls and (the head of) their results, as Markdown."""
        calls = Markdown("\n\n").join(self.transcript) or Markdown("(none)")
        return Markdown("# REACT tool calls\n\n{}\n").format(calls)

    def _noted(self, tool: str, call: str, language: str, result: str) -> str:
        """Add a call and its result to the transcript; return the result."""
        head = result if len(result) <= _TRANSCRIPT_CHARS else result[:_TRANSCRIPT_CHARS] + " …"
        self.transcript.append(Markdown("## {}. {}\n\n{}\n\n{}").format(
            len(self.transcript) + 1, Markdown(tool),  # the toolbox's own tool names
            code_block(call, language), code_block(head)))
        return result

    def _over_budget(self) -> bool:
        """Count one tool call; True when it is past the step budget."""
        self.calls += 1
        return self.calls > self.max_calls

    def _output(self, text: str) -> str:
        self.outputs.append(text)
        return text

