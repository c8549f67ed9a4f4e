"""Calling the six agents: ``<role>_agent.run_sync(prompt(deps), deps=deps, model=...)``, logged.

The agents live in ``agents/<role>.py`` (module-level ``<role>_agent`` and ``prompt(deps)``).
Every call is recorded in the execution log (tokens, requests, time, status). A transient
model failure (429, 5xx, timeout, dropped connection) is re-raised as is, so that Prefect's
retry condition sees it; any other failure becomes a ``ModelCallError`` (a ``GeoaskError``).
"""

from __future__ import annotations

import importlib
import time
from collections.abc import Callable
from typing import Any

from pydantic_ai.models import Model

from geoask.errors import GeoaskError
from geoask.execution_log import ExecutionRecorder, ModelCall
from geoask.retry import is_transient

ModelProvider = Callable[[str], Model]
"""role -> the pydantic-ai model of that agent (``geoask.llm.model_for`` bound to settings)."""


def call_agent(
    role: str, deps: Any, *, models: ModelProvider, recorder: ExecutionRecorder, stage: str
) -> Any:
    """Run agent ``role`` on ``deps`` and return its typed output (success or refusal).

    Raises:
        GeoaskError: the model is not configured or the call failed for good (a
            ``ModelCallError``/``AgentOutputError`` from ``geoask.llm``).
        Exception: a transient model error, unchanged, for Prefect to retry.

    """
    module = importlib.import_module(f"agents.{role}")
    agent = getattr(module, f"{role}_agent")
    render: Callable[[Any], str] = module.prompt
    model = models(role)
    begin = time.perf_counter()
    try:
        result = agent.run_sync(render(deps), deps=deps, model=model)
    except Exception as error:
        elapsed = (time.perf_counter() - begin) * 1000
        recorder.model_call(ModelCall(role=role, stage=stage, duration_ms=elapsed,
                                      status="error", error=f"{type(error).__name__}: {error}"))
        if is_transient(error) or isinstance(error, GeoaskError):
            raise
        raise _translate(error, role) from error
    elapsed = (time.perf_counter() - begin) * 1000
    prompt_tokens, completion_tokens, requests, local = _usage(result)
    recorder.model_call(ModelCall(
        role=role, stage=stage, prompt_tokens=prompt_tokens, completion_tokens=completion_tokens,
        requests=requests, locally_counted=local, duration_ms=elapsed, status="ok"))
    return result.output


def _usage(result: Any) -> tuple[int, int, int, bool]:
    from geoask.llm import token_usage

    usage = token_usage(result.all_messages())
    return usage.prompt_tokens, usage.completion_tokens, usage.requests, usage.locally_counted


def _translate(error: Exception, role: str) -> GeoaskError:
    from geoask.llm import model_call_error

    translated: GeoaskError = model_call_error(error, role)
    return translated
