"""Conversation state: the JSON file per conversation, the bounded context the agents see, the
prompt blocks (absent for a standalone question), and the planner's reuse rules."""

from __future__ import annotations

from pathlib import Path

import pytest

from agents.intent import IntentDeps
from agents.intent import prompt as intent_prompt
from agents.planner import PlannerDeps, first_step_is_sql, inputs_name_earlier_steps, plan_errors
from agents.planner import prompt as planner_prompt
from geoask.errors import ConfigurationError
from geoask.records.artifact_registry import ArtifactKind, RegistryEntry
from geoask.run.conversation import (
    ConversationStore,
    Turn,
    check_conversation_id,
    context_for,
    history_block,
    reuse_block,
    turn_line,
)
from geoask.sql.context import SpatialPolicy
from geoask.vocabulary.plan import (
    ExecutionConstraints,
    Intent,
    OperationIntent,
    Plan,
    PlanAllowance,
    PlanStep,
    SpatialTopology,
    SpatiotemporalScope,
)


def _turn(number: int, status: str = "answered") -> Turn:
    entry = RegistryEntry(ref="sql-1.cells", name="cells", kind=ArtifactKind.FEATURES,
                          url=f"/a/run{number}/sql-1/cells.geojson", format="geojson", srid=4326,
                          step="sql-1", made_by="sql", run_id=f"run{number}")
    return Turn(number=number, question=f"question {number}?", status=status,
                message=f"answer {number}", run_id=f"run{number}", flow_run_id=f"f{number}",
                artifacts=[entry])


def test_a_turn_is_reserved_when_its_run_starts_and_replaced_when_it_ends(tmp_path):
    store = ConversationStore(str(tmp_path))
    assert store.load("wake-rain").turns == []
    store.begin("wake-rain", "question 1?", "run1")
    second = store.begin("wake-rain", "question 2?", "run2")  # before the first one ended
    assert [(t.number, t.status) for t in second.turns] == [(1, "running"), (2, "running")]
    context = context_for(second, 5)
    assert context.turn == 2 and context.history == ""  # the unfinished turn 1 is left out
    store.record("wake-rain", _turn(2))
    conversation = store.record("wake-rain", _turn(1))
    assert [(t.number, t.run_id, t.status) for t in conversation.turns] == [
        (1, "run1", "answered"), (2, "run2", "answered")]
    assert store.load("wake-rain") == conversation
    assert (tmp_path / "conversations" / "wake-rain.json").is_file()


def test_a_turn_whose_reservation_is_gone_is_added_as_the_next_turn(tmp_path):
    store = ConversationStore(str(tmp_path))
    store.record("c", _turn(1))
    assert [t.number for t in store.record("c", _turn(5)).turns] == [1, 2]


def _run_one(root: str, process: int) -> None:
    store = ConversationStore(root)
    reserved = store.begin("race", f"question from {process}?", f"p{process}").turns[-1]
    store.record("race", _turn(reserved.number).model_copy(update={"run_id": f"p{process}"}))


def test_turns_run_at_once_get_their_own_numbers_and_are_all_kept(tmp_path):
    # Attack pass: 20 concurrent appends kept 15 (read-modify-write without a lock); turns
    # started at once got the same number (and artifact refs) before numbers were reserved.
    import multiprocessing

    with multiprocessing.get_context("fork").Pool(8) as pool:
        pool.starmap(_run_one, [(str(tmp_path), n) for n in range(1, 21)])
    turns = ConversationStore(str(tmp_path)).load("race").turns
    assert [t.number for t in turns] == list(range(1, 21))
    assert {t.status for t in turns} == {"answered"}
    assert sorted(t.run_id for t in turns) == sorted(f"p{n}" for n in range(1, 21))
    folder = Path(ConversationStore(str(tmp_path)).url("race")).parent
    assert sorted(p.name for p in folder.iterdir()) == ["race.json"]  # no lock file left


@pytest.mark.parametrize("bad", ["", "../etc", "a b", "-x", "x" * 65, "abc\n", None])
def test_an_unusable_conversation_id_is_a_clear_error(bad):
    with pytest.raises(ConfigurationError, match="conversation id"):
        check_conversation_id(bad)


def test_the_context_holds_only_the_last_n_turns_and_their_answered_artifacts():
    from geoask.run.conversation import Conversation

    turns = [_turn(n) for n in range(1, 7)] + [_turn(7, status="failed"),
                                              _turn(8, status="running")]
    context = context_for(Conversation(id="c", turns=turns), 3)
    assert context.turn == 8
    assert [line.split(":")[0] for line in context.history.splitlines()] == [
        "turn 5", "turn 6", "turn 7"]
    assert list(context.reusable) == ["turn-5.sql-1.cells", "turn-6.sql-1.cells"]
    assert context.reusable["turn-6.sql-1.cells"].ref == "turn-6.sql-1.cells"
    assert context.flow_runs == {5: "f5", 6: "f6", 7: "f7"}
    assert context.turn_of("turn-6.sql-1.cells") == 6 and context.turn_of("sql-1.x") is None


def test_long_answers_are_cut_in_the_history():
    long = _turn(1).model_copy(update={"message": "word " * 200})
    assert len(turn_line(long)) < 300 and turn_line(long).endswith("...")


INTENT = Intent(target="counties", scope=SpatiotemporalScope(), topology=SpatialTopology(),
                operation=OperationIntent.FILTER)


def test_standalone_prompts_carry_no_conversation_block():
    intent = IntentDeps(question="Which counties?", catalog_summary="t: table")
    assert intent_prompt(intent) == "Question: Which counties?\n\nTables of the database " \
                                    "(one per line):\nt: table"
    planner = PlannerDeps(question="Which counties?", intent=INTENT, schema_text="x",
                          tables=["t"], allowance=PlanAllowance("FULL", True,
                                                                SpatialPolicy.SEPARATED))
    assert "conversation" not in planner_prompt(planner)
    assert history_block(None) == "" and reuse_block(None) == ""


def test_a_turn_prompt_ends_with_the_history_and_the_refusal_rule():
    from geoask.run.conversation import Conversation

    context = context_for(Conversation(id="c", turns=[_turn(1), _turn(2, "running")]), 5)
    text = intent_prompt(IntentDeps(question="Only those?", catalog_summary="t: table",
                                    conversation=history_block(context)))
    assert text.index("Question: Only those?") < text.index("turn 1: question 1?")
    assert "IntentRejection not_answerable" in text
    assert "turn-1.sql-1.cells: features" in reuse_block(context)
    first = context_for(Conversation(id="c"), 5)
    assert "first turn" in history_block(first) and reuse_block(first) == ""


def _plan(*steps: PlanStep) -> Plan:
    return Plan(steps=list(steps), answer_type="entity_list", constraints=ExecutionConstraints(
        computation_needed=True, geometry_needed=False, input_mode="single",
        spatial_granularity="county", operation_category="attribute_filter_rank"))


def test_a_plan_may_start_with_python_only_when_it_reads_reusable_artifacts():
    reuse = _plan(PlanStep(id="python-1", objective="filter", inputs=["turn-1.sql-1.cells"],
                           expected_output="fips"))
    allowance = PlanAllowance("FULL", True, SpatialPolicy.SEPARATED)
    standalone = PlannerDeps(question="q", intent=INTENT, schema_text="", tables=[],
                             allowance=allowance)
    in_turn = PlannerDeps(question="q", intent=INTENT, schema_text="", tables=[],
                          allowance=allowance, reusable=("turn-1.sql-1.cells",))
    assert first_step_is_sql(reuse, standalone) is not None
    assert inputs_name_earlier_steps(reuse, standalone) is not None
    assert plan_errors(reuse, in_turn) == []
    unknown = _plan(PlanStep(id="python-1", objective="filter", inputs=["turn-2.sql-1.x"],
                             expected_output="fips"))
    assert plan_errors(unknown, in_turn)
