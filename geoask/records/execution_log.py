"""The execution log of one question, saved as ``execution_log.json`` with the run's artifacts.

It records stage timings (wall time and the part spent in model calls, ms), every model call
(role, prompt and completion tokens, requests, status), a tool trace (guard, executor, export,
sandbox, retriever: one entry per use with its status), the failed-call count, the
guardrail-retry count (revise/repair/replan transitions), the transitions, the route (SQL only,
or SQL then Python) and the final answer.
"""

from __future__ import annotations

import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from datetime import UTC, datetime
from typing import Any

from pydantic import BaseModel, Field, PrivateAttr

from geoask.models.transcripts import CALLS_FOLDER, CallTranscript, redact
from geoask.records.run_artifacts import ArtifactStore


class StageTiming(BaseModel):
    """One stage run (``intent``, ``schema``, ``plan``, ``sql-1``, ``python-1``, ...).

    ``duration_ms`` is wall time; ``model_ms`` the part spent inside model calls, so
    ``duration_ms - model_ms`` is geoask's own overhead.
    """

    stage: str
    started_at: str
    duration_ms: float
    model_ms: float = 0.0
    status: str = "ok"

    @property
    def overhead_ms(self) -> float:
        """Wall time not spent in model calls (ms)."""
        return max(0.0, self.duration_ms - self.model_ms)


class ModelCall(BaseModel):
    """One agent run: tokens from the backend's usage (or the local tokenizer where none)."""

    role: str
    stage: str
    prompt_tokens: int = 0
    completion_tokens: int = 0
    requests: int = 0
    locally_counted: bool = False
    duration_ms: float
    status: str = Field(description="'ok' or 'error'.")
    error: str | None = None
    output_mode: str = Field(default="tool", description="'tool', 'native' or 'prompted'.")
    transcript: str | None = Field(
        default=None,
        description="The call's transcript in the run folder (calls/<n>-<role>.json).")


class ToolTraceEntry(BaseModel):
    """One use of a tool (``guard``, ``executor``, ``export``, ``sandbox``, ``retriever``...)."""

    stage: str
    tool: str
    status: str = Field(description="'ok', 'rejected' or 'error'.")
    detail: str = ""
    duration_ms: float = 0.0


class ExecutionLog(BaseModel):
    """Everything measured about one question run."""

    run_id: str
    question: str
    variant: str
    started_at: str = Field(default_factory=lambda: datetime.now(UTC).isoformat())
    stages: list[StageTiming] = Field(default_factory=list)
    model_calls: list[ModelCall] = Field(default_factory=list)
    tool_trace: list[ToolTraceEntry] = Field(default_factory=list)
    transitions: list[str] = Field(default_factory=list)
    guardrail_retries: int = Field(default=0, description="revise + repair + replan transitions.")
    route: str = "sql_only"
    outcome: str = "running"
    final_answer: dict[str, Any] | None = None
    artifact_folder: str = ""
    _secrets: tuple[str, ...] = PrivateAttr(default=())

    @property
    def failed_calls(self) -> int:
        """Model calls and tool uses that did not succeed."""
        return (sum(call.status != "ok" for call in self.model_calls)
                + sum(entry.status != "ok" for entry in self.tool_trace))

    def to_json_dict(self) -> dict[str, Any]:
        """The log as JSON-ready data, with ``failed_calls`` included, redacted as transcripts are.

        Every text goes through :func:`geoask.models.transcripts.redact` with the recorder's
        secrets, so an error naming ``http://user:password@host`` keeps no password.
        """
        data = self.model_dump(mode="json")
        data["failed_calls"] = self.failed_calls
        redacted: dict[str, Any] = _redacted(data, self._secrets)
        return redacted

    def keep_secret(self, secrets: Sequence[str]) -> None:
        """Redact ``secrets`` (besides the environment's) wherever the log is written."""
        self._secrets = tuple(secrets)


def _redacted(value: Any, secrets: Sequence[str]) -> Any:
    """``value`` (JSON-ready data) with every string passed through ``redact``."""
    if isinstance(value, str):
        return redact(value, secrets)
    if isinstance(value, dict):
        return {key: _redacted(item, secrets) for key, item in value.items()}
    if isinstance(value, list):
        return [_redacted(item, secrets) for item in value]
    return value


class ExecutionRecorder:
    """Collects an :class:`ExecutionLog` while the flow runs (one per question, in-process)."""

    def __init__(self, run_id: str, question: str, variant: str, *,
                 store: ArtifactStore | None = None, secrets: Sequence[str] = ()) -> None:
        """Start the log; ``store`` keeps the call transcripts, ``secrets`` are never written."""
        self.log = ExecutionLog(run_id=run_id, question=question, variant=variant)
        self.log.keep_secret(secrets)
        self._stage_model_ms: dict[str, float] = {}
        self._store = store
        self._secrets = tuple(secrets)
        self.transcripts: list[CallTranscript] = []
        """The run's call transcripts as written (secrets redacted), in call order."""

    @property
    def next_call(self) -> int:
        """The number the next agent call's transcript gets (1, 2, ...)."""
        return len(self.log.model_calls) + 1

    def transcript(self, transcript: CallTranscript) -> str | None:
        """Keep ``transcript`` and write it to ``calls/<n>-<role>.json``, secrets redacted.

        Returns the file's path in the run folder, None when the run has no artifact folder.
        """
        text = transcript.to_json(self._secrets)
        self.transcripts.append(CallTranscript.model_validate_json(text))
        if self._store is None:
            return None
        relative = f"{CALLS_FOLDER}/{transcript.file_name}"
        self._store.write_text(relative, text)
        return relative

    @contextmanager
    def stage(self, name: str) -> Iterator[None]:
        """Time the stage ``name``; model time recorded inside it is subtracted as model_ms."""
        started = datetime.now(UTC).isoformat()
        begin = time.perf_counter()
        self._stage_model_ms[name] = 0.0
        status = "ok"
        try:
            yield
        except BaseException:
            status = "error"
            raise
        finally:
            self.log.stages.append(StageTiming(
                stage=name, started_at=started,
                duration_ms=(time.perf_counter() - begin) * 1000,
                model_ms=self._stage_model_ms.pop(name, 0.0), status=status,
            ))

    def model_call(self, call: ModelCall) -> None:
        """Record an agent run and add its time to its stage's model time."""
        self.log.model_calls.append(call)
        if call.stage in self._stage_model_ms:
            self._stage_model_ms[call.stage] += call.duration_ms

    def tool(self, stage: str, tool: str, status: str, detail: str = "",
             duration_ms: float = 0.0) -> None:
        """Record one tool use."""
        self.log.tool_trace.append(ToolTraceEntry(
            stage=stage, tool=tool, status=status, detail=detail[:500], duration_ms=duration_ms))
