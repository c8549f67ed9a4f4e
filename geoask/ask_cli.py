"""``geoask ask "QUESTION" [--model M] [--variant V] [--json]``: answer a question about the data.

Prints the answer, a short evidence trail and the artifact folder (or, with ``--json``, the
whole result as JSON). Exit codes:

- 0: answered;
- 1: geoask could not run (configuration, database, model endpoint; the message says what to do);
- 3: the question was rejected as out of scope (chit-chat, unsafe, not answerable from the data);
- 4: no answer: a recovery bound was exhausted; the message says what was tried.
"""

from __future__ import annotations

import json
import sys
from typing import TYPE_CHECKING

import typer

if TYPE_CHECKING:
    from tasks.services import QuestionServices

EXIT_ANSWERED = 0
EXIT_REJECTED = 3
EXIT_FAILED = 4

app = typer.Typer(
    help="Answer a natural-language question about the database (exit 0 answered, 1 error, "
    "3 rejected, 4 no answer).",
    # One command with options after the question: a group that takes interspersed options.
    context_settings={"allow_interspersed_args": True},
)

@app.callback(invoke_without_command=True)
def ask(
    question: str = typer.Argument(..., help="The question, in quotes."),
    model: str | None = typer.Option(
        None, "--model", "-m", envvar="GEOASK_MODEL",
        help="Model of every agent: a pydantic-ai model string (openai:gpt-4o, "
        "anthropic:..., deepseek:...) or openai-compatible:<name> with GEOASK_OPENAI_BASE_URL.",
    ),
    variant: str | None = typer.Option(
        None, "--variant", "-v", envvar="GEOASK_VARIANT",
        help="FULL (default), POSTGIS, NO_STCA, NO_PLANNER or BASE.",
    ),
    as_json: bool = typer.Option(False, "--json", help="Print the whole result as JSON."),
    via_api: bool = typer.Option(
        False, "--via-api",
        help="Run the answer-question deployment through the Prefect API (`geoask server`, "
        "GEOASK_SERVER_API_URL) and wait for its result, instead of running in this process."),
    verbose: bool = typer.Option(
        False, "--verbose", help="Show Prefect's run log lines on the terminal too."),
) -> None:
    """Answer QUESTION: exit 0 answered, 1 error, 3 rejected, 4 no answer (bound exhausted)."""
    from flows.answer_question import answer_question
    from geoask.errors import ConfigurationError
    from geoask.variants import parse_variant

    try:
        question.encode("utf-8")
    except UnicodeEncodeError:
        raise ConfigurationError("the question is not valid UTF-8 text") from None
    if not question.strip():
        raise typer.BadParameter("the question is empty; ask something about the data",
                                 param_hint="QUESTION")
    if variant:  # usage errors (exit 2) before Prefect starts
        try:
            parse_variant(variant)
        except ConfigurationError as error:
            raise typer.BadParameter(str(error), param_hint="--variant") from None
    if via_api:
        from geoask.service.client import ask_via_api
        from geoask.service.local import ensure_server
        from geoask.settings import get_settings

        ensure_server(get_settings(), deployment="answer-question")
        result = ask_via_api(question, variant=variant, model=model)
    else:
        from geoask.service.local import prefect_api
        from geoask.settings import get_settings

        services = open_question_services(variant, model)
        with prefect_api(get_settings(), verbose=verbose):
            result = answer_question(question, variant=variant, model=model,
                                     services=services)
    if as_json:
        typer.echo(json.dumps(result.model_dump(mode="json"), indent=2, ensure_ascii=False))
    else:
        typer.echo(format_result(result))
    sys.exit({"answered": EXIT_ANSWERED, "rejected": EXIT_REJECTED}.get(result.status,
                                                                         EXIT_FAILED))


def open_question_services(variant: str | None, model: str | None) -> QuestionServices:
    """The run's services from settings, built before Prefect starts (so errors come fast).

    Raises:
        ConfigurationError: no model for some agent, or one that cannot be built (unknown
            provider, missing key or endpoint); the message says what to set.
        CatalogError, RetrievalError, SandboxError: another part cannot be set up.

    """
    from geoask.composition import model_provider
    from geoask.settings import get_settings
    from geoask.variants import parse_variant
    from tasks.services import open_services

    settings = get_settings()
    return open_services(settings, parse_variant(variant or settings.variant),
                         model_provider(settings, model))


def format_result(result: object) -> str:
    """The human-readable report: answer (or message), evidence trail, artifact folder."""
    from flows.answer_question import QuestionResult

    assert isinstance(result, QuestionResult)
    lines = [result.message]
    if result.answer is not None:
        lines += ["", f"answer ({result.answer.answer_type.value}):",
                  json.dumps(result.answer.data_payload, indent=2, ensure_ascii=False)]
    if result.evidence:
        lines += ["", "evidence:", *(f"  {line}" for line in result.evidence)]
    lines.append("")
    if result.transitions:  # a question rejected as out of scope ran no step
        lines.append(f"route: {result.route}; transitions: {' -> '.join(result.transitions)}")
    lines.append(f"artifacts: {result.artifact_folder}")
    return "\n".join(lines)
