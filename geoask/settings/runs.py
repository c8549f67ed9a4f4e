"""Settings of geoask: the question flow and the benchmark run.

The flow: flows/answer_question.py (issue #6); the benchmark: flows/run_benchmark.py, `geoask
bench` (issue #7).
One group of :class:`geoask.settings.Settings` (a ``GEOASK_*`` variable per field).
"""

from __future__ import annotations

from pathlib import Path
from typing import Literal

from pydantic import BaseModel, Field

from geoask.settings.paths import PACKAGE


class RunSettings(BaseModel):
    """The question flow and the benchmark run."""

    question_max_chars: int = Field(
        default=4096, ge=16, le=1_000_000,
        description="Longest question accepted (characters); a longer one is refused in one "
        "line before any agent call (every agent would be sent it).",
    )
    variant: Literal["FULL", "POSTGIS", "NO_STCA", "NO_PLANNER", "BASE", "REACT",
                     "PLAN_EXECUTE"] = Field(
        default="FULL",
        description=(
            "Pipeline variant: FULL (spatial computation in Python, not SQL), POSTGIS (spatial "
            "SQL allowed), NO_STCA (no Python steps; spatial SQL allowed), NO_PLANNER (one SQL "
            "step, then Python only if the SQL agent asks), BASE (plain relational SQL only); the "
            "baselines REACT (one tool-using agent over a persistent sandbox session) and "
            "PLAN_EXECUTE (plan once, execute, replan on failure; no reviewer)."
        ),
    )
    flow_max_step_attempts: int = Field(
        default=3, ge=1,
        description="Attempts per plan step (the first try plus revisions) before a replan.",
    )
    flow_max_repairs: int = Field(
        default=2, ge=0,
        description="Repairs of an upstream step (dependency backtracking) per question.",
    )
    flow_max_replans: int = Field(
        default=2, ge=0, description="New plans per question after a failed or rejected plan."
    )
    flow_max_step_runs: int = Field(
        default=12, ge=1,
        description="Total step executions (SQL and Python, all attempts) per question.",
    )
    react_max_steps: int = Field(
        default=24, ge=2, le=200,
        description="Step budget of the REACT variant's agent: tool calls plus the final answer "
        "per question; a tool call past it is not run (the agent is told to answer now), and "
        "an agent still without an answer after its output retries fails the run.",
    )
    flow_evidence_rows: int = Field(
        default=50, ge=1,
        description=(
            "Most result rows handed to the reviewer and answer agents as evidence; larger "
            "results are shown as a preview and a row count."
        ),
    )
    artifact_root: str | None = Field(
        default=None,
        description=(
            "fsspec URL of the folder holding one sub-folder per question run (SQL, previews, "
            "scripts, exported files, execution log); default <home>/artifacts."
        ),
    )
    conversation_max_turns: int = Field(
        default=5, ge=1, le=10,
        description=(
            "Earlier turns of a conversation (`geoask ask --conversation ID`) whose summary and "
            "registered artifacts the intent and planner agents see (at most 10)."
        ),
    )

    bench_cases_path: Path = Field(
        default=PACKAGE.resolve().parent / "benchmark" / "cases",
        description=(
            "Case file or folder used when none is named: `geoask bench`, `bench verify` and "
            "`bench fill` without --tasks-file, and the questions the offline reference model "
            "replays (`geoask ask --model reference`); e.g. benchmark/databases/spdata/cases."
        ),
    )
    bench_conversations_path: Path = Field(
        default=PACKAGE.resolve().parent / "benchmark" / "conversations",
        description=(
            "Conversation case file or folder: `geoask bench conversations` and the follow-up "
            "questions the offline reference model replays (`geoask ask --conversation ID "
            "--model reference`)."
        ),
    )
    bench_out_dir: Path | None = Field(
        default=None,
        description=(
            "Folder of benchmark runs (`geoask bench --out`): one result file per "
            "(variant, repeat, case), so an interrupted run resumes; default <home>/bench-runs."
        ),
    )
    bench_task_runner: Literal["threads", "dask"] = Field(
        default="threads",
        description=(
            "Prefect task runner of the benchmark: threads (ThreadPoolTaskRunner) or dask "
            "(DaskTaskRunner from prefect-dask, on GEOASK_BENCH_DASK_ADDRESS or a local cluster)."
        ),
    )
    bench_concurrency: int = Field(
        default=4, ge=1,
        description="Questions answered at once by the threads runner (threads per Dask worker).",
    )
    bench_dask_address: str | None = Field(
        default=None,
        description=(
            "Scheduler address of an existing Dask cluster (tcp://host:8786); its workers need "
            "geoask installed and PREFECT_API_URL set. Unset: a local cluster is started."
        ),
    )
    bench_dask_workers: int = Field(
        default=1, ge=1, description="Workers of the local Dask cluster started for a run."
    )
    bench_bootstrap_samples: int = Field(
        default=2000, ge=100,
        description="Bootstrap resamples of the 95% intervals of SSA, FEPSR and routing "
        "accuracy over cases (percentile bootstrap, seed 0).",
    )
