"""Conversations: follow-up questions that see earlier turns and reuse their artifacts.

A conversation is a list of :class:`Turn` records kept as one JSON file per conversation
beside the run artifacts (``<artifact root>/conversations/<id>.json``, through fsspec). Each
turn is its own question run (its own Prefect flow run); it records the question, outcome,
answer summary, the run and flow-run ids, the registry entries of its artifacts
(:mod:`geoask.records.artifact_registry`) and the earlier artifacts it reused.

What the agents see of a conversation is bounded (:func:`context_for`): a compact summary of
the last ``GEOASK_CONVERSATION_MAX_TURNS`` turns (question, outcome, summary) and the registry
entries of those turns - what each artifact is, never its data. A plan reuses an artifact by
naming it in a Python step's ``inputs`` (``turn-1.sql-1.cells``); the flow resolves it here.
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import os
import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

from pydantic import BaseModel, Field

from geoask.base.storage import filesystem_for, write_atomic
from geoask.errors import ArtifactWriteError, ConfigurationError
from geoask.records.artifact_registry import RegistryEntry, turn_ref

CONVERSATION_ID = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$")
_SUMMARY_CHARS = 240
RUNNING = "running"
"""Status of a turn whose run has not ended (its number is reserved)."""


class Turn(BaseModel):
    """One answered (or refused) turn of a conversation.

    Attributes:
        number: 1-based position in the conversation.
        question: the question as asked.
        status: ``answered``, ``rejected`` or ``failed``; ``error`` when the run raised;
            ``running`` while its run has not ended (:meth:`ConversationStore.begin`).
        message: the answer's summary, the refusal or the failure report.
        answer_type: the answer's type when answered.
        run_id: the question run (artifact folder name).
        flow_run_id: its Prefect flow run, when known.
        artifacts: registry entries of the files the turn produced.
        reused: refs of earlier turns' artifacts it read instead of querying again.
        reused_runs: flow-run ids of the turns it reused (links in the UI).

    """

    number: int = Field(ge=1)
    question: str
    status: str
    message: str = ""
    answer_type: str | None = None
    run_id: str
    flow_run_id: str | None = None
    artifacts: list[RegistryEntry] = Field(default_factory=list)
    reused: list[str] = Field(default_factory=list)
    reused_runs: list[str] = Field(default_factory=list)


class Conversation(BaseModel):
    """A conversation: its id and turns, oldest first."""

    id: str
    turns: list[Turn] = Field(default_factory=list)

    @property
    def next_turn(self) -> int:
        """The number the next turn gets."""
        return len(self.turns) + 1


def check_conversation_id(value: str) -> str:
    """``value`` when it is a usable conversation id (letters, digits, ``_.-``; ≤ 64).

    Raises:
        ConfigurationError: it is not.

    """
    if not isinstance(value, str) or not CONVERSATION_ID.fullmatch(value):
        raise ConfigurationError(
            f"conversation id {value!r} is not usable; use 1-64 letters, digits, '_', '.' or "
            "'-', starting with a letter or digit (e.g. wake-rain)")
    return value


class ConversationStore:
    """The conversations under ``<root>/conversations/`` (any fsspec URL).

    Args:
        root_url: the artifact root (``Settings.artifact_root_url``).

    """

    def __init__(self, root_url: str) -> None:
        self.folder = f"{root_url.rstrip('/')}/conversations"

    def url(self, conversation_id: str) -> str:
        """URL of a conversation's JSON file."""
        return f"{self.folder}/{check_conversation_id(conversation_id)}.json"

    def load(self, conversation_id: str) -> Conversation:
        """The conversation ``conversation_id`` (a new, empty one when it does not exist).

        Raises:
            ConfigurationError: the id is not usable.
            ArtifactWriteError: the file exists but cannot be read.

        """
        url = self.url(conversation_id)
        fs, path = filesystem_for(url)
        if not fs.exists(path):
            return Conversation(id=conversation_id)
        try:
            with fs.open(path, "rt", encoding="utf-8") as handle:
                return Conversation.model_validate(json.load(handle))
        except (OSError, ValueError) as error:
            raise ArtifactWriteError(f"cannot read conversation {conversation_id} ({url}): "
                                     f"{str(error).splitlines()[0]}") from None

    def begin(self, conversation_id: str, question: str, run_id: str) -> Conversation:
        """Reserve the conversation's next turn for a run starting now; the conversation.

        The reserved turn (status ``running``) holds its number, so runs of the same
        conversation started at once get different numbers and their artifact refs
        (``turn-N.<step>.<name>``) stay their own; :meth:`record` replaces it when the run
        ends. Other runs' ``running`` turns are left out of a turn's context
        (:func:`context_for`). Returns the conversation with the reservation as its last turn.

        Raises:
            ArtifactWriteError: it could not be read or written.

        """
        with self._locked(conversation_id):
            conversation = self.load(conversation_id)
            running = Turn(number=conversation.next_turn, question=question, status=RUNNING,
                           run_id=run_id)
            conversation = conversation.model_copy(
                update={"turns": [*conversation.turns, running]})
            self._write(conversation)
        return conversation

    def record(self, conversation_id: str, turn: Turn) -> Conversation:
        """Save the finished ``turn`` in place of its reservation (same number and run) atomically.

        A turn whose reservation is gone (the file was removed meanwhile) is added as the
        next turn. On a local folder the read-modify-write holds an exclusive lock (``flock``
        on the conversations folder; no lock file), so turns written at once are all kept (20
        concurrent writes kept 15 without it); on object storage the last writer wins.

        Raises:
            ArtifactWriteError: it could not be read or written.

        """
        with self._locked(conversation_id):
            conversation = self.load(conversation_id)
            others = [t for t in conversation.turns
                      if (t.number, t.run_id) != (turn.number, turn.run_id)]
            if len(others) == len(conversation.turns):
                turn = turn.model_copy(update={"number": conversation.next_turn})
            turns = sorted([*others, turn], key=lambda t: t.number)
            conversation = conversation.model_copy(update={"turns": turns})
            self._write(conversation)
        return conversation

    def _write(self, conversation: Conversation) -> None:
        write_atomic(self.url(conversation.id),
                     conversation.model_dump_json(indent=2).encode("utf-8"))

    @contextlib.contextmanager
    def _locked(self, conversation_id: str) -> Iterator[None]:
        from fsspec.implementations.local import LocalFileSystem


        fs, path = filesystem_for(self.url(conversation_id))
        if not isinstance(fs, LocalFileSystem):
            yield
            return
        folder = os.path.dirname(path)
        os.makedirs(folder, exist_ok=True)
        # The lock is the conversations folder itself: no lock file is left beside the
        # conversations (a lock file removed after use would let two writers lock two files).
        handle = os.open(folder, os.O_RDONLY | os.O_DIRECTORY)
        try:
            fcntl.flock(handle, fcntl.LOCK_EX)
            yield
        finally:
            os.close(handle)  # closing releases the lock


@dataclass(frozen=True)
class ConversationContext:
    """What a turn's run knows of its conversation (bounded to the last turns).

    Attributes:
        conversation: the conversation id.
        turn: this turn's number.
        history: the compact summary of the last turns (empty for a first turn).
        reusable: ref (``turn-1.sql-1.cells``) -> registry entry of those turns' artifacts.
        flow_runs: turn number -> its flow-run id, when known.

    """

    conversation: str
    turn: int
    history: str = ""
    reusable: dict[str, RegistryEntry] = field(default_factory=dict)
    flow_runs: dict[int, str] = field(default_factory=dict)

    @property
    def reusable_text(self) -> str:
        """One line per reusable artifact (:meth:`RegistryEntry.to_text`), or empty."""
        return "\n".join(f"- {entry.to_text()}" for entry in self.reusable.values())

    def turn_of(self, ref: str) -> int | None:
        """The turn number a reused ref points at (``turn-2.sql-1.x`` -> 2), None if not one."""
        match = re.match(r"^turn-(\d+)\.", ref)
        return int(match.group(1)) if match else None


def context_for(conversation: Conversation, max_turns: int) -> ConversationContext:
    """The bounded context of the conversation's last turn: the ``max_turns`` turns before it.

    ``conversation`` ends with the turn being run (reserved by
    :meth:`ConversationStore.begin`; none: the context of a first turn); turns still
    ``running`` (other runs of the conversation) are left out.

    >>> context_for(Conversation(id="c", turns=[Turn(number=1, question="q", status="running",
    ...                                              run_id="r")]), 5).turn
    1
    """
    earlier = conversation.turns[:-1]
    number = conversation.turns[-1].number if conversation.turns else 1
    finished = [t for t in earlier if t.status != RUNNING]
    recent = finished[-max_turns:] if max_turns > 0 else []
    reusable = {turn_ref(t.number, e.ref): e.model_copy(update={"ref": turn_ref(t.number, e.ref)})
                for t in recent if t.status == "answered" for e in t.artifacts}
    return ConversationContext(
        conversation=conversation.id, turn=number,
        history="\n".join(turn_line(t) for t in recent), reusable=reusable,
        flow_runs={t.number: t.flow_run_id for t in recent if t.flow_run_id})


def turn_line(turn: Turn) -> str:
    """One line of the history: number, question, outcome and the answer's summary.

    >>> turn_line(Turn(number=1, question="How many?", status="answered", message="3 airports.",
    ...                run_id="r"))
    'turn 1: How many? -> answered: 3 airports.'
    """
    message = " ".join(turn.message.split())
    if len(message) > _SUMMARY_CHARS:
        message = message[: _SUMMARY_CHARS - 3] + "..."
    return f"turn {turn.number}: {turn.question} -> {turn.status}: {message}"


def history_block(context: ConversationContext | None, *, refusal_rule: bool = True) -> str:
    """The conversation block an intent or planner prompt ends with (empty without one).

    With ``refusal_rule`` (the intent agent) it says that a turn referring to results the
    block does not hold is refused with a clarifying question, never guessed.
    """
    if context is None:
        return ""
    history = context.history or "(none: this is the first turn)"
    block = f"Earlier in this conversation (oldest first):\n{history}"
    if refusal_rule:
        block += ("\nIf the question refers to earlier results or places that are not listed "
                  "here, reply IntentRejection not_answerable asking the user what they refer "
                  "to.")
    return block


def reuse_block(context: ConversationContext | None) -> str:
    """The planner's block of reusable artifacts (empty without any)."""
    if context is None or not context.reusable:
        return ""
    return ("Earlier results you may reuse instead of querying again (a python step lists "
            "them in inputs exactly as written; a plan may then start with that python "
            "step):\n" + context.reusable_text)


def turn_record(result: Any, question: str, entries: list[RegistryEntry], reused: list[str],
                context: ConversationContext) -> Turn:
    """The :class:`Turn` of a finished run (``result``: the flow's ``QuestionResult``)."""
    turns = sorted({n for ref in reused if (n := context.turn_of(ref)) is not None})
    return Turn(
        number=context.turn, question=question, status=result.status, message=result.message,
        answer_type=result.answer.answer_type.value if result.answer else None,
        run_id=result.run_id, flow_run_id=result.flow_run_id, artifacts=entries,
        reused=reused, reused_runs=[context.flow_runs[n] for n in turns
                                    if n in context.flow_runs])
