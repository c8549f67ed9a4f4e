"""Primary root cause of a failed case, read from its verdict and its execution trace."""

from __future__ import annotations

from enum import StrEnum
from typing import TYPE_CHECKING, Any

from geoask.bench.compare import compare_answers
from geoask.bench.evaluate.values import Verdict
from geoask.cases.model import BenchmarkCase
from geoask.cases.projection import ProjectionError, project_answer
from geoask.run.predispatch import CRS_PROBLEM

if TYPE_CHECKING:
    from geoask.records.execution_log import ExecutionLog


class RootCause(StrEnum):
    """Primary cause of a failed case: the earliest stage where the run left a valid path."""

    INTENT = "intent"
    SCHEMA_GROUNDING = "schema_grounding"
    PLANNING_ROUTING = "planning_routing"
    SQL_LOGIC = "sql_logic"
    ARTIFACT_SPATIAL = "artifact_spatial_semantics"
    COMPUTATION = "computation"
    ANSWER_PROJECTION = "answer_projection"
    CRS = "crs"
    """The data's CRS is unknown or unusable (SRID 0 undeclared, an SRID pyproj cannot build):
    a fact the catalog or database must state, not a routing or SQL error."""
    INFRASTRUCTURE = "infrastructure"
    """Not the pipeline's fault: the database, model endpoint, sandbox or Prefect API failed."""


def routed_to_sandbox(log: ExecutionLog | None) -> bool:
    """The run invoked the Python sandbox: a sandbox tool use or a Python route in its log."""
    if log is None:
        return False
    return log.route == "sql_then_python" or any(e.tool == "sandbox" for e in log.tool_trace)


_ROLE_CAUSES = {
    "intent": RootCause.INTENT, "planner": RootCause.PLANNING_ROUTING,
    "sql": RootCause.SQL_LOGIC, "compute": RootCause.COMPUTATION,
    "reviewer": RootCause.SQL_LOGIC, "answer": RootCause.ANSWER_PROJECTION,
}
_STAGE_CAUSES = (
    ("intent", RootCause.INTENT), ("schema", RootCause.SCHEMA_GROUNDING),
    ("plan", RootCause.PLANNING_ROUTING), ("sql", RootCause.SQL_LOGIC),
    ("python", RootCause.COMPUTATION), ("review", RootCause.SQL_LOGIC),
    ("answer", RootCause.ANSWER_PROJECTION),
)
_ARTIFACT_SANDBOX_KINDS = ("missing_field", "protocol")


def tool_failure_cause(tool: str, detail: str) -> RootCause:
    """Root cause of a failed tool use, from its tool name and detail text.

    >>> tool_failure_cause("executor", "undefined_column error at line 1, col 8: ...").value
    'schema_grounding'
    >>> tool_failure_cause("sandbox", "missing_field: KeyError 'pop'").value
    'artifact_spatial_semantics'
    >>> tool_failure_cause("export", "crs: geom has SRID 0 and no declared CRS").value
    'crs'
    >>> tool_failure_cause("pre_dispatch", "crs: python-1 expects features in EPSG:4326").value
    'crs'
    """
    if tool == "executor":
        if detail.startswith(("undefined_column", "undefined_table")):
            return RootCause.SCHEMA_GROUNDING
        return RootCause.SQL_LOGIC
    if tool == "guard":
        return (RootCause.PLANNING_ROUTING if "spatial_policy" in detail
                else RootCause.SQL_LOGIC)
    if tool == "sandbox":
        return (RootCause.ARTIFACT_SPATIAL if detail.startswith(_ARTIFACT_SANDBOX_KINDS)
                else RootCause.COMPUTATION)
    if tool == "export":
        return RootCause.CRS if detail.startswith("crs:") else RootCause.ARTIFACT_SPATIAL
    if tool == "pre_dispatch":  # its problems, joined by "; "
        return RootCause.CRS if any(problem.startswith(CRS_PROBLEM) for problem in
                                    detail.split("; ")) else RootCause.ARTIFACT_SPATIAL
    if tool in ("retriever", "inspect"):  # inspect: the REACT agent's schema inspection
        return RootCause.SCHEMA_GROUNDING
    return RootCause.ANSWER_PROJECTION


def trace_failure_cause(log: ExecutionLog) -> RootCause | None:
    """Cause of a run that ended without an answer, else None.

    Read from its last failed tool use, model call or stage: the failure recovery could not
    get past.
    """
    failures = [e for e in log.tool_trace if e.status != "ok"]
    if failures:
        return tool_failure_cause(failures[-1].tool, failures[-1].detail)
    calls = [c for c in log.model_calls if c.status != "ok"]
    if calls and calls[-1].role in _ROLE_CAUSES:
        return _ROLE_CAUSES[calls[-1].role]
    stages = [s.stage for s in log.stages if s.status != "ok"] or [s.stage for s in log.stages]
    for prefix, cause in _STAGE_CAUSES:
        if stages and stages[-1].startswith(prefix):
            return cause
    return None


def wrong_answer_cause(verdict: Verdict, log: ExecutionLog | None) -> RootCause:
    """Cause of a wrong final answer, from the kind of difference and the route taken.

    Shape, field and type problems and a percent/ratio slip are answer projection; a unit of
    another dimension (a distance in degrees) or a length/area unit slip is an
    artifact/spatial-semantics error; wrong entities or order come from SQL logic; other wrong
    numbers from the last stage that produced them (Python: computation).
    """
    if verdict.kind in ("contract", "field", "percent"):
        return RootCause.ANSWER_PROJECTION
    if verdict.kind in ("unit", "scale"):
        return RootCause.ARTIFACT_SPATIAL
    if verdict.kind == "value" and routed_to_sandbox(log):
        return RootCause.COMPUTATION
    return RootCause.SQL_LOGIC


def root_cause(
    case: BenchmarkCase, verdict: Verdict, log: ExecutionLog | None,
    evidence_matches: bool | None = None, infrastructure: bool = False,
) -> RootCause | None:
    """Primary root cause of a failed case (None when correct or when it cannot be told).

    A run that ended on an infrastructure failure (``infrastructure``: the database, model
    endpoint, sandbox or Prefect API failed; ``geoask.models.retry.is_infrastructure_failure``)
    is blamed on that. Else in trace order: an answerable question rejected as out of scope
    is an intent error; a run stopped by a CRS the data does not state is a CRS error; a run
    that chose the wrong channel (sandbox or not) is a
    planning/routing error; a run without an answer is blamed on its last failure; a wrong
    answer whose evidence was right (``evidence_matches``, when the caller could check it) is
    an answer-projection error; otherwise :func:`wrong_answer_cause`.
    """
    if verdict.matches:
        return None
    if infrastructure:
        return RootCause.INFRASTRUCTURE
    if log is None:
        return None if verdict.kind == "missing" else wrong_answer_cause(verdict, None)
    if log.outcome == "rejected":
        return RootCause.INTENT
    if any(e.status != "ok" and e.tool in ("export", "pre_dispatch")
           and tool_failure_cause(e.tool, e.detail) is RootCause.CRS for e in log.tool_trace):
        return RootCause.CRS  # the run could not get past the data's CRS, whatever its route
    if routed_to_sandbox(log) != case.requires_sandbox:
        return RootCause.PLANNING_ROUTING
    if verdict.kind == "missing":
        return trace_failure_cause(log)
    if evidence_matches:
        return RootCause.ANSWER_PROJECTION
    return wrong_answer_cause(verdict, log)


def evidence_agrees(case: BenchmarkCase, output: Any) -> bool:
    """True when the run's evidence held the answer (for ``score_case(evidence_matches=...)``).

    ``output`` is the last step's output (records or object); it is projected by the case's
    answer contract and compared with the expected value within tolerance.

    >>> from geoask.cases.loader import DEFAULT_CASES_DIR, load_cases
    >>> evidence_agrees(load_cases(DEFAULT_CASES_DIR, ["airports-001"])[0].case,
    ...                 [{"airport_count": 209}])
    True
    """
    try:
        projected = project_answer(output, case.answer.answer_type, case.answer.projection)
    except ProjectionError:
        return False
    return compare_answers(case.expected.value, projected, case.answer.answer_type,
                           case.expected.tolerance).matches
