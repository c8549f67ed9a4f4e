"""Reading an execution state for people and models: route, recoveries, summary, report, trail.

Pure functions of :class:`geoask.run.state.ExecutionState`; the transitions and decisions that
change a state are in :mod:`geoask.run.state`.
"""

from __future__ import annotations

from geoask.run.state import RECOVERY_TRANSITIONS, ExecutionState, StepStatus, Transition
from geoask.vocabulary.plan import StepKind


def recovery_count(state: ExecutionState) -> int:
    """Framework-level recovery transitions taken (revise, repair, replan)."""
    return sum(decision.transition in RECOVERY_TRANSITIONS for decision in state.decisions)


def route(state: ExecutionState) -> str:
    """``sql_only`` or ``sql_then_python``, from the steps of the current plan that ran."""
    ran_python = any(
        step.kind is StepKind.PYTHON and step.status is StepStatus.DONE
        for step in state.steps.values()
    )
    return "sql_then_python" if ran_python else "sql_only"


def state_summary(state: ExecutionState) -> str:
    """A compact, model-readable summary: plan, step statuses, attempts, recoveries."""
    lines = [f"variant {state.variant}; plan {state.plan_number}; step runs "
             f"{state.step_runs}/{state.limits.max_step_runs}; repairs {state.repairs}/"
             f"{state.limits.max_repairs}; replans {state.replans}/{state.limits.max_replans}"]
    for step in state.steps.values():
        artifacts = ", ".join(
            f"{a.name} ({'' if a.row_count is None else f'{a.row_count} rows; '}fields "
            f"{', '.join(a.fields)})" for a in step.artifacts
        )
        # an SQL step's summary only repeats its artifacts' row counts
        summary = step.summary if step.kind is StepKind.PYTHON else ""
        lines.append(f"- {step.id} [{step.kind.value}] {step.status.value}, attempts "
                     f"{step.attempts}" + (f": {artifacts}" if artifacts else "")
                     + (f"; {summary}" if summary else ""))
    lines.extend(f"tried: {line}" for line in state.tried[-6:])
    return "\n".join(lines)


def failure_report(state: ExecutionState) -> str:
    """The honest failure answer: why the run stopped and everything that was tried."""
    reason = state.terminated or "the run stopped"
    lines = [f"geoask could not answer this question: {reason}.", "What was tried:"]
    lines.extend(f"- {line}" for line in state.tried)
    lines.append(
        f"- {state.plan_number} plan(s), {state.step_runs} step run(s), {state.repairs} "
        f"repair(s), {state.replans} replan(s)"
    )
    return "\n".join(lines)



def evidence_trail(state: ExecutionState) -> list[str]:
    """One line per step (its summary or status), per thing tried and per recovery decision."""
    lines = [f"{step.id}: {step.summary or step.status.value}" for step in state.steps.values()]
    lines.extend(f"tried: {line}" for line in state.tried)
    lines.extend(f"{d.transition.value}{' ' + d.target if d.target else ''}: {d.reason}"
                 for d in state.decisions if d.transition is not Transition.CONTINUE)
    return lines
