"""What ``recorded:<run>`` names: a run folder and its question, checked before any model loads.

The replay model itself (:mod:`geoask.models.recorded`) needs pydantic-ai; a question's request
check (:func:`check_recorded_models`, run by every entry point) needs only the run folder and
its ``execution_log.json``, so it lives here and ``geoask ask`` does not import a model stack to
refuse a recording of another question.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Final

from geoask.errors import ConfigurationError
from geoask.settings import Settings
from geoask.settings.models import AGENT_ROLES

ROLES: Final = tuple(role.name for role in AGENT_ROLES)
CALLS_FOLDER: Final = "calls"
"""The run folder's sub-folder of transcripts (``calls/<n>-<role>.json``)."""
RECORDED_PREFIX: Final = "recorded:"
EXECUTION_LOG: Final = "execution_log.json"
"""The run folder's execution log, which names the recorded run's question."""


def run_folder(reference: str, artifact_root: Path | None = None) -> Path:
    """The run folder a ``recorded:`` model names: a folder path, or a run id under the root.

    Raises:
        ConfigurationError: neither names a folder with a ``calls/`` sub-folder.

    """
    candidates = [Path(reference).expanduser()]
    if artifact_root is not None:
        candidates.append(artifact_root / reference)
    for folder in candidates:
        if (folder / CALLS_FOLDER).is_dir():
            return folder
    raise ConfigurationError(
        f"recorded:{reference} names no run folder with call transcripts ({CALLS_FOLDER}/); "
        "give the path of a run folder, or a run id under GEOASK_ARTIFACT_ROOT")


def check_recorded_question(reference: str, question: str,
                            artifact_root: Path | None = None) -> None:
    """Refuse replaying the run ``reference`` names for a ``question`` it did not answer.

    Questions are compared with their whitespace runs made single spaces.

    Raises:
        ConfigurationError: no such run folder, its execution log names no question, or its
            question is another one (the message quotes both).

    """
    folder = run_folder(reference, artifact_root)
    try:
        recorded = json.loads((folder / EXECUTION_LOG).read_text(encoding="utf-8"))["question"]
    except (OSError, ValueError, KeyError, TypeError):
        raise ConfigurationError(
            f"recorded:{reference} has no {EXECUTION_LOG} naming its question, so it cannot "
            "be replayed") from None
    if " ".join(str(recorded).split()) != " ".join(question.split()):
        raise ConfigurationError(
            f"recorded:{reference} replays the question {_quoted(str(recorded))}, not "
            f"{_quoted(question)}; ask the recorded question, or use another model")


def _quoted(text: str, limit: int = 120) -> str:
    text = " ".join(text.split())
    return repr(text if len(text) <= limit else text[: limit - 1] + "…")


def check_recorded_models(question: str, settings: Settings, model: str | None = None) -> None:
    """Refuse a ``recorded:`` model (``model``, ``GEOASK_MODEL`` or a role's) for another question.

    Raises:
        ConfigurationError: a recorded model's run answered a different question
            (:func:`check_recorded_question`).

    """
    names = {model or settings.model, *(getattr(settings, f"model_{role}") for role in ROLES)}
    for name in sorted(str(n).strip() for n in names if n):
        if name.startswith(RECORDED_PREFIX):
            check_recorded_question(name.removeprefix(RECORDED_PREFIX), question,
                                    local_artifact_root(settings))


def local_artifact_root(settings: Settings) -> Path | None:
    """The artifact root as a local folder, None when it is a remote (fsspec) URL."""
    root = settings.artifact_root_url
    return Path(root) if "://" not in root else None

__all__ = ["CALLS_FOLDER", "EXECUTION_LOG", "RECORDED_PREFIX", "check_recorded_models",
           "check_recorded_question", "local_artifact_root", "run_folder"]
