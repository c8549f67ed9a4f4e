"""Model backends of the agents: one factory, per-role overrides, transient-only retries.

``model_for(role, settings)`` turns the settings into a pydantic-ai ``Model`` for one agent:

- ``GEOASK_MODEL_<ROLE>`` if set, else ``GEOASK_MODEL``;
- a pydantic-ai model string (``openai:gpt-4o``, ``anthropic:claude-sonnet-4-5``,
  ``deepseek:deepseek-chat``: the provider's own key variable applies, e.g. ``ANTHROPIC_API_KEY``);
- ``openai-compatible:<model name>``: any OpenAI-compatible chat-completions endpoint at
  ``GEOASK_OPENAI_BASE_URL`` with ``GEOASK_OPENAI_API_KEY`` (DashScope/Qwen, vLLM, Ollama,
  llama.cpp server);
- ``reference``: the offline replay model, which the caller injects (``reference_model=``);
- ``recorded:<run folder or run id>``: a run replayed from its call transcripts
  (:mod:`geoask.models.recorded`).

Each model answers in its role's output mode (:mod:`geoask.models.output_modes`).

Every model gets the same request settings: temperature (default 0), a per-attempt timeout, a
deadline for the whole call and an HTTP retry bound. Retries are done by the provider SDK and
only for transient failures (408, 409, 429, 5xx, dropped connections) with exponential backoff
(0.5 s doubling to 8 s, a server's ``Retry-After`` honoured); everything else fails at once.

:func:`model_call_error` turns pydantic-ai's exceptions into a :class:`ModelCallError` a user
can read; :func:`token_usage` (re-exported from :mod:`geoask.models.tokens`) gives
prompt/completion tokens of a run, counted with the shipped local tokenizer where a backend
reports none.

Importing this module switches off pydantic-ai's first-run banner (``pydantic_ai.BANNER_ENABLED``:
Logfire set-up advice for people writing pydantic-ai code, printed to a terminal's stderr).
geoask runs agents on its users' behalf; pydantic-ai leaves the banner out for a run an installed
package starts, but ``make setup`` installs geoask editable, from its source tree, so ``geoask
bench`` in a terminal printed it. Every agent's model comes from here, before its first run.
"""

from __future__ import annotations

import socket
from collections.abc import Callable
from typing import Final

import pydantic_ai
from pydantic_ai import exceptions as ai_errors
from pydantic_ai.models import Model
from pydantic_ai.settings import ModelSettings, merge_model_settings

from geoask.errors import AgentOutputError, ConfigurationError, ModelCallError
from geoask.models.output_modes import output_mode_for, with_output_mode
from geoask.models.recorded import RecordedModel
from geoask.models.recordings import RECORDED_PREFIX, local_artifact_root, run_folder
from geoask.models.tokens import TokenUsage, token_usage
from geoask.models.transcripts import OPENAI_COMPATIBLE_PROVIDER_NAME, redact
from geoask.settings import Settings
from geoask.settings.models import AGENT_ROLES

pydantic_ai.BANNER_ENABLED = False  # see the module docstring

QUESTION_ROLES: Final = tuple(role.name for role in AGENT_ROLES if role.question_run)
"""The agents of a question run (``react`` only in the REACT variant)."""
ROLES: Final = tuple(role.name for role in AGENT_ROLES)
"""Every agent role (:data:`geoask.settings.models.AGENT_ROLES`): the question run's and
``catalog`` (``geoask catalog draft --describe``)."""
OPENAI_COMPATIBLE_PREFIX: Final = "openai-compatible:"
REFERENCE_MODEL: Final = "reference"

ModelProvider = Callable[[str], Model]
"""Agent role (one of :data:`ROLES`) -> the pydantic-ai model that plays it."""

_HOW_TO_CONFIGURE = (
    "set GEOASK_MODEL to a pydantic-ai model string (e.g. openai:gpt-4o with OPENAI_API_KEY, "
    "anthropic:claude-sonnet-4-5 with ANTHROPIC_API_KEY, deepseek:deepseek-chat with "
    "DEEPSEEK_API_KEY), or to openai-compatible:<model name> together with "
    "GEOASK_OPENAI_BASE_URL (and GEOASK_OPENAI_API_KEY if the server needs one) for "
    "DashScope/Qwen, vLLM, Ollama or a llama.cpp server; GEOASK_MODEL_<ROLE> overrides one "
    "agent. To try geoask offline, pass --model reference (model=\"reference\" in Python): it "
    "replays the benchmark's verified programs for the benchmark questions"
)


def model_name_for(role: str, settings: Settings) -> str:
    """The model string configured for ``role``: ``GEOASK_MODEL_<ROLE>``, else ``GEOASK_MODEL``.

    Raises:
        ConfigurationError: ``role`` is not one of :data:`ROLES`, or no model is configured
            (the message says how to configure one).

    """
    if role not in ROLES:
        raise ConfigurationError(f"unknown agent role {role!r}; expected one of {', '.join(ROLES)}")
    name = getattr(settings, f"model_{role}") or settings.model
    if not name or not name.strip():
        raise ConfigurationError(f"no language model is configured for the {role} agent: "
                                 f"{_HOW_TO_CONFIGURE}.")
    return str(name).strip()


def model_settings_for(settings: Settings) -> ModelSettings:
    """Request settings shared by every agent call.

    Temperature, timeouts (s), HTTP retries, and the response's token limit when one is set.
    """
    shared = ModelSettings(
        temperature=settings.model_temperature,
        timeout=settings.model_timeout_s,
        request_timeout=settings.model_request_timeout_s,
        max_retries=settings.model_max_retries,
    )
    if settings.model_max_output_tokens is not None:
        shared["max_tokens"] = settings.model_max_output_tokens
    return shared


def model_for(role: str, settings: Settings, *, reference_model: Model | None = None) -> Model:
    """Build the pydantic-ai ``Model`` of agent ``role`` from ``settings``.

    Args:
        role: one of :data:`ROLES`.
        settings: the geoask settings (model names, endpoint, request settings).
        reference_model: the offline replay model, used when the configured name is
            ``reference``; it is returned as given (its own settings apply).

    Raises:
        ConfigurationError: no model configured, an unknown or unusable model string, a
            missing endpoint, key or provider package (the message names what to set).

    """
    name = model_name_for(role, settings)
    if name == REFERENCE_MODEL:
        if reference_model is None:
            raise ConfigurationError(
                f"GEOASK_MODEL{'_' + role.upper() if getattr(settings, f'model_{role}') else ''}"
                "=reference names the offline replay model, but none was supplied to this run; "
                "choose another model or run through a command that provides the reference model"
            )
        return reference_model
    if name.startswith(RECORDED_PREFIX):
        folder = run_folder(name.removeprefix(RECORDED_PREFIX), local_artifact_root(settings))
        return RecordedModel(folder, role)
    request_settings = model_settings_for(settings)
    if name.startswith(OPENAI_COMPATIBLE_PREFIX):
        model = _openai_compatible_model(name.removeprefix(OPENAI_COMPATIBLE_PREFIX), settings,
                                         request_settings)
    elif name.startswith("openai:"):
        model = _openai_model(name.removeprefix("openai:"), settings, request_settings)
    else:
        model = _inferred_model(name, request_settings)
    return with_output_mode(model, output_mode_for(role, settings, name),
                            settings.model_context_tokens)


def _openai_compatible_model(
    model_name: str, settings: Settings, request_settings: ModelSettings
) -> Model:
    from pydantic_ai.models.openai import OpenAIChatModel
    from pydantic_ai.providers.openai_compatible import OpenAICompatibleProvider

    if not model_name:
        raise ConfigurationError(
            "openai-compatible: needs a model name after the colon, e.g. "
            "openai-compatible:qwen-plus or openai-compatible:llama3.1:8b")
    if not settings.openai_base_url:
        raise ConfigurationError(
            f"model openai-compatible:{model_name} needs GEOASK_OPENAI_BASE_URL, the server's "
            "OpenAI-compatible base URL (e.g. http://127.0.0.1:11434/v1 for Ollama)")
    key = settings.openai_api_key.get_secret_value() if settings.openai_api_key else None
    provider = OpenAICompatibleProvider(
        OPENAI_COMPATIBLE_PROVIDER_NAME, base_url=settings.openai_base_url, api_key=key)
    return OpenAIChatModel(model_name, provider=provider, settings=request_settings)


def _openai_model(model_name: str, settings: Settings, request_settings: ModelSettings) -> Model:
    from pydantic_ai.models.openai import OpenAIChatModel
    from pydantic_ai.providers.openai import OpenAIProvider

    key = settings.openai_api_key.get_secret_value() if settings.openai_api_key else None
    try:
        provider = OpenAIProvider(api_key=key)
    except ai_errors.UserError as error:
        raise ConfigurationError(
            f"model openai:{model_name} needs an API key: set OPENAI_API_KEY or "
            f"GEOASK_OPENAI_API_KEY ({error})") from None
    return OpenAIChatModel(model_name, provider=provider, settings=request_settings)


def _inferred_model(name: str, request_settings: ModelSettings) -> Model:
    from pydantic_ai.models import infer_model

    try:
        model = infer_model(name)
    except ImportError as error:
        provider = name.split(":", 1)[0]
        raise ConfigurationError(
            f"model {name!r} needs the {provider} client library, which is not installed: "
            f"pip install 'pydantic-ai-slim[{provider}]' ({error})") from None
    except ai_errors.UserError as error:
        raise ConfigurationError(f"model {name!r} cannot be used: {error}; {_HOW_TO_CONFIGURE}"
                                 ) from None
    # infer_model() takes no settings, so they are set as the model's defaults here (the same
    # attribute Model.__init__(settings=...) fills); per-run settings still override them.
    model._settings = merge_model_settings(model.settings, request_settings)
    return model


# --- errors -------------------------------------------------------------------------------

_TRANSIENT_ERRORS: tuple[type[BaseException], ...] = (
    ai_errors.ModelRateLimitError,
    ai_errors.ModelUnavailableError,
    ai_errors.ModelServerError,
    ai_errors.ModelConnectionError,
    ai_errors.ModelRequestTimeout,
)


def is_transient_model_error(error: BaseException) -> bool:
    """True for model failures worth retrying later: 408/429/5xx, timeouts, dropped connections.

    Quota exhaustion, authentication, unknown models, refused requests and malformed output are
    not transient. Also accepts a :class:`ModelCallError` (its ``transient`` flag).
    """
    if isinstance(error, ModelCallError):
        return error.transient
    if isinstance(error, ai_errors.ModelQuotaExceededError):
        return False
    if isinstance(error, _TRANSIENT_ERRORS):
        return True
    if isinstance(error, ai_errors.ModelHTTPError):
        return error.status_code in (408, 409, 429) or error.status_code >= 500
    return False


def model_call_error(error: BaseException, role: str,
                     endpoint: str | None = None, *, broken: str | None = None) -> ModelCallError:
    """Translate an exception raised by an agent run into a user-readable :class:`ModelCallError`.

    Returns an :class:`AgentOutputError` when the output retry budget ran out (naming what the
    outputs broke, ``broken``: :func:`geoask.models.feedback.broken_rules`), a transient
    :class:`ModelCallError` for 429/5xx/timeouts/connection failures (after the SDK's own
    retries), and a non-transient one otherwise (authentication, unknown model, malformed
    response). A :class:`ModelCallError` is returned unchanged. A failed connection names
    ``endpoint`` (the model's base URL, when known) and its real cause: a refused connection,
    a host name DNS cannot resolve, a timeout (:func:`connection_failure`). The endpoint and
    the error's own text pass through :func:`geoask.models.transcripts.redact` first, so a
    URL's credentials (``http://user:password@host``) never reach a message or a log.
    """
    if isinstance(error, ModelCallError):
        return error
    where = (f"model endpoint {redact(endpoint.rstrip('/'))}" if endpoint
             else "the model endpoint")
    cause = (connection_failure(error) or "did not answer in time"
             if isinstance(error, ai_errors.ModelTimeoutError)
             else connection_failure(error)
             if isinstance(error, ai_errors.ModelConnectionError) else None)
    if cause is not None:
        return ModelCallError(role, f"{where} {cause}; start the model server or correct "
                              "GEOASK_OPENAI_BASE_URL / GEOASK_MODEL", transient=True)
    detail = _first_line(str(error))
    if isinstance(error, ai_errors.UsageLimitExceeded):
        return AgentOutputError(
            role, f"the agent used its whole step budget without a final answer ({detail}); "
            "raise GEOASK_REACT_MAX_STEPS or try a stronger model")
    if (isinstance(error, ai_errors.UnexpectedModelBehavior)
            and detail.lower().startswith("exceeded maximum")):
        last = f"; last rejection: {broken}" if broken else ""
        return AgentOutputError(
            role, f"the model's output broke the agent's rules on every attempt ({detail}){last}; "
            "try a stronger model or rephrase the question")
    if isinstance(error, ai_errors.OutputTokenLimitExceeded):
        return AgentOutputError(
            role, "the model's output was cut off at its token limit before it was complete; "
            "raise GEOASK_MODEL_MAX_OUTPUT_TOKENS (or the server's limit) or try a stronger model")
    status = error.status_code if isinstance(error, ai_errors.ModelHTTPError) else None
    if isinstance(error, ai_errors.ModelAuthenticationError) or status in (401, 403):
        return ModelCallError(role, f"the model endpoint refused the API key ({detail}); check "
                              "the provider's key variable or GEOASK_OPENAI_API_KEY")
    if isinstance(error, ai_errors.ModelNotFoundError) or status == 404:
        return ModelCallError(role, f"the endpoint does not know this model ({detail}); check "
                              "GEOASK_MODEL / GEOASK_MODEL_<ROLE>")
    if is_transient_model_error(error):
        answered = f"answered HTTP {status}" if status else "is unavailable"
        return ModelCallError(role, f"{where} {answered} after retries ({detail}); "
                              "try again later or raise GEOASK_MODEL_MAX_RETRIES",
                              transient=True)
    if status in (400, 413, 422):  # the request itself: a parameter the server does not take
        return ModelCallError(role, f"the model endpoint refused the request as invalid "
                              f"({detail}); check the setting it names (such as "
                              "GEOASK_MODEL_MAX_OUTPUT_TOKENS or GEOASK_OUTPUT_MODE) and that "
                              "the server supports tool calls or JSON-schema output")
    if isinstance(error, ai_errors.UnexpectedModelBehavior | ai_errors.ModelAPIError):
        return ModelCallError(role, f"the model endpoint sent a response geoask cannot use "
                              f"({detail}); check that GEOASK_OPENAI_BASE_URL points at a "
                              "chat-completions API that supports tool calls")
    return ModelCallError(role, f"the model call failed: {type(error).__name__}: {detail}")


def connection_failure(error: BaseException) -> str | None:
    """What went wrong with a failed connection, read from the chain of ``error``'s causes.

    ``refused the connection`` (nothing listens on that port), ``host name could not be
    resolved (DNS: ...)``, ``did not answer in time`` (a timeout); else the innermost
    cause's message; None when nothing in the chain is an ``OSError``.

    >>> cause = ConnectionRefusedError(111, "Connect call failed")
    >>> wrapper = RuntimeError("Connection error.")
    >>> wrapper.__cause__ = cause
    >>> connection_failure(wrapper)
    'refused the connection'
    """
    seen: set[int] = set()
    current: BaseException | None = error
    innermost: OSError | None = None
    while current is not None and id(current) not in seen:
        seen.add(id(current))
        if isinstance(current, ConnectionRefusedError):
            return "refused the connection"
        if isinstance(current, socket.gaierror):
            return f"host name could not be resolved (DNS: {current.strerror or current})"
        if isinstance(current, TimeoutError):
            return "did not answer in time"
        if isinstance(current, OSError):
            innermost = current
        current = current.__cause__ or current.__context__
    if innermost is None:
        return None
    return f"could not be reached ({_first_line(str(innermost))})"


def _first_line(text: str, limit: int = 300) -> str:
    """The first line of an error's ``text``, credentials redacted, at most ``limit`` characters."""
    text = redact(text)
    line = text.strip().splitlines()[0] if text.strip() else "no detail"
    return line if len(line) <= limit else line[: limit - 1] + "…"


__all__ = [
    "OPENAI_COMPATIBLE_PREFIX",
    "QUESTION_ROLES",
    "REFERENCE_MODEL",
    "ROLES",
    "ModelProvider",
    "TokenUsage",
    "connection_failure",
    "is_transient_model_error",
    "model_call_error",
    "model_for",
    "model_name_for",
    "model_settings_for",
    "token_usage",
]
