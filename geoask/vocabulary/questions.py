"""The one check every question passes before any agent sees it: text, not empty, not too long."""

from __future__ import annotations

from geoask.errors import ConfigurationError


def check_question(question: object, max_chars: int) -> str:
    """Return ``question`` if it is non-empty UTF-8 text of at most ``max_chars`` characters.

    Called by :func:`geoask.app.api.ask` (so CLI and ``--via-api`` callers hear at once) and by the
    ``answer-question`` flow before its first agent call (deployment runs and benchmarks too).

    >>> check_question("How many airports are in Texas?", 4096)
    'How many airports are in Texas?'

    Raises:
        ConfigurationError: one line saying what is wrong - not text, empty, a NUL character,
            not valid UTF-8, or longer than ``max_chars`` (setting ``question_max_chars``).

    """
    if question is None or (isinstance(question, str) and not question.strip()):
        raise ConfigurationError("the question is empty; ask something about the data")
    if not isinstance(question, str):
        raise ConfigurationError(f"question must be text (str), not {type(question).__name__}")
    if "\x00" in question:  # PostgreSQL text (Prefect's database) cannot hold it either
        raise ConfigurationError("the question contains a NUL character; remove it")
    try:
        question.encode("utf-8")
    except UnicodeEncodeError:
        raise ConfigurationError("the question is not valid UTF-8 text") from None
    if len(question) > max_chars:
        raise ConfigurationError(
            f"the question is {len(question):,} characters; at most {max_chars:,} are accepted "
            "(GEOASK_QUESTION_MAX_CHARS) - ask one shorter question"
        )
    return question
