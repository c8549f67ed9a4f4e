"""The published baselines inside the ``answer-question`` flow: REACT and PLAN_EXECUTE.

``answer_question`` hands a run of these variants here (``VariantConfig.design``):

- REACT: one ReAct agent with tools over a persistent sandbox session (the ``react`` task,
  ``tasks/baselines.py``); its failed tool calls count as its retries;
- PLAN_EXECUTE: intent, schema, one plan (the planner agent), the steps in order (the SQL
  and compute agents, one attempt each), and on any failure a new plan
  (:func:`geoask.run.variants.plan_execute_decision`, bounded); then the answer agent. No
  execution-state manager decides (no revise, repair or review), no reviewer looks at the
  evidence.

Both end through :func:`flows.stages.finish`, so their logs, artifacts and results
are those of any question run.
"""

from __future__ import annotations

from flows.stages import (
    QuestionResult,
    answer_from,
    finish,
    plan_or_replan,
    register_step,
    run_step,
)
from geoask.records.run_report import publish_intent
from geoask.run.composition import QuestionServices
from geoask.run.state import (
    Decision,
    Transition,
    apply_decision,
    next_pending_step,
    start,
    step_failed,
    step_started,
    step_succeeded,
)
from geoask.run.state_report import evidence_trail, failure_report
from geoask.run.variants import plan_execute_decision
from geoask.vocabulary.answers import AnswerRefusal
from geoask.vocabulary.plan import IntentRejection
from tasks.baselines import run_react
from tasks.question import build_evidence, classify_intent, retrieve_schema


def answer_baseline(run: QuestionServices, question: str) -> QuestionResult:
    """Answer ``question`` with the run's baseline design (``react`` or ``plan_execute``)."""
    if run.config.design == "react":
        return answer_react(run, question)
    return answer_plan_execute(run, question)


def answer_react(run: QuestionServices, question: str) -> QuestionResult:
    """The REACT baseline: the ReAct agent's typed answer, or its refusal as a failure."""
    state = start(question, run.variant.value, run.limits)
    outcome = run_react(run, question)
    trail = [f"react: {outcome.tool_calls} tool call(s), {outcome.failed_calls} failed"
             + ("; cells ran in the sandbox session" if outcome.used_sandbox else "")]
    retries, used = outcome.failed_calls, outcome.used_sandbox
    if isinstance(outcome.output, AnswerRefusal):
        message = f"geoask could not answer this question: {outcome.output.reason}"
        return finish(run, state, "failed", None, message, trail, retries=retries,
                      used_sandbox=used)
    return finish(run, state, "answered", outcome.output, outcome.output.summary, trail,
                  retries=retries, used_sandbox=used)


def answer_plan_execute(run: QuestionServices, question: str) -> QuestionResult:
    """The PLAN_EXECUTE baseline: plan once, execute, replan on failure; no reviewer."""
    intent = classify_intent(run, question)
    publish_intent(run.store, intent)
    state = start(question, run.variant.value, run.limits)
    if isinstance(intent, IntentRejection):
        return finish(run, state, "rejected", None, intent.message,
                      [f"rejected as {intent.rejection_type.value}"])
    subset = retrieve_schema(run, question, intent)
    while state.terminated is None:
        if state.plan is None:
            state = plan_or_replan(run, state, intent, subset)
            continue
        step_id = next_pending_step(state)
        if step_id is None:  # every step done: answer from the last step's output
            return answer_from(run, state, build_evidence(run, state))
        state = step_started(state, step_id)
        result = run_step(run, state, step_id, intent, subset.table_names)
        if result.ok:
            register_step(run, state, step_id, result)
            state = step_succeeded(state, step_id, result.artifacts, result.summary)
            state = apply_decision(state, Decision(transition=Transition.CONTINUE,
                                                   reason="the step succeeded"))
            continue
        assert result.failure is not None
        state = step_failed(state, step_id, result.failure)
        state = apply_decision(state, plan_execute_decision(state, step_id,
                                                            result.failure.message))
    return finish(run, state, "failed", None, failure_report(state), evidence_trail(state))
