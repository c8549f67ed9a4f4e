"""Conversations through the whole flow (real PostGIS and sandbox, offline reference model).

A follow-up turn reads the earlier turn's registered artifact instead of querying again; the
registry and the conversation file record it; a follow-up asked without its context is refused
with a clarifying question; a reused file that is gone stops the step before it runs.
"""

from __future__ import annotations

import json
import uuid
from pathlib import Path

import pytest

import geoask
from geoask.cases.conversations import load_conversations
from geoask.errors import ConfigurationError
from geoask.run.conversation import ConversationStore

CONVERSATION = next(c for c in load_conversations() if c.id == "nc_sids-001")
FIRST, SECOND = CONVERSATION.turns[:2]


def _new_id() -> str:
    return f"test-{uuid.uuid4().hex[:10]}"


def _ids(result) -> list[str]:
    return sorted(entity["id"] for entity in result.answer.data_payload["entities"])


def test_an_unusable_conversation_id_fails_before_any_work():
    with pytest.raises(ConfigurationError, match="conversation id"):
        geoask.ask(FIRST.question, model="reference", conversation="../x")


@pytest.mark.db
@pytest.mark.sandbox
def test_a_follow_up_reuses_the_registered_artifact_and_the_turns_are_recorded(api_settings):
    conversation = _new_id()
    first = geoask.ask(FIRST.question, model="reference", conversation=conversation)
    assert first.status == "answered", first.message
    assert (first.conversation, first.turn, first.reused) == (conversation, 1, [])
    registry = json.loads((Path(first.artifact_folder) / "registry.json").read_text())
    assert [entry["ref"] for entry in registry] == ["sql-1.high_sids"]
    entry = registry[0]
    assert (entry["kind"], entry["srid"], entry["row_count"]) == ("features", 4326, 10)
    assert entry["geometry_types"] and len(entry["bbox_wgs84"]) == 4
    assert {"name": "births_1974", "type": "integer", "unit": "births"} in entry["columns"]
    assert (entry["conversation"], entry["turn"]) == (conversation, 1)

    second = geoask.ask(SECOND.question, model="reference", conversation=conversation)
    assert second.status == "answered", second.message
    assert _ids(second) == sorted(SECOND.expected.value)
    assert second.reused == ["turn-1.sql-1.high_sids"] and second.turn == 2
    assert not (Path(second.artifact_folder) / "sql-1").exists()  # nothing queried again
    assert second.evidence[0].startswith("reused turn-1.sql-1.high_sids")

    stored = ConversationStore(api_settings.artifact_root_url).load(conversation)
    assert [(t.number, t.status, t.reused) for t in stored.turns] == [
        (1, "answered", []), (2, "answered", ["turn-1.sql-1.high_sids"])]
    assert stored.turns[1].reused_runs == [first.flow_run_id]


@pytest.mark.db
@pytest.mark.sandbox
def test_a_follow_up_without_its_context_is_refused_with_a_clarifying_question(api_settings):
    result = geoask.ask(SECOND.question, model="reference", conversation=_new_id())
    assert result.status == "rejected"
    assert "earlier results" in result.message and FIRST.question in result.message


@pytest.mark.db
@pytest.mark.sandbox
def test_a_reused_file_that_is_gone_stops_the_step_before_it_runs(api_settings):
    conversation = _new_id()
    first = geoask.ask(FIRST.question, model="reference", conversation=conversation)
    (Path(first.artifact_folder) / "sql-1" / "high_sids.geojson").unlink()
    second = geoask.ask(SECOND.question, model="reference", conversation=conversation)
    assert second.status == "failed"
    assert "no longer exist" in second.message
    assert not list(Path(second.artifact_folder).glob("python-1/script-*.py"))  # never written


@pytest.mark.db
@pytest.mark.sandbox
def test_a_turn_whose_run_raises_is_recorded_as_an_error(api_settings, monkeypatch):
    import flows.answer_question as question_flow
    from geoask.errors import DatabaseError

    def fail(run, question):
        raise DatabaseError("the database went away")

    monkeypatch.setattr(question_flow, "_answer", fail)
    conversation = _new_id()
    with pytest.raises(DatabaseError, match="went away"):
        geoask.ask(FIRST.question, model="reference", conversation=conversation)
    [turn] = ConversationStore(api_settings.artifact_root_url).load(conversation).turns
    assert (turn.number, turn.status) == (1, "error") and "went away" in turn.message
