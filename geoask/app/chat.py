"""``geoask chat [--conversation ID] [--model M] [--variant V]``: an interactive conversation.

Each line typed is the conversation's next turn (``geoask ask --conversation ID``): the agents
see the last turns and may reuse their artifacts. ``history`` lists the turns so far, an empty
line, ``exit`` or Ctrl-D ends the chat; the conversation is kept under
``<artifact root>/conversations/<id>.json`` and can be continued later with the same id.
"""

from __future__ import annotations

import time

import typer

app = typer.Typer(
    help="Ask questions as one conversation: follow-ups see earlier turns and reuse their results.",
    context_settings={"allow_interspersed_args": True},
)


@app.callback(invoke_without_command=True)
def chat(
    conversation: str | None = typer.Option(
        None, "--conversation", "-c",
        help="Conversation id to start or continue (default: a new chat-<time> id)."),
    model: str | None = typer.Option(None, "--model", "-m", envvar="GEOASK_MODEL",
                                     help="Model of every agent (as for `geoask ask`)."),
    variant: str | None = typer.Option(None, "--variant", "-v", envvar="GEOASK_VARIANT",
                                       help="FULL (default), POSTGIS, NO_STCA, NO_PLANNER, "
                                       "BASE, REACT, PLAN_EXECUTE."),
) -> None:
    """Read questions line by line and answer each as the conversation's next turn."""
    from geoask.app.api import ask
    from geoask.base.result_view import result_text
    from geoask.errors import ConfigurationError, GeoaskError
    from geoask.run.conversation import ConversationStore, check_conversation_id, turn_line
    from geoask.settings import get_settings

    conversation = conversation or time.strftime("chat-%Y%m%d-%H%M%S")
    try:
        check_conversation_id(conversation)
    except ConfigurationError as error:
        raise typer.BadParameter(str(error), param_hint="--conversation") from None
    store = ConversationStore(get_settings().artifact_root_url)
    typer.echo(f"conversation {conversation} ({len(store.load(conversation).turns)} earlier "
               "turns); `history` lists them, an empty line or `exit` ends")
    while True:
        try:
            line = input("geoask> ").strip()
        except EOFError:  # Ctrl-D: end the prompt's line, then end as `exit` does
            typer.echo("")
            break
        if line in ("", "exit", "quit"):
            break
        if line == "history":
            for turn in store.load(conversation).turns:
                typer.echo(turn_line(turn))
            continue
        try:
            result = ask(line, model=model, variant=variant, conversation=conversation)
        except GeoaskError as error:  # one line, and the chat goes on
            typer.secho(f"error: {error}", fg=typer.colors.RED)
            continue
        typer.echo(result_text(result))
    typer.echo(f"continue with: geoask chat --conversation {conversation}")
