"""Flow ``load_demo_data``: load the committed demo data into PostGIS (``geoask db load``).

Run: ``geoask db load [--force]`` (or ``python -m flows.load_demo_data``).
"""

from __future__ import annotations

from pathlib import Path

from prefect import flow
from pydantic import BaseModel

from geoask.catalog.model import load_catalog
from geoask.db.cluster import data_schema
from geoask.db.loading import TableCheck
from geoask.db.urls import owner_url
from geoask.settings import get_settings
from tasks.demo_data import (
    add_keys_and_comments,
    copy_table,
    create_staging,
    data_file,
    data_fingerprint,
    drop_schema,
    loaded_fingerprint,
    publish_schema,
    verify_schema,
)


class LoadSummary(BaseModel):
    """What a load did: whether anything changed, and each table's verified row count."""

    schema_name: str
    changed: bool
    fingerprint: str
    rows: dict[str, int]


@flow(name="load_demo_data", log_prints=True)
def load_demo_data(
    force: bool = False,
    schema_name: str | None = None,
    catalog_path: Path | None = None,
    data_dir: Path | None = None,
) -> LoadSummary:
    """Load every catalog table from the data folder into the data schema, verified.

    Defaults come from the settings (GEOASK_DATA_SCHEMA or the catalog's schema,
    GEOASK_CATALOG_PATH, GEOASK_DEMO_DATA_DIR). A load whose catalog and data files are
    unchanged since the last one changes nothing (unless ``force``). Raises DataValidationError
    when verification fails; the published schema is then left as it was and the staging schema
    is dropped.
    """
    settings = get_settings()
    schema = schema_name or data_schema(settings)
    catalog_path = catalog_path or settings.catalog_path
    data_dir = data_dir or settings.demo_data_dir
    catalog = load_catalog(catalog_path)
    url = owner_url(settings)
    staging = f"{schema}_staging"
    fingerprint = data_fingerprint(data_dir, catalog_path)
    if not force and loaded_fingerprint(url, schema) == fingerprint:
        return _summary(schema, False, fingerprint, verify_schema(url, schema, catalog))
    create_staging(url, staging, catalog)
    try:
        for table in catalog.tables:
            copy_table(url, staging, table, data_file(data_dir, table))
        add_keys_and_comments(url, staging, catalog)
        verify_schema(url, staging, catalog)
    except Exception:
        drop_schema(url, staging)
        raise
    publish_schema(url, staging, schema, fingerprint)
    return _summary(schema, True, fingerprint, verify_schema(url, schema, catalog))


def _summary(schema: str, changed: bool, fingerprint: str, checks: list[TableCheck]) -> LoadSummary:
    return LoadSummary(schema_name=schema, changed=changed, fingerprint=fingerprint,
                       rows={c.table: c.rows for c in checks})


if __name__ == "__main__":
    print(load_demo_data().model_dump_json(indent=2))
