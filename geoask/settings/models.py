"""Settings of geoask: language models of the agents (geoask/models/llm.py, issue #6).

One group of :class:`geoask.settings.Settings` (a ``GEOASK_*`` variable per field).
"""

from __future__ import annotations

from pydantic import BaseModel, Field, SecretStr


class ModelSettings(BaseModel):
    """Language models of the agents (geoask/models/llm.py, issue #6)."""

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
    model_intent: str | None = Field(
        default=None, description="Model of the intent agent (overrides GEOASK_MODEL)."
    )
    model_planner: str | None = Field(
        default=None, description="Model of the planner agent (overrides GEOASK_MODEL)."
    )
    model_sql: str | None = Field(
        default=None, description="Model of the SQL agent (overrides GEOASK_MODEL)."
    )
    model_compute: str | None = Field(
        default=None, description="Model of the compute (Python) agent (overrides GEOASK_MODEL)."
    )
    model_reviewer: str | None = Field(
        default=None, description="Model of the reviewer agent (overrides GEOASK_MODEL)."
    )
    model_answer: str | None = Field(
        default=None, description="Model of the answer agent (overrides GEOASK_MODEL)."
    )
    model_react: str | None = Field(
        default=None,
        description="Model of the ReAct agent of the REACT variant (overrides GEOASK_MODEL).",
    )
    model_catalog: str | None = Field(
        default=None,
        description="Model of the catalog agent of `geoask catalog draft --describe` "
        "(overrides GEOASK_MODEL).",
    )
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
    model_temperature: float = Field(
        default=0.0, ge=0.0, le=2.0, description="Sampling temperature of every agent call."
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
