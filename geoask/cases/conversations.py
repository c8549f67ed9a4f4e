"""Conversation benchmark cases: 2-4 turns, later ones answerable only in context.

A conversation file (YAML, ``benchmark/conversations/*.yaml``) holds ``conversations:``, each
an id, a description and ``turns:``. A turn is a benchmark case (:class:`BenchmarkCase`: its
question, reference program, answer contract, expected value, cross-check) whose Python steps
may read an SQL result of an earlier turn as ``turn-<n>.<step id>.<statement name>`` (the plan
step id of that turn's consolidated program: ``sql-1``...) instead of querying again, plus
``standalone``: the same question asked without context. The standalone question's program is
composed (:meth:`ConversationCase.standalone_case`): the reused statements of earlier turns
first, then the turn's own steps - so every turn is verified like any case, by its reference
program and its independent cross-check, and the benchmark can compare a turn's tokens and
time with asking it standalone.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import yaml
from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator
from pydantic.json_schema import SkipJsonSchema

from geoask.base.capped_input import MAX_DOCUMENT_CHARS, read_capped_text
from geoask.base.yamlio import load_yaml, parsed_file
from geoask.cases.model import (
    CASE_ID_PATTERN,
    BenchmarkCase,
    Program,
    PythonStep,
    SqlStep,
)
from geoask.cases.steps import consolidated_steps
from geoask.errors import BenchmarkCaseError, validation_problems

_REF = re.compile(r"^turn-(\d+)\.((?:sql|python)-\d+)\.([a-z][a-z0-9_]{0,62})$")
DEFAULT_CONVERSATIONS_DIR = Path(__file__).resolve().parents[2] / "benchmark" / "conversations"
CONVERSATION_SCHEMA_PATH = DEFAULT_CONVERSATIONS_DIR.parent / "conversation.schema.json"


class TurnCase(BenchmarkCase):
    """One turn of a conversation: a benchmark case that may reuse earlier turns' results.

    ``earlier_questions`` is filled in by :class:`ConversationCase` (leave it out of files):
    the reference model answers the turn only when the prompt's conversation history holds
    them, and otherwise refuses with a clarifying question, as a model should.
    """

    standalone: str | None = Field(
        default=None, min_length=15,
        description="The same question asked without context (later turns).")
    earlier_questions: SkipJsonSchema[list[str]] = Field(
        default_factory=list, description="Filled in by the loader: questions of earlier turns.")


class ConversationCase(BaseModel):
    """A conversation of 2-4 turns over one database."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    id: str = Field(pattern=CASE_ID_PATTERN, description="'<name>-NNN', unique.")
    description: str = Field(min_length=10, description="What the conversation explores.")
    turns: list[TurnCase] = Field(min_length=2, max_length=4)

    @model_validator(mode="after")
    def _turns_consistent(self) -> ConversationCase:
        for number, turn in enumerate(self.turns, start=1):
            if number > 1 and turn.standalone is None:
                raise ValueError(f"turn {number} ({turn.id}) needs a standalone question")
            for ref in turn.reference.reused_inputs:
                problem = self._ref_problem(ref, number)
                if problem:
                    raise ValueError(f"turn {number} ({turn.id}) reads {ref}: {problem}")
        return self

    def _ref_problem(self, ref: str, number: int) -> str | None:
        match = _REF.match(ref)
        if match is None:
            return "write turn-<n>.<sql-k>.<statement name>"
        turn, step_id, name = int(match.group(1)), match.group(2), match.group(3)
        if not 1 <= turn < number:
            return "it names no earlier turn"
        step = next((s for s in consolidated_steps(self.turns[turn - 1]) if s.id == step_id),
                    None)
        if step is None or name not in {s.name for s in step.statements}:
            return f"turn {turn} has no SQL statement {name!r} in step {step_id}"
        return None

    def turn_cases(self) -> list[TurnCase]:
        """The turns with ``earlier_questions`` filled in."""
        return [turn.model_copy(update={"earlier_questions": [t.question
                                                              for t in self.turns[:n]]})
                for n, turn in enumerate(self.turns)]

    def standalone_case(self, index: int) -> BenchmarkCase:
        """Turn ``index`` (0-based) as a standalone case: its program with reuse composed in.

        The reused statements of earlier turns run first (one SQL step), the turn's Python
        steps read them by name; id ``<turn id prefix>s-NNN``, question ``standalone``.
        """
        turn = self.turns[index]
        if index == 0:
            return BenchmarkCase.model_validate(_case_fields(turn))
        prefix: list[Any] = []
        renamed: dict[str, str] = {}
        for ref in dict.fromkeys(turn.reference.reused_inputs):
            match = _REF.match(ref)
            assert match is not None  # checked by the validator
            earlier = self.turns[int(match.group(1)) - 1]
            step = next(s for s in consolidated_steps(earlier) if s.id == match.group(2))
            statement = next(s for s in step.statements if s.name == match.group(3))
            prefix.append(statement)
            renamed[ref] = statement.name
        steps: list[SqlStep | PythonStep] = []
        if prefix:
            steps.append(SqlStep(kind="sql", objective="Retrieve what the earlier turns "
                                 "retrieved.", statements=prefix))
        for own in turn.reference.steps:
            if isinstance(own, PythonStep):
                own = own.model_copy(update={"inputs": [renamed.get(i, i) for i in own.inputs]})
            steps.append(own)
        fields = _case_fields(turn)
        stem, _, number = turn.id.rpartition("-")
        fields.update(id=f"{stem}s-{number}", question=turn.standalone,
                      reference=Program(steps=steps).model_dump(mode="json"))
        return BenchmarkCase.model_validate(fields)


def _case_fields(turn: TurnCase) -> dict[str, Any]:
    return turn.model_dump(mode="json", exclude={"standalone", "earlier_questions"},
                           exclude_none=True)


class ConversationFile(BaseModel):
    """A YAML conversation file: ``conversations:``."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    conversations: list[ConversationCase] = Field(min_length=1)


def _parse_conversation_file(path: Path) -> tuple[ConversationCase, ...]:
    """The conversations of one file (:func:`load_conversations` keeps them per file)."""
    try:
        data = load_yaml(read_capped_text(path, MAX_DOCUMENT_CHARS,
                                           what=f"conversation file {path}"))
        _check_schema(path, data)
        return tuple(ConversationFile.model_validate(data).conversations)
    except yaml.YAMLError as error:
        raise BenchmarkCaseError(f"{path}: not YAML ({error})") from None
    except ValidationError as error:
        raise BenchmarkCaseError(f"{path}: {validation_problems(error)}") from None


def load_conversations(location: Path = DEFAULT_CONVERSATIONS_DIR,
                       only: tuple[str, ...] = ()) -> list[ConversationCase]:
    """The conversations of a file or of every ``*.yaml`` in a folder (``only``: these ids).

    Raises:
        BenchmarkCaseError: a file is missing, not YAML, or breaks the format (one line per
            problem); an id of ``only`` is unknown; ids repeat.

    """
    files = sorted(location.glob("*.yaml")) if location.is_dir() else [location]
    if not files or not all(path.is_file() for path in files):
        raise BenchmarkCaseError(f"no conversation files at {location}")
    conversations: list[ConversationCase] = []
    for path in files:
        conversations.extend(parsed_file(path, _parse_conversation_file))
    ids = [c.id for c in conversations] + [t.id for c in conversations for t in c.turns]
    repeated = sorted({i for i in ids if ids.count(i) > 1})
    if repeated:
        raise BenchmarkCaseError(f"ids used twice: {', '.join(repeated)}")
    if only:
        unknown = sorted(set(only) - {c.id for c in conversations})
        if unknown:
            raise BenchmarkCaseError(f"unknown conversation ids: {', '.join(unknown)}")
        conversations = [c for c in conversations if c.id in only]
    return conversations


def conversation_schema() -> dict[str, Any]:
    """The JSON Schema (draft 2020-12) of a conversation file, from :class:`ConversationFile`."""
    schema = ConversationFile.model_json_schema()
    return {"$schema": "https://json-schema.org/draft/2020-12/schema",
            "$id": "https://github.com/geoask/geoask/benchmark/conversation.schema.json",
            "title": "geoask conversation case file",
            **{key: value for key, value in schema.items() if key != "title"}}


def _check_schema(path: Path, data: Any) -> None:
    """Validate ``data`` against ``benchmark/conversation.schema.json`` (the published form).

    Raises:
        BenchmarkCaseError: it does not validate (the first problem, with its location).

    """
    import jsonschema

    schema = json.loads(CONVERSATION_SCHEMA_PATH.read_text(encoding="utf-8"))
    error = jsonschema.exceptions.best_match(
        jsonschema.Draft202012Validator(schema).iter_errors(data))
    if error is not None:
        where = "/".join(str(part) for part in error.absolute_path) or "(top level)"
        raise BenchmarkCaseError(f"{path}: {where}: {error.message[:300]}")


def replay_cases(conversations: list[ConversationCase]) -> list[BenchmarkCase]:
    """Every case the reference model must know: each turn and each standalone question."""
    cases: list[BenchmarkCase] = []
    for conversation in conversations:
        cases.extend(conversation.turn_cases())
        cases.extend(conversation.standalone_case(n) for n in range(1, len(conversation.turns)))
    return cases
