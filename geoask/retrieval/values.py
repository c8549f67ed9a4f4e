"""Distinct values of short text columns (place names, categories) for lexical matching.

The catalog lists values only where they are few; place names ('Virginia', 'Mecklenburg',
'Germany') live in the data. A :class:`ValueSource` reads them once when a retriever opens.
"""

from __future__ import annotations

import hashlib
import json
import re
from pathlib import Path
from typing import Protocol

from geoask.catalog.model import Catalog, Column

_TEXT_TYPE = re.compile(r"^(text|varchar|character varying|char|character)\b", re.IGNORECASE)


def is_text_column(column: Column) -> bool:
    """True for text/char/varchar columns (where names and categories live)."""
    return bool(_TEXT_TYPE.match(column.type.strip()))


class ValueSource(Protocol):
    """Gives the distinct values of a catalog's low-cardinality text columns."""

    def distinct_values(self, catalog: Catalog) -> dict[str, list[str]]:
        """'table.column' → sorted distinct non-null values, for columns with few of them."""
        ...


class ParquetValueSource:
    """Reads the prepared demo data files ``<folder>/<table>.parquet`` (GeoParquet/Parquet).

    Columns with more than ``max_distinct`` distinct values (county or street names) are left
    out: there, an ordinary word would too often be a name. Missing files are skipped.
    """

    def __init__(
        self, folder: Path, max_distinct: int = 200, cache_dir: Path | None = None
    ) -> None:
        self.folder = folder
        self.max_distinct = max_distinct
        self.cache_dir = cache_dir

    def _fingerprint(self, catalog: Catalog) -> str:
        digest = hashlib.sha256(f"{self.max_distinct}".encode())
        for table in catalog.tables:
            path = self.folder / f"{table.name}.parquet"
            if path.exists():
                stat = path.stat()
                digest.update(f"{table.name}:{stat.st_size}:{stat.st_mtime_ns};".encode())
        return digest.hexdigest()

    def distinct_values(self, catalog: Catalog) -> dict[str, list[str]]:
        """'table.column' → distinct values, cached in ``cache_dir`` until a file changes."""
        cache = self.cache_dir / "column_values.json" if self.cache_dir else None
        fingerprint = self._fingerprint(catalog)
        if cache is not None and cache.exists():
            stored = json.loads(cache.read_text(encoding="utf-8"))
            if stored.get("fingerprint") == fingerprint:
                return {k: list(v) for k, v in stored["values"].items()}
        values = self._read(catalog)
        if cache is not None:
            cache.parent.mkdir(parents=True, exist_ok=True)
            cache.write_text(json.dumps({"fingerprint": fingerprint, "values": values}),
                             encoding="utf-8")
        return values

    def _read(self, catalog: Catalog) -> dict[str, list[str]]:
        import pyarrow.compute as pc
        import pyarrow.parquet as pq

        out: dict[str, list[str]] = {}
        for table in catalog.tables:
            path = self.folder / f"{table.name}.parquet"
            columns = [c.name for c in table.columns if is_text_column(c)]
            if not path.exists() or not columns:
                continue
            present = set(pq.read_schema(path).names)
            data = pq.read_table(path, columns=[c for c in columns if c in present])
            for name in data.column_names:
                unique = pc.unique(data.column(name).drop_null())
                if len(unique) <= self.max_distinct:
                    out[f"{table.name}.{name}"] = sorted(str(v) for v in unique.to_pylist())
        return out
