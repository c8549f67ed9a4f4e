"""The question flow: intent, schema, plan, SQL/Python steps, review, answer; bounded recovery.

Run it with ``geoask ask "QUESTION"`` or ``answer_question("QUESTION")``. The flow only wires
the tasks of ``tasks/question.py`` and ``tasks/steps.py`` and drives the execution-state manager
(``geoask/state.py``): after every step or review it asks a pure ``decide_*`` function for the
next transition (continue, revise, repair, replan, terminate) and applies it.

It returns a :class:`QuestionResult`: the answer (or an honest failure/rejection message), a
short evidence trail, the transitions taken and the artifact folder, where
``execution_log.json``, ``answer.json`` and ``summary.md`` are written.
"""

from __future__ import annotations

from typing import Any, Literal

from prefect import flow
from pydantic import BaseModel, Field

from geoask.answer_map import publish_answer_maps
from geoask.answers import AnswerRefusal, FinalAnswer
from geoask.artifact_registry import column_units, step_entries
from geoask.conversation import ConversationStore, context_for, turn_record
from geoask.conversation_report import publish_registry, publish_turn
from geoask.errors import DatabaseError, GeoaskError
from geoask.plan import Intent, IntentRejection, Plan, PlanRefusal, StepKind
from geoask.questions import check_question
from geoask.result_view import result_html, result_text
from geoask.retrieval.retriever import SchemaSubset
from geoask.retry import is_transient
from geoask.run_report import publish_intent, publish_plan, publish_run, save_log
from geoask.served_models import check_served_model, in_deployment_run
from geoask.settings import Settings, get_settings
from geoask.state import (
    ANSWER,
    Decision,
    ExecutionState,
    Transition,
    apply_decision,
    decide_after_failure,
    decide_after_plan_problem,
    decide_after_review,
    decide_after_success,
    next_pending_step,
    plan_rejected,
    start,
    step_failed,
    step_started,
    step_succeeded,
    with_plan,
)
from geoask.state_report import evidence_trail, failure_report, recovery_count, route, state_summary
from geoask.variants import parse_variant, single_sql_plan, with_python_step
from tasks.question import (
    build_evidence,
    classify_intent,
    make_plan,
    retrieve_schema,
    review_evidence,
    write_answer,
)
from tasks.services import QuestionServices, open_services
from tasks.steps import StepResult, run_python_step, run_sql_step

Outcome = Literal["answered", "rejected", "failed"]


class QuestionResult(BaseModel):
    """What a question run returns.

    Attributes:
        status: ``answered``, ``rejected`` (out of scope) or ``failed`` (a bound was exhausted
            or no acceptable answer could be made; ``message`` says what was tried).
        answer: the final answer when answered.
        message: the answer's summary, the rejection reply or the failure report.
        evidence: a short evidence trail (one line per step and decision).
        transitions: the transitions taken, in order.
        route: ``sql_only`` or ``sql_then_python``.
        run_id: the run's id.
        artifact_folder: fsspec URL of the run's artifact folder.
        flow_run_id: the Prefect flow run (its artifacts are in the UI), when known.
        maps: URLs of the answer maps (``map.png``, ``map.html``) when some were drawn.
        conversation: the conversation id when the run was a conversation turn.
        turn: its turn number in that conversation.
        reused: refs of earlier turns' artifacts it read instead of querying again.

    """

    status: Outcome
    answer: FinalAnswer | None = None
    message: str
    evidence: list[str] = Field(default_factory=list)
    transitions: list[str] = Field(default_factory=list)
    route: str = "sql_only"
    run_id: str
    artifact_folder: str
    flow_run_id: str | None = None
    maps: list[str] = Field(default_factory=list)
    conversation: str | None = None
    turn: int | None = None
    reused: list[str] = Field(default_factory=list)

    def __repr__(self) -> str:
        """What ``geoask ask`` prints (:func:`geoask.result_view.result_text`)."""
        return result_text(self)

    def _repr_html_(self) -> str:
        """The notebook view: the answer as a table, the map inline (``result_html``)."""
        return result_html(self)


@flow(name="answer-question", validate_parameters=False)
def answer_question(
    question: str,
    variant: str | None = None,
    model: str | None = None,
    services: Any = None,
    conversation: str | None = None,
) -> QuestionResult:
    """Answer ``question`` about the database; see the module docstring.

    Args:
        question: the natural-language question.
        variant: FULL, POSTGIS, NO_STCA, NO_PLANNER or BASE (default ``GEOASK_VARIANT``).
        model: a model string overriding ``GEOASK_MODEL`` for every agent.
        services: injected :class:`QuestionServices` (tests, benchmarks); built from settings
            when None. Typed ``Any`` here because Prefect builds a parameter schema from the
            signature and the services hold Protocol-typed objects.
        conversation: a conversation id: the run is the conversation's next turn; the intent
            and planner agents see its last turns and their registered artifacts, and the
            turn is recorded (:mod:`geoask.conversation`). None: a standalone question.

    Raises:
        ConfigurationError: the question is empty, not text or too long
            (:func:`geoask.questions.check_question`).
        GeoaskError: the run could not start or a stage failed for good (no model configured,
            database unreachable, model endpoint down after retries...); in a run started
            from a deployment, also a ``model`` the server does not offer
            (:mod:`geoask.served_models`).

    """
    check_question(question, get_settings().question_max_chars)  # before any agent call
    if services is None and in_deployment_run():
        check_served_model(model, get_settings())  # API callers get only configured models
    run: QuestionServices = services or _production_services(get_settings(), variant, model)
    run.recorder.log.question = question
    store = _open_conversation(run, conversation) if conversation else None
    try:
        result = _answer(run, question)
        if store is not None:
            result = _record_turn(run, store, question, result)
    except Exception as error:
        run.recorder.log.outcome = "error"
        save_log(run.store, run.recorder.log)
        translated = user_error(error)
        if translated is None:
            raise
        raise translated from None
    return result


def _open_conversation(run: QuestionServices, conversation: str) -> ConversationStore:
    """Load the conversation's bounded context into the run; the store to record the turn."""
    store = ConversationStore(run.settings.artifact_root_url)
    context = context_for(store.load(conversation), run.settings.conversation_max_turns)
    run.conversation = context
    run.registry.conversation, run.registry.turn = context.conversation, context.turn
    return store


def _record_turn(run: QuestionServices, store: ConversationStore, question: str,
                 result: QuestionResult) -> QuestionResult:
    """Append the finished turn to its conversation; tag and link its flow run.

    Returns ``result`` with the conversation, turn number and reused artifacts set.
    """
    context = run.conversation
    assert context is not None
    reused = list(dict.fromkeys(run.reused))
    store.append(context.conversation,
                 turn_record(result, question, run.registry.entries, reused, context))
    publish_turn(context, reused, result.flow_run_id)
    return result.model_copy(update={
        "conversation": context.conversation, "turn": context.turn, "reused": reused,
        "evidence": [*(f"reused {ref} (no new query)" for ref in reused), *result.evidence]})


def user_error(error: Exception) -> GeoaskError | None:
    """The user-facing error for a failure that ended the run (None: a bug, re-raised as is).

    A dropped database connection that outlived Prefect's retries becomes a
    ``DatabaseError`` saying what to do (model failures already arrive as ``ModelCallError``).
    """
    if isinstance(error, GeoaskError):
        return error
    if is_transient(error):
        return DatabaseError(f"the database connection failed after retries ({error}); check "
                             "that it is running (`geoask db status`) or GEOASK_DATABASE_URL")
    return None


def _answer(run: QuestionServices, question: str) -> QuestionResult:
    if run.config.design != "staged":  # the REACT and PLAN_EXECUTE baselines
        from flows.baselines import answer_baseline

        return answer_baseline(run, question)
    intent = classify_intent(run, question)
    publish_intent(run.store, intent)
    if isinstance(intent, IntentRejection):
        return finish(run, start(question, run.variant.value, run.limits), "rejected",
                       None, intent.message, [f"rejected as {intent.rejection_type.value}"])
    subset = retrieve_schema(run, question, intent)
    state = start(question, run.variant.value, run.limits)
    while state.terminated is None:
        if state.plan is None:
            state = plan_or_replan(run, state, intent, subset)
            continue
        step_id = next_pending_step(state)
        if step_id is None:
            evidence = build_evidence(run, state)
            review = review_evidence(run, state, evidence, state_summary(state))
            decision = decide_after_review(state, review)
            state = apply_decision(state, decision)
            if decision.target == ANSWER:
                return answer_from(run, state, evidence)
            continue
        state = step_started(state, step_id)
        result = run_step(run, state, step_id, intent, subset.table_names)
        state = _after_step(run, state, step_id, result)
    return finish(run, state, "failed", None, failure_report(state), evidence_trail(state))


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
    """Run one attempt of the SQL or Python step ``step_id`` (its task)."""
    if state.steps[step_id].kind is StepKind.SQL:
        return run_sql_step(run, step_id, state, schema_tables)
    return run_python_step(run, step_id, state, intent, schema_tables)


def _after_step(run: QuestionServices, state: ExecutionState, step_id: str,
                result: StepResult) -> ExecutionState:
    decision: Decision
    if result.ok:
        register_step(run, state, step_id, result)
        state = step_succeeded(state, step_id, result.artifacts, result.summary)
        if result.needs_python and run.config.python_steps == "on_request":
            assert state.plan is not None
            state = _extend(state, with_python_step(state.plan, state.question))
        decision = decide_after_success(state)
    else:
        assert result.failure is not None
        state = step_failed(state, step_id, result.failure)
        decision = decide_after_failure(state, step_id, result.failure)
    return apply_decision(state, decision)


def register_step(run: QuestionServices, state: ExecutionState, step_id: str,
                  result: StepResult) -> None:
    """Add a successful step's artifacts to the run's typed registry (units from the catalog)."""
    assert state.plan is not None
    tables = next((s.tables for s in state.plan.steps if s.id == step_id), [])
    known = [run.catalog.by_name[name] for name in tables if name in run.catalog.by_name]
    run.registry.add(step_entries(run.store.read_text, result.artifacts, step=step_id,
                                  run_id=run.run_id, units=column_units(known)))
    publish_registry(run.registry.entries)


def _extend(state: ExecutionState, plan: Plan) -> ExecutionState:
    extended = with_plan(state, plan)
    steps = {**extended.steps, **state.steps}
    return extended.model_copy(update={"steps": steps, "plan_number": state.plan_number})


def answer_from(run: QuestionServices, state: ExecutionState, evidence: str) -> QuestionResult:
    """Write the final answer from ``evidence`` (maps drawn), or fail when none can be written."""
    output = write_answer(run, state, evidence)
    if isinstance(output, AnswerRefusal):
        state = apply_decision(state, Decision(transition=Transition.TERMINATE,
                                               reason=f"no answer could be written: "
                                                      f"{output.reason}"))
        return finish(run, state, "failed", None, failure_report(state), evidence_trail(state))
    maps = publish_answer_maps(run.store, [step.artifacts for step in state.steps.values()],
                               output, state.question)
    return finish(run, state, "answered", output, output.summary, evidence_trail(state),
                   [maps.png, maps.html] if maps else [])


def finish(run: QuestionServices, state: ExecutionState, status: Outcome,
           answer: FinalAnswer | None, message: str, trail: list[str],
           maps: list[str] | None = None, *, retries: int | None = None,
           used_sandbox: bool | None = None) -> QuestionResult:
    """End the run: fill the execution log, publish the run and return its result.

    The transitions, recovery count and route come from ``state``; the REACT baseline, which
    has no plan, gives its ``retries`` (failed tool calls) and ``used_sandbox`` instead.
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
        artifact_folder=run.store.folder, flow_run_id=_flow_run_id(), maps=maps or [],
    )
    publish_run(run.store, log, result.model_dump(mode="json"), state.question, state.variant,
                run.run_id)
    return result


def _flow_run_id() -> str | None:
    from prefect.runtime import flow_run

    run_id = flow_run.id
    return str(run_id) if run_id else None


def _production_services(settings: Settings, variant: str | None,
                         model: str | None) -> QuestionServices:
    from geoask.composition import model_provider

    models = model_provider(settings, model)  # fails before any work when a model is missing
    return open_services(settings, parse_variant(variant or settings.variant), models)
