"""A conversation turn in the Prefect UI: its tags, and links to the turns it reused.

A turn's flow run is tagged ``conversation:<id>`` and ``turn:<n>`` (so *Runs* filtered by the
tag lists the whole conversation), and gets the markdown artifact ``conversation-turn``: the
conversation, this turn, the artifacts it reused with their registry description, and a link
to the flow run of each turn it reused (relative UI path ``/runs/flow-run/<id>``, absolute when
the Prefect UI URL is known). :func:`registry_markdown` lists the run's own registered artifacts
(a section of its ``run-summary`` artifact). Both are views: a UI that is down only logs a
warning.
"""

from __future__ import annotations

import logging

from geoask.records.artifact_registry import RegistryEntry
from geoask.records.run_artifacts import Markdown, code_span, publish_markdown
from geoask.run.conversation import ConversationContext

logger = logging.getLogger(__name__)


def conversation_tags(context: ConversationContext) -> list[str]:
    """The flow-run tags of a turn.

    >>> conversation_tags(ConversationContext(conversation="wake", turn=2))
    ['conversation:wake', 'turn:2']
    """
    return [f"conversation:{context.conversation}", f"turn:{context.turn}"]


def flow_run_link(flow_run_id: str) -> str:
    """The UI address of a flow run (absolute when ``PREFECT_UI_URL`` is set)."""
    try:
        from prefect.settings import PREFECT_UI_URL

        base = PREFECT_UI_URL.value()
    except Exception:  # settings unavailable: the relative path still works in the UI
        base = None
    return f"{(base or '').rstrip('/')}/runs/flow-run/{flow_run_id}"


def turn_markdown(context: ConversationContext, reused: list[str]) -> Markdown:
    """The ``conversation-turn`` artifact: the conversation, the turn, what it reused."""
    lines: list[Markdown | str] = [
        Markdown("# Conversation {}, turn {}").format(code_span(context.conversation),
                                                      context.turn), ""]
    if context.history:  # questions and answers: shown as typed
        lines += [Markdown("## Earlier turns"), "",
                  *[Markdown("- {}").format(line) for line in context.history.splitlines()], ""]
    if not reused:
        lines.append(Markdown("This turn reused no earlier artifact."))
        return Markdown("\n").join(lines)
    lines += [Markdown("## Reused artifacts"), ""]
    for ref in reused:
        entry = context.reusable.get(ref)
        turn = context.turn_of(ref)
        run = context.flow_runs.get(turn) if turn is not None else None
        link = (Markdown(" - [flow run of turn {}]({})").format(turn, Markdown(
            flow_run_link(run))) if run else Markdown(""))
        described = entry.to_text() if entry else f"{ref} (not registered)"
        lines.append(Markdown("- {}{}").format(described, link))
        if entry:
            lines.append(Markdown("  - file: {}").format(code_span(entry.url)))
    return Markdown("\n").join(lines)


def registry_markdown(entries: list[RegistryEntry]) -> Markdown:
    """The run summary's registry section: one line per registered artifact of the run."""
    if not entries:
        return Markdown("## Artifact registry\n\nNo artifact was registered.")
    return Markdown("## Artifact registry\n\n{}").format(
        Markdown("\n").join(Markdown("- {}").format(e.to_text()) for e in entries))


def publish_turn(context: ConversationContext, reused: list[str],
                 flow_run_id: str | None) -> None:
    """Tag the turn's flow run and publish its ``conversation-turn`` artifact."""
    publish_markdown("conversation-turn", turn_markdown(context, reused),
                     f"conversation {context.conversation}, turn {context.turn}")
    if flow_run_id is None:
        return
    try:
        from prefect.client.orchestration import get_client

        with get_client(sync_client=True) as client:
            run = client.read_flow_run(flow_run_id)  # type: ignore[arg-type]
            tags = list(dict.fromkeys([*(run.tags or []), *conversation_tags(context)]))
            client.update_flow_run(flow_run_id, tags=tags)  # type: ignore[arg-type]
    except Exception as error:  # the UI is a view; the conversation file is the record
        logger.warning("could not tag flow run %s: %s", flow_run_id, error)

