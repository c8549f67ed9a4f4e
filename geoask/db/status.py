"""What ``geoask db status`` reports: is the database up, how to reach it, what is loaded."""

from __future__ import annotations

import functools

import psycopg
from psycopg import sql
from pydantic import BaseModel

from geoask.catalog.model import CATALOG_PATH, Catalog
from geoask.db.cluster import EmbeddedCluster
from geoask.db.urls import reader_url, uses_external_database
from geoask.errors import GeoaskError
from geoask.settings import Settings


class DatabaseStatus(BaseModel):
    """Status of the database geoask uses; ``row_counts`` maps table -> rows (None: absent).

    ``reachable`` is True when the reader role could connect and count; ``catalog`` is the
    catalog whose tables were counted, ``catalog_hint`` what to set when that catalog is the
    shipped demo one but the database is another server's.
    """

    mode: str
    running: bool
    reader_url: str | None
    row_counts: dict[str, int | None]
    message: str | None = None
    catalog: str = ""
    catalog_hint: str | None = None

    @property
    def reachable(self) -> bool:
        """The database answered the reader role."""
        return self.reader_url is not None


def database_status(settings: Settings, catalog: Catalog) -> DatabaseStatus:
    """Probe the external server or the embedded cluster and count each catalog table's rows.

    Each table is counted in the schema the catalog places it in (``Catalog.schema_of``), so
    a catalog of the user's own database (several schemas, quoted names) is counted as well.
    """
    external = uses_external_database(settings)
    mode = "external" if external else "embedded"
    running = True if external else EmbeddedCluster(settings).is_running()
    counts: dict[str, int | None] = {t.name: None for t in catalog.tables}
    hint = ("this is the shipped demo catalog, not a catalog of that server's database: set "
            "GEOASK_CATALOG_PATH to its catalog (draft one with `geoask catalog draft`)"
            if external and settings.catalog_path.resolve() == CATALOG_PATH.resolve() else None)
    status = functools.partial(DatabaseStatus, mode=mode, catalog=str(settings.catalog_path),
                               catalog_hint=hint)
    if not running:
        return status(running=False, reader_url=None, row_counts=counts,
                      message="not running; start it with `geoask db up`")
    try:
        url = reader_url(settings)
        with psycopg.connect(url, connect_timeout=5) as conn:
            for table in catalog.tables:
                name = sql.SQL("{}.{}").format(sql.Identifier(catalog.schema_of(table)),
                                               sql.Identifier(table.name))
                present = conn.execute("SELECT to_regclass(%s) IS NOT NULL",
                                       (name.as_string(conn),)).fetchone()
                if present and present[0]:
                    row = conn.execute(sql.SQL("SELECT count(*) FROM {}").format(name)).fetchone()
                    counts[table.name] = row[0] if row else None
    except (psycopg.Error, GeoaskError) as error:
        return status(running=not external, reader_url=None, row_counts=counts,
                      message=f"cannot connect: {error}")
    return status(running=True, reader_url=url, row_counts=counts)
