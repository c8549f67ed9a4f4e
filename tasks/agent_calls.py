"""Calling an agent: ``agent.run_sync(prompt, deps=deps, model=...)``, logged, errors mapped.

The agents live in ``agents/<role>.py`` (module-level ``<role>_agent`` named ``<role>`` and
``prompt(deps)``). Every call is recorded in the execution log (tokens, requests, time,
status) and its transcript - every request and response, the validator's retry messages,
latency, HTTP errors - written to ``calls/<n>-<role>.json`` in the run folder. A transient
model failure (429, 5xx, timeout, dropped connection) is re-raised as is, so that Prefect's
retry condition sees it; any other failure becomes a ``ModelCallError`` (a
``GeoaskError``).
"""

from __future__ import annotations

import time
from typing import TypeVar

from pydantic_ai import Agent, capture_run_messages
from pydantic_ai.usage import UsageLimits

from geoask.errors import GeoaskError
from geoask.models.feedback import broken_rules
from geoask.models.llm import ModelProvider, model_call_error, token_usage
from geoask.models.transcripts import TranscribingModel, output_mode_of
from geoask.records.execution_log import ExecutionRecorder, ModelCall

DepsT = TypeVar("DepsT")
OutputT = TypeVar("OutputT")


def call_agent(
    agent: Agent[DepsT, OutputT], deps: DepsT, prompt: str, *, models: ModelProvider,
    recorder: ExecutionRecorder, stage: str, usage_limits: UsageLimits | None = None,
) -> OutputT:
    """Run ``agent`` on ``deps`` with the user message ``prompt``; its checked output.

    The model is ``models(agent.name)``; the call is logged under ``stage``. The output is
    the agent's success or refusal model, already past its output validator.
    ``usage_limits`` bounds the run's model requests (pydantic-ai's default: 50).

    Raises:
        ValueError: ``agent`` has no name (the role that picks its model).
        GeoaskError: the model is not configured or the call failed for good (a
            ``ModelCallError``/``AgentOutputError`` from ``geoask.models.llm``).

    """
    role = agent.name
    if role is None:
        raise ValueError("call_agent needs a named agent (Agent(name=<role>))")
    model = TranscribingModel(models(role), role)
    number = recorder.next_call
    begin = time.perf_counter()
    with capture_run_messages() as messages:
        try:
            result = agent.run_sync(prompt, deps=deps, model=model, usage_limits=usage_limits)
        except Exception as error:
            elapsed = (time.perf_counter() - begin) * 1000
            translated = error if isinstance(error, GeoaskError) else model_call_error(
                error, role, getattr(model.wrapped, "base_url", None),
                broken=broken_rules(messages))
            shown = f"{type(error).__name__}: {translated}"
            written = recorder.transcript(model.transcript(
                n=number, role=role, stage=stage, messages=messages, duration_ms=elapsed,
                error=shown))
            recorder.model_call(ModelCall(role=role, stage=stage, duration_ms=elapsed,
                                          status="error", error=shown,
                                          output_mode=output_mode_of(model.wrapped),
                                          transcript=written))
            if translated is error:
                raise
            raise translated from error
    elapsed = (time.perf_counter() - begin) * 1000
    usage = token_usage(result.all_messages())
    written = recorder.transcript(model.transcript(
        n=number, role=role, stage=stage, messages=result.all_messages(), duration_ms=elapsed))
    recorder.model_call(ModelCall(
        role=role, stage=stage, prompt_tokens=usage.prompt_tokens,
        completion_tokens=usage.completion_tokens, requests=usage.requests,
        locally_counted=usage.locally_counted, duration_ms=elapsed, status="ok",
        output_mode=output_mode_of(model.wrapped), transcript=written))
    return result.output
