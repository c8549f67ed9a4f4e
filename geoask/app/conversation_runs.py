"""Run the conversation benchmark: every turn in context, and every later turn standalone.

For each conversation a fresh conversation id (``<conversation id>-<stamp>``) is used; each
turn is asked in it through the ``answer-question`` flow (its own flow run) and scored like a
benchmark case (:func:`geoask.bench.evaluate.score.score_case`); each later turn's
``standalone`` question is then asked alone and scored against the same expected value. A
third run per later turn asks it in a new, empty conversation: it must be refused with a
clarifying question (it refers to results that conversation does not hold). The report gives
per-turn SSA, the reuse rate (later turns that read an earlier turn's artifact instead of
querying again), clarifying refusals, and tokens and time per turn against standalone.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass
from typing import Any

from geoask.bench.evaluate.score import score_case
from geoask.cases.conversations import ConversationCase
from geoask.cases.model import BenchmarkCase


@dataclass(frozen=True)
class TurnRun:
    """One question run of the conversation benchmark.

    Attributes:
        conversation: the conversation case id.
        turn: 1-based turn number.
        case_id: the case scored (the turn, or its standalone form).
        mode: ``in_context``, ``standalone`` or ``no_context`` (a later turn in an empty
            conversation: correct when refused).
        status: the run's outcome (``answered``, ``rejected``, ``failed``, ``error``).
        correct: SSA of the run (for ``no_context``: it was refused).
        reused: refs of earlier turns' artifacts the run read.
        tokens: prompt + completion tokens over all model calls.
        time_s: wall time of the run (s).
        flow_run_id: the Prefect flow run.
        reason: why it is not correct (empty when correct).
        history_tokens: prompt tokens of the conversation blocks the intent and planner
            agents were sent (0 for a standalone question).

    """

    conversation: str
    turn: int
    case_id: str
    mode: str
    status: str
    correct: bool
    reused: tuple[str, ...]
    tokens: int
    time_s: float
    flow_run_id: str | None
    reason: str = ""
    history_tokens: int = 0

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready."""
        return asdict(self)


Ask = Callable[[str, BenchmarkCase, Sequence[BenchmarkCase], str | None], Any]
"""``ask(question, case, known_cases, conversation_id)`` -> ``(result, log, reused refs,
history tokens)``."""


def run_conversation(conversation: ConversationCase, ask: Ask, stamp: str,
                     standalone: bool = True) -> list[TurnRun]:
    """Ask every turn of ``conversation`` in context, then each later turn standalone.

    ``ask`` runs one question through the flow (:func:`flow_ask`; tests inject their own).
    """
    from geoask.cases.conversations import replay_cases

    known = replay_cases([conversation])
    turns = conversation.turn_cases()
    runs: list[TurnRun] = []
    conversation_id = f"{conversation.id}-{stamp}"
    for number, turn in enumerate(turns, start=1):
        runs.append(_run(conversation.id, number, turn, turn.question, "in_context", ask, known,
                         conversation_id))
    for number, turn in enumerate(turns[1:], start=2):
        if standalone:
            case = conversation.standalone_case(number - 1)
            runs.append(_run(conversation.id, number, case, case.question, "standalone", ask,
                             known, None))
        runs.append(_run(conversation.id, number, turn, turn.question, "no_context", ask,
                         known, f"{conversation_id}-empty-{number}"))
    return runs


def _run(conversation: str, number: int, case: BenchmarkCase, question: str, mode: str,
         ask: Ask, known: Sequence[BenchmarkCase], conversation_id: str | None) -> TurnRun:
    begin = time.perf_counter()
    try:
        result, log, reused, history = ask(question, case, known, conversation_id)
    except Exception as error:  # a failed run is a result of the benchmark, not a crash
        return TurnRun(conversation, number, case.id, mode, "error", False, (), 0,
                       time.perf_counter() - begin, None, f"{type(error).__name__}: {error}")
    elapsed = time.perf_counter() - begin
    score = score_case(case, result.answer, log, variant="FULL", time_s=elapsed)
    if mode == "no_context":
        correct = result.status == "rejected"
        reason = "" if correct else f"answered without its context ({result.status})"
    else:
        correct, reason = score.ssa, score.reason
    return TurnRun(conversation, number, case.id, mode, result.status, correct, tuple(reused),
                   score.total_tokens, elapsed, result.flow_run_id, reason, history)


def flow_ask(settings: Any, model: str = "reference") -> Ask:
    """An :data:`Ask` running the ``answer-question`` flow in this process (shared parts)."""
    from flows.answer_question import answer_question
    from geoask.bench.runs import shared_parts
    from geoask.run.composition import model_provider, services_from_parts
    from geoask.run.variants import Variant

    def ask(question: str, case: BenchmarkCase, known: Sequence[BenchmarkCase],
            conversation: str | None) -> Any:
        models = model_provider(settings, model, cases=list(known))
        services = services_from_parts(settings, Variant.FULL, models, shared_parts(settings))
        name = f"{case.id}-{'turn' if conversation else 'standalone'}"
        result = answer_question.with_options(flow_run_name=name)(
            question, services=services, conversation=conversation)
        return result, services.recorder.log, services.reused, history_tokens(services)

    return ask


def history_tokens(services: Any) -> int:
    """Prompt tokens the run spent on its conversation: the intent's and planner's blocks."""
    from geoask.models.scripted import count_tokens
    from geoask.run.conversation import history_block, reuse_block

    context = services.conversation
    if context is None:
        return 0
    planner = history_block(context, refusal_rule=False) + reuse_block(context)
    return count_tokens(history_block(context)) + count_tokens(planner)


@dataclass(frozen=True)
class ConversationReport:
    """The conversation benchmark's numbers.

    Attributes:
        conversations: conversations run.
        turns: turns asked in context.
        ssa_by_turn: turn number -> share of in-context runs correct.
        ssa: share of all in-context runs correct.
        reuse_rate: share of later turns (in context) that reused an earlier artifact.
        clarifying_rate: share of later turns asked without context that were refused.
        standalone_ssa: share of standalone runs correct.
        tokens_in_context: mean tokens of a later turn in context.
        tokens_standalone: mean tokens of the same turns asked standalone.
        time_in_context_s: mean wall time of a later turn in context (s).
        time_standalone_s: mean wall time of the same turns standalone (s).
        history_tokens: mean prompt tokens per later turn spent on carrying the conversation
            (the history and reuse blocks the intent and planner agents were sent).

    """

    conversations: int
    turns: int
    ssa_by_turn: dict[int, float]
    ssa: float
    reuse_rate: float
    clarifying_rate: float
    standalone_ssa: float | None
    tokens_in_context: float | None
    tokens_standalone: float | None
    time_in_context_s: float | None
    time_standalone_s: float | None
    history_tokens: float | None = None


def summarize_runs(runs: Sequence[TurnRun]) -> ConversationReport:
    """Aggregate :class:`TurnRun` records into the :class:`ConversationReport`."""
    context = [r for r in runs if r.mode == "in_context"]
    later = [r for r in context if r.turn > 1]
    alone = [r for r in runs if r.mode == "standalone"]
    empty = [r for r in runs if r.mode == "no_context"]
    by_turn: dict[int, list[bool]] = {}
    for r in context:
        by_turn.setdefault(r.turn, []).append(r.correct)
    return ConversationReport(
        conversations=len({r.conversation for r in runs}), turns=len(context),
        ssa_by_turn={n: _share(v) for n, v in sorted(by_turn.items())},
        ssa=_share([r.correct for r in context]),
        reuse_rate=_share([bool(r.reused) for r in later]),
        clarifying_rate=_share([r.correct for r in empty]),
        standalone_ssa=_share([r.correct for r in alone]) if alone else None,
        tokens_in_context=_mean([r.tokens for r in later]),
        tokens_standalone=_mean([r.tokens for r in alone]),
        time_in_context_s=_mean([r.time_s for r in later]),
        time_standalone_s=_mean([r.time_s for r in alone]),
        history_tokens=_mean([r.history_tokens for r in later]),
    )


def render_report(report: ConversationReport) -> str:
    """The report as a few markdown lines."""
    lines = [
        f"# Conversation benchmark: {report.conversations} conversations, {report.turns} turns",
        "",
        f"- SSA in context: {report.ssa:.1%} "
        f"(per turn: {', '.join(f'turn {n} {v:.1%}' for n, v in report.ssa_by_turn.items())})",
        f"- reuse rate (later turns reading an earlier artifact): {report.reuse_rate:.1%}",
        f"- clarifying refusals of later turns asked without their context: "
        f"{report.clarifying_rate:.1%}",
    ]
    if report.standalone_ssa is not None:
        lines.append(f"- SSA of the later turns asked standalone: {report.standalone_ssa:.1%}")
    if report.tokens_in_context is not None and report.tokens_standalone:
        saving = 1 - report.tokens_in_context / report.tokens_standalone
        lines.append(f"- tokens per later turn: {report.tokens_in_context:.0f} in context vs "
                     f"{report.tokens_standalone:.0f} standalone ({saving:+.1%} saved)")
    if report.history_tokens is not None:
        lines.append(f"- tokens spent carrying the conversation (history and reusable "
                     f"artifacts shown to intent and planner): {report.history_tokens:.0f} "
                     "per later turn")
    if report.time_in_context_s is not None and report.time_standalone_s:
        lines.append(f"- time per later turn: {report.time_in_context_s:.1f} s in context vs "
                     f"{report.time_standalone_s:.1f} s standalone")
    return "\n".join(lines)


def _share(flags: Sequence[bool]) -> float:
    return sum(flags) / len(flags) if flags else 0.0


def _mean(values: Sequence[float]) -> float | None:
    return sum(values) / len(values) if values else None
