"""The deployments geoask serves: ``answer-question`` and ``nightly-benchmark``.

``answer-question`` runs the question flow (parameters ``question``, ``model``, ``variant``);
``nightly-benchmark`` runs ``flows/run_benchmark.py:run_benchmark`` on the cron schedule
``GEOASK_BENCHMARK_SCHEDULE_CRON`` (UTC) with ``GEOASK_BENCHMARK_SCHEDULE_MODEL``.
:func:`serve_deployments` registers both with the server at ``PREFECT_API_URL`` and runs
their flow runs in subprocesses until interrupted. ``deployments/prefect.yaml`` declares the
same deployments for a process work pool (several machines, ``prefect deploy``).
"""

from __future__ import annotations

import logging
from pathlib import Path
from typing import Any, Final, cast

from prefect import Flow
from prefect.deployments.runner import RunnerDeployment

from geoask.settings import Settings

ANSWER_DEPLOYMENT: Final = "answer-question"
BENCHMARK_DEPLOYMENT: Final = "nightly-benchmark"
BENCHMARK_ENTRYPOINT: Final = "flows/run_benchmark.py:run_benchmark"
ANSWER_PARAMETERS: Final = ("question", "model", "variant")
"""Parameters of ``answer-question`` on the UI's run form (``services`` is in-process only)."""

REPOSITORY_ROOT: Final = Path(__file__).resolve().parents[2]
logger = logging.getLogger(__name__)


def form_schema(schema: dict[str, Any], keep: tuple[str, ...]) -> dict[str, Any]:
    """``schema`` (a flow's parameter OpenAPI schema) with only the properties in ``keep``.

    >>> form_schema({"properties": {"a": {}, "b": {}}, "required": ["a", "b"]}, ("a",))
    {'properties': {'a': {}}, 'required': ['a']}
    """
    trimmed = dict(schema)
    trimmed["properties"] = {k: v for k, v in schema.get("properties", {}).items() if k in keep}
    if "required" in schema:
        trimmed["required"] = [k for k in schema["required"] if k in keep]
    return trimmed


def nightly_parameters(settings: Settings, accepted: set[str]) -> dict[str, Any]:
    """Default parameters of the nightly benchmark run, restricted to those the flow accepts.

    >>> nightly_parameters(Settings(benchmark_schedule_model="reference"), {"model"})
    {'model': 'reference'}
    """
    wanted: dict[str, Any] = {"model": settings.benchmark_schedule_model, "variant": "FULL"}
    return {k: v for k, v in wanted.items() if k in accepted}


def answer_deployment(flow: Flow[..., Any] | None = None) -> RunnerDeployment:
    """The ``answer-question`` deployment of ``flow`` (default: the question flow)."""
    if flow is None:
        from flows.answer_question import answer_question

        flow = answer_question
    # to_deployment is sync-compatible: called outside an event loop it returns the deployment.
    deployment = cast(RunnerDeployment, flow.to_deployment(
        name=ANSWER_DEPLOYMENT, tags=["geoask", "question"],
        description="Answer a question about the PostGIS data: intent, schema, plan, SQL/"
                    "Python steps, review, answer. Parameters: question, model, variant.",
    ))
    schema = deployment._parameter_openapi_schema
    deployment._parameter_openapi_schema = type(schema).model_validate(
        form_schema(schema.model_dump(), ANSWER_PARAMETERS))
    return deployment


def benchmark_flow(root: Path = REPOSITORY_ROOT) -> Flow[..., Any] | None:
    """The ``run_benchmark`` flow, or None while ``flows/run_benchmark.py`` does not exist."""
    path, _, name = BENCHMARK_ENTRYPOINT.partition(":")
    if not (root / path).is_file():
        return None
    from prefect.flows import load_flow_from_entrypoint

    return load_flow_from_entrypoint(f"{root / path}:{name}")


def benchmark_deployment(settings: Settings,
                         flow: Flow[..., Any] | None = None) -> RunnerDeployment | None:
    """The ``nightly-benchmark`` deployment (cron in UTC), or None when the flow is missing."""
    flow = flow or benchmark_flow()
    if flow is None:
        logger.warning("%s does not exist yet; serving without the nightly benchmark",
                       BENCHMARK_ENTRYPOINT)
        return None
    import inspect

    accepted = set(inspect.signature(flow.fn).parameters)
    return cast(RunnerDeployment, flow.to_deployment(
        name=BENCHMARK_DEPLOYMENT, tags=["geoask", "benchmark"],
        cron=settings.benchmark_schedule_cron,
        parameters=nightly_parameters(settings, accepted),
        description="The benchmark over benchmark/cases, every night "
                    f"({settings.benchmark_schedule_cron} UTC).",
    ))


def serve_deployments(deployments: list[RunnerDeployment], limit: int | None = None,
                      poll_interval_s: int = 1) -> None:
    """Register ``deployments`` and run their flow runs until Ctrl-C/SIGTERM (blocks).

    Talks to the server at the current ``PREFECT_API_URL``, asking for runs to start every
    ``poll_interval_s`` seconds; each run executes in a subprocess; schedules are paused on
    shutdown.
    """
    from prefect import serve

    serve(*deployments, limit=limit, print_starting_message=False,
          query_seconds=poll_interval_s)
