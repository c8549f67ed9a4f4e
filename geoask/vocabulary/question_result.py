"""What a question run returns: :class:`QuestionResult` (the ``answer-question`` flow's result).

A module of its own, importing only pydantic and the answer model, so that ``geoask ask`` can
read a result it got from the server's warm worker (:mod:`geoask.service.worker`) without
importing Prefect or the flow.
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, Field

from geoask.base.result_view import result_html, result_text
from geoask.vocabulary.answers import FinalAnswer

Outcome = Literal["answered", "rejected", "failed"]


class QuestionResult(BaseModel):
    """What a question run returns.

    Attributes:
        status: ``answered``, ``rejected`` (out of scope) or ``failed`` (a bound was exhausted
            or no acceptable answer could be made; ``message`` says what was tried).
        answer: the final answer when answered.
        message: the answer's summary, the rejection reply or the failure report.
        evidence: a short evidence trail (one line per step and decision).
        transitions: the transitions taken, in order.
        route: ``sql_only`` or ``sql_then_python``.
        run_id: the run's id.
        artifact_folder: fsspec URL of the run's artifact folder.
        flow_run_id: the Prefect flow run (its artifacts are in the UI), when known.
        maps: URLs of the answer maps (``map.png``, ``map.html``) when some were drawn.
        names: the names of the answer's codes (``{"CT": "Connecticut"}``) from the catalog's
            label columns (:mod:`geoask.maps.key_lookup`), shown beside the codes.
        geopackage: URL of ``layers.gpkg``, every layer of the run in its native CRS, when
            the run registered one.
        dashboard_url: the flow run's page in the Prefect UI, when known.
        conversation: the conversation id when the run was a conversation turn.
        turn: its turn number in that conversation.
        reused: refs of earlier turns' artifacts it read instead of querying again.

    """

    status: Outcome
    answer: FinalAnswer | None = None
    message: str
    evidence: list[str] = Field(default_factory=list)
    transitions: list[str] = Field(default_factory=list)
    route: str = "sql_only"
    run_id: str
    artifact_folder: str
    flow_run_id: str | None = None
    maps: list[str] = Field(default_factory=list)
    names: dict[str, str] = Field(default_factory=dict)
    geopackage: str | None = None
    dashboard_url: str | None = None
    conversation: str | None = None
    turn: int | None = None
    reused: list[str] = Field(default_factory=list)

    def __repr__(self) -> str:
        """What ``geoask ask`` prints (:func:`geoask.base.result_view.result_text`)."""
        return result_text(self)

    def __str__(self) -> str:
        """What ``geoask ask`` prints, for ``print(result)`` too (pydantic's own is a repr)."""
        return result_text(self)

    def _repr_html_(self) -> str:
        """The notebook view: the answer as a table, the map inline (``result_html``)."""
        return result_html(self)
