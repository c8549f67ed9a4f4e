"""The execution-state manager: the question flow's state and its pure transition functions.

The state holds the plan, each step's status, attempts, artifact references with compact
previews (never whole result sets) and errors. After every event the flow asks one ``decide_*``
function for a :class:`Decision` and applies it with :func:`apply_decision`:

- ``continue``: run the next pending step, or go to review/answer when none is left;
- ``revise``: run the same step again with the classified error (bounded per step);
- ``repair``: regenerate an upstream SQL step with fields a downstream step found missing
  (dependency backtracking; bounded per question);
- ``replan``: ask the planner for a new plan, telling it why the old one failed (bounded);
- ``terminate``: stop and give an honest failure answer saying what was tried.

Every function here is pure: it reads a state and returns a decision or a new state.
"""

from __future__ import annotations

from enum import StrEnum

from pydantic import BaseModel, ConfigDict, Field

from geoask.run.lines import one_line
from geoask.settings import Settings
from geoask.vocabulary.artifacts import ArtifactRef
from geoask.vocabulary.plan import Plan, Review, ReviewDecision, StepKind

REVIEW = "review"
"""Target of a ``continue`` decision when every step is done: the reviewer is next."""
ANSWER = "answer"
"""Target of a ``continue`` decision after the reviewer accepted: the answer agent is next."""


class Transition(StrEnum):
    """What the flow does next."""

    CONTINUE = "continue"
    REVISE = "revise"
    REPAIR = "repair"
    REPLAN = "replan"
    TERMINATE = "terminate"


RECOVERY_TRANSITIONS = frozenset({Transition.REVISE, Transition.REPAIR, Transition.REPLAN})


class StepStatus(StrEnum):
    """Where a plan step stands."""

    PENDING = "pending"
    DONE = "done"
    FAILED = "failed"


class Limits(BaseModel):
    """The recovery bounds (defaults: 3 attempts per step, 2 repairs, 2 replans, 12 step runs)."""

    model_config = ConfigDict(frozen=True)

    max_step_attempts: int = Field(default=3, ge=1)
    max_repairs: int = Field(default=2, ge=0)
    max_replans: int = Field(default=2, ge=0)
    max_step_runs: int = Field(default=12, ge=1)

    @classmethod
    def from_settings(cls, settings: Settings) -> Limits:
        """The bounds from ``GEOASK_FLOW_*`` settings."""
        return cls(**settings.values_for("flow_", cls.model_fields))


class StepFailure(BaseModel):
    """A failed step run, classified.

    Attributes:
        kind: ``guard``, ``database``, ``sandbox``, ``missing_field``, ``refusal``, ``protocol``,
            ``inputs`` (a pre-dispatch check of the step's input artifacts failed).
        message: the classified error as shown to the agent.
        missing_fields: keys/columns a Python step needed but its inputs lacked.
        attempted: the SQL or script that failed (shown to the agent on the next attempt).

    """

    model_config = ConfigDict(frozen=True)

    kind: str
    message: str
    missing_fields: list[str] = Field(default_factory=list)
    attempted: str = ""


class StepState(BaseModel):
    """One plan step as the state manager sees it."""

    model_config = ConfigDict(frozen=True)

    id: str
    kind: StepKind
    status: StepStatus = StepStatus.PENDING
    attempts: int = Field(default=0, description="Runs of this step so far, in this plan.")
    artifacts: list[ArtifactRef] = Field(default_factory=list)
    failures: list[StepFailure] = Field(
        default_factory=list, description="Classified failures of this plan's runs, in order."
    )
    required_fields: list[str] = Field(
        default_factory=list, description="Fields a downstream step needs (repairs)."
    )
    summary: str | None = Field(default=None, description="What the last run produced.")


class Decision(BaseModel):
    """The next transition, its target and why."""

    model_config = ConfigDict(frozen=True)

    transition: Transition
    target: str | None = Field(default=None, description="Step id, 'review', 'answer' or None.")
    reason: str
    required_fields: list[str] = Field(default_factory=list)


class ExecutionState(BaseModel):
    """Everything the flow knows about one question run (small: references and previews only)."""

    model_config = ConfigDict(frozen=True)

    question: str
    variant: str
    limits: Limits = Field(default_factory=Limits)
    plan: Plan | None = None
    plan_number: int = Field(default=0, description="Plans made so far (1 = first plan).")
    steps: dict[str, StepState] = Field(default_factory=dict)
    repairs: int = 0
    replans: int = 0
    step_runs: int = Field(default=0, description="Step runs so far, all plans and attempts.")
    decisions: list[Decision] = Field(default_factory=list)
    tried: list[str] = Field(default_factory=list, description="One line per failed attempt.")
    errors: list[str] = Field(default_factory=list, description="Step errors, whole, distinct.")
    plan_failures: list[str] = Field(default_factory=list, description="Why plans were dropped.")
    terminated: str | None = Field(default=None, description="Why the run stopped, if it did.")

    @property
    def transitions(self) -> list[Transition]:
        """The sequence of transitions taken so far."""
        return [decision.transition for decision in self.decisions]


def start(question: str, variant: str, limits: Limits) -> ExecutionState:
    """A fresh state for ``question`` (no plan yet)."""
    return ExecutionState(question=question, variant=variant, limits=limits)


def with_plan(state: ExecutionState, plan: Plan) -> ExecutionState:
    """``state`` following ``plan``: every step pending with no attempts."""
    steps = {step.id: StepState(id=step.id, kind=step.kind) for step in plan.steps}
    return state.model_copy(
        update={"plan": plan, "plan_number": state.plan_number + 1, "steps": steps}
    )


def next_pending_step(state: ExecutionState) -> str | None:
    """Id of the first step (in plan order) that is not done, or None."""
    for step in state.steps.values():
        if step.status is not StepStatus.DONE:
            return step.id
    return None


def step_started(state: ExecutionState, step_id: str) -> ExecutionState:
    """Count one more run of ``step_id`` (its attempts and the question's step budget)."""
    step = state.steps[step_id]
    return _with_step(
        state.model_copy(update={"step_runs": state.step_runs + 1}),
        step.model_copy(update={"attempts": step.attempts + 1}),
    )


def step_succeeded(
    state: ExecutionState, step_id: str, artifacts: list[ArtifactRef], summary: str
) -> ExecutionState:
    """Mark ``step_id`` done with its artifacts and a one-line summary."""
    step = state.steps[step_id].model_copy(
        update={"status": StepStatus.DONE, "artifacts": artifacts, "summary": summary}
    )
    return _with_step(state, step)


def step_failed(state: ExecutionState, step_id: str, failure: StepFailure) -> ExecutionState:
    """Mark ``step_id`` failed and remember the error (for the agent and the failure answer)."""
    step = state.steps[step_id]
    line = (f"plan {state.plan_number}, {step_id} attempt {step.attempts}: "
            f"{failure.kind}: {one_line(failure.message)}")
    updated = step.model_copy(
        update={"status": StepStatus.FAILED, "failures": [*step.failures, failure]}
    )
    whole = " ".join(failure.message.split())
    errors = state.errors if whole in state.errors else [*state.errors, whole]
    return _with_step(state.model_copy(update={"tried": [*state.tried, line], "errors": errors}),
                      updated)


def plan_rejected(state: ExecutionState, reason: str) -> ExecutionState:
    """Remember that a plan (or the planner's refusal) was unusable, and why."""
    line = f"plan {state.plan_number + 1}: rejected: {one_line(reason)}"
    return state.model_copy(update={"tried": [*state.tried, line]})


def decide_after_success(state: ExecutionState) -> Decision:
    """After a step succeeded: continue with the next pending step, or with the review.

    >>> decide_after_success(start("q", "FULL", Limits())).target
    'review'
    """
    following = next_pending_step(state)
    if following is None:
        return Decision(transition=Transition.CONTINUE, target=REVIEW,
                        reason="every step of the plan is done")
    if state.step_runs >= state.limits.max_step_runs:
        return _budget_exhausted(state)
    return Decision(transition=Transition.CONTINUE, target=following,
                    reason="the previous step succeeded")


def decide_after_failure(state: ExecutionState, step_id: str, failure: StepFailure) -> Decision:
    """After ``step_id`` failed: repair upstream, revise, replan or terminate.

    Dependency backtracking: a Python step missing fields that no upstream artifact holds
    leads to a repair of the upstream SQL step with those fields (not to a blind retry). When
    every missing field is in an upstream artifact the script is wrong, and it is revised.
    """
    if state.step_runs >= state.limits.max_step_runs:
        return _budget_exhausted(state)
    step = state.steps[step_id]
    if failure.kind == "inputs":  # a pre-dispatch check failed: no rewrite of the step helps
        return _replan_or_terminate(state, f"{step_id} cannot run: {one_line(failure.message)}")
    if failure.kind == "crs":  # the data's CRS is unknown: only a person can declare it
        return _terminate(f"{step_id}: {one_line(failure.message, 600)}")
    absent = absent_upstream_fields(state, step_id, failure.missing_fields)
    upstream = upstream_sql_step(state, step_id)
    if absent and upstream is not None:
        if state.repairs >= state.limits.max_repairs:
            return _terminate(
                f"{step_id} still lacks {', '.join(absent)} after "
                f"{state.repairs} repairs of {upstream} (limit {state.limits.max_repairs})"
            )
        return Decision(
            transition=Transition.REPAIR, target=upstream, required_fields=absent,
            reason=f"{step_id} needs {', '.join(absent)}, which {upstream} does not export",
        )
    repeats = _repeats(state, step_id, failure)
    if repeats == "plan":
        return _terminate(f"{step_id} failed with the same error under a new plan: "
                          f"{one_line(failure.message)}")
    if repeats == "step":
        return _replan_or_terminate(
            state, f"{step_id} failed twice with the same error; revising it that way again "
                   f"would repeat it: {one_line(failure.message)}")
    if step.attempts < state.limits.max_step_attempts:
        return Decision(transition=Transition.REVISE, target=step_id,
                        reason=f"{step_id} failed: {one_line(failure.message)}")
    return _replan_or_terminate(
        state, f"{step_id} failed {step.attempts} times (limit "
               f"{state.limits.max_step_attempts}); last error: {one_line(failure.message)}"
    )


def _repeats(state: ExecutionState, step_id: str, failure: StepFailure) -> str | None:
    """``plan``/``step``: the same (deterministic) error in an earlier plan / the last attempt."""
    step, tail = state.steps[step_id], f": {failure.kind}: {one_line(failure.message)}"
    if any(line.endswith(tail) and f", {step_id} attempt " in line
           and not line.startswith(f"plan {state.plan_number},") for line in state.tried):
        return "plan"
    last = step.failures[-2] if len(step.failures) > 1 else None
    same = last is not None and (last.kind, one_line(last.message)) == (
        failure.kind, one_line(failure.message))
    return "step" if same else None


def decide_after_review(state: ExecutionState, review: Review) -> Decision:
    """After the reviewer's verdict: answer, revise, repair, replan or terminate.

    A revise or repair without a known target step falls back to the last step (revise) or
    the first SQL step (repair).
    """
    if review.decision is ReviewDecision.ACCEPT:
        return Decision(transition=Transition.CONTINUE, target=ANSWER, reason=review.reason)
    if review.decision is ReviewDecision.REPLAN:
        return _replan_or_terminate(state, f"the reviewer asked for a new plan: {review.reason}")
    if state.step_runs >= state.limits.max_step_runs:
        return _budget_exhausted(state)
    ids = list(state.steps)
    if review.decision is ReviewDecision.REVISE:
        target = review.target_step if review.target_step in state.steps else ids[-1]
        if state.steps[target].attempts >= state.limits.max_step_attempts:
            return _replan_or_terminate(
                state, f"the reviewer asked to revise {target}, which has used all "
                       f"{state.limits.max_step_attempts} attempts: {review.reason}"
            )
        return Decision(transition=Transition.REVISE, target=target, reason=review.reason)
    sql_ids = [i for i in ids if state.steps[i].kind is StepKind.SQL]
    target = review.target_step if review.target_step in state.steps else sql_ids[0]
    if state.repairs >= state.limits.max_repairs:
        return _terminate(f"the reviewer asked to repair {target}, but all "
                          f"{state.limits.max_repairs} repairs are used: {review.reason}")
    return Decision(transition=Transition.REPAIR, target=target, reason=review.reason)


def decide_after_plan_problem(state: ExecutionState, reason: str) -> Decision:
    """After the planner refused or produced a plan that breaks the rules: replan or stop."""
    return _replan_or_terminate(state, reason)


def apply_decision(state: ExecutionState, decision: Decision) -> ExecutionState:
    """The state after taking ``decision`` (counters, step statuses, plan) with it recorded.

    ``revise``/``repair`` make the target and every later step pending again (a repair also
    records the required fields on the target); ``replan`` drops the plan; ``terminate``
    records why the run stopped.
    """
    state = state.model_copy(update={"decisions": [*state.decisions, decision]})
    if decision.transition in (Transition.REVISE, Transition.REPAIR) and decision.target:
        state = _reset_from(state, decision.target, decision.required_fields)
        if decision.transition is Transition.REPAIR:
            state = state.model_copy(update={"repairs": state.repairs + 1})
        return state
    if decision.transition is Transition.REPLAN:
        return state.model_copy(update={
            "plan": None, "steps": {}, "replans": state.replans + 1,
            "plan_failures": [*state.plan_failures, decision.reason],
        })
    if decision.transition is Transition.TERMINATE:
        return state.model_copy(update={"terminated": decision.reason})
    return state


def absent_upstream_fields(
    state: ExecutionState, step_id: str, fields: list[str]
) -> list[str]:
    """Those of ``fields`` that no artifact of ``step_id``'s input steps holds (case-insensitive).

    >>> absent_upstream_fields(start("q", "FULL", Limits()), "python-1", ["pop"])
    ['pop']
    """
    available: set[str] = set()
    for input_id in _input_ids(state, step_id):
        for artifact in state.steps[input_id].artifacts:
            available.update(name.lower() for name in artifact.fields)
    return [name for name in fields if name.lower() not in available]


def upstream_sql_step(state: ExecutionState, step_id: str) -> str | None:
    """The nearest SQL step ``step_id`` reads (its declared inputs, else the previous SQL step)."""
    candidates = [i for i in _input_ids(state, step_id) if state.steps[i].kind is StepKind.SQL]
    return candidates[-1] if candidates else None


def _input_ids(state: ExecutionState, step_id: str) -> list[str]:
    ids = list(state.steps)
    if state.plan is not None:
        declared = next((s.inputs for s in state.plan.steps if s.id == step_id), [])
        if declared:
            return [i for i in declared if i in state.steps]
    earlier = ids[: ids.index(step_id)] if step_id in ids else []
    return earlier


def _reset_from(state: ExecutionState, target: str, required: list[str]) -> ExecutionState:
    steps: dict[str, StepState] = {}
    reached = False
    for step_id, step in state.steps.items():
        if step_id == target:
            reached = True
            fields = list(dict.fromkeys([*step.required_fields, *required]))
            step = step.model_copy(update={"status": StepStatus.PENDING,
                                           "required_fields": fields})
        elif reached:
            step = step.model_copy(update={"status": StepStatus.PENDING})
        steps[step_id] = step
    return state.model_copy(update={"steps": steps})


def _with_step(state: ExecutionState, step: StepState) -> ExecutionState:
    return state.model_copy(update={"steps": {**state.steps, step.id: step}})


def _replan_or_terminate(state: ExecutionState, reason: str) -> Decision:
    if state.replans >= state.limits.max_replans:
        return _terminate(f"{reason}; all {state.limits.max_replans} replans are used")
    return Decision(transition=Transition.REPLAN, reason=reason)


def _budget_exhausted(state: ExecutionState) -> Decision:
    return _terminate(
        f"the step budget of {state.limits.max_step_runs} step runs is used up"
    )


def _terminate(reason: str) -> Decision:
    return Decision(transition=Transition.TERMINATE, reason=reason)

