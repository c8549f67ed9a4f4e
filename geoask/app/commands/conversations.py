"""``geoask bench conversations verify|fill|run``: the conversation cases.

``verify`` recomputes every turn as its standalone case (the reused statements of earlier
turns composed in; :meth:`ConversationCase.standalone_case`) with its cross-check; ``fill``
writes the reference programs' projected answers into the turns' ``expected.value``; ``run``
asks every conversation through the question flow (each turn in context, each later turn
standalone and in an empty conversation) and prints the report (per-turn SSA, reuse rate,
clarifying refusals, tokens and time against standalone), writing ``conversations.json`` and
``conversations.md`` under ``--out``.
"""

from __future__ import annotations

import json
import tempfile
import time
from pathlib import Path
from typing import Any

import typer
import yaml

from geoask.base.capped_input import MAX_DOCUMENT_CHARS, read_capped_text
from geoask.base.yamlio import load_yaml
from geoask.cases.conversations import ConversationCase, load_conversations
from geoask.settings import get_settings

app = typer.Typer(help="Conversation cases: verify, fill expected values, run the flow.")

FILE_OPTION = typer.Option(
    None, "--conversations",
    help="Conversation file or folder (default GEOASK_BENCH_CONVERSATIONS_PATH, i.e. "
    "benchmark/conversations).")
ONLY_OPTION = typer.Option(None, "--only", help="Only this conversation id (repeatable).")
OUT_OPTION = typer.Option(None, "--out", help="Folder for conversations.json and "
                          "conversations.md (default <home>/bench-conversations).")


def _load(path: Path | None, only: list[str] | None) -> list[ConversationCase]:
    return load_conversations(path or get_settings().bench_conversations_path,
                              tuple(only or ()))


def _runner() -> Any:
    from geoask.run.composition import program_runner

    return program_runner(get_settings())


@app.command("verify")
def verify_command(conversations: Path | None = FILE_OPTION,
                   only: list[str] | None = ONLY_OPTION) -> None:
    """Recompute every turn (standalone form) and its cross-check; exit 1 on a disagreement."""
    from geoask.bench.verify import verify_case

    loaded = _load(conversations, only)
    runner = _runner()
    failed = total = 0
    with tempfile.TemporaryDirectory(prefix="geoask-conv-") as scratch:
        for conversation in loaded:
            for index, turn in enumerate(conversation.turns):
                total += 1
                case = conversation.standalone_case(index)
                verdict = verify_case(case, runner, Path(scratch) / case.id)
                if verdict.ok:
                    checked = " + cross-check" if verdict.cross_check_ok else ""
                    typer.echo(f"ok   {turn.id}{checked} ({verdict.seconds:.2f} s)")
                else:
                    failed += 1
                    typer.secho(f"FAIL {turn.id}", fg=typer.colors.RED)
                    for problem in verdict.problems:
                        typer.echo(f"     {problem}")
    typer.echo(f"\n{total - failed}/{total} turns of {len(loaded)} conversations verified")
    if failed:
        raise typer.Exit(code=1)


@app.command("fill")
def fill_command(conversations: Path | None = FILE_OPTION,
                 overwrite: bool = typer.Option(False, "--overwrite",
                                                help="Replace filled values too.")) -> None:
    """Write the reference programs' projected answers into the turns' expected.value."""
    from geoask.bench.verify import reference_answer
    from geoask.cases.loader import rounded

    location = conversations or get_settings().bench_conversations_path
    files = sorted(location.glob("*.yaml")) if location.is_dir() else [location]
    runner = _runner()
    with tempfile.TemporaryDirectory(prefix="geoask-conv-fill-") as scratch:
        for path in files:
            raw = load_yaml(read_capped_text(path, MAX_DOCUMENT_CHARS,
                                             what=f"conversation file {path}"))
            for conversation in load_conversations(path):
                entry = next(c for c in raw["conversations"] if c["id"] == conversation.id)
                for index, turn in enumerate(conversation.turns):
                    if turn.expected.value is not None and not overwrite:
                        continue
                    case = conversation.standalone_case(index)
                    value = rounded(reference_answer(case, runner, Path(scratch) / case.id))
                    entry["turns"][index].setdefault("expected", {})["value"] = value
                    typer.echo(f"filled {turn.id}: {json.dumps(value)[:100]}")
            path.write_text(_dump(raw), encoding="utf-8")


def _dump(data: Any) -> str:
    from geoask.cases.loader import _BlockDumper

    return yaml.dump(data, Dumper=_BlockDumper, sort_keys=False, allow_unicode=True,
                     width=100)


@app.command("run")
def run_command(
    conversations: Path | None = FILE_OPTION,
    only: list[str] | None = ONLY_OPTION,
    model: str = typer.Option("reference", "--model", help="Model of every agent."),
    out: Path | None = OUT_OPTION,
    standalone: bool = typer.Option(True, "--standalone/--no-standalone",
                                    help="Also ask each later turn standalone."),
) -> None:
    """Ask every conversation through the question flow and print the report."""
    from geoask.app.conversation_runs import (
        flow_ask,
        render_report,
        run_conversation,
        summarize_runs,
    )
    from geoask.service.local import prefect_api

    loaded = _load(conversations, only)
    settings = get_settings()
    stamp = time.strftime("%Y%m%dT%H%M%S")
    runs = []
    with prefect_api(settings, verbose=False):
        ask = flow_ask(settings, model)
        for conversation in loaded:
            for run in run_conversation(conversation, ask, stamp, standalone=standalone):
                runs.append(run)
                mark = "ok  " if run.correct else "FAIL"
                typer.echo(f"{mark} {run.conversation} turn {run.turn} {run.mode}: "
                           f"{run.status}, {run.tokens} tokens, {run.time_s:.1f} s"
                           + (f", reused {', '.join(run.reused)}" if run.reused else "")
                           + (f" - {run.reason}" if run.reason else ""))
    report = summarize_runs(runs)
    markdown = render_report(report)
    out = out or settings.home / "bench-conversations"
    out.mkdir(parents=True, exist_ok=True)
    (out / "conversations.json").write_text(json.dumps(
        {"report": report.__dict__, "runs": [r.to_dict() for r in runs]}, indent=2))
    (out / "conversations.md").write_text(markdown + "\n")
    typer.echo("\n" + markdown)
    if report.ssa < 1.0:
        raise typer.Exit(code=1)
