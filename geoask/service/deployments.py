"""The deployments geoask serves: ``answer-question`` and ``nightly-benchmark``.

``answer-question`` runs the question flow (parameters ``question``, ``model``, ``variant``,
``conversation``);
``nightly-benchmark`` runs ``flows.run_benchmark:run_benchmark`` on the cron schedule
``GEOASK_BENCHMARK_SCHEDULE_CRON`` (UTC) with ``GEOASK_BENCHMARK_SCHEDULE_MODEL``; each
scheduled run measures afresh in a dated folder of its own (:data:`SCHEDULED_PARAMETERS`,
the schedule's own parameters, so a run through the API keeps its ``out_dir``).
:func:`serve_deployments` registers both with the server at ``PREFECT_API_URL`` and runs
their flow runs in subprocesses until interrupted. ``deployments/prefect.yaml`` declares the
same deployments for a process work pool (several machines, ``prefect deploy``).

Served flows are imported by module name (``flows.answer_question``), and their deployments
name them so (a module-path entrypoint): the flow run subprocess imports the same module, so a
pickled result names ``geoask.vocabulary.question_result.QuestionResult``, which a client can
import. A
flow loaded from a file path (``--answer-flow path/to/file.py:flow``) is served by path.
"""

from __future__ import annotations

import importlib
import logging
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any, Final, cast

from prefect import Flow
from prefect.deployments.runner import EntrypointType, RunnerDeployment
from prefect.schedules import Cron
from prefect.utilities.callables import ParameterSchema

from geoask.errors import ServiceError
from geoask.models.served import OFFLINE_MODELS, allowed_models
from geoask.run.variants import Variant
from geoask.settings import Settings, get_settings

ANSWER_DEPLOYMENT: Final = "answer-question"
BENCHMARK_DEPLOYMENT: Final = "nightly-benchmark"
SCHEDULED_PARAMETERS: Final = {"dated": True}
"""What each scheduled benchmark run adds: a new dated out folder, nothing resumed."""
ANSWER_ENTRYPOINT: Final = "flows.answer_question:answer_question"
BENCHMARK_ENTRYPOINT: Final = "flows.run_benchmark:run_benchmark"
ANSWER_PARAMETERS: Final = ("question", "model", "variant", "conversation")
"""Parameters of ``answer-question`` on the UI's run form (``services`` is in-process only)."""
FORM_HELP: Final[dict[str, str]] = {
    "question": "The question about the data, in plain language (or a benchmark case id "
                "with the reference model).",
    "model": "Model of every agent: one the server offers. 'reference' replays the "
             "benchmark's verified programs offline (benchmark questions only).",
    "variant": "Pipeline variant: FULL (the default design), POSTGIS, NO_STCA, NO_PLANNER, "
               "BASE, REACT or PLAN_EXECUTE.",
    "conversation": "A conversation id (letters, digits, _.-): the question is that "
                    "conversation's next turn. Empty: a standalone question.",
}
"""Help text of each run-form parameter (plain text: the dashboard shows no reST markup)."""

REPOSITORY_ROOT: Final = Path(__file__).resolve().parents[2]
logger = logging.getLogger(__name__)


def form_schema(schema: dict[str, Any], keep: tuple[str, ...] | None = None) -> dict[str, Any]:
    """``schema`` (a flow's parameter OpenAPI schema), closed, with only the properties in ``keep``.

    Closed: ``additionalProperties`` is false, so the server refuses a run with a parameter
    the flow does not take (HTTP 409, "Additional properties are not allowed ('x' was
    unexpected)") before it exists, instead of a run that crashes in its process; bounds
    the flow's signature declares (``repeat``) are in the schema too. ``keep`` None keeps all.

    >>> form_schema({"properties": {"a": {}, "b": {}}, "required": ["a", "b"]}, ("a",))
    {'properties': {'a': {}}, 'required': ['a'], 'additionalProperties': False}
    """
    trimmed = dict(schema)
    trimmed["properties"] = {k: v for k, v in schema.get("properties", {}).items()
                             if keep is None or k in keep}
    if "required" in schema:
        trimmed["required"] = [k for k in schema["required"] if keep is None or k in keep]
    trimmed["additionalProperties"] = False
    return trimmed


class ClosedParameterSchema(ParameterSchema):
    """Prefect's parameter schema with ``additionalProperties`` (which its model drops)."""

    additionalProperties: bool = False


def close_schema(deployment: RunnerDeployment, keep: tuple[str, ...] | None = None,
                 form: Callable[[dict[str, Any]], dict[str, Any]] | None = None,
                 ) -> RunnerDeployment:
    """``deployment`` with its parameter schema made :func:`form_schema` (enforced by the API).

    ``form``, if given, shapes the closed schema further (the run form's choices and help).
    """
    schema = deployment._parameter_openapi_schema
    closed = form_schema(schema.model_dump(), keep)
    deployment._parameter_openapi_schema = ClosedParameterSchema.model_validate(
        form(closed) if form is not None else closed)
    deployment.enforce_parameter_schema = True
    return deployment


def nightly_parameters(settings: Settings, accepted: set[str]) -> dict[str, Any]:
    """Default parameters of the nightly benchmark run, restricted to those the flow accepts.

    >>> nightly_parameters(Settings(benchmark_schedule_model="reference"), {"model"})
    {'model': 'reference'}
    """
    wanted: dict[str, Any] = {"model": settings.benchmark_schedule_model, "variant": "FULL"}
    return {k: v for k, v in wanted.items() if k in accepted}


def load_flow(entrypoint: str) -> Flow[..., Any]:
    """The flow at ``entrypoint``: ``package.module:flow`` (imported) or ``path/file.py:flow``.

    Raises:
        ServiceError: the entrypoint is malformed, cannot be imported or is not a flow.

    """
    target, colon, name = entrypoint.rpartition(":")
    if not colon or not target or not name:
        raise ServiceError(f"flow entrypoint {entrypoint!r} must look like package.module:flow "
                           "or path/to/file.py:flow")
    if target.endswith(".py") or "/" in target or "\\" in target:
        from prefect.flows import load_flow_from_entrypoint

        try:
            return load_flow_from_entrypoint(entrypoint, use_placeholder_flow=False)
        except Exception as error:  # Prefect's ScriptError/MissingFlowError, OSError...
            raise ServiceError(f"cannot load flow {entrypoint}: {error}") from None
    try:
        found = getattr(importlib.import_module(target), name)
    except (ImportError, AttributeError) as error:
        raise ServiceError(f"cannot load flow {entrypoint}: {error}") from None
    if not isinstance(found, Flow):
        raise ServiceError(f"{entrypoint} is not a Prefect flow (decorate it with @flow)")
    return found


def entrypoint_type(flow: Flow[..., Any]) -> EntrypointType:
    """``MODULE_PATH`` when ``flow`` is importable by its module's name, else ``FILE_PATH``.

    Prefect loads a flow from a file path as a module named after the file (or
    ``__prefect_loader_<hash>__``), with a search path of its own, that another process cannot
    import by that name: such a flow is served by file path, every other one by module path.
    """
    module = sys.modules.get(getattr(flow, "__module__", "") or "")
    spec = getattr(module, "__spec__", None)
    if module is None or spec is None or spec.name != module.__name__:
        return EntrypointType.FILE_PATH
    loaded_from_file = (hasattr(module, "__path__")
                        and not str(getattr(module, "__file__", "")).endswith("__init__.py"))
    if loaded_from_file or module.__name__.startswith("__prefect_loader_"):
        return EntrypointType.FILE_PATH
    same = getattr(module, flow.fn.__name__, None) is flow
    return EntrypointType.MODULE_PATH if same else EntrypointType.FILE_PATH


def answer_form(schema: dict[str, Any], settings: Settings) -> dict[str, Any]:
    """The run form of ``answer-question``: its parameters, plain help, the allowed choices.

    ``model`` lists the models the server offers (:func:`geoask.models.served.allowed_models`)
    and defaults to the served default (``GEOASK_MODEL``, else the offline ``reference``);
    ``variant`` lists the variants and defaults to ``GEOASK_VARIANT``.
    """
    form = form_schema(schema, ANSWER_PARAMETERS)
    models = allowed_models(settings)
    choices = {"model": (models, served_default_model(settings)),
               "variant": ([v.value for v in Variant], settings.variant)}
    properties = {}
    for name, spec in form["properties"].items():
        spec = {"title": spec.get("title", name), "position": spec.get("position"),
                "description": FORM_HELP[name],
                **({"type": "string"} if name != "conversation" else
                   {"anyOf": [{"type": "string"}, {"type": "null"}], "default": None})}
        if name in choices:
            values, default = choices[name]
            spec.update(enum=values, default=default)
        properties[name] = {k: v for k, v in spec.items() if v is not None or k == "default"}
    return {**form, "properties": properties}


def form_defaults(flow: Flow[..., Any], settings: Settings) -> dict[str, Any]:
    """The deployment's default ``model`` and ``variant``, for the parameters ``flow`` takes."""
    import inspect

    accepted = set(inspect.signature(flow.fn).parameters)
    wanted = {"model": served_default_model(settings), "variant": settings.variant}
    return {name: value for name, value in wanted.items() if name in accepted}


def served_default_model(settings: Settings) -> str:
    """The model a run started with only a question gets: ``GEOASK_MODEL``, else ``reference``."""
    return settings.model or OFFLINE_MODELS[0]


def answer_deployment(flow: Flow[..., Any] | None = None,
                      settings: Settings | None = None) -> RunnerDeployment:
    """The ``answer-question`` deployment of ``flow`` (default: the question flow).

    The flow is named by module path when it is importable so (see :func:`entrypoint_type`);
    its run form is :func:`answer_form` (``settings``: the serving process's, default the
    process-wide settings).
    """
    flow = flow or load_flow(ANSWER_ENTRYPOINT)
    settings = settings or get_settings()
    # to_deployment is sync-compatible: called outside an event loop it returns the deployment.
    deployment = cast(RunnerDeployment, flow.to_deployment(
        name=ANSWER_DEPLOYMENT, tags=["geoask", "question"],
        entrypoint_type=entrypoint_type(flow),
        parameters=form_defaults(flow, settings),
        description="Answer a question about the PostGIS data: intent, schema, plan, SQL/"
                    "Python steps, review, answer. Parameters: question, model, variant, "
                    "conversation.",
    ))
    return close_schema(deployment, ANSWER_PARAMETERS,
                        lambda schema: answer_form(schema, settings))


def benchmark_flow(root: Path = REPOSITORY_ROOT) -> Flow[..., Any] | None:
    """The ``run_benchmark`` flow (imported by module name), or None while it does not exist."""
    module, _, _ = BENCHMARK_ENTRYPOINT.partition(":")
    if not (root / (module.replace(".", "/") + ".py")).is_file():
        return None
    return load_flow(BENCHMARK_ENTRYPOINT)


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
    scheduled = {k: v for k, v in SCHEDULED_PARAMETERS.items() if k in accepted}
    return close_schema(cast(RunnerDeployment, flow.to_deployment(
        name=BENCHMARK_DEPLOYMENT, tags=["geoask", "benchmark"],
        schedules=[Cron(settings.benchmark_schedule_cron, timezone="UTC",
                        parameters=scheduled)],
        parameters=nightly_parameters(settings, accepted),
        entrypoint_type=entrypoint_type(flow),
        description="The benchmark over benchmark/cases, every night "
                    f"({settings.benchmark_schedule_cron} UTC).",
    )))


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
