"""``geoask ask "QUESTION" [--model M] [--variant V] [--conversation ID] [--json]``: answer one.

Prints the answer, a short evidence trail and the artifact folder (or, with ``--json``, the
whole result as JSON). Exit codes:

- 0: answered;
- 1: geoask could not run (configuration, database, model endpoint; the message says what to do);
- 2: a usage error (an empty or overlong question, an unknown variant or option), before any work;
- 3: the question was rejected as out of scope (chit-chat, unsafe, not answerable from the data);
- 4: no answer: a recovery bound was exhausted; the message says what was tried;
- 130/143: stopped by SIGINT/SIGTERM (one line says so; nothing is recorded).
"""

from __future__ import annotations

import json
import sys
from typing import TYPE_CHECKING

import typer

if TYPE_CHECKING:
    from geoask.vocabulary.question_result import QuestionResult

EXIT_ANSWERED = 0
EXIT_REJECTED = 3
EXIT_FAILED = 4
_PARAMETER_HINTS = {"question": "QUESTION", "model": "--model", "variant": "--variant",
                    "conversation": "--conversation"}
"""A request parameter -> how the command names it in a usage error."""

app = typer.Typer(
    help="Answer a natural-language question about the database (exit 0 answered, 1 error, "
    "2 usage error, 3 rejected, 4 no answer).",
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
        help="FULL (default), POSTGIS, NO_STCA, NO_PLANNER, BASE, REACT or PLAN_EXECUTE.",
    ),
    as_json: bool = typer.Option(False, "--json", help="Print the whole result as JSON."),
    via_api: bool = typer.Option(
        False, "--via-api",
        help="Run the answer-question deployment through the Prefect API (`geoask server`, "
        "GEOASK_SERVER_API_URL) and wait for its result, instead of running in this process."),
    verbose: bool = typer.Option(
        False, "--verbose", help="Show Prefect's run log lines on the terminal too."),
    conversation: str | None = typer.Option(
        None, "--conversation", "-c",
        help="Conversation id: the question is that conversation's next turn (earlier turns "
        "and their artifacts are in context; a new id starts one)."),
) -> None:
    """Answer QUESTION: exit 0 answered, 1 error, 2 usage error, 3 rejected, 4 no answer.

    Exit 5 when the Prefect API or the database went away while it ran (one line says so).
    """
    from geoask.app.api import ask as ask_question
    from geoask.base.result_view import result_text
    from geoask.run.request import RequestError, check_request
    from geoask.settings import get_settings

    settings = get_settings()
    try:  # usage errors (exit 2) before Prefect starts
        check_request(question, settings, model=model, variant=variant, conversation=conversation)
    except RequestError as error:
        raise typer.BadParameter(str(error), param_hint=_PARAMETER_HINTS[error.parameter]) from None
    from geoask.base.interrupt import run_until_stopped

    in_worker = [False]

    def answer() -> QuestionResult:
        if settings.server_worker and not (via_api or verbose):
            from geoask.service.worker import ask_worker

            in_worker[0] = True
            warm = ask_worker(settings, question, model=model, variant=variant,
                              conversation=conversation)
            in_worker[0] = False
            if warm is not None:
                return warm
        return ask_question(question, model=model, variant=variant, via_api=via_api,
                            verbose=verbose, conversation=conversation)

    result = run_until_stopped(
        answer,
        lambda: "stopped waiting; the flow run on the server is not cancelled"
        if via_api or in_worker[0]
        else "the question was not finished and nothing was recorded (its partial artifacts "
             "stay in the run's artifact folder)")
    if as_json:
        typer.echo(json.dumps(result.model_dump(mode="json"), indent=2, ensure_ascii=False))
    else:
        typer.echo(result_text(result))
    sys.exit({"answered": EXIT_ANSWERED, "rejected": EXIT_REJECTED}.get(result.status,
                                                                         EXIT_FAILED))
