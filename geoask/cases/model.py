"""The benchmark case model: a question, its reference program, answer contract and expected result.

A case file (YAML) holds ``cases:``, a list of :class:`BenchmarkCase`. The JSON Schema in
``benchmark/case.schema.json`` is generated from :class:`CaseFile` (``python -m
geoask.cases.schema``) so the schema, this model and ``benchmark/README.md`` say the same thing.
Rules that span fields (sandbox routing, cross-checks of spatial and statistical cases, input
names) are checked by the model validators below. The answer types are those of the final
answer (:class:`geoask.vocabulary.answers.AnswerType`), re-exported here for the benchmark modules.
"""

from __future__ import annotations

from enum import StrEnum
from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator

from geoask.vocabulary.answers import AnswerType

NAME_PATTERN = r"^[a-z][a-z0-9_]{0,62}$"
CASE_ID_PATTERN = r"^[a-z][a-z0-9_]*-[0-9]{3}$"
REUSE_PREFIX = "turn-"
"""Inputs starting so name an earlier turn's artifact (conversation cases only)."""


class Difficulty(StrEnum):
    """How hard a question is.

    ``easy`` (one table: filter, count, sort, Top-K), ``medium`` (joins, grouped aggregation,
    period comparison, global baseline), ``hard`` (topology,
    distances and buffers, several intermediate files, regression, clustering, tests).
    """

    EASY = "easy"
    MEDIUM = "medium"
    HARD = "hard"


class Category(StrEnum):
    """What kind of reasoning the question needs (the benchmark's five categories)."""

    ATTRIBUTE = "attribute_filter_rank"
    AGGREGATION = "grouped_aggregation"
    TEMPORAL = "temporal_comparison"
    SPATIAL = "spatial"
    STATISTICS = "statistics"


Scenario = Annotated[str, Field(
    pattern=NAME_PATTERN,
    description="Free-form name of the scenario (group of tables) the question is about, "
    "lower_snake_case; the report counts cases per scenario.",
)]
"""A scenario name: any lower_snake_case label, e.g. ``census_tracts`` or ``cycle_hire``."""

DATABASE_NAME_PATTERN = r"^[A-Za-z_][A-Za-z0-9_$-]{0,62}$"


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class SqlStatement(_Strict):
    """One named read-only query.

    Its result is exported as ``<name>.geojson`` (with a geometry column, EPSG:4326
    longitude/latitude; ``<name>.parquet``, GeoParquet, from ``GEOASK_SQL_COLUMNAR_ROWS`` rows)
    or ``<name>.json`` (records).
    """

    name: str = Field(
        pattern=NAME_PATTERN, description="Artifact name (file stem), unique in the program."
    )
    sql: str = Field(min_length=1,
                     description="One SELECT statement over the catalog's schema.table names.")


class SqlStep(_Strict):
    """A step that runs one or more checked, read-only SQL statements."""

    kind: Literal["sql"] = Field(description="Step kind.")
    objective: str = Field(min_length=10, description="One sentence: what this step retrieves.")
    statements: list[SqlStatement] = Field(min_length=1, description="Statements, run in order.")


class PythonStep(_Strict):
    """A step that runs one script in the sandbox.

    It reads earlier artifacts from ``/input/<name>.geojson|parquet|json`` and prints the
    protocol object ``{status, summary, result}`` last. Its ``result`` is kept as artifact
    ``<name>.json`` for later steps.
    """

    kind: Literal["python"] = Field(description="Step kind.")
    name: str = Field(pattern=NAME_PATTERN, description="Artifact name of the protocol result.")
    objective: str = Field(min_length=10, description="One sentence: what this step computes.")
    inputs: list[str] = Field(
        default_factory=list, description="Names of earlier artifacts mounted at /input/; in a "
        "conversation turn also `turn-<n>.<step id>.<statement name>`: an SQL result of turn n."
    )
    script: str = Field(min_length=1, description="Python source run in the sandbox.")


Step = Annotated[SqlStep | PythonStep, Field(discriminator="kind")]


class Program(_Strict):
    """Ordered steps, the way the planner emits them; the last step's output is the answer data."""

    steps: list[Step] = Field(min_length=1, description="Steps in execution order.")

    @model_validator(mode="after")
    def _names_resolve(self) -> Program:
        known: set[str] = set()
        for step in self.steps:
            if isinstance(step, PythonStep):
                missing = [name for name in step.inputs
                           if name not in known and not name.startswith(REUSE_PREFIX)]
                if missing:
                    raise ValueError(
                        f"python step {step.name!r} reads {missing}, which no earlier step produces"
                    )
                produced = [step.name]
            else:
                produced = [statement.name for statement in step.statements]
            duplicated = known.intersection(produced)
            if duplicated or len(set(produced)) != len(produced):
                raise ValueError(f"artifact names must be unique: {sorted(duplicated)}")
            known.update(produced)
        return self

    @property
    def reused_inputs(self) -> list[str]:
        """Inputs naming an earlier conversation turn's artifact (``turn-1.sql-1.cells``)."""
        return [name for step in self.steps if isinstance(step, PythonStep)
                for name in step.inputs if name.startswith(REUSE_PREFIX)]

    @property
    def uses_sandbox(self) -> bool:
        """True when a step runs Python."""
        return any(isinstance(step, PythonStep) for step in self.steps)


class Projection(_Strict):
    """How the answer is read from the last step's output.

    The output is a list of records (SQL: the last statement's rows; Python: ``result`` when it
    is a list) or an object (Python ``result`` when it is a mapping). ``records_path`` first
    selects a key of an object output.
    """

    records_path: str | None = Field(
        default=None, description="Key of an object output that holds the records to project."
    )
    value_field: str | None = Field(
        default=None,
        description="scalar/bbox/geometry: the field holding the answer; ranked_list: the "
        "ranking value (optional).",
    )
    entity_field: str | None = Field(
        default=None, description="entity_list/ranked_list: the field holding the entity id."
    )
    key_fields: list[str] = Field(
        default_factory=list, description="records: fields identifying a record (ids, exact)."
    )
    value_fields: list[str] = Field(
        default_factory=list, description="records: compared fields (numbers within tolerance)."
    )
    fields: list[str] = Field(default_factory=list, description="object: the fields kept.")
    unit: str | None = Field(
        default=None,
        description="Unit of the value(s): m, km, m2, km2, mm, degC, USD, %, ratio, count, "
        "years, persons, per_100k, per_1000, degrees (for bbox/geometry in EPSG:4326).",
    )
    order: Literal["none", "ascending", "descending"] = Field(
        default="none", description="ranked_list: direction of the ranking value."
    )


class AnswerContract(_Strict):
    """The answer's type and projection."""

    answer_type: AnswerType = Field(description="Shape of the answer.")
    projection: Projection = Field(description="How it is read from the last step.")

    @model_validator(mode="after")
    def _projection_fits_type(self) -> AnswerContract:
        needed = {
            AnswerType.SCALAR: ("value_field",),
            AnswerType.BBOX: ("value_field",),
            AnswerType.GEOMETRY: ("value_field",),
            AnswerType.ENTITY_LIST: ("entity_field",),
            AnswerType.RANKED_LIST: ("entity_field",),
            AnswerType.RECORDS: ("key_fields", "value_fields"),
            AnswerType.OBJECT: ("fields",),
        }[self.answer_type]
        missing = [name for name in needed if not getattr(self.projection, name)]
        if missing:
            raise ValueError(f"answer_type {self.answer_type} needs projection {missing}")
        return self


class Tolerance(_Strict):
    """Numeric tolerance of a case.

    A number matches when ``|actual - expected| <= max(abs, rel * |expected|)``; ids and
    strings always match exactly. Both zero: numbers must be equal.
    """

    abs: float = Field(default=0.0, ge=0, description="Absolute tolerance, in the answer unit.")
    rel: float = Field(default=0.0, ge=0, le=0.5, description="Relative tolerance (0.01 = 1 %).")


class Expected(_Strict):
    """The projected answer of the reference program (filled by ``geoask bench fill``)."""

    value: Any = Field(default=None, description="Projected answer; null until filled.")
    tolerance: Tolerance = Field(default_factory=Tolerance, description="Numeric tolerance.")


class CrossCheck(_Strict):
    """An independent computation of the same answer another way.

    It must agree with
    ``expected.value`` within ``expected.tolerance``.
    """

    method: str = Field(min_length=10, description="How it differs from the reference program.")
    policy: Literal["separated", "postgis"] = Field(
        default="postgis", description="SQL guard policy of its SQL (postgis allows ST_*)."
    )
    program: Program = Field(description="The independent program.")
    projection: Projection | None = Field(
        default=None, description="Projection of its output; default: the case's projection."
    )


class BenchmarkCase(_Strict):
    """One verified benchmark question."""

    id: str = Field(pattern=CASE_ID_PATTERN, description="'<scenario-prefix>-NNN', unique.")
    question: str = Field(min_length=15, description="The natural-language question.")
    difficulty: Difficulty
    category: Category
    scenario: Scenario
    requires_sandbox: bool = Field(description="True when the reference program runs Python.")
    measurement: str | None = Field(
        default=None,
        description="Spatial cases: the CRS or geodesic method used for distances and areas.",
    )
    reference: Program = Field(description="The reference program (policy `separated`).")
    answer: AnswerContract
    expected: Expected
    cross_check: CrossCheck | None = Field(
        default=None, description="Required for spatial and statistics cases."
    )

    @model_validator(mode="after")
    def _consistent(self) -> BenchmarkCase:
        if self.requires_sandbox != self.reference.uses_sandbox:
            raise ValueError(
                f"requires_sandbox is {self.requires_sandbox} but the reference program "
                f"{'has' if self.reference.uses_sandbox else 'has no'} python step"
            )
        if self.category in (Category.SPATIAL, Category.STATISTICS) and self.cross_check is None:
            raise ValueError(f"a {self.category} case needs a cross_check")
        if self.category is Category.SPATIAL and not self.measurement:
            raise ValueError("a spatial case must state its measurement method (CRS/geodesic)")
        return self


class CaseFile(_Strict):
    """A YAML case file: optionally the catalog and database it is about, then ``cases:``.

    Without ``catalog`` and ``database`` the cases run against the configured ones
    (GEOASK_CATALOG_PATH, GEOASK_DATABASE_URL or the embedded cluster's database).
    """

    catalog: str | None = Field(
        default=None, min_length=1,
        description="Path of the semantic catalog the cases are about, relative to this file "
        "(default: GEOASK_CATALOG_PATH).")
    database: str | None = Field(
        default=None, pattern=DATABASE_NAME_PATTERN,
        description="Name of the database on the configured server the cases run against; "
        "same host, port and reader role (default: the configured database).")
    cases: list[BenchmarkCase] = Field(min_length=1, description="The cases of this file.")

    @model_validator(mode="after")
    def _no_reuse(self) -> CaseFile:
        reusing = [case.id for case in self.cases if case.reference.reused_inputs]
        if reusing:
            raise ValueError(f"cases {', '.join(reusing)} read `turn-` inputs; only "
                             "conversation turns (benchmark/conversations) reuse artifacts")
        return self
