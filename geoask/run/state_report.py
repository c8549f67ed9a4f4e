"""Reading an execution state for people and models: route, recoveries, summary, report, trail.

Pure functions of :class:`geoask.run.state.ExecutionState`; the transitions and decisions that
change a state are in :mod:`geoask.run.state`. A step error that was cut short in the state's
lines (:func:`geoask.run.lines.one_line`) or that recurs is shown once, whole, as a note
(``error 1: ...``) and referred to as ``[error 1]`` in every line that repeats it; the numbers
are the same in the failure report and the evidence trail.
"""

from __future__ import annotations

from collections.abc import Callable

from geoask.run.lines import one_line
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
    """The honest failure answer: why the run stopped, everything tried, each error once."""
    refer, notes = _error_notes(state)
    reason = refer(state.terminated or "the run stopped")
    lines = [f"geoask could not answer this question: {reason}.", "What was tried:"]
    lines.extend(f"- {refer(line)}" for line in state.tried)
    lines.append(
        f"- {state.plan_number} plan(s), {state.step_runs} step run(s), {state.repairs} "
        f"repair(s), {state.replans} replan(s)"
    )
    return "\n".join([*lines, *notes])



def evidence_trail(state: ExecutionState) -> list[str]:
    """One line per step (its summary or status), per thing tried and per recovery decision."""
    refer, notes = _error_notes(state)
    lines = [f"{step.id}: {step.summary or step.status.value}" for step in state.steps.values()]
    lines.extend(f"tried: {refer(line)}" for line in state.tried)
    lines.extend(f"{d.transition.value}{' ' + d.target if d.target else ''}: {refer(d.reason)}"
                 for d in state.decisions if d.transition is not Transition.CONTINUE)
    return [*lines, *notes]


def _error_notes(state: ExecutionState) -> tuple[Callable[[str], str], list[str]]:
    """``(refer, notes)`` of the step errors that were cut short or recur.

    ``refer`` puts ``[error N]`` for such an error in a line; ``notes`` are the errors whole
    (``error N: ...``), numbered by their first appearance in the state's lines.
    """
    whole = {one_line(error): error for error in state.errors}
    lines = [*state.tried, *(d.reason for d in state.decisions), state.terminated or ""]
    shown = [short for short in sorted(whole, key=len, reverse=True)
             if short != whole[short] or sum(short in line for line in lines) > 1]
    order = sorted((s for s in shown if any(s in line for line in lines)), key=lambda s: next(
        i for i, line in enumerate(lines) if s in line))
    numbers = {short: n for n, short in enumerate(order, 1)}

    def refer(line: str) -> str:
        for short in shown:
            if short in numbers:
                line = line.replace(short, f"[error {numbers[short]}]")
        return line

    return refer, [f"error {n}: {whole[short]}" for short, n in numbers.items()]
