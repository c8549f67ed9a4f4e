"""Settings of geoask: language models of the agents (geoask/models/llm.py, issue #6).

One group of :class:`geoask.settings.Settings` (a ``GEOASK_*`` variable per field).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Final, Literal

from pydantic import BaseModel, Field, SecretStr, create_model


@dataclass(frozen=True)
class AgentRole:
    """An agent role: ``GEOASK_MODEL_<NAME>`` picks its model; ``agents/<name>.py`` plays it.

    Attributes:
        name: the role (the pydantic-ai agent's ``name``, the reference model's reply key).
        agent: the agent, as the role's setting describes it.
        question_run: True when a question run uses it (every role but ``catalog``).

    """

    name: str
    agent: str
    question_run: bool = True

    @property
    def setting(self) -> str:
        """The settings field of the role's model (``model_<name>``)."""
        return f"model_{self.name}"


AGENT_ROLES: Final = (
    AgentRole("intent", "the intent agent"),
    AgentRole("planner", "the planner agent"),
    AgentRole("sql", "the SQL agent"),
    AgentRole("compute", "the compute (Python) agent"),
    AgentRole("reviewer", "the reviewer agent"),
    AgentRole("answer", "the answer agent"),
    AgentRole("react", "the ReAct agent of the REACT variant"),
    AgentRole("catalog", "the catalog agent of `geoask catalog draft --describe`",
              question_run=False),
)
"""Every agent role, in the order of a question run: one line here gives a new role its model
setting (``GEOASK_MODEL_<NAME>``, documented from the line) and its place in
:data:`geoask.models.llm.ROLES`; tests ask for its agent and its reference replay."""


class _DefaultModel(BaseModel):
    """The model of every agent (declared first: the settings table keeps this order)."""

    model: str | None = Field(
        default=None,
        description=(
            "Model of every agent, as a pydantic-ai model string (`openai:gpt-4o`, "
            "`anthropic:claude-sonnet-4-5`, `deepseek:deepseek-chat`), as "
            "`openai-compatible:<model name>` for the endpoint GEOASK_OPENAI_BASE_URL "
            "(DashScope/Qwen, vLLM, Ollama, llama.cpp server), or `reference` for the offline "
            "replay model. Unset: no agent can run and `geoask ask` says how to set it."
        ),
    )


OutputMode = Literal["auto", "tool", "native", "prompted"]
"""How an agent asks its model for structured output (pydantic-ai's output modes)."""


class _DefaultOutputMode(_DefaultModel):
    """The output mode of every agent (declared after the models, before the per-role ones)."""

    output_mode: OutputMode = Field(
        default="auto",
        description=(
            "How every agent asks its model for structured output: `tool` (an output tool the "
            "model must call), `native` (a JSON-schema `response_format`, which llama.cpp and "
            "vLLM enforce with a grammar), `prompted` (the schema in the instructions, JSON "
            "read from the text), or `auto`: the backend's default (`tool`). The replay models "
            "always answer with tools; `recorded:` in the mode it was recorded in."
        ),
    )


_RoleModels = create_model(
    "_RoleModels",
    __base__=_DefaultOutputMode,
    **{role.setting: (str | None, Field(default=None, description=(
        f"Model of {role.agent} (overrides GEOASK_MODEL).")))
       for role in AGENT_ROLES},
    **{f"output_mode_{role.name}": (OutputMode | None, Field(default=None, description=(
        f"Output mode of {role.agent} (overrides GEOASK_OUTPUT_MODE).")))
       for role in AGENT_ROLES},
)  # type: ignore[call-overload]


class ModelSettings(_RoleModels):  # type: ignore[misc,valid-type]
    """Language models of the agents (geoask/models/llm.py, issue #6)."""

    catalog_describe_values: int = Field(
        default=8, ge=0, le=50,
        description="Most sampled values per column shown to the catalog agent "
        "(`catalog draft --describe`), each cut to 60 characters.",
    )
    openai_base_url: str | None = Field(
        default=None,
        description=(
            "Base URL of the OpenAI-compatible chat-completions endpoint used by "
            "`openai-compatible:<model>` models, e.g. "
            "https://dashscope.aliyuncs.com/compatible-mode/v1, http://127.0.0.1:8000/v1 (vLLM), "
            "http://127.0.0.1:11434/v1 (Ollama), http://127.0.0.1:8080/v1 (llama.cpp)."
        ),
    )
    openai_api_key: SecretStr | None = Field(
        default=None,
        description=(
            "API key of GEOASK_OPENAI_BASE_URL (optional for local servers); also used by "
            "`openai:` models instead of OPENAI_API_KEY when set."
        ),
    )
    model_context_tokens: int | None = Field(
        default=None, ge=512,
        description=(
            "Context window of the models (tokens). Unset: asked of the server "
            "(llama.cpp's /props, vLLM's /v1/models) or known from the model's name; a prompt "
            "that would not fit fails with one line instead of an HTTP 400."
        ),
    )
    model_temperature: float = Field(
        default=0.0, ge=0.0, le=2.0, description="Sampling temperature of every agent call."
    )
    model_max_output_tokens: int | None = Field(
        default=None, ge=16, le=2**31 - 1,
        description=(
            "Most tokens one model response may have (the request's max_tokens, at most "
            "2147483647: servers read it as a 32-bit integer, and llama.cpp's wrapped a larger "
            "one into an HTTP 400). Unset: the server's limit (llama.cpp's: the rest of the "
            "context window). A small local model that rambles is cut off here, and its cut "
            "output fails like any broken output."
        ),
    )
    model_timeout_s: float = Field(
        default=60.0, gt=0,
        description="Timeout of one HTTP attempt of a model call (s); a retry re-arms it.",
    )
    model_request_timeout_s: float = Field(
        default=300.0, gt=0,
        description=(
            "Deadline of one model call including all its HTTP retries (s); when it passes "
            "the call fails as a transient model error."
        ),
    )
    model_max_retries: int = Field(
        default=2, ge=0, le=10,
        description=(
            "HTTP retries of one model call, for transient failures only (408, 409, 429, 5xx, "
            "dropped connections), with exponential backoff from 0.5 s to 8 s (a server's "
            "Retry-After is honoured up to 120 s); 0 makes a single attempt."
        ),
    )
