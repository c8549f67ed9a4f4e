"""A question request, checked once before any work: the question, its variant, its conversation.

``geoask ask``, :func:`geoask.app.api.ask` and the ``answer-question`` flow (the gate of
deployment and benchmark runs) all call :func:`check_request`; each failure is a
:class:`RequestError` naming the parameter, so the CLI can report it as a usage error of that
option and the Python API as one line.
"""

from __future__ import annotations

from dataclasses import dataclass

from geoask.errors import ConfigurationError
from geoask.models.recordings import check_recorded_models
from geoask.run.conversation import check_conversation_id
from geoask.run.variants import Variant, parse_variant
from geoask.settings import Settings
from geoask.vocabulary.questions import check_question


class RequestError(ConfigurationError):
    """A parameter of a question request is unusable; :attr:`parameter` names it."""

    def __init__(self, parameter: str, message: str) -> None:
        """Say which ``parameter`` (question, model, variant, conversation) and what is wrong."""
        super().__init__(message)
        self.parameter = parameter


@dataclass(frozen=True)
class QuestionRequest:
    """A checked request: the question text, the variant parsed, the conversation id or None."""

    question: str
    variant: Variant
    model: str | None = None
    conversation: str | None = None


def check_request(question: object, settings: Settings, *, model: object = None,
                  variant: object = None, conversation: object = None) -> QuestionRequest:
    """``question`` and its options checked as one request (variant default ``GEOASK_VARIANT``).

    >>> check_request("How many airports?", Settings(), variant="no-planner").variant
    <Variant.NO_PLANNER: 'NO_PLANNER'>

    Raises:
        RequestError: the question is not usable text (:func:`check_question`), the model,
            variant or conversation id is not text, the variant is unknown, the
            conversation id is unusable, or a ``recorded:`` model recorded another question.

    """
    for name, value in (("model", model), ("variant", variant), ("conversation", conversation)):
        if value is not None and not isinstance(value, str):
            raise RequestError(name, f"{name} must be text (str), not {type(value).__name__}")
    try:
        text = check_question(question, settings.question_max_chars)
    except ConfigurationError as error:
        raise RequestError("question", str(error)) from None
    try:
        chosen = parse_variant(str(variant or settings.variant))
    except ConfigurationError as error:
        raise RequestError("variant", str(error)) from None
    if isinstance(conversation, str):
        try:
            check_conversation_id(conversation)
        except ConfigurationError as error:
            raise RequestError("conversation", str(error)) from None
    try:
        check_recorded_models(text, settings, model if isinstance(model, str) else None)
    except ConfigurationError as error:
        raise RequestError("model", str(error)) from None
    return QuestionRequest(text, chosen, model if isinstance(model, str) else None,
                           conversation if isinstance(conversation, str) else None)


RUN_NAME_CHARS = 80
"""The longest question shown whole as a run's name; a longer one ends in an ellipsis."""


def run_name(question: object) -> str:
    r"""A question run's name on the dashboard: the question on one line (or the case id).

    >>> run_name("How many  airports\nare in Texas?")
    'How many airports are in Texas?'
    >>> len(run_name("x " * 100)), run_name("x " * 100)[-1]
    (80, '…')
    """
    text = " ".join(str(question).split()) or "question"
    return text if len(text) <= RUN_NAME_CHARS else text[:RUN_NAME_CHARS - 1].rstrip() + "…"
