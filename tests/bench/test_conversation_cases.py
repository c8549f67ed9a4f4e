"""The conversation case format, the shipped conversations, their standalone composition, the
reference model's replay of follow-ups, and the conversation report's arithmetic."""

from __future__ import annotations

import copy
import json

import pytest
import yaml
from pydantic import ValidationError

from agents.planner import PlannerDeps, plan_errors
from geoask.app.conversation_runs import TurnRun, render_report, summarize_runs
from geoask.cases.conversations import (
    DEFAULT_CONVERSATIONS_DIR,
    ConversationFile,
    load_conversations,
    replay_cases,
)
from geoask.cases.model import CaseFile
from geoask.models.reference import reference_model
from geoask.sql.context import SpatialPolicy
from geoask.vocabulary.plan import Intent, IntentRejection, PlanAllowance

CONVERSATIONS = load_conversations()
RAW = yaml.safe_load((DEFAULT_CONVERSATIONS_DIR / "nc_climate.yaml").read_text())
SIDS = next(c for c in CONVERSATIONS if c.id == "nc_sids-001")


def test_the_conversation_schema_file_is_generated_from_the_model():
    from geoask.cases.conversations import CONVERSATION_SCHEMA_PATH
    from geoask.cases.schema import conversation_schema_text

    assert CONVERSATION_SCHEMA_PATH.read_text() == conversation_schema_text(), \
        "run python -m geoask.cases.schema"
    turn = json.loads(CONVERSATION_SCHEMA_PATH.read_text())["$defs"]["TurnCase"]
    assert "standalone" in turn["properties"] and "earlier_questions" not in turn["properties"]


def test_a_file_breaking_the_schema_is_one_clear_error(tmp_path):
    from geoask.errors import BenchmarkCaseError

    raw = copy.deepcopy(RAW)
    raw["conversations"][0]["turns"][0]["difficulty"] = "trivial"
    path = tmp_path / "bad.yaml"
    path.write_text(yaml.safe_dump(raw))
    with pytest.raises(BenchmarkCaseError, match="conversations/0/turns/0/difficulty"):
        load_conversations(path)


def test_the_shipped_set_has_twenty_conversations_whose_later_turns_need_context():
    assert len(CONVERSATIONS) >= 20
    assert all(2 <= len(c.turns) <= 4 for c in CONVERSATIONS)
    later = [t for c in CONVERSATIONS for t in c.turns[1:]]
    assert all(t.standalone and t.standalone != t.question for t in later)
    assert sum(bool(t.reference.reused_inputs) for t in later) >= len(later) - 2
    assert all(t.expected.value is not None for c in CONVERSATIONS for t in c.turns)
    spatial = [t for c in CONVERSATIONS for t in c.turns if t.category.value == "spatial"]
    assert spatial and all(t.cross_check is not None for t in spatial)


@pytest.mark.parametrize(("ref", "message"), [
    ("turn-2.sql-1.high_sids", "names no earlier turn"),
    ("turn-1.sql-1.nothing", "has no SQL statement 'nothing'"),
    ("turn-1.high_sids", "write turn-<n>"),
])
def test_a_reuse_ref_must_name_an_earlier_turns_statement(ref, message):
    raw = copy.deepcopy(RAW)
    raw["conversations"][0]["turns"][1]["reference"]["steps"][0]["inputs"] = [ref]
    with pytest.raises(ValidationError, match=message):
        ConversationFile.model_validate(raw)


def test_a_later_turn_needs_a_standalone_question():
    raw = copy.deepcopy(RAW)
    del raw["conversations"][0]["turns"][1]["standalone"]
    with pytest.raises(ValidationError, match="needs a standalone question"):
        ConversationFile.model_validate(raw)


def test_an_ordinary_case_file_may_not_reuse_turns():
    turn = copy.deepcopy(RAW["conversations"][0]["turns"][1])
    del turn["standalone"]
    with pytest.raises(ValidationError, match="only conversation turns"):
        CaseFile.model_validate({"cases": [turn]})


def test_the_standalone_case_runs_the_reused_statement_first_then_reads_it_by_name():
    case = SIDS.standalone_case(2)
    first, second = case.reference.steps
    assert case.id == "nc_sids_t3s-001" and case.question == SIDS.turns[2].standalone
    assert [s.name for s in first.statements] == ["high_sids"]
    assert first.statements[0].sql == SIDS.turns[0].reference.steps[0].statements[0].sql
    assert second.inputs == ["high_sids"] and case.reference.reused_inputs == []
    assert case.expected == SIDS.turns[2].expected and case.cross_check is not None


def _intent_prompt(question: str, history: str = "") -> str:
    return f"Question: {question}\n\nTables of the database (one per line):\nt: x\n\n{history}"


def test_the_reference_model_answers_a_follow_up_only_with_its_context():
    model = reference_model(replay_cases([SIDS]))
    second = SIDS.turns[1].question
    refused = model.reply("intent", _intent_prompt(second))
    assert isinstance(refused, IntentRejection) and SIDS.turns[0].question in refused.message
    history = f"Earlier in this conversation (oldest first):\nturn 1: {SIDS.turns[0].question}"
    assert isinstance(model.reply("intent", _intent_prompt(second, history)), Intent)
    standalone = model.reply("intent", _intent_prompt(SIDS.turns[1].standalone))
    assert isinstance(standalone, Intent)


def test_the_reference_plan_of_a_reuse_turn_starts_with_python_and_keeps_the_rules():
    model = reference_model(replay_cases([SIDS]))
    plan = model.reply("planner", f"Question: {SIDS.turns[1].question}\n\nSchema outline:\n")
    assert [(s.id, s.inputs) for s in plan.steps] == [("python-1", ["turn-1.sql-1.high_sids"])]
    intent = model.reply("intent", _intent_prompt(SIDS.turns[1].standalone))
    deps = PlannerDeps(question="q", intent=intent, schema_text="", tables=[],
                       allowance=PlanAllowance("FULL", True, SpatialPolicy.SEPARATED),
                       reusable=("turn-1.sql-1.high_sids",))
    assert plan_errors(plan, deps) == []
    assert plan_errors(plan, PlannerDeps(question="q", intent=intent, schema_text="",
                                         tables=[], allowance=deps.allowance))


def _run(turn: int, mode: str, correct: bool = True, reused: tuple[str, ...] = (),
         tokens: int = 100, history: int = 0) -> TurnRun:
    return TurnRun("c-001", turn, "x", mode, "answered", correct, reused, tokens, 1.0, None,
                   history_tokens=history)


def test_the_report_counts_ssa_per_turn_reuse_refusals_and_tokens():
    runs = [_run(1, "in_context"), _run(2, "in_context", reused=("turn-1.sql-1.a",),
                                        tokens=60, history=30),
            _run(3, "in_context", correct=False, tokens=80, history=50),
            _run(2, "standalone", tokens=100), _run(3, "standalone", tokens=100),
            _run(2, "no_context"), _run(3, "no_context", correct=False)]
    report = summarize_runs(runs)
    assert report.ssa_by_turn == {1: 1.0, 2: 1.0, 3: 0.0}
    assert report.reuse_rate == 0.5 and report.clarifying_rate == 0.5
    assert (report.tokens_in_context, report.tokens_standalone) == (70, 100)
    assert report.history_tokens == 40
    assert "+30.0% saved" in render_report(report)
