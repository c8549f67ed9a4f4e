"""The parts of a question run that every design shares: its result, plans, steps, its end.

The staged pipeline (``flows/answer_question.py``) and the baselines (``flows/baselines.py``)
make plans, run steps, register their artifacts, write the answer and end the run with these;
each is a thin wrapper over the tasks of ``tasks/`` and the pure state of ``geoask/run/state.py``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from geoask.records.artifact_registry import column_units, step_entries
from geoask.records.call_pages import calls_markdown
from geoask.records.run_report import publish_plan, publish_run
from geoask.retrieval.retriever import SchemaSubset
from geoask.run.composition import QuestionServices
from geoask.run.conversation_report import registry_markdown
from geoask.run.state import (
    Decision,
    ExecutionState,
    Transition,
    apply_decision,
    decide_after_plan_problem,
    plan_rejected,
    with_plan,
)
from geoask.run.state_report import evidence_trail, failure_report, recovery_count, route
from geoask.run.variants import single_sql_plan
from geoask.vocabulary.answers import AnswerRefusal, FinalAnswer
from geoask.vocabulary.focus import map_focus
from geoask.vocabulary.plan import Intent, PlanRefusal, StepKind
from geoask.vocabulary.question_result import Outcome, QuestionResult
from tasks.question import draw_answer_map, export_geopackage, make_plan, write_answer
from tasks.steps import StepResult, run_python_step, run_sql_step

if TYPE_CHECKING:
    from geoask.maps.answer_map import AnswerMaps


def plan_or_replan(run: QuestionServices, state: ExecutionState, intent: Intent,
                   subset: SchemaSubset) -> ExecutionState:
    """``state`` under a new plan (planner or one-SQL-step plan), or after a refused plan."""
    if run.config.use_planner:
        output = make_plan(run, state.question, intent, subset, state.plan_failures)
    else:
        output = single_sql_plan(state.question, intent)
    if isinstance(output, PlanRefusal):
        problem = f"the planner refused: {output.reason}"
        state = plan_rejected(state, problem)
        return apply_decision(state, decide_after_plan_problem(state, problem))
    # A planned plan passed agents.planner.PLAN_RULES (the planner's output validator, under
    # what the variant allows); the one-step plan of single_sql_plan keeps them by construction.
    state = with_plan(state, output)
    publish_plan(run.store, output, state.plan_number)
    return state


def run_step(run: QuestionServices, state: ExecutionState, step_id: str,
             intent: Intent, schema_tables: list[str]) -> StepResult:
    """Run one attempt of the SQL or Python step ``step_id`` (its task); record what it reused."""
    if state.steps[step_id].kind is StepKind.SQL:
        return run_sql_step(run, step_id, state, schema_tables)
    result = run_python_step(run, step_id, state, intent, schema_tables)
    run.reused.extend(result.reused)
    return result


def register_step(run: QuestionServices, state: ExecutionState, step_id: str,
                  result: StepResult) -> None:
    """Add a successful step's artifacts to the run's typed registry (units from the catalog)."""
    assert state.plan is not None
    tables = next((s.tables for s in state.plan.steps if s.id == step_id), [])
    known = [run.catalog.by_name[name] for name in tables if name in run.catalog.by_name]
    run.registry.add(step_entries(run.store.read_text, result.artifacts, step=step_id,
                                  run_id=run.run_id, units=column_units(known)))


def answer_from(run: QuestionServices, state: ExecutionState, evidence: str,
                intent: Intent | None = None) -> QuestionResult:
    """Write the final answer from ``evidence`` (maps drawn), or fail when none can be written.

    The map shows the reference features, relation and distance of ``intent``, if given
    (:func:`geoask.vocabulary.focus.map_focus`).
    """
    output = write_answer(run, state, evidence)
    if isinstance(output, AnswerRefusal):
        state = apply_decision(state, Decision(transition=Transition.TERMINATE,
                                               reason=f"no answer could be written: "
                                                      f"{output.reason}"))
        return finish(run, state, "failed", None, failure_report(state), evidence_trail(state))
    views = draw_answer_map(run, state, output, map_focus(intent))
    if views.looked_up is not None:  # the answer's geometry, looked up by key for its map
        run.registry.add([views.looked_up])
    return finish(run, state, "answered", output, output.summary, evidence_trail(state),
                  views.maps, names=views.names)


def finish(run: QuestionServices, state: ExecutionState, status: Outcome,
           answer: FinalAnswer | None, message: str, trail: list[str],
           maps: AnswerMaps | None = None, *, retries: int | None = None,
           used_sandbox: bool | None = None,
           names: dict[str, str] | None = None) -> QuestionResult:
    """End the run: fill the execution log, publish the run and return its result.

    The transitions, recovery count and route come from ``state``; the REACT baseline, which
    has no plan, gives its ``retries`` (failed tool calls) and ``used_sandbox`` instead;
    ``names`` are the names of the answer's codes (the map stage's lookup).
    """
    log = run.recorder.log
    log.transitions = [t.value for t in state.transitions]
    log.guardrail_retries = recovery_count(state) if retries is None else retries
    log.route = (route(state) if used_sandbox is None
                 else "sql_then_python" if used_sandbox else "sql_only")
    log.outcome = status
    log.final_answer = (answer.model_dump(mode="json") if answer
                        else {"status": status, "message": message})
    result = QuestionResult(
        status=status, answer=answer, message=message, evidence=trail,
        transitions=log.transitions, route=log.route, run_id=run.run_id,
        artifact_folder=run.store.folder, flow_run_id=_flow_run_id(),
        dashboard_url=_flow_run_page(),
        maps=[url for url in (maps.png, maps.html) if url] if maps else [],
        names=names or {},
        geopackage=export_geopackage(run) if run.registry.entries else None,
    )
    publish_run(run.store, log, result.model_dump(mode="json"), state.question, state.variant,
                run.run_id, sections=[maps.markdown if maps else "",
                                      registry_markdown(run.registry.entries),
                                      calls_markdown(run.recorder.transcripts)])
    return result


def _flow_run_page() -> str | None:
    from prefect.runtime import flow_run

    url = flow_run.ui_url
    return str(url) if url else None


def _flow_run_id() -> str | None:
    from prefect.runtime import flow_run

    run_id = flow_run.id
    return str(run_id) if run_id else None
