"""The real deployments through the API: `geoask server` as a user starts it, no shim.

A `geoask server` subprocess without ``--answer-flow`` serves ``flows.answer_question`` and
``flows.run_benchmark`` exactly as for a user; a benchmark question is answered with the
offline ``reference`` model and its typed result is read in other processes (this test
process through the client, and `geoask ask --via-api` / `geoask bench --via-api`). Before
issue 16 the served flow was loaded by file path, so its pickled result named a module
``answer_question`` that no client could import.
"""

from __future__ import annotations

import json
import subprocess
from collections.abc import Iterator

import harness
import pytest

from geoask.cases.loader import DEFAULT_CASES_DIR, load_cases
from geoask.errors import ServiceError
from geoask.service.client import ask_via_api
from geoask.settings import Settings, get_settings
from geoask.vocabulary.question_result import QuestionResult

pytestmark = [pytest.mark.db, pytest.mark.sandbox]
CASE = next(item.case for item in load_cases(DEFAULT_CASES_DIR, ["airports-001"]))


@pytest.fixture(scope="module")
def cold_start(database) -> Iterator[tuple[harness.Served, subprocess.CompletedProcess[str]]]:
    """A cold `geoask ask --via-api`: it starts `geoask server` in the background (issue 16).

    That server serves the real answer-question and nightly-benchmark deployments and is
    stopped with `geoask server stop` after the module.
    """
    harness.require_sandbox()
    served, done = harness.start_background(
        ["ask", CASE.question, "--model", "reference", "--via-api", "--json"], "real")
    try:
        yield served, done
    finally:
        stopped = harness.stop_background(served)
        assert stopped.returncode == 0 and "stopped" in stopped.stdout, stopped.stderr


@pytest.fixture(scope="module")
def real_served(cold_start) -> harness.Served:
    """The server the cold start left running."""
    return cold_start[0]


def test_a_cold_ask_via_api_starts_a_postgres_backed_server_and_answers(cold_start):
    served, done = cold_start
    assert done.returncode == 0, done.stderr[-3000:]
    assert json.loads(done.stdout)["answer"]["data_payload"]["value"] == CASE.expected.value
    assert "started the geoask Prefect server in the background" in done.stderr
    assert served.state.mode == "background"
    # its database is its own one in the embedded PostgreSQL cluster, password masked
    assert served.state.database.startswith("postgresql+asyncpg://geoask_owner:***@127.0.0.1:")
    assert served.state.database.endswith("/" + harness.server_database(served.work))
    assert question_runs(served) == 1  # the question's run, recorded there


def warm_ask(served: harness.Served, worker: bool = True) -> subprocess.CompletedProcess[str]:
    """`geoask ask` (no --via-api) with the server's settings; ``worker`` False changes one
    setting, so the server's worker would not run it as this process would."""
    environment = {k: v for k, v in served.environment.items()
                   if k != "GEOASK_SERVER_API_URL"}
    if not worker:
        environment["GEOASK_SERVER_WORKER"] = "false"
    return subprocess.run([harness.GEOASK, "ask", CASE.question, "--model", "reference",
                           "--json"], env=environment, capture_output=True, text=True,
                          timeout=600, check=False)


@pytest.fixture(scope="module")
def warm_asked(real_served) -> tuple[subprocess.CompletedProcess[str], int, int]:
    """One warm `geoask ask` with matching settings, and the server's question runs before
    and after it (read by the reuse test and the worker test)."""
    before = question_runs(real_served)
    done = warm_ask(real_served)
    return done, before, question_runs(real_served)


def test_a_warm_ask_reuses_the_running_server_quietly(warm_asked):
    done, before, after = warm_asked
    assert done.returncode == 0, done.stderr[-3000:]
    assert json.loads(done.stdout)["answer"]["data_payload"]["value"] == CASE.expected.value
    assert "started the geoask Prefect server" not in done.stderr  # reused
    assert "| INFO" not in done.stderr, done.stderr  # Prefect's run log stays off the terminal
    assert after == before + 1  # run on the recorded server


@pytest.mark.parametrize("worker", [True, False])
def test_a_warm_ask_is_answered_by_the_servers_worker_when_settings_match(real_served,
                                                                         warm_asked, worker):
    done = warm_asked[0] if worker else warm_ask(real_served, worker=False)
    assert done.returncode == 0, done.stderr[-3000:]
    result = json.loads(done.stdout)
    assert result["answer"]["data_payload"]["value"] == CASE.expected.value
    run = harness.api_json(real_served, "flow_runs/filter",
                           {"flow_runs": {"id": {"any_": [result["flow_run_id"]]}}})
    assert isinstance(run, list) and len(run) == 1
    server_tag = f"geoask-process-{real_served.state.pid}-"
    assert any(tag.startswith(server_tag) for tag in run[0]["tags"]) is worker, run[0]["tags"]


def question_runs(served: harness.Served) -> int:
    """Flow runs of answer-question on ``served``'s server."""
    count = harness.api_json(served, "flow_runs/count",
                             {"flows": {"name": {"any_": ["answer-question"]}}})
    assert isinstance(count, int)
    return count


def settings_for(served: harness.Served) -> Settings:
    return get_settings().model_copy(update={
        "server_api_url": served.api_url, "server_home": served.work / "prefect"})


def environment_for(served: harness.Served) -> dict[str, str]:
    return {**served.environment, "GEOASK_SERVER_API_URL": served.api_url}


def test_client_reads_the_real_flows_typed_result(real_served):
    result = ask_via_api(CASE.question, model="reference", settings=settings_for(real_served))
    assert isinstance(result, QuestionResult)
    assert type(result).__module__ == "geoask.vocabulary.question_result"
    assert result.status == "answered", result.message
    assert result.answer is not None
    assert result.answer.data_payload["value"] == CASE.expected.value
    assert result.flow_run_id


def test_ask_via_api_cli_prints_the_real_flows_answer(real_served):
    completed = subprocess.run(
        [harness.GEOASK, "ask", CASE.question, "--model", "reference", "--via-api", "--json"],
        env=environment_for(real_served), capture_output=True, text=True, timeout=600,
        check=False)
    assert completed.returncode == 0, completed.stderr[-3000:]
    result = json.loads(completed.stdout)
    assert result["status"] == "answered"
    assert result["answer"]["data_payload"]["value"] == CASE.expected.value


@pytest.mark.parametrize("model", [
    "openai-compatible:attacker-model", "openai:gpt-4o", "http://attacker.example/v1",
])
def test_a_model_the_server_does_not_offer_is_refused(real_served, model):
    # the run form lists the offered models: the API refuses the run before it exists
    with pytest.raises(ServiceError, match=r"HTTP 409.*'model'.* is not one of \['reference'"):
        ask_via_api(CASE.question, model=model, settings=settings_for(real_served))


def test_ask_via_api_cli_refusal_is_one_line(real_served):
    completed = subprocess.run(
        [harness.GEOASK, "ask", CASE.question, "--model", "openai-compatible:x", "--via-api"],
        env=environment_for(real_served), capture_output=True, text=True, timeout=600,
        check=False)
    assert completed.returncode == 1
    errors = [line for line in completed.stderr.splitlines() if line.startswith("error:")]
    assert len(errors) == 1 and "is not one of ['reference'" in errors[0], completed.stderr
    assert "Traceback" not in completed.stderr


def test_bench_via_api_runs_the_nightly_deployment(real_served, tmp_path):
    out = real_served.work / "bench-runs" / tmp_path.name  # where the server keeps runs
    completed = subprocess.run(
        [harness.GEOASK, "bench", "--via-api", "--tasks-file",
         str(DEFAULT_CASES_DIR / "airports.yaml"), "--limit", "1", "--out", str(out)],
        env=environment_for(real_served), capture_output=True, text=True, timeout=900,
        check=False)
    assert completed.returncode == 0, completed.stderr[-3000:]
    assert f"report: {out}/report.md" in completed.stdout
    assert json.loads((out / "report.json").read_text())


@pytest.mark.parametrize("where", ["out", "tasks-file"])
def test_bench_via_api_refuses_paths_outside_the_servers_folders(real_served, tmp_path, where):
    # Attack finding 2: the deployment read any file (into its error) and wrote anywhere.
    copy = tmp_path / "airports.yaml"
    copy.write_text((DEFAULT_CASES_DIR / "airports.yaml").read_text())
    paths = {"out": ["--out", str(tmp_path / "elsewhere")],
             "tasks-file": ["--tasks-file", str(copy), "--out",
                            str(real_served.work / "bench-runs" / tmp_path.name)]}[where]
    completed = subprocess.run(
        [harness.GEOASK, "bench", "--via-api", "--limit", "1", *paths],
        env=environment_for(real_served), capture_output=True, text=True, timeout=600,
        check=False)
    assert completed.returncode == 1
    assert "outside the folders this server serves" in completed.stderr
    assert not (tmp_path / "elsewhere").exists()
    assert "Traceback" not in completed.stderr


def test_bench_via_api_refuses_a_model_the_server_does_not_offer(real_served, tmp_path):
    completed = subprocess.run(
        [harness.GEOASK, "bench", "--via-api", "--model", "openai-compatible:x", "--limit", "1",
         "--out", str(tmp_path)],
        env=environment_for(real_served), capture_output=True, text=True, timeout=600,
        check=False)
    assert completed.returncode == 1
    assert "not offered by this server" in completed.stderr
    assert "Traceback" not in completed.stderr
