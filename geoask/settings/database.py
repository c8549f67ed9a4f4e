"""Settings of geoask: the database, the catalog and the SQL guard.

One group of :class:`geoask.settings.Settings` (a ``GEOASK_*`` variable per field).
"""

from __future__ import annotations

from pathlib import Path
from typing import Literal

from pydantic import BaseModel, Field

from geoask.base.ports import DB_PORT
from geoask.settings.paths import PACKAGE, default_home


class DatabaseSettings(BaseModel):
    """The database, the catalog and the SQL guard."""

    home: Path = Field(
        default_factory=default_home,
        description=(
            "Project-local state folder (default: .geoask in the source checkout, else ~/.geoask): "
            "embedded cluster, sandbox runtime, artifacts, indexes."
        ),
    )
    database_url: str | None = Field(
        default=None,
        description=(
            "Connection URL of an existing PostGIS server for the reader role. When set, "
            "geoask starts no embedded cluster and uses this server instead."
        ),
    )
    owner_database_url: str | None = Field(
        default=None,
        description=(
            "Connection URL with rights to create the demo schema and load data on an "
            "external server (needed by `geoask db load` when GEOASK_DATABASE_URL is set)."
        ),
    )
    db_port: int = Field(
        default=DB_PORT.default, ge=1024, le=65535,
        description="TCP port of the embedded cluster (listens on 127.0.0.1 only).",
    )
    db_os_user: str = Field(
        default="geoask",
        description="Unprivileged OS user that runs the embedded cluster when geoask runs as root.",
    )
    pg_bindir: Path = Field(
        default=Path("/usr/lib/postgresql/15/bin"),
        description="Folder holding initdb, pg_ctl and postgres (PostgreSQL 15).",
    )
    data_schema: str | None = Field(
        default=None,
        description="Schema the demo loader writes the demo tables into (default: the catalog's "
        "`schema`); everything else takes each table's schema from the catalog.",
    )
    catalog_path: Path = Field(
        default=PACKAGE / "catalog" / "catalog.yaml",
        description="The semantic catalog (YAML) describing the database's tables, in one or "
        "more schemas (draft one with `geoask catalog draft`).",
    )
    demo_data_dir: Path = Field(
        default=PACKAGE / "demo_data",
        description="Folder of the prepared demo data files (GeoParquet/Parquet) to load.",
    )
    statement_timeout_s: int = Field(
        default=30, ge=1, description="Statement timeout of the reader role and executor (s)."
    )
    catalog_sample_budget_s: float = Field(
        default=5.0, gt=0,
        description="Seconds the statistics of one table or view may take in `catalog draft` "
        "(a statement_timeout on its sampling queries); a slower one, such as a view that "
        "aggregates geometries, gets a note in the draft instead of more statistics.",
    )
    sql_policy: Literal["separated", "postgis"] = Field(
        default="separated",
        description=(
            "SQL guard spatial policy: `separated` rejects spatial computation in SQL (ST_* "
            "functions, geometry operators, geography casts) so it is done in Python, except "
            "bounding-box screens (`geom && <box of constants or of a key-selected geometry>` "
            "in WHERE/JOIN ON, filter-refine); "
            "`postgis` allows it."
        ),
    )
    sql_row_cap: int = Field(
        default=100_000, ge=1,
        description="Most rows a checked query may return; a larger result is refused "
        "(`result_too_large`: screen candidates, aggregate or select fewer rows), never cut.",
    )
    sql_max_result_mib: int = Field(
        default=256, ge=1, le=65536,
        description="Largest query result fetched (approximate size in memory, MiB); a larger "
        "one is refused with a `result_too_large` error asking for fewer rows or aggregation.",
    )
    sql_columnar_rows: int = Field(
        default=10_000, ge=1,
        description="A query result with geometry and at least this many rows is exported as "
        "GeoParquet (WKB, CRS in its `geo` metadata; read with geopandas.read_parquet) instead "
        "of GeoJSON: from 10,000 rows GeoJSON reads 2-10x slower and is 3-7x larger "
        "(`benchmark/export_formats.py`); one without geometry as Parquet "
        "(pandas.read_parquet) instead of JSON. Both stream in batches as fetched.",
    )
    sql_max_chars: int = Field(
        default=20_000, ge=100, le=1_000_000,
        description="Longest SQL text the guard checks (characters); longer text is refused "
        "in one line before any parsing (parse time and memory grow with length).",
    )
    sql_functions_from_catalog: bool = Field(
        default=True,
        description="Under the `postgis` policy, also allow the PostGIS functions the "
        "connected database's catalog marks IMMUTABLE/STABLE (minus a deny-list of management "
        "functions); off, or without a database, the hand-kept list alone applies.",
    )
    sql_preview_rows: int = Field(
        default=5, ge=0, description="Rows shown in a result preview (CLI, execution state)."
    )
