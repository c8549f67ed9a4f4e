"""The run_benchmark flow: representative questions end to end, recovery, resume, Dask.

The reference model replays the verified programs; the database, guard, sandbox, review,
answer checks and the evaluator run for real, so a case scores only if the whole pipeline
reproduces its verified answer. The whole 200 run in ``make demo``, not here.
"""

from __future__ import annotations

import json
import os
import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest
import yaml
from pydantic_ai import models

from flows.run_benchmark import benchmark_flow, run_benchmark, task_runner_for
from geoask.bench.loader import DEFAULT_CASES_DIR, load_cases
from geoask.bench.runs import RunKey, parse_variants, pending_runs, read_run, run_keys
from geoask.settings import Settings
from geoask.variants import Variant
from tasks.benchmark import set_services_factory

models.ALLOW_MODEL_REQUESTS = False
CASES = {item.case.id: item.case for item in load_cases(DEFAULT_CASES_DIR, ())}


# --- pure parts ----------------------------------------------------------------------------


def test_variants_parse():
    assert parse_variants("all") == list(Variant)
    assert parse_variants("FULL,no-planner,full") == [Variant.FULL, Variant.NO_PLANNER]


def test_pending_runs_skip_saved_results(tmp_path):
    cases = [CASES["airports-001"], CASES["airports-002"]]
    keys = run_keys("reference", [Variant.FULL, Variant.BASE], 2, cases)
    assert len(keys) == 8
    saved = keys[3].path(tmp_path)
    saved.parent.mkdir(parents=True)
    saved.write_text("{}")
    assert pending_runs(keys, tmp_path) == [k for k in keys if k != keys[3]]


def test_report_scores_every_saved_run(prefect_harness, tmp_path):
    from geoask.answers import FinalAnswer
    from geoask.bench.runs import CaseRun, save_run
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
    from geoask.sql.executor import PostgresSqlRunner
    from sandbox.bubblewrap import BubblewrapSandbox
    from sandbox.runtime import ensure_runtime
    from tasks.services import QuestionServices

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
    for name in ("json", "markdown", "csv", "scores_csv", "chart"):
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
