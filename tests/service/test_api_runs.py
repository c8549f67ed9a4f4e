"""Runs through the API of a `geoask server` subprocess: same answer, stages, artifacts, CLI.

The served answer-question is tests/service/scripted_flow.py: the real flow body with a
scripted model, so a run through the API and a direct run must give the same answer.
"""

from __future__ import annotations

import json
import subprocess
import sys
import time
from pathlib import Path

import pytest
from harness import GEOASK, Served, api_json, deployment_names, shared_run
from scripted_flow import QUESTIONS

from geoask.errors import ServiceError
from geoask.service.client import ask_via_api, run_deployment_and_wait
from geoask.settings import Settings, get_settings

pytestmark = [pytest.mark.db, pytest.mark.sandbox]
HERE = Path(__file__).parent
STAGES = ["intent", "schema", "plan", "sql-1", "python-1", "review", "answer", "map"]
COMPARED = ("status", "answer", "message", "transitions", "route")


def settings_for(served: Served) -> Settings:
    return get_settings().model_copy(update={
        "server_api_url": served.api_url, "server_home": served.work / "prefect"})


@pytest.fixture
def api_run(served):
    """The buffer question (SQL, then Python, exported GeoJSON) run through the API (once per
    server: the dashboard's browser test reads the same run)."""
    return shared_run(served, "buffer_topology")


def direct_run(served: Served, question: str) -> dict:
    # a plain Prefect client of the server, as a user's script is: URL and secret
    environment = {**served.environment, "PREFECT_API_URL": served.api_url,
                   "PREFECT_API_AUTH_STRING": served.auth_string or ""}
    completed = subprocess.run(
        [sys.executable, str(HERE / "run_direct.py"), question], env=environment,
        capture_output=True, text=True, timeout=600, check=False)
    assert completed.returncode == 0, completed.stderr[-3000:]
    return json.loads(completed.stdout.strip().splitlines()[-1])["result"]


def test_deployments_are_served_with_the_run_form_parameters(served):
    assert "answer-question" in deployment_names(served.api_url, served.headers)
    deployment = next(d for d in api_json(served, "deployments/filter")
                      if d["name"] == "answer-question")
    assert set(deployment["parameter_openapi_schema"]["properties"]) == {
        "question", "variant", "model", "conversation"}
    assert served.healthy_after_s is not None and served.healthy_after_s > 0


def test_api_run_answers_like_a_direct_run(served, api_run):
    direct = direct_run(served, QUESTIONS["buffer_topology"])
    via_api = api_run.model_dump(mode="json")
    assert via_api["status"] == "answered", via_api["message"]
    assert {k: via_api[k] for k in COMPARED} == {k: direct[k] for k in COMPARED}
    assert via_api["flow_run_id"] and via_api["flow_run_id"] != direct["flow_run_id"]
    assert via_api["run_id"] != direct["run_id"]


def completed_task_runs(served: Served, flow_run_id: str, timeout_s: float = 15.0) -> list:
    """The flow run's task runs once all of STAGES are recorded as completed (or at timeout).

    The server's task-run recorder writes in batches, flushed at least every second.
    """
    deadline = time.monotonic() + timeout_s
    while True:
        runs = api_json(served, "task_runs/filter",
                        {"flow_runs": {"id": {"any_": [flow_run_id]}}})
        done = {run["name"] for run in runs if run["state_type"] == "COMPLETED"}
        if set(STAGES) <= done or time.monotonic() > deadline:
            return runs
        time.sleep(0.2)


def test_flow_run_page_has_the_stages_and_artifacts(served, api_run):
    flow_run_id = api_run.flow_run_id
    runs = completed_task_runs(served, flow_run_id)
    names = {run["name"] for run in runs}
    assert set(STAGES) <= names, names
    assert {run["state_type"] for run in runs} == {"COMPLETED"}
    artifacts = api_json(served, "artifacts/filter",
                         {"artifacts": {"flow_run_id": {"any_": [flow_run_id]}}})
    by_key = {a["key"]: a for a in artifacts if a["key"]}
    # one artifact per stage (each is a request and a database write on the server)
    assert set(by_key) == {"run-intent", "run-plan", "sql-1-sql", "python-1-script",
                           "run-summary"}, sorted(by_key)
    sql = by_key["sql-1-sql"]["data"]
    assert "ST_DWITHIN" not in sql.upper()  # FULL: no spatial SQL
    assert "SELECT" in sql.upper()
    assert "incidents.geojson" in sql and "interstates" in sql
    assert "| " in sql and "|---|" in sql  # the previews as markdown tables
    assert "import" in by_key["python-1-script"]["data"]
    assert "Sandbox run: success" in by_key["python-1-script"]["data"]
    assert "error: `null`" not in by_key["python-1-script"]["data"]  # no error, no error line
    summary = by_key["run-summary"]["data"]
    assert "[map.html](<file://" in summary and "[map.png](<file://" in summary  # links
    assert api_run.message.split()[0] in summary
    assert "data:image/png;base64," in summary
    rows = {line.split("|")[1].strip(): line.split("|")[2:-1]
            for line in summary[summary.index("## Trace"):].splitlines()
            if line.startswith("| ") and not line.startswith("| stage")}
    assert set(STAGES) <= set(rows), rows
    for stage in ("intent", "plan", "sql-1", "python-1", "review", "answer"):
        _runs, wall_ms, _model_ms, prompt_tokens = rows[stage][:4]
        assert int(prompt_tokens) > 0 and float(wall_ms) > 0, rows[stage]
    folder = Path(api_run.artifact_folder)
    assert folder.is_relative_to(served.artifacts)
    assert str(folder / "execution_log.json") in summary
    assert str(folder / "map.html") in summary
    assert (folder / "map.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert "Leaflet 1.9.4" in (folder / "map.html").read_text(encoding="utf-8")
    assert json.loads((folder / "plan-1.json").read_text())["steps"][0]["id"] == "sql-1"
    assert "# Plan 1" in by_key["run-plan"]["data"] and "sql-1" in by_key["run-plan"]["data"]
    assert "# Intent" in by_key["run-intent"]["data"]
    assert json.loads((folder / "intent.json").read_text())["operation"]


def test_ask_via_api_cli_prints_the_answer(served, api_run):
    environment = {**served.environment, "GEOASK_SERVER_API_URL": served.api_url}
    completed = subprocess.run(
        [GEOASK, "ask", QUESTIONS["filter_rank"], "--via-api",
         "--json"], env=environment, capture_output=True, text=True, timeout=600, check=False)
    assert completed.returncode == 0, completed.stderr[-3000:]
    result = json.loads(completed.stdout)
    assert result["status"] == "answered"
    assert len(result["answer"]["data_payload"]["items"]) == 5


def test_unknown_deployment_is_a_clear_error(served):
    with pytest.raises(ServiceError, match="no deployment named 'no-such-thing'"):
        run_deployment_and_wait("no-such-thing", {}, 30, settings=settings_for(served))


def test_failed_run_reports_its_state(served):
    with pytest.raises(ServiceError, match=r"ended FAILED: .*knows only the demo questions"):
        ask_via_api("What is the meaning of life?", settings=settings_for(served))
