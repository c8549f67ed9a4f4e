"""Per-call transcripts: every agent call kept in ``calls/<n>-<role>.json``; a recorded run
replays offline to the same outcome; no secret is ever written."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from demo_cases import CASES
from pydantic import SecretStr
from pydantic_ai.exceptions import ModelHTTPError

from flows.answer_question import answer_question
from geoask.models.llm import model_for
from geoask.models.recorded import RecordedModel
from geoask.models.scripted import ScriptedModel

pytestmark = [pytest.mark.db, pytest.mark.sandbox]
BY_NAME = {case.name: case for case in CASES}
SECRET = "sk-test-4f9a1c7e2b"


def _record(make_services, name: str, **overrides):
    case = BY_NAME[name]
    services = make_services(ScriptedModel(case.replies()), **overrides)
    return case, answer_question(case.question, services=services), services


def test_every_call_has_a_transcript(make_services):
    case, _, services = _record(make_services, "buffer_topology")
    folder = Path(services.store.folder)
    log = json.loads((folder / "execution_log.json").read_text())
    names = sorted((folder / "calls").iterdir(), key=lambda p: int(p.name.split("-")[0]))
    assert [p.name for p in names] == [
        "1-intent.json", "2-planner.json", "3-sql.json", "4-compute.json", "5-reviewer.json",
        "6-answer.json"]
    assert [c["transcript"] for c in log["model_calls"]] == [f"calls/{p.name}" for p in names]
    sql = json.loads((folder / "calls" / "3-sql.json").read_text())
    assert sql["role"] == "sql" and sql["stage"] == "sql-1" and sql["status"] == "ok"
    assert sql["output_mode"] == "tool"
    assert len(sql["requests"]) == 1 and sql["requests"][0]["latency_ms"] >= 0
    call = sql["requests"][0]["response"]["parts"][0]
    assert call["part_kind"] == "tool-call" and "SELECT" in json.dumps(call["args"]).upper()
    kinds = [message["kind"] for message in sql["messages"]]
    assert kinds == ["request", "response", "request"]  # the output tool's return last
    assert "Question: " + case.question in json.dumps(sql["messages"])


def test_a_recorded_run_replays_to_the_same_outcome(make_services, flow_settings):
    case, first, services = _record(make_services, "statistics")
    folder = Path(services.store.folder)
    replay_settings = flow_settings.model_copy(update={"model": f"recorded:{folder}"})
    replay = make_services(ScriptedModel({}))
    replay.models = lambda role: model_for(role, replay_settings)
    second = answer_question(case.question, services=replay)
    assert second.status == first.status == "answered"
    assert second.answer.model_dump(mode="json") == first.answer.model_dump(mode="json")
    assert second.transitions == first.transitions


def test_a_recorded_http_error_is_raised_again(tmp_path):
    from geoask.models.transcripts import CallTranscript, RequestRecord

    (tmp_path / "calls").mkdir()
    transcript = CallTranscript(
        n=1, role="intent", stage="intent", model="m", system="openai", output_mode="native",
        status="error", duration_ms=1.0,
        requests=[RequestRecord(latency_ms=1.0, error="ModelHTTPError: HTTP 400",
                                status_code=400)])
    (tmp_path / "calls" / transcript.file_name).write_text(transcript.to_json())
    model = RecordedModel(tmp_path, "intent")
    assert model.profile["default_structured_output_mode"] == "native"
    import asyncio

    from pydantic_ai.models import ModelRequestParameters

    with pytest.raises(ModelHTTPError) as caught:
        asyncio.run(model.request([], None, ModelRequestParameters()))
    assert caught.value.status_code == 400


def test_no_secret_reaches_a_transcript(make_services, monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", SECRET)
    case = BY_NAME["filter_rank"]
    replies = case.replies()
    leaking = dict(replies)
    # the question itself carries a key and an Authorization header, as a careless user might
    question = f"{case.question} (key {SECRET}, Authorization: Bearer abc.def.ghi)"
    services = make_services(ScriptedModel(leaking),
                             openai_api_key=SecretStr("gk-settings-77aa"))
    answer_question(question + " gk-settings-77aa", services=services)
    text = "".join(p.read_text() for p in (Path(services.store.folder) / "calls").iterdir())
    assert text and SECRET not in text and "abc.def.ghi" not in text
    assert "gk-settings-77aa" not in text and "[redacted]" in text
