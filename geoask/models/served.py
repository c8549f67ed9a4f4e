"""Which models and files a flow run started through the Prefect API may ask for.

A deployment run's parameters come from whoever can reach the API (``--via-api``, the
dashboard's run form, a schedule). Its ``model`` parameter may only name the offline replay
models or a model the serving process is configured with, so a caller cannot point the run's
agents at a model (and an endpoint or base URL) of its own choosing; the endpoint of an
``openai-compatible:`` model is always the serving process's ``GEOASK_OPENAI_BASE_URL``.
Likewise a benchmark run's case file and output folder must lie where the server keeps them
(:func:`check_served_paths`), so a caller can neither read nor write other server files.

>>> allowed_models(Settings(model="openai:gpt-4o", server_models="deepseek:deepseek-chat, "))
['reference', 'reference-faulty', 'openai:gpt-4o', 'deepseek:deepseek-chat']
>>> check_served_model(None, Settings())
>>> check_served_model("openai-compatible:x", Settings())  # doctest: +ELLIPSIS
Traceback (most recent call last):
...
geoask.errors.ConfigurationError: model 'openai-compatible:x' is not offered by this server; ...
"""

from __future__ import annotations

from pathlib import Path

from geoask.errors import ConfigurationError
from geoask.models.llm import ROLES
from geoask.settings import Settings

OFFLINE_MODELS = ("reference", "reference-faulty")
"""The offline replay models (``geoask.models.reference``): no endpoint, always allowed."""


def allowed_models(settings: Settings) -> list[str]:
    """The model strings a deployment run may name, in order, without duplicates.

    The offline models, ``GEOASK_MODEL``, every ``GEOASK_MODEL_<ROLE>``,
    ``GEOASK_BENCHMARK_SCHEDULE_MODEL`` and the entries of ``GEOASK_SERVER_MODELS``.
    """
    configured = [settings.model, *(getattr(settings, f"model_{role}") for role in ROLES),
                  settings.benchmark_schedule_model,
                  *(settings.server_models or "").split(",")]
    allowed: list[str] = []
    for name in (*OFFLINE_MODELS, *configured):
        name = (name or "").strip()
        if name and name not in allowed:
            allowed.append(name)
    return allowed


def check_served_model(model: str | None, settings: Settings) -> None:
    """Refuse a deployment run's ``model`` parameter that the server does not offer.

    Args:
        model: the run's ``model`` parameter; None (or blank) leaves the server's own choice.
        settings: the serving process's settings.

    Raises:
        ConfigurationError: ``model`` is not a string or not one of :func:`allowed_models`
            (the message lists the choices, never the caller's endpoint).

    """
    if model is None or (isinstance(model, str) and not model.strip()):
        return
    allowed = allowed_models(settings)
    if isinstance(model, str) and model in allowed:
        return
    raise ConfigurationError(
        f"model {str(model)[:100]!r} is not offered by this server; a run through the API may "
        f"use {' or '.join(allowed)} (or leave the model unset for the server's own); a "
        "server adds models with GEOASK_MODEL or GEOASK_SERVER_MODELS")


BENCHMARK_FOLDER = Path(__file__).resolve().parents[2] / "benchmark"
"""The checkout's benchmark folder: its case files may always be named."""


def check_served_paths(tasks_file: str | None, out_dir: str | None, settings: Settings) -> None:
    """Refuse a deployment run's case file or output folder outside the server's own folders.

    Args:
        tasks_file: the run's ``tasks_file``: must resolve (symlinks, ``..``) inside the
            checkout's ``benchmark/`` folder or ``GEOASK_BENCH_CASES_PATH`` (its folder when it
            names a file); None means the default case set.
        out_dir: the run's ``out_dir``: must resolve inside ``GEOASK_BENCH_OUT_DIR``
            (default ``<home>/bench-runs``); None means the default.
        settings: the serving process's settings.

    Raises:
        ConfigurationError: a path lies elsewhere; the message names the allowed folders,
            never anything read from the path.

    """
    cases = settings.bench_cases_path
    case_roots = [BENCHMARK_FOLDER, cases if cases.is_dir() else cases.parent]
    for value, roots, what in ((tasks_file, case_roots, "tasks_file"),
                               (out_dir, [settings.bench_out_path], "out_dir")):
        if value is None:
            continue
        path = Path(str(value)).resolve()
        if not any(path.is_relative_to(root.resolve()) for root in roots):
            raise ConfigurationError(
                f"{what} {str(value)[:200]!r} is outside the folders this server serves; a run "
                f"through the API may use {' or '.join(str(root) for root in roots)}")


def in_deployment_run() -> bool:
    """True inside a flow run that was started from a deployment (API, UI, schedule)."""
    from prefect.context import FlowRunContext

    context = FlowRunContext.get()
    return bool(context and context.flow_run and context.flow_run.deployment_id)
