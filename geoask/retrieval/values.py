"""Distinct values of short text columns (place names, categories) for lexical matching.

The catalog lists values only where they are few; place names ('Virginia', 'Mecklenburg',
'Germany') live in the data. :class:`DatabaseValueSource` reads them from the live database
when the schema index is built (``geoask catalog index``); :class:`ValueStore` keeps them next
to the index, keyed by the catalog and the database, so retrieval at question time reads the
stored lexicon and never the data.
"""

from __future__ import annotations

import hashlib
import json
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol

import psycopg
from psycopg import sql
from psycopg.conninfo import conninfo_to_dict

from geoask.catalog.model import Catalog, Column

_TEXT_TYPE = re.compile(r"^(text|varchar|character varying|char|character)\b", re.IGNORECASE)

ColumnValues = dict[str, list[str]]
"""'table.column' → sorted distinct non-null values of a low-cardinality text column."""


def is_text_column(column: Column) -> bool:
    """True for text/char/varchar columns (where names and categories live)."""
    return bool(_TEXT_TYPE.match(column.type.strip()))


class ValueSource(Protocol):
    """Gives the distinct values of a catalog's low-cardinality text columns."""

    def distinct_values(self, catalog: Catalog) -> ColumnValues:
        """'table.column' → sorted distinct non-null values, for columns with few of them."""
        ...


def database_fingerprint(url: str) -> str:
    """Which database ``url`` names, without its credentials: ``host:port/dbname``.

    >>> database_fingerprint("postgresql://reader:secret@127.0.0.1:55432/geoask")
    '127.0.0.1:55432/geoask'

    Raises:
        psycopg.ProgrammingError: ``url`` is not a libpq URL or conninfo string.

    """
    parts = conninfo_to_dict(url)
    return f"{parts.get('host', '')}:{parts.get('port', '5432')}/{parts.get('dbname', '')}"


@dataclass(frozen=True)
class DatabaseValueSource:
    """Reads distinct values from the database over a read-only connection.

    One ``SELECT DISTINCT col::text ... LIMIT max_distinct + 1`` per text column of each catalog
    table (in the table's own schema), under ``statement_timeout_s``: a column with more than
    ``max_distinct`` values (county or street names, where an ordinary word would too often be
    a name) is left out, as is one whose query fails or times out.

    Raises (from :meth:`distinct_values`):
        psycopg.OperationalError: the database cannot be reached (or the connection drops).

    """

    url: str
    max_distinct: int = 200
    statement_timeout_s: int = 30
    connect_timeout_s: int = 5

    def distinct_values(self, catalog: Catalog) -> ColumnValues:
        """'table.column' → sorted distinct values (see the class docstring)."""
        out: ColumnValues = {}
        with psycopg.connect(self.url, connect_timeout=self.connect_timeout_s) as conn:
            conn.read_only = True
            conn.execute("SELECT set_config('statement_timeout', %s, false)",
                         [f"{self.statement_timeout_s * 1000}"])
            for table in catalog.tables:
                relation = sql.Identifier(catalog.schema_of(table), table.name)
                for column in (c for c in table.columns if is_text_column(c)):
                    values = self._column_values(conn, relation, column.name)
                    if values is not None:
                        out[f"{table.name}.{column.name}"] = values
        return out

    def _column_values(self, conn: psycopg.Connection, relation: sql.Identifier,
                       column: str) -> list[str] | None:
        query = sql.SQL("SELECT DISTINCT {c}::text FROM {r} WHERE {c} IS NOT NULL LIMIT %s").format(
            c=sql.Identifier(column), r=relation)
        try:
            with conn.transaction():  # a savepoint: one failed column does not end the rest
                rows = conn.execute(query, [self.max_distinct + 1]).fetchall()
        except psycopg.Error:
            if conn.broken:
                raise
            return None  # missing table or column, timeout, permission
        return sorted(str(row[0]) for row in rows) if len(rows) <= self.max_distinct else None


@dataclass(frozen=True)
class ValueStore:
    """Stored column values, one JSON file per (catalog, database, max_distinct) under ``folder``.

    Files are ``<folder>/column_values-<key>.json``, the key a SHA-256 prefix of the catalog's
    content, the :func:`database_fingerprint` and ``max_distinct``: a changed catalog or another
    database needs a new ``geoask catalog index``; changed data needs ``--force``.
    """

    folder: Path

    def path(self, catalog: Catalog, database: str, max_distinct: int) -> Path:
        """The file holding the values for this catalog, database and bound."""
        digest = hashlib.sha256(f"{database};{max_distinct};".encode())
        digest.update(catalog.model_dump_json(by_alias=True).encode())
        return self.folder / f"column_values-{digest.hexdigest()[:16]}.json"

    def read(self, catalog: Catalog, database: str, max_distinct: int) -> ColumnValues | None:
        """The stored values, or None when none were stored (or the file is unreadable)."""
        path = self.path(catalog, database, max_distinct)
        try:
            stored = json.loads(path.read_text(encoding="utf-8"))
            return {key: list(values) for key, values in stored["values"].items()}
        except (OSError, ValueError, KeyError, TypeError, AttributeError):
            return None

    def write(self, catalog: Catalog, database: str, max_distinct: int,
              values: ColumnValues) -> Path:
        """Store ``values``; returns the file written.

        Raises:
            OSError: the folder cannot be written.

        """
        path = self.path(catalog, database, max_distinct)
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps({"database": database, "values": values}), encoding="utf-8")
        return path
