"""The question flow: intent, schema, plan, SQL/Python steps, review, answer; bounded recovery.

Run it with ``geoask ask "QUESTION"`` or ``answer_question("QUESTION")``. The flow only wires
the tasks of ``tasks/question.py`` and ``tasks/steps.py`` and drives the execution-state manager
(``geoask/run/state.py``): after every step or review it asks a pure ``decide_*`` function for the
next transition (continue, revise, repair, replan, terminate) and applies it. The baseline
variants REACT and PLAN_EXECUTE are run by ``flows/baselines.py`` instead; every design shares
the run parts of ``flows/stages.py``.

It returns a :class:`QuestionResult`: the answer (or an honest failure/rejection message), a
short evidence trail, the transitions taken and the artifact folder, where
``execution_log.json``, ``answer.json`` and ``summary.md`` are written.
"""

from __future__ import annotations

from typing import Any

from prefect import flow, get_run_logger

from flows.baselines import answer_baseline
from flows.stages import (
    QuestionResult,
    answer_from,
    finish,
    plan_or_replan,
    register_step,
    run_step,
)
from geoask.errors import DatabaseError, GeoaskError
from geoask.models.retry import is_transient
from geoask.models.served import check_served_model, in_deployment_run
from geoask.records.run_report import publish_intent, save_log
from geoask.run.composition import QuestionServices, open_services
from geoask.run.conversation import ConversationStore, Turn, context_for, turn_record
from geoask.run.conversation_report import publish_turn
from geoask.run.request import check_request
from geoask.run.state import (
    ANSWER,
    Decision,
    ExecutionState,
    apply_decision,
    decide_after_failure,
    decide_after_review,
    decide_after_success,
    next_pending_step,
    start,
    step_failed,
    step_started,
    step_succeeded,
    with_plan,
)
from geoask.run.state_report import evidence_trail, failure_report, state_summary
from geoask.run.stops import without_process_tags
from geoask.run.variants import with_python_step
from geoask.settings import get_settings
from geoask.vocabulary.plan import IntentRejection, Plan
from tasks.question import (
    build_evidence,
    classify_intent,
    retrieve_schema,
    review_evidence,
)
from tasks.steps import StepResult


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
        variant: FULL, POSTGIS, NO_STCA, NO_PLANNER, BASE, REACT or PLAN_EXECUTE (default
            ``GEOASK_VARIANT``).
        model: a model string overriding ``GEOASK_MODEL`` for every agent.
        services: injected :class:`QuestionServices` (tests, benchmarks); built from settings
            when None. Typed ``Any`` here because Prefect builds a parameter schema from the
            signature and the services hold Protocol-typed objects.
        conversation: a conversation id: the run is the conversation's next turn; the intent
            and planner agents see its last turns and their registered artifacts, and the
            turn is recorded (:mod:`geoask.run.conversation`). None: a standalone question.

    Raises:
        ConfigurationError: the question is empty, not text or too long, the variant or
            conversation id is unusable (:func:`geoask.run.request.check_request`).
        GeoaskError: the run could not start or a stage failed for good (no model configured,
            database unreachable, model endpoint down after retries...); in a run started
            from a deployment, also a ``model`` the server does not offer
            (:mod:`geoask.models.served`).

    """
    settings = get_settings()
    request = check_request(question, settings, model=model, variant=variant,
                            conversation=conversation)  # before any agent call
    if services is None and in_deployment_run():
        check_served_model(model, settings)  # API callers get only configured models
    run: QuestionServices = services or open_services(settings, request.variant, model)
    run.recorder.log.question = question
    store = _open_conversation(run, conversation, question) if conversation else None
    try:
        with without_process_tags():  # no concurrency-slot request per task run
            result = _answer(run, question)
            if store is not None:
                result = _record_turn(run, store, question, result)
    except Exception as error:
        run.recorder.log.outcome = "error"
        save_log(run.store, run.recorder.log)
        if store is not None:
            _record_error(run, store, question, error)
        translated = user_error(error)
        if translated is None:
            raise
        raise translated from None
    return result


def _open_conversation(run: QuestionServices, conversation: str,
                       question: str) -> ConversationStore:
    """Reserve the run's turn, load its bounded context into the run; the store to record it."""
    store = ConversationStore(run.settings.artifact_root_url)
    context = context_for(store.begin(conversation, question, run.run_id),
                          run.settings.conversation_max_turns)
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
    store.record(context.conversation,
                 turn_record(result, question, run.registry.entries, reused, context))
    publish_turn(context, reused, result.flow_run_id)
    return result.model_copy(update={
        "conversation": context.conversation, "turn": context.turn, "reused": reused,
        "evidence": [*(f"reused {ref} (no new query)" for ref in reused), *result.evidence]})


def _record_error(run: QuestionServices, store: ConversationStore, question: str,
                  error: Exception) -> None:
    """End the run's reserved turn as ``error`` (the run raised); a failure to write is logged."""
    context = run.conversation
    assert context is not None
    turn = Turn(number=context.turn, question=question, status="error",
                message=f"{type(error).__name__}: {error}", run_id=run.run_id)
    try:
        store.record(context.conversation, turn)
    except GeoaskError as failure:  # the run's own error is the one to report
        get_run_logger().warning("turn %s not recorded: %s", context.turn, failure)


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
                return answer_from(run, state, evidence, intent)
            continue
        state = step_started(state, step_id)
        result = run_step(run, state, step_id, intent, subset.table_names)
        state = _after_step(run, state, step_id, result)
    return finish(run, state, "failed", None, failure_report(state), evidence_trail(state))


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


def _extend(state: ExecutionState, plan: Plan) -> ExecutionState:
    extended = with_plan(state, plan)
    steps = {**extended.steps, **state.steps}
    return extended.model_copy(update={"steps": steps, "plan_number": state.plan_number})
