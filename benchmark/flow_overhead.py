"""Per-stage overhead of the question flow (excluding model time) and prompt tokens per agent.

Run (the demo database must be up: ``geoask db up && geoask db load``; run as root for the
sandbox)::

    .venv/bin/python benchmark/flow_overhead.py [--repeats 3]

It runs the five "Done when" questions of issue #6 (tests/flow/demo_cases.py) through the
real flow with scripted models, the real PostGIS and the real bubblewrap sandbox, under a
temporary Prefect server, and prints:

- per question and stage: median wall time inside the task minus the time spent in agent
  calls (``agent.run_sync`` with the scripted model, i.e. pydantic-ai plus replay), in ms;
- per question: median time in agent calls (excluded above), the sum of stage times, the
  end-to-end flow time and flow minus stages (Prefect task/flow orchestration, the run
  summary and execution log written after the stages), in ms;
- prompt and completion tokens per agent (shipped local WordPiece tokenizer, counted over
  instructions, messages and output-tool schemas).
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import sys
import time
from collections import defaultdict
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT), str(ROOT / "tests" / "flow")]

import geoask  # noqa: E402,F401  (offline environment before Prefect is imported)


def main() -> None:
    """Run the five questions and print the overhead and token tables."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=3, help="measured runs per question")
    args = parser.parse_args()

    from demo_cases import CASES
    from prefect.logging import disable_run_logger
    from prefect.testing.utilities import prefect_test_harness
    from pydantic_ai import models

    from flows.answer_question import answer_question
    from geoask.catalog.model import load_catalog
    from geoask.embeddings.static import shipped_embedder
    from geoask.models.scripted import ScriptedModel
    from geoask.retrieval.index import InMemorySchemaIndex
    from geoask.retrieval.retriever import RetrievalConfig, SchemaRetriever
    from geoask.run.composition import QuestionServices
    from geoask.run.variants import Variant
    from geoask.settings import get_settings
    from geoask.sql.executor import PostgresSqlRunner
    from sandbox.bubblewrap import BubblewrapSandbox

    models.ALLOW_MODEL_REQUESTS = False
    work = Path("/tmp") / f"geoask-flow-bench-{os.getpid()}"
    work.mkdir(mode=0o755)
    settings = get_settings().model_copy(update={
        "artifact_root": str(work / "artifacts"), "sandbox_work_dir": work / "runs",
        "sandbox_artifacts_url": str(work / "sandbox-artifacts"),
        "retrieval_cache_size": 0})  # measure retrieval, not the LRU cache
    catalog = load_catalog(settings.catalog_path)
    retriever = SchemaRetriever(catalog, InMemorySchemaIndex(), shipped_embedder(),
                                RetrievalConfig.from_settings(settings))
    retriever.ensure_index()
    sandbox = BubblewrapSandbox.from_settings(settings)
    runner = PostgresSqlRunner.from_settings(settings)

    overhead: dict[str, dict[str, list[float]]] = defaultdict(lambda: defaultdict(list))
    totals: dict[str, list[tuple[float, float, float]]] = defaultdict(list)
    tokens: dict[tuple[str, str], tuple[int, int]] = {}
    try:
        with prefect_test_harness(server_startup_timeout=180), disable_run_logger():
            for repeat in range(args.repeats + 1):  # run 0 warms caches and is not counted
                for case in CASES:
                    scripted = ScriptedModel(case.replies())
                    services = QuestionServices(settings=settings, variant=Variant.FULL,
                                                models=scripted.model, sql_runner=runner,
                                                sandbox=sandbox, schema=retriever,
                                                catalog=catalog)
                    begin = time.perf_counter()
                    result = answer_question(case.question, services=services)
                    elapsed = (time.perf_counter() - begin) * 1000
                    if result.status != "answered":
                        raise SystemExit(f"{case.name}: {result.status}: {result.message}")
                    if repeat == 0:
                        continue
                    log = services.recorder.log
                    for stage in log.stages:
                        overhead[case.name][stage.stage].append(stage.overhead_ms)
                    totals[case.name].append((elapsed, sum(s.duration_ms for s in log.stages),
                                              sum(s.model_ms for s in log.stages)))
                    for call in log.model_calls:
                        tokens[(case.name, call.role)] = (call.prompt_tokens,
                                                          call.completion_tokens)
    finally:
        shutil.rmtree(work, ignore_errors=True)

    print(f"median over {args.repeats} runs (after 1 warm-up run), ms")
    stages = ["intent", "schema", "plan", "sql-1", "python-1", "review", "answer"]
    print(f"{'question':<20}" + "".join(f"{s:>10}" for s in stages)
          + f"{'agents':>10}{'stages':>10}{'flow':>10}{'prefect':>10}")
    for case in CASES:
        per_stage = overhead[case.name]
        cells = [f"{statistics.median(per_stage[s]):>10.1f}" if s in per_stage else f"{'-':>10}"
                 for s in stages]
        flow_ms = statistics.median(t[0] for t in totals[case.name])
        stage_ms = statistics.median(t[1] for t in totals[case.name])
        agent_ms = statistics.median(t[2] for t in totals[case.name])
        print(f"{case.name:<20}" + "".join(cells) + f"{agent_ms:>10.1f}"
              + f"{stage_ms:>10.1f}{flow_ms:>10.1f}{flow_ms - stage_ms:>10.1f}")
    roles = ["intent", "planner", "sql", "compute", "reviewer", "answer"]
    print("\nprompt/completion tokens per agent (local WordPiece tokenizer)")
    print(f"{'question':<20}" + "".join(f"{r:>14}" for r in roles))
    for case in CASES:
        cells = [f"{tokens[(case.name, r)][0]:>8}/{tokens[(case.name, r)][1]:<5}"
                 if (case.name, r) in tokens else f"{'-':>14}" for r in roles]
        print(f"{case.name:<20}" + "".join(cells))


if __name__ == "__main__":
    main()
