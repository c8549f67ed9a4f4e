"""Output modes: how an agent asks its model for structured output, per role and backend.

pydantic-ai offers three ways for an agent whose output is a typed object (every geoask agent:
``[Success, Refusal]``) to get it from a model:

- ``tool``: the output types are tools the model must call (``tool_choice=required``);
- ``native``: a JSON-schema ``response_format`` (OpenAI's structured outputs; llama.cpp and
  vLLM turn the schema into a grammar the sampler cannot leave);
- ``prompted``: the schema goes into the instructions and the JSON is read from the text.

``GEOASK_OUTPUT_MODE_<ROLE>``, else ``GEOASK_OUTPUT_MODE``, picks it; ``auto`` takes the
backend's default from :data:`BACKEND_OUTPUT_MODES`. The mode is set on the model's pydantic-ai
profile (``default_structured_output_mode``), which every agent's bare output types follow, and
each call's transcript records it.

>>> output_mode_for("sql", Settings(output_mode="prompted", output_mode_sql="native"), "x")
'native'
>>> output_mode_for("intent", Settings(), "openai-compatible:smollm2")
'tool'
"""

from __future__ import annotations

from typing import Final, get_args

from pydantic_ai.models import Model
from pydantic_ai.profiles import ModelProfile, merge_profile

from geoask.settings import Settings
from geoask.settings.models import OutputMode

OUTPUT_MODES: Final = tuple(mode for mode in get_args(OutputMode) if mode != "auto")
"""The output modes a model can be asked to answer in."""

BACKEND_OUTPUT_MODES: Final = {
    "openai-compatible": "tool",
    "openai": "tool",
    "anthropic": "tool",
    "reference": "tool",
}
"""The output mode ``auto`` means, by the model string's prefix (any other backend: ``tool``).

Tool output is every chat-completions server's common ground (llama.cpp's server with a
function-calling chat format, vLLM with a tool parser, Ollama); a server whose grammar-enforced
``response_format`` works better is switched with ``GEOASK_OUTPUT_MODE=native``. The replay
models answer through output tools only, so for them the setting is not read.
"""


def output_mode_for(role: str, settings: Settings, model_name: str) -> str:
    """The output mode of ``role``: its setting, else the global one, else the backend's."""
    chosen = getattr(settings, f"output_mode_{role}", None) or settings.output_mode
    if chosen != "auto":
        return str(chosen)
    backend = model_name.split(":", 1)[0]
    return BACKEND_OUTPUT_MODES.get(backend, "tool")


def with_output_mode(model: Model, mode: str, context_window: int | None = None) -> Model:
    """``model`` answering in ``mode`` (set on its profile, before the profile is first read).

    A native mode also declares JSON-schema output supported, as the user asked for it;
    ``context_window`` (``GEOASK_MODEL_CONTEXT_TOKENS``) replaces what the profile knows.
    """
    extra = ModelProfile(default_structured_output_mode=mode)  # type: ignore[typeddict-item]
    if mode == "native":
        extra["supports_json_schema_output"] = True
    if context_window:
        extra["context_window"] = context_window
    user = model._profile
    if callable(user):
        def layered(default: ModelProfile) -> ModelProfile:
            return merge_profile(user(default), extra)
        model._profile = layered
    else:
        model._profile = merge_profile(user, extra)
    model.__dict__.pop("profile", None)  # a cached profile would hide the change
    return model


__all__ = ["BACKEND_OUTPUT_MODES", "OUTPUT_MODES", "output_mode_for", "with_output_mode"]
