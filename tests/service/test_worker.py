"""The warm question worker's wire protocol and the fingerprint that guards it (no Prefect)."""

from __future__ import annotations

import json
import urllib.error
import urllib.request
from pathlib import Path
from typing import Any

import pytest

from geoask.errors import ConfigurationError, GeoaskError
from geoask.service import local, state_file, worker
from geoask.settings import Settings
from geoask.vocabulary.question_result import QuestionResult

RESULT = {"status": "answered", "message": "209 airports", "run_id": "r1",
          "artifact_folder": "/tmp/r1", "answer": None}


@pytest.fixture()
def settings(tmp_path: Path) -> Settings:
    return Settings(home=tmp_path)


@pytest.fixture()
def running(settings: Settings, monkeypatch: pytest.MonkeyPatch):
    """A started worker whose answers are scripted, recorded as this home's server."""
    answers: list[tuple[Any, dict[str, Any]]] = []
    reply: dict[str, Any] = {"result": RESULT}

    def answer(self: worker.QuestionWorker, question: Any, options: dict[str, Any]) -> dict:
        answers.append((question, options))
        return reply

    monkeypatch.setattr(worker.QuestionWorker, "answer", answer)
    monkeypatch.delenv("PREFECT_API_URL", raising=False)
    started = worker.QuestionWorker(settings)
    url = started.start(warm_up=False)
    state = state_file.ServerState(api_url="http://127.0.0.1:1/api", pid=1, port=1,
                              mode="background", log_path="/tmp/x.log", database="-",
                              worker_url=url, worker_token=started.token)
    monkeypatch.setattr(local, "running_server", lambda _settings: state)
    yield started, answers, reply
    started.stop()


def post(url: str, body: dict[str, Any], token: str) -> tuple[int, dict[str, Any]]:
    request = urllib.request.Request(f"{url}/ask", data=json.dumps(body).encode(),
                                     method="POST", headers={worker.TOKEN_HEADER: token})
    try:
        with urllib.request.urlopen(request) as response:
            return response.status, json.load(response)
    except urllib.error.HTTPError as error:
        return error.code, json.load(error)


def test_a_matching_asker_gets_the_workers_typed_result(settings, running) -> None:
    _, answers, _ = running
    result = worker.ask_worker(settings, "How many airports?", model="reference",
                               variant="POSTGIS", conversation="c1")
    assert isinstance(result, QuestionResult)
    assert result.message == "209 airports"
    assert answers == [("How many airports?", {"model": "reference", "variant": "POSTGIS",
                                               "conversation": "c1"})]


def test_other_settings_are_refused_as_stale_and_asked_here(settings, running) -> None:
    _, answers, _ = running
    other = settings.model_copy(update={"variant": "BASE"})
    assert worker.ask_worker(other, "How many airports?") is None
    assert answers == []


def test_the_token_and_the_request_are_checked(running) -> None:
    started, answers, _ = running
    body = {"question": "q", "fingerprint": started.fingerprint}
    assert post(started.url, body, "wrong")[0] == 403
    assert post(started.url, {"fingerprint": started.fingerprint}, started.token)[0] == 400
    assert post(started.url, {**body, "fingerprint": "x"}, started.token)[0] == 409
    assert answers == []
    assert post(started.url, body, started.token) == (200, {"result": RESULT})


@pytest.mark.parametrize(("headers", "data"), [
    ({worker.TOKEN_HEADER: "\u00e9"}, b"{}"),              # a non-ASCII token
    ({"Content-Length": "abc"}, b"{}"),                      # not a byte count
    ({"Content-Length": "-1"}, b"{}"),                       # read-to-the-end
    ({}, b"[" * 100_000),                                    # nesting past the recursion limit
])
def test_a_malformed_request_gets_a_reply_not_a_dropped_connection(running, headers,
                                                                    data) -> None:
    import http.client

    started, answers, _ = running
    connection = http.client.HTTPConnection(started.url.removeprefix("http://"), timeout=30)
    sent = {worker.TOKEN_HEADER: started.token, "Content-Length": str(len(data)), **headers}
    connection.putrequest("POST", "/ask")
    for name, value in sent.items():
        connection.putheader(name, value.encode("utf-8"))
    connection.endheaders(data if headers.get("Content-Length", "0").isdigit() else b"")
    status = connection.getresponse().status
    connection.close()
    assert status in (400, 403)
    assert answers == []


def test_the_workers_error_comes_back_as_the_same_class(settings, running) -> None:
    _, _, reply = running
    reply.clear()
    reply["error"] = {"type": "ConfigurationError", "message": "the question is empty"}
    with pytest.raises(ConfigurationError, match="the question is empty"):
        worker.ask_worker(settings, " ")
    reply["error"] = {"type": "KeyError", "message": "not one of ours"}
    with pytest.raises(GeoaskError, match="not one of ours"):
        worker.ask_worker(settings, "q")


def test_no_worker_or_another_api_means_asking_here(settings, running, monkeypatch) -> None:
    started, answers, _ = running
    monkeypatch.setenv("PREFECT_API_URL", "http://127.0.0.1:1/api")
    assert worker.ask_worker(settings, "q") is None
    monkeypatch.delenv("PREFECT_API_URL")
    started.stop()  # refused: nothing was sent
    assert worker.ask_worker(settings, "q") is None
    assert answers == []


def test_the_fingerprint_follows_settings_credentials_and_code(settings, tmp_path,
                                                                monkeypatch) -> None:
    code = tmp_path / "code"
    (code / "geoask").mkdir(parents=True)
    module = code / "geoask" / "a.py"
    module.write_text("x = 1\n")
    monkeypatch.setattr(worker, "ROOT", code)
    environ = {"PATH": "/bin", "OPENAI_API_KEY": "k1"}
    first = worker.fingerprint(settings, environ)
    assert worker.fingerprint(settings, {**environ, "PATH": "/usr/bin"}) == first
    assert worker.fingerprint(settings, {**environ, "OPENAI_API_KEY": "k2"}) != first
    assert worker.fingerprint(settings.model_copy(update={"model": "openai:gpt-4o"}),
                              environ) != first
    # a background server pins its home: the same folder, given or not, is the same
    pinned = settings.model_copy(update={"server_home": settings.prefect_home})
    assert worker.fingerprint(pinned, environ) == first
    module.write_text("x = 22\n")
    assert worker.fingerprint(settings, environ) != first




def test_a_relative_path_setting_ties_the_fingerprint_to_the_folder(settings, tmp_path,
                                                                    monkeypatch) -> None:
    relative = settings.model_copy(update={"artifact_root": "out"})
    monkeypatch.chdir(tmp_path)
    here = worker.fingerprint(relative, {})
    absolute_here = worker.fingerprint(settings, {})
    (tmp_path / "elsewhere").mkdir()
    monkeypatch.chdir(tmp_path / "elsewhere")
    assert worker.fingerprint(relative, {}) != here  # "out" is another folder now
    assert worker.fingerprint(settings, {}) == absolute_here
