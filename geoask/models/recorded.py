"""The ``recorded:<run folder>`` model: a run replayed, offline, from its call transcripts.

A user hands over the folder of a run that went wrong; ``GEOASK_MODEL=recorded:<folder>``
(or ``recorded:<run id>`` for a folder under ``GEOASK_ARTIFACT_ROOT``) answers every agent
call of a new run with the responses recorded in its ``calls/<n>-<role>.json``, per role in
order, and fails again where the recorded request failed (the same HTTP status). Each role
answers in the output mode it was recorded in. The pipeline, guard, database and sandbox run
for real, so the replay reaches the recorded outcome unless geoask itself has changed; when
the replay asks a role for more responses than were recorded it stops with one clear line.
A recording answers only its own question:
:func:`geoask.models.recordings.check_recorded_question` refuses another one (the recorded
run's ``execution_log.json`` holds its question), before any run starts.
"""

from __future__ import annotations

import json
from collections import deque
from pathlib import Path

from pydantic_ai import exceptions as ai_errors
from pydantic_ai.messages import ModelMessage, ModelResponse
from pydantic_ai.models import Model, ModelRequestParameters
from pydantic_ai.profiles import ModelProfile
from pydantic_ai.settings import ModelSettings

from geoask.errors import ConfigurationError, ModelCallError
from geoask.models.recordings import (
    CALLS_FOLDER,
    RECORDED_PREFIX,
)
from geoask.models.transcripts import CallTranscript, RequestRecord, load_response


def load_transcripts(folder: Path) -> list[CallTranscript]:
    """The call transcripts of a run folder, in call order.

    Raises:
        ConfigurationError: a transcript cannot be read.

    """
    transcripts = []
    for path in (folder / CALLS_FOLDER).glob("*.json"):
        try:
            transcripts.append(CallTranscript.model_validate(json.loads(path.read_text())))
        except (OSError, ValueError) as error:
            raise ConfigurationError(f"cannot read the call transcript {path}: "
                                     f"{str(error).splitlines()[0]}") from None
    return sorted(transcripts, key=lambda transcript: transcript.n)


class RecordedModel(Model):
    """Answers one role's requests with that role's recorded responses, in order."""

    def __init__(self, folder: Path, role: str) -> None:
        """Read ``folder``'s transcripts of ``role``.

        Raises:
            ConfigurationError: the folder has no transcripts or one cannot be read.

        """
        calls = [call for call in load_transcripts(folder) if call.role == role]
        mode = calls[0].output_mode if calls else "tool"
        super().__init__(profile=ModelProfile(default_structured_output_mode=mode,  # type: ignore[typeddict-item]
                                              supports_json_schema_output=True))
        self._folder = folder
        self._role = role
        self._queue: deque[RequestRecord] = deque(
            record for call in calls for record in call.requests)

    @property
    def model_name(self) -> str:
        """``recorded:<folder>``."""
        return f"{RECORDED_PREFIX}{self._folder}"

    @property
    def system(self) -> str:
        """The provider name of recorded responses."""
        return "recorded"

    async def request(self, messages: list[ModelMessage], model_settings: ModelSettings | None,
                      model_request_parameters: ModelRequestParameters) -> ModelResponse:
        """The next recorded response of the role, or its recorded failure raised again.

        Raises:
            ModelCallError: the recording has no further response for the role.
            ModelHTTPError: the recorded request failed with this HTTP status.

        """
        if not self._queue:
            raise ModelCallError(self._role, f"the recording in {self._folder} has no further "
                                 "response for this agent: the replay took another path than "
                                 "the recorded run")
        record = self._queue.popleft()
        if record.response is not None:
            return load_response(record.response)
        if record.status_code is not None:
            raise ai_errors.ModelHTTPError(record.status_code, self.model_name,
                                           body=record.error)
        raise ai_errors.UnexpectedModelBehavior(f"recorded failure: {record.error}")


__all__ = ["RecordedModel", "load_transcripts"]
