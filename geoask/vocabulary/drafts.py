"""What the step agents write: SQL statements for an SQL step, a script for a Python step.

The SQL agent (``agents/sql.py``) answers with :class:`SqlDraft` or :class:`SqlRefusal`, the
compute agent (``agents/compute.py``) with :class:`ComputeScript` or :class:`ComputeRefusal`;
the flow's tasks and the offline reference model (:mod:`geoask.models.reference`) use them too.
"""

from __future__ import annotations

import ast
from typing import Final

from pydantic import BaseModel, Field

from geoask.base.compact_schema import COMPACT_SCHEMA, NESTED_SCHEMA
from geoask.vocabulary.text import LIST_ITEMS, Phrase, Sentence

METRIC_MEASUREMENT_CALLS: Final = frozenset({"to_crs", "estimate_utm_crs", "Geod"})
"""Names by which a script measures in metres: it reprojects, or measures with ``pyproj.Geod``
(the compute agent's rule for a question with a distance, ``agents/compute.py``)."""


def measures_in_metres(tree: ast.Module) -> bool:
    """True when a parsed script names one of :data:`METRIC_MEASUREMENT_CALLS`.

    >>> measures_in_metres(ast.parse("from pyproj import Geod; Geod(ellps='WGS84')"))
    True
    >>> measures_in_metres(ast.parse("x = 1"))
    False
    """
    for node in ast.walk(tree):
        name = node.attr if isinstance(node, ast.Attribute) else (
            node.id if isinstance(node, ast.Name) else None)
        if name in METRIC_MEASUREMENT_CALLS:
            return True
    return False


class SqlStatement(BaseModel):
    """One statement; its result is exported as the artifact ``<name>.geojson|json``."""

    model_config = NESTED_SCHEMA

    name: str = Field(pattern=r"^[a-z][a-z0-9_]{0,39}$", description="Artifact file name.")
    sql: str
    purpose: Sentence = Field(description="What the result holds, one sentence.")


class SqlDraft(BaseModel):
    """The statements for the step."""

    model_config = COMPACT_SCHEMA

    statements: list[SqlStatement] = Field(min_length=1, max_length=6)
    needs_python: bool = False


class SqlRefusal(BaseModel):
    """The step cannot be done with the given schema."""

    model_config = COMPACT_SCHEMA

    reason: Sentence


SqlOutput = SqlDraft | SqlRefusal


class ComputeScript(BaseModel):
    """The script for the step."""

    model_config = COMPACT_SCHEMA

    script: str = Field(description="Complete Python source.")
    method: Sentence = Field(
        description="One sentence, naming the CRS (e.g. 'UTM 17N, EPSG:32617').")


class ComputeRefusal(BaseModel):
    """The step cannot be computed from its inputs (name any missing fields)."""

    model_config = COMPACT_SCHEMA

    reason: Sentence
    missing_fields: list[Phrase] = Field(default_factory=list, max_length=LIST_ITEMS)


ComputeOutput = ComputeScript | ComputeRefusal

