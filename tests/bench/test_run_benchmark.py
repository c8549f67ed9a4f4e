"""The run_benchmark flow: representative questions end to end, recovery, resume, Dask.

The reference model replays the verified programs; the database, guard, sandbox, review,
answer checks and the evaluator run for real, so a case scores only if the whole pipeline
reproduces its verified answer. The whole 200 run in ``make demo``, not here.
"""

from __future__ import annotations

import json
import os
import shutil
import socket
from collections.abc import Iterator
from pathlib import Path
from urllib.parse import urlsplit

import pytest
import yaml
from pydantic_ai import models

from flows.benchmark_case import set_services_factory
from flows.run_benchmark import benchmark_flow, run_benchmark, task_runner_for
from geoask.bench.parameters import parse_variants
from geoask.bench.runs import (
    CaseRun,
    RunKey,
    pending_runs,
    read_run,
    run_keys,
    save_run,
)
from geoask.cases.loader import DEFAULT_CASES_DIR, load_cases
from geoask.run.variants import Variant
from geoask.settings import Settings

models.ALLOW_MODEL_REQUESTS = False
CASES = {item.case.id: item.case for item in load_cases(DEFAULT_CASES_DIR, ())}


# --- pure parts ----------------------------------------------------------------------------


def test_variants_parse():
    assert parse_variants("all") == list(Variant)
    assert parse_variants("FULL,no-planner,full") == [Variant.FULL, Variant.NO_PLANNER]


def saved_run(key: RunKey, **fields) -> CaseRun:
    return CaseRun(case_id=key.case_id, variant=key.variant, repeat=key.repeat,
                   model=key.model, time_s=1.0, **{"status": "failed", **fields})


def test_pending_runs_skip_saved_results_but_redo_infrastructure_failures(tmp_path):
    cases = [CASES["airports-001"], CASES["airports-002"]]
    keys = run_keys("reference", [Variant.FULL, Variant.BASE], 2, cases)
    assert len(keys) == 8
    save_run(saved_run(keys[3]), tmp_path)  # finished (an honest failure counts as finished)
    save_run(saved_run(keys[5], status="error", infrastructure=True), tmp_path)
    half = keys[6].path(tmp_path)
    half.parent.mkdir(parents=True, exist_ok=True)
    half.write_text('{"case_id": "airports-00')  # not a run: written again
    assert pending_runs(keys, tmp_path) == [k for k in keys if k != keys[3]]


def test_report_scores_every_saved_run(prefect_harness, tmp_path):
    from geoask.vocabulary.answers import FinalAnswer
    from tasks.benchmark import report_benchmark

    case = CASES["airports-001"]
    keys = run_keys("reference", [Variant.FULL], 1, [case])
    right = FinalAnswer(answer_type="scalar", data_payload={"value": case.expected.value},
                        summary="s")
    save_run(CaseRun(case_id=case.id, variant="FULL", repeat=0, model="reference",
                     status="answered", answer=right.model_dump(mode="json"), time_s=1.0),
             tmp_path)
    summary = report_benchmark.fn([case], keys, str(tmp_path), {"model": "reference"})
    assert overall(summary)["ssa"] == 1.0
    save_run(CaseRun(case_id=case.id, variant="FULL", repeat=0, model="reference",
                     status="answered", time_s=1.0, answer=right.model_copy(
                         update={"data_payload": {"value": case.expected.value + 1}}
                     ).model_dump(mode="json")), tmp_path)
    summary = report_benchmark.fn([case], keys, str(tmp_path), {"model": "reference"})
    assert overall(summary)["ssa"] == 0.0
    assert "airports-001" in summary["markdown"]


def overall(summary: dict, variant: str = "FULL") -> dict:
    return next(g for g in summary["groups"]
                if (g["variant"], g["dimension"]) == (variant, "overall"))


# --- the flow on the real database and sandbox ----------------------------------------------


@pytest.fixture(scope="module")
def bench_settings(run_settings: Settings) -> Settings:
    return run_settings


@pytest.fixture(scope="module")
def services(database, bench_settings) -> Iterator[None]:
    """Question services on the real PostGIS and sandbox, with an in-memory schema index."""
    if shutil.which("bwrap") is None or os.geteuid() != 0:
        pytest.skip("the sandbox needs bubblewrap and root")
    from geoask.catalog.model import load_catalog
    from geoask.embeddings.static import shipped_embedder
    from geoask.retrieval.index import InMemorySchemaIndex
    from geoask.retrieval.retriever import RetrievalConfig, SchemaRetriever
    from geoask.run.composition import QuestionServices
    from geoask.sql.executor import PostgresSqlRunner
    from sandbox.bubblewrap import BubblewrapSandbox
    from sandbox.runtime import ensure_runtime

    ensure_runtime(bench_settings.sandbox_runtime_path, bench_settings.sandbox_base_python)
    catalog = load_catalog(bench_settings.catalog_path)
    retriever = SchemaRetriever(catalog, InMemorySchemaIndex(), shipped_embedder(),
                                RetrievalConfig.from_settings(bench_settings))
    retriever.ensure_index()
    sandbox = BubblewrapSandbox.from_settings(bench_settings)

    def build(settings: Settings, variant: Variant, models: object) -> QuestionServices:
        return QuestionServices(settings=bench_settings, variant=variant, models=models,
                                sql_runner=PostgresSqlRunner(database.reader_url),
                                sandbox=sandbox, schema=retriever, catalog=catalog)

    set_services_factory(build)
    yield
    set_services_factory(None)


def tasks_file(folder: Path, *case_ids: str) -> str:
    path = folder / "cases.yaml"
    path.write_text(yaml.safe_dump(
        {"cases": [CASES[i].model_dump(mode="json") for i in case_ids]}, sort_keys=False))
    return str(path)


def scores_by_case(summary: dict) -> dict[str, dict]:
    report = json.loads(Path(summary["files"]["json"]).read_text())
    return {score["case_id"]: score for score in report["scores"]}




@pytest.mark.db
@pytest.mark.sandbox
def test_reference_answers_sql_python_and_chained_cases(services, tmp_path):
    # SQL only; SQL then Python; two SQL steps then two chained Python steps (consolidated).
    ids = ("airports-001", "airports-005", "climate-034")
    summary = run_benchmark(model="reference", tasks_file=tasks_file(tmp_path, *ids),
                            out_dir=str(tmp_path / "out"))
    scores = scores_by_case(summary)
    assert {i: scores[i]["ssa"] for i in ids} == dict.fromkeys(ids, True)
    assert scores["airports-001"]["routed_to_sandbox"] is False
    assert scores["climate-034"]["routed_to_sandbox"] is True
    row = overall(summary)
    assert row["ssa"] == 1.0 and row["fepsr"] == 1.0 and row["guardrail_retries"] == 0
    for name in ("json", "markdown", "csv", "scores_csv", "chart", "variants_chart"):
        assert Path(summary["files"][name]).stat().st_size > 0
    run = read_run(RunKey("reference", "FULL", 0, "airports-005"), tmp_path / "out")
    assert run.status == "answered" and run.log and run.log["route"] == "sql_then_python"


@pytest.mark.db
@pytest.mark.sandbox
def test_reference_faulty_recovers(services, tmp_path):
    # wrong column -> database error -> revise; missing field -> repair of the SQL step;
    # distances in degrees -> the reviewer asks to revise the script.
    ids = ("airports-010", "airports-005", "newhaven-020")
    summary = run_benchmark(model="reference-faulty", tasks_file=tasks_file(tmp_path, *ids),
                            out_dir=str(tmp_path / "out"))
    scores = scores_by_case(summary)
    assert {i: scores[i]["ssa"] for i in ids} == dict.fromkeys(ids, True)
    assert all(scores[i]["guardrail_retries"] >= 1 for i in ids)
    assert all(not scores[i]["first_path_success"] for i in ids)
    transitions = {i: read_run(RunKey("reference-faulty", "FULL", 0, i),
                               tmp_path / "out").log["transitions"] for i in ids}
    assert "revise" in transitions["airports-010"]
    assert "repair" in transitions["airports-005"]
    assert "revise" in transitions["newhaven-020"]
    row = overall(summary)
    assert row["fepsr"] == 0.0 and row["recovered"] == 3


@pytest.mark.db
@pytest.mark.sandbox
def test_interrupted_run_resumes_with_the_remaining_questions(services, tmp_path):
    ids = ("airports-001", "airports-002", "airports-003")
    cases, out = tasks_file(tmp_path, *ids), tmp_path / "out"
    first = run_benchmark(model="reference", tasks_file=cases, out_dir=str(out), limit=2)
    assert (first["meta"]["ran"], first["meta"]["resumed"]) == (2, 0)
    done = RunKey("reference", "FULL", 0, "airports-001").path(out)
    finished_at = done.stat().st_mtime_ns
    # "Interrupted" after two questions: the rerun of all three only answers the third.
    second = run_benchmark(model="reference", tasks_file=cases, out_dir=str(out))
    assert (second["meta"]["ran"], second["meta"]["resumed"]) == (1, 2)
    assert done.stat().st_mtime_ns == finished_at
    assert set(scores_by_case(second)) == set(ids)


@pytest.mark.db
@pytest.mark.sandbox
def test_a_dated_run_measures_afresh_in_a_folder_of_its_own(services, tmp_path):
    cases, out = tasks_file(tmp_path, "airports-001"), tmp_path / "out"
    first = run_benchmark(model="reference", tasks_file=cases, out_dir=str(out), dated=True)
    second = run_benchmark(model="reference", tasks_file=cases, out_dir=str(out), dated=True)
    for summary in (first, second):
        assert (summary["meta"]["ran"], summary["meta"]["resumed"]) == (1, 0)
        assert Path(summary["meta"]["out_dir"]).parent == out
        assert (Path(summary["meta"]["out_dir"]) / "report.json").is_file()
    assert first["meta"]["out_dir"] != second["meta"]["out_dir"]
    assert sorted(p.name for p in out.iterdir()) == sorted(
        Path(s["meta"]["out_dir"]).name for s in (first, second))


@pytest.mark.db
@pytest.mark.sandbox
def test_dask_task_runner_on_a_local_cluster(services, tmp_path, bench_settings):
    from prefect_dask import DaskTaskRunner

    settings = bench_settings.model_copy(update={"bench_task_runner": "dask",
                                                 "bench_concurrency": 2})
    assert isinstance(task_runner_for(settings), DaskTaskRunner)
    summary = benchmark_flow(settings)(
        model="reference", tasks_file=tasks_file(tmp_path, "airports-001", "airports-002"),
        out_dir=str(tmp_path / "out"))
    assert summary["meta"]["ran"] == 2
    assert all(score["ssa"] for score in scores_by_case(summary).values())


class StoppingSqlRunner:
    """The real reader-role runner for ``serve`` statements, then one on a closed port.

    As if the database were stopped after that many statements: every later statement
    meets a refused connection (a real psycopg connection failure -> ``DatabaseError``).
    """

    def __init__(self, reader_url: str, serve: int) -> None:
        from geoask.sql.executor import PostgresSqlRunner

        self.up = PostgresSqlRunner(reader_url)
        self.down = PostgresSqlRunner(
            reader_url.replace(f":{urlsplit(reader_url).port}/", f":{closed_port()}/"))
        self.serve = serve

    def run(self, checked):
        self.serve -= 1
        return (self.up if self.serve >= 0 else self.down).run(checked)

    def close(self):
        self.up.close()


def closed_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


@pytest.mark.db
@pytest.mark.sandbox
def test_database_down_mid_run_is_infrastructure_and_redone_on_resume(
        services, database, tmp_path):
    from prefect.task_runners import ThreadPoolTaskRunner

    import flows.benchmark_case as bench_tasks
    import flows.run_benchmark as bench_flow

    ids = ("airports-001", "airports-002", "airports-003", "airports-004")
    cases, out = tasks_file(tmp_path, *ids), tmp_path / "out"
    # each case is one SQL statement: the database "stops" after the first question
    runner = StoppingSqlRunner(database.reader_url, serve=1)
    production = bench_tasks._services_factory
    assert production is not None

    def build(settings, variant, models):
        services = production(settings, variant, models)
        services.sql_runner = runner
        return services

    one_at_a_time = bench_flow.run_benchmark.with_options(
        task_runner=ThreadPoolTaskRunner(max_workers=1))
    set_services_factory(build)
    try:
        first = one_at_a_time(model="reference", tasks_file=cases, out_dir=str(out))
    finally:
        set_services_factory(production)
    scores = scores_by_case(first)
    answered = [i for i in ids if scores[i]["ssa"]]
    down = [i for i in ids if not scores[i]["ssa"]]
    assert len(answered) == 1 and len(down) == 3
    assert {scores[i]["root_cause"] for i in down} == {"infrastructure"}
    assert all("could not connect to the database" in scores[i]["reason"] for i in down)
    assert first["meta"]["infrastructure_failures"] == 3
    assert overall(first)["root_causes"] == {"infrastructure": 3}
    kept = RunKey("reference", "FULL", 0, answered[0]).path(out)
    finished_at = kept.stat().st_mtime_ns

    # the database is back (the production runner): the rerun redoes exactly the three
    second = one_at_a_time(model="reference", tasks_file=cases, out_dir=str(out))
    assert (second["meta"]["ran"], second["meta"]["resumed"]) == (3, 1)
    assert second["meta"]["infrastructure_failures"] == 0
    assert all(score["ssa"] for score in scores_by_case(second).values())
    assert kept.stat().st_mtime_ns == finished_at
