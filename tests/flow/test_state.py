"""Table-driven tests of the execution-state manager's pure transition functions."""

from __future__ import annotations

import pytest

from geoask.run.state import (
    ANSWER,
    REVIEW,
    ArtifactRef,
    Decision,
    ExecutionState,
    Limits,
    StepFailure,
    StepStatus,
    Transition,
    absent_upstream_fields,
    apply_decision,
    decide_after_failure,
    decide_after_plan_problem,
    decide_after_review,
    decide_after_success,
    next_pending_step,
    start,
    step_failed,
    step_started,
    step_succeeded,
    with_plan,
)
from geoask.run.state_report import failure_report, recovery_count, route
from geoask.vocabulary.answers import AnswerType
from geoask.vocabulary.plan import ExecutionConstraints, Plan, PlanStep, Review, ReviewDecision

CONSTRAINTS = ExecutionConstraints(
    computation_needed=True, geometry_needed=True, input_mode="single",
    spatial_granularity="point", operation_category="spatial_geometry")
SQL_1 = PlanStep(id="sql-1", objective="incidents", expected_output="id, geom",
                 success_criteria="rows")
PY_1 = PlanStep(id="python-1", objective="count", inputs=["sql-1"],
                expected_output="count", success_criteria="a count")
TWO_STEPS = Plan(steps=[SQL_1, PY_1], constraints=CONSTRAINTS, answer_type=AnswerType.SCALAR)
ONE_STEP = Plan(steps=[SQL_1], constraints=CONSTRAINTS.model_copy(
    update={"computation_needed": False}), answer_type=AnswerType.SCALAR)
INCIDENTS = ArtifactRef(name="incidents", url="memory://x/sql-1/incidents.geojson",
                        format="geojson", fields=["incident_id", "geometry"], row_count=10)


def state_with(
    *, plan: Plan = TWO_STEPS, done: tuple[str, ...] = (), attempts: dict[str, int] | None = None,
    repairs: int = 0, replans: int = 0, step_runs: int | None = None,
    limits: Limits | None = None,
) -> ExecutionState:
    """A state under ``plan`` with ``done`` steps succeeded and the given counters."""
    state = with_plan(start("q", "FULL", limits or Limits()), plan)
    for step_id, count in (attempts or {}).items():
        for _ in range(count):
            state = step_started(state, step_id)
    for step_id in done:
        artifacts = [INCIDENTS] if step_id == "sql-1" else []
        state = step_succeeded(state, step_id, artifacts, "ok")
    update = {"repairs": repairs, "replans": replans}
    if step_runs is not None:
        update["step_runs"] = step_runs
    return state.model_copy(update=update)


FAILURE_CASES = [
    # (title, state kwargs, failed step, failure, expected transition, expected target)
    ("first SQL error is revised",
     {"attempts": {"sql-1": 1}}, "sql-1",
     StepFailure(kind="database", message="undefined_column"), Transition.REVISE, "sql-1"),
    ("second SQL error is revised",
     {"attempts": {"sql-1": 2}}, "sql-1",
     StepFailure(kind="database", message="undefined_column"), Transition.REVISE, "sql-1"),
    ("third SQL error replans",
     {"attempts": {"sql-1": 3}}, "sql-1",
     StepFailure(kind="database", message="undefined_column"), Transition.REPLAN, None),
    ("third error without replans left terminates",
     {"attempts": {"sql-1": 3}, "replans": 2}, "sql-1",
     StepFailure(kind="database", message="x"), Transition.TERMINATE, None),
    ("missing field absent upstream repairs the SQL step",
     {"done": ("sql-1",), "attempts": {"sql-1": 1, "python-1": 1}}, "python-1",
     StepFailure(kind="missing_field", message="KeyError 'category'",
                 missing_fields=["category"]), Transition.REPAIR, "sql-1"),
    ("missing field present upstream is a script bug: revise",
     {"done": ("sql-1",), "attempts": {"sql-1": 1, "python-1": 1}}, "python-1",
     StepFailure(kind="missing_field", message="KeyError 'INCIDENT_ID'",
                 missing_fields=["INCIDENT_ID"]), Transition.REVISE, "python-1"),
    ("missing field with no repairs left terminates",
     {"done": ("sql-1",), "attempts": {"sql-1": 1, "python-1": 1}, "repairs": 2}, "python-1",
     StepFailure(kind="missing_field", message="KeyError", missing_fields=["category"]),
     Transition.TERMINATE, None),
    ("sandbox error is revised",
     {"done": ("sql-1",), "attempts": {"sql-1": 1, "python-1": 1}}, "python-1",
     StepFailure(kind="sandbox", message="ZeroDivisionError"), Transition.REVISE, "python-1"),
    ("step budget exhausted terminates",
     {"attempts": {"sql-1": 1}, "step_runs": 12}, "sql-1",
     StepFailure(kind="database", message="x"), Transition.TERMINATE, None),
]


@pytest.mark.parametrize(("title", "kwargs", "step_id", "failure", "transition", "target"),
                         FAILURE_CASES, ids=[case[0] for case in FAILURE_CASES])
def test_decide_after_failure(title, kwargs, step_id, failure, transition, target):
    state = state_with(**kwargs)
    state = step_failed(state, step_id, failure)
    decision = decide_after_failure(state, step_id, failure)
    assert (decision.transition, decision.target) == (transition, target), decision.reason


def test_repair_carries_the_missing_fields():
    state = state_with(done=("sql-1",), attempts={"sql-1": 1, "python-1": 1})
    failure = StepFailure(kind="missing_field", message="KeyError", missing_fields=["category"])
    decision = decide_after_failure(step_failed(state, "python-1", failure), "python-1", failure)
    assert decision.required_fields == ["category"]


REVIEW_CASES = [
    ("accept goes to the answer", {}, Review(decision=ReviewDecision.ACCEPT, reason="ok"),
     Transition.CONTINUE, ANSWER),
    ("revise the named step", {}, Review(decision=ReviewDecision.REVISE, reason="r",
                                         target_step="python-1"), Transition.REVISE, "python-1"),
    ("revise with attempts used replans", {"attempts": {"sql-1": 1, "python-1": 3}},
     Review(decision=ReviewDecision.REVISE, reason="r", target_step="python-1"),
     Transition.REPLAN, None),
    ("repair the named SQL step", {}, Review(decision=ReviewDecision.REPAIR, reason="r",
                                             target_step="sql-1"), Transition.REPAIR, "sql-1"),
    ("repair without repairs left terminates", {"repairs": 2},
     Review(decision=ReviewDecision.REPAIR, reason="r", target_step="sql-1"),
     Transition.TERMINATE, None),
    ("replan", {}, Review(decision=ReviewDecision.REPLAN, reason="wrong table"),
     Transition.REPLAN, None),
    ("replan without replans left terminates", {"replans": 2},
     Review(decision=ReviewDecision.REPLAN, reason="wrong table"), Transition.TERMINATE, None),
]


@pytest.mark.parametrize(("title", "kwargs", "review", "transition", "target"), REVIEW_CASES,
                         ids=[case[0] for case in REVIEW_CASES])
def test_decide_after_review(title, kwargs, review, transition, target):
    state = state_with(done=("sql-1", "python-1"), **kwargs)
    decision = decide_after_review(state, review)
    assert (decision.transition, decision.target) == (transition, target), decision.reason


SUCCESS_CASES = [
    ("next step after sql-1", ("sql-1",), None, Transition.CONTINUE, "python-1"),
    ("review after the last step", ("sql-1", "python-1"), None, Transition.CONTINUE, REVIEW),
    ("budget used with a step left terminates", ("sql-1",), 12, Transition.TERMINATE, None),
]


@pytest.mark.parametrize(("title", "done", "step_runs", "transition", "target"), SUCCESS_CASES,
                         ids=[case[0] for case in SUCCESS_CASES])
def test_decide_after_success(title, done, step_runs, transition, target):
    decision = decide_after_success(state_with(done=done, step_runs=step_runs))
    assert (decision.transition, decision.target) == (transition, target)


def test_plan_problem_replans_then_terminates():
    assert decide_after_plan_problem(state_with(), "bad").transition is Transition.REPLAN
    assert decide_after_plan_problem(state_with(replans=2), "bad").transition \
        is Transition.TERMINATE


def test_apply_repair_resets_target_and_later_steps_and_counts():
    state = state_with(done=("sql-1", "python-1"))
    decision = Decision(transition=Transition.REPAIR, target="sql-1", reason="r",
                        required_fields=["category"])
    after = apply_decision(state, decision)
    assert [s.status for s in after.steps.values()] == [StepStatus.PENDING, StepStatus.PENDING]
    assert after.steps["sql-1"].required_fields == ["category"]
    assert after.repairs == 1
    assert next_pending_step(after) == "sql-1"
    assert after.transitions == [Transition.REPAIR]


def test_apply_revise_resets_only_from_the_target():
    state = state_with(done=("sql-1",))
    after = apply_decision(state, Decision(transition=Transition.REVISE, target="python-1",
                                           reason="r"))
    assert after.steps["sql-1"].status is StepStatus.DONE
    assert next_pending_step(after) == "python-1"
    assert after.repairs == 0


def test_apply_replan_drops_the_plan_and_remembers_why():
    after = apply_decision(state_with(), Decision(transition=Transition.REPLAN, reason="why"))
    assert after.plan is None and after.steps == {}
    assert after.replans == 1
    assert after.plan_failures == ["why"]


def test_apply_terminate_records_the_reason_and_report_lists_attempts():
    state = step_failed(state_with(attempts={"sql-1": 1}), "sql-1",
                        StepFailure(kind="database", message="column x does not exist"))
    after = apply_decision(state, Decision(transition=Transition.TERMINATE, reason="limit hit"))
    report = failure_report(after)
    assert "limit hit" in report
    assert "sql-1 attempt 1: database: column x does not exist" in report


def test_absent_upstream_fields_is_case_insensitive():
    state = state_with(done=("sql-1",))
    assert absent_upstream_fields(state, "python-1", ["Incident_ID", "category"]) == ["category"]


def test_recovery_count_and_route():
    state = state_with(done=("sql-1", "python-1"))
    for transition in (Transition.REVISE, Transition.CONTINUE, Transition.REPAIR):
        state = state.model_copy(update={"decisions": [
            *state.decisions, Decision(transition=transition, reason="r")]})
    assert recovery_count(state) == 2
    assert route(state) == "sql_then_python"
    assert route(state_with(plan=ONE_STEP, done=("sql-1",))) == "sql_only"


@pytest.mark.parametrize(("replans", "step_runs", "transition", "says"), [
    (0, 1, Transition.REPLAN, "sql-1 failed: bad column"),
    (2, 1, Transition.TERMINATE, "all 2 replans are used"),
    (0, 12, Transition.TERMINATE, "step budget of 12 step runs is used up"),
])
def test_plan_execute_replans_on_any_failure_within_its_bounds(replans, step_runs, transition,
                                                                says):
    from geoask.run.variants import plan_execute_decision

    state = start("q", "PLAN_EXECUTE", Limits()).model_copy(
        update={"replans": replans, "step_runs": step_runs})
    decision = plan_execute_decision(state, "sql-1", "bad   column")
    assert decision.transition is transition and says in decision.reason
    assert decision.target is None  # never a revise or repair of the step itself


def test_the_same_error_twice_stops_revising_that_way():
    # Attack pass: a chat follow-up ran 9 attempts repeating one deterministic error.
    failure = StepFailure(kind="sandbox", message="ModuleNotFoundError: No module named 'x'")
    state = state_with(done=("sql-1",), attempts={"sql-1": 1, "python-1": 1})
    state = step_failed(state, "python-1", failure)
    assert decide_after_failure(state, "python-1", failure).transition is Transition.REVISE
    other = StepFailure(kind="sandbox", message="ZeroDivisionError")
    assert decide_after_failure(step_failed(step_started(state, "python-1"), "python-1", other),
                                "python-1", other).transition is Transition.REVISE
    state = step_failed(step_started(state, "python-1"), "python-1", failure)
    decision = decide_after_failure(state, "python-1", failure)
    assert decision.transition is Transition.REPLAN and "same error" in decision.reason
    replanned = with_plan(apply_decision(state, decision), TWO_STEPS)
    replanned = step_started(step_succeeded(step_started(replanned, "sql-1"), "sql-1",
                                            [INCIDENTS], "ok"), "python-1")
    replanned = step_failed(replanned, "python-1", failure)
    decision = decide_after_failure(replanned, "python-1", failure)
    assert decision.transition is Transition.TERMINATE and "new plan" in decision.reason


LONG_ERROR = ("chicago_airports: result_too_large: the result has more than 1,000 rows (the row "
              "cap, GEOASK_SQL_ROW_CAP) and geoask never computes on a cut result: screen "
              "candidates in SQL with an index-backed bounding-box test (geom && "
              "ST_MakeEnvelope(...) or ST_Expand(...)), aggregate in SQL, or select fewer rows")


def test_a_long_recurring_error_is_shown_once_whole_and_referred_to_elsewhere():
    from geoask.base.result_view import result_text
    from geoask.run.state import decide_after_failure
    from geoask.run.state_report import evidence_trail
    from geoask.vocabulary.question_result import QuestionResult

    failure = StepFailure(kind="database", message=LONG_ERROR)
    state = state_with(attempts={"sql-1": 1})
    for attempt in range(2):
        state = step_failed(state, "sql-1", failure)
        decision = decide_after_failure(state, "sql-1", failure)
        state = apply_decision(state, decision)
        if attempt == 0:
            state = step_started(state, "sql-1")
    assert len(LONG_ERROR) > 240 and state.tried and state.decisions
    report, trail = failure_report(state), evidence_trail(state)
    assert report.count(LONG_ERROR) == 1 and f"error 1: {LONG_ERROR}" in report.splitlines()
    assert "[error 1]" in report
    assert not any(line.endswith("...") for line in report.splitlines())  # nothing cut
    assert f"error 1: {LONG_ERROR}" in trail and "\n".join(trail).count(LONG_ERROR) == 1
    shown = result_text(QuestionResult(status="failed", message=report, evidence=trail,
                                       run_id="r", artifact_folder="/tmp/r"))
    assert shown.count(LONG_ERROR) == 1


def test_a_short_error_seen_once_stays_in_its_line():
    state = step_failed(state_with(attempts={"sql-1": 1}), "sql-1",
                        StepFailure(kind="database", message="column x does not exist"))
    report = failure_report(state)
    assert "sql-1 attempt 1: database: column x does not exist" in report
    assert "[error" not in report and "error 1:" not in report
