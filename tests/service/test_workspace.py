"""The workspace page without a browser: token, escaping, CSP, map route (no database)."""

from __future__ import annotations

import urllib.error
import urllib.parse
import urllib.request

import pytest

from geoask.service.workspace import (
    MAP_POLICY,
    PAGE_POLICY,
    Turn,
    Workspace,
    map_key,
    turn_html,
)
from geoask.vocabulary.answers import FinalAnswer
from geoask.vocabulary.question_result import QuestionResult

EVIL = '<script>alert("x")</script>'


def result(tmp_path, maps: bool = True) -> QuestionResult:
    map_file = tmp_path / "map.html"
    map_file.write_text("<html><body>the map</body></html>", encoding="utf-8")
    answer = FinalAnswer(answer_type="entity_list", summary=EVIL,
                         data_payload={"entities": [{"id": "A1", "name": EVIL}]})
    return QuestionResult(status="answered", answer=answer, message=EVIL, evidence=[EVIL],
                          run_id="run-1", artifact_folder=str(tmp_path),
                          maps=[str(map_file)] if maps else [],
                          dashboard_url="http://127.0.0.1:1/runs/flow-run/abc")


@pytest.fixture
def workspace():
    page = Workspace()
    page.start()
    try:
        yield page
    finally:
        page.stop()


def get(url: str) -> tuple[int, dict[str, str], str]:
    try:
        with urllib.request.urlopen(url) as response:
            return response.status, dict(response.headers), response.read().decode()
    except urllib.error.HTTPError as error:
        return error.code, dict(error.headers), error.read().decode()


def test_every_text_of_a_turn_is_escaped(tmp_path):
    text = turn_html(1, Turn(EVIL, result(tmp_path)), "tok")
    assert "<script>" not in text
    assert text.count("&lt;script&gt;") == 4  # question, message, table cell, evidence
    assert 'href="http://127.0.0.1:1/runs/flow-run/abc"' in text
    assert f'sandbox="allow-scripts" src="/map/run-1?key={map_key("tok", "run-1")}"' in text
    assert "tok" not in text.replace(map_key("tok", "run-1"), "")  # no token in the frame URL


def test_names_beside_codes_are_shown_and_escaped(tmp_path):
    answer = FinalAnswer(answer_type="ranked_list", summary="", data_payload={
        "items": [{"rank": 1, "id": "CT", "value": 1}], "unit": "USD"})
    named = result(tmp_path).model_copy(update={"answer": answer, "names": {"CT": EVIL}})
    text = turn_html(1, Turn("q", named), "tok")
    assert "<th>name</th>" in text and "<td>CT</td><td>&lt;script&gt;" in text
    assert "<script>" not in text


def test_an_error_turn_is_one_escaped_line(tmp_path):
    text = turn_html(2, Turn(EVIL, error=f"ConfigurationError: {EVIL}"), "tok")
    assert "<script>" not in text and 'id="turn-2"' in text
    assert text.count("&lt;script&gt;") == 2


def test_requests_without_the_right_token_are_forbidden(workspace):
    for query in ("", "?token=wrong"):
        status, _, _ = get(f"{workspace.url}/{query}")
        assert status == 403
    status, _, _ = get(f"{workspace.url}/map/run-1")
    assert status == 403


def test_the_page_has_a_strict_policy_and_the_form(workspace):
    status, headers, body = get(f"{workspace.url}/?token={workspace.token}&conversation=c-1")
    assert status == 200
    assert headers["Content-Security-Policy"] == PAGE_POLICY
    assert "script-src" not in PAGE_POLICY and "default-src 'none'" in PAGE_POLICY
    assert 'name=conversation value="c-1"' in body and 'action="/ask"' in body
    status, _, _ = get(f"{workspace.url}/?token={workspace.token}&conversation=%3Cx%3E")
    assert status == 400


def test_only_maps_of_its_own_runs_are_served(workspace, tmp_path):
    workspace.turns["c-1"] = [Turn("q", result(tmp_path))]
    status, headers, body = get(f"{workspace.url}/map/run-1?key="
                                f"{map_key(workspace.token, 'run-1')}")
    assert (status, body) == (200, "<html><body>the map</body></html>")
    assert headers["Content-Security-Policy"] == MAP_POLICY
    assert MAP_POLICY.endswith("; sandbox allow-scripts")  # an opaque origin, opened alone too
    traversal = urllib.parse.quote("../../etc/passwd", safe="")
    for run in ("run-2", traversal):
        status, _, _ = get(f"{workspace.url}/map/{run}?key={map_key(workspace.token, run)}")
        assert status == 404


def test_a_map_key_opens_its_own_map_only_and_the_page_never(workspace, tmp_path):
    workspace.turns["c-1"] = [Turn("q", result(tmp_path))]
    key = map_key(workspace.token, "run-1")
    for url in (f"/map/run-1?token={workspace.token}", f"/map/run-2?key={key}", f"/?token={key}",
                f"/?key={key}"):
        status, _, _ = get(f"{workspace.url}{url}")
        assert status == 403, url


def test_an_empty_question_becomes_a_clear_error_turn(workspace, monkeypatch):
    from geoask.errors import ConfigurationError

    def refuse(question, **options):
        raise ConfigurationError("the question is empty")

    monkeypatch.setattr("geoask.app.api.ask", refuse)
    data = urllib.parse.urlencode({"token": workspace.token, "conversation": "c-2",
                                   "question": ""}).encode()
    request = urllib.request.Request(f"{workspace.url}/ask", data=data, method="POST")
    with urllib.request.urlopen(request) as response:
        body = response.read().decode()
    assert "ConfigurationError: the question is empty" in body
    assert workspace.turns["c-2"] == [Turn("", error="ConfigurationError: the question is empty")]


def test_server_status_prints_the_workspace_url_with_its_token(monkeypatch):
    from typer.testing import CliRunner

    from geoask.service import local
    from geoask.service.cli import app
    from geoask.service.state_file import ServerState

    record = ServerState(api_url="http://127.0.0.1:1/api", pid=1, port=1, mode="foreground",
                         log_path="/tmp/x.log", database="sqlite",
                         workspace_url="http://127.0.0.1:2", workspace_token="s3cret")
    monkeypatch.setattr(local, "running_server", lambda settings: record)
    output = CliRunner().invoke(app, ["status"]).output
    assert "workspace page: http://127.0.0.1:2/?token=s3cret" in output
    without = ServerState(**{**record.__dict__, "workspace_url": None})
    monkeypatch.setattr(local, "running_server", lambda settings: without)
    assert "workspace page" not in CliRunner().invoke(app, ["status"]).output


def test_a_conversation_asks_one_question_at_a_time(workspace, monkeypatch, tmp_path):
    import threading
    import time

    running: list[int] = []
    overlaps: list[int] = []

    def slow(question, **options):
        running.append(1)
        overlaps.append(len(running))
        time.sleep(0.3)
        running.pop()
        return result(tmp_path)

    monkeypatch.setattr("geoask.app.api.ask", slow)

    def post(question: str) -> None:
        data = urllib.parse.urlencode({"token": workspace.token, "conversation": "c-3",
                                       "question": question}).encode()
        urllib.request.urlopen(urllib.request.Request(f"{workspace.url}/ask", data=data)).read()

    threads = [threading.Thread(target=post, args=(f"q{i}",)) for i in range(2)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert overlaps == [1, 1]
    assert sorted(turn.question for turn in workspace.turns["c-3"]) == ["q0", "q1"]


def post_ask(workspace, **fields: str) -> int:
    data = urllib.parse.urlencode({"token": workspace.token, "question": "q", **fields}).encode()
    try:
        with urllib.request.urlopen(urllib.request.Request(f"{workspace.url}/ask",
                                                           data=data)) as response:
            return response.status
    except urllib.error.HTTPError as error:
        return error.code


def test_only_the_offered_models_and_run_conversation_ids_are_taken(workspace, monkeypatch,
                                                                    tmp_path):
    from geoask.models.served import allowed_models

    asked: list[object] = []
    monkeypatch.setattr("geoask.app.api.ask", lambda question, **options: (
        asked.append(options["model"]), result(tmp_path))[1])
    for model in ("recorded:/etc", "openai-compatible:evil"):
        assert post_ask(workspace, conversation="c-4", model=model) == 200
    assert asked == []
    errors = [turn.error or "" for turn in workspace.turns["c-4"]]
    assert all(e.startswith("ConfigurationError: model ") and "not offered" in e
               for e in errors), errors
    assert post_ask(workspace, conversation="c-4", model="reference") == 200
    assert asked == ["reference"]
    for conversation in ("..", ".hidden", "-x"):
        assert post_ask(workspace, conversation=conversation) == 400
        status, _, _ = get(f"{workspace.url}/?token={workspace.token}&conversation="
                           f"{conversation}")
        assert status == 400
    _, _, body = get(f"{workspace.url}/?token={workspace.token}&conversation=c-4")
    offered = ['<option value="">configured default</option>'] + [
        f'<option value="{name}">{name}</option>' for name in allowed_models(workspace.settings)]
    assert f"<select name=model>{''.join(offered)}</select>" in body


def test_a_server_not_in_a_terminal_writes_no_token(monkeypatch, capsys):
    from geoask.service.cli import _start_workspace
    from geoask.settings import get_settings

    workspace = _start_workspace(get_settings())  # captured stdout: not a terminal, like a log
    try:
        printed = capsys.readouterr().out
    finally:
        workspace.stop()
    assert f"workspace page: {workspace.url} (`geoask server status`" in printed
    assert workspace.token not in printed


def test_request_logs_carry_no_token(workspace, caplog):
    import logging

    with caplog.at_level(logging.DEBUG, logger="geoask.service.loopback"):
        get(f"{workspace.url}/?token={workspace.token}&conversation=c-5")
        get(f"{workspace.url}/map/run-1?key={map_key(workspace.token, 'run-1')}")
    logged = "\n".join(record.getMessage() for record in caplog.records)
    assert "GET /?..." in logged
    assert workspace.token not in logged and map_key(workspace.token, "run-1") not in logged


def test_the_background_server_log_is_readable_by_its_owner_only(tmp_path):
    import os
    import stat

    from geoask.service.local import private_log

    path = tmp_path / "serve.log"
    path.write_text("old\n")
    path.chmod(0o644)
    with private_log(path) as descriptor:
        os.write(descriptor, b"new\n")
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    assert path.read_text() == "old\nnew\n"
