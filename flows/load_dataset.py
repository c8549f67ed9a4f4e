"""Flow ``load_dataset``: load a dataset manifest's files into their own database.

Run: ``geoask db load-dataset benchmark/databases/spdata [--force] [--owner-url URL]`` (or
``python -m flows.load_dataset PATH``).
"""

from __future__ import annotations

import sys
from pathlib import Path

from prefect import flow
from pydantic import BaseModel

from geoask.db import loading
from geoask.db.dataset import Dataset, manifest_path
from geoask.db.dataset import load_dataset as read_manifest
from geoask.db.loading import TableCheck
from geoask.db.urls import DatasetTarget
from geoask.settings import get_settings
from tasks.dataset import (
    add_keys,
    copy_table,
    create_staging_schemas,
    define_spatial_ref_sys,
    drop_new_database,
    drop_staging,
    loaded_fingerprints,
    prepare_database,
    publish_dataset,
    verify_dataset,
)


class DatasetLoadSummary(BaseModel):
    """What a load did: whether anything changed, rows per table and view, the reader URL."""

    database: str
    changed: bool
    fingerprint: str
    rows: dict[str, int]
    reader_url: str | None


@flow(name="load_dataset", log_prints=True)
def load_dataset(path: Path, force: bool = False,
                 owner_url: str | None = None) -> DatasetLoadSummary:
    """Load every table of the manifest at ``path`` (file or folder), verified; views after.

    A load whose manifest and data files are unchanged since the last one changes nothing
    (unless ``force``). Raises DatasetError for a bad manifest, ConfigurationError when an
    external server lacks ``owner_url``, DataValidationError when verification fails (the
    published schemas are then left as they were and the staging schemas dropped; a database
    the failed load created in the embedded cluster is dropped too).
    """
    manifest = manifest_path(Path(path))
    dataset = read_manifest(manifest)
    target = prepare_database(get_settings(), dataset.database, owner_url)
    try:
        return _load(dataset, manifest, target, force)
    except Exception:
        if target.created:  # a failed first load leaves no empty database behind
            drop_new_database(get_settings(), dataset.database)
        raise


def _load(dataset: Dataset, manifest: Path, target: DatasetTarget,
          force: bool) -> DatasetLoadSummary:
    base = manifest.parent
    fingerprint = loading.fingerprint(manifest, [base / t.file for t in dataset.tables])
    loaded = loaded_fingerprints(target.owner_url, dataset.schemas)
    if not force and all(f == fingerprint for f in loaded):
        checks = verify_dataset(target.owner_url, dataset, base, staged=False)
        return _summary(dataset.database, False, fingerprint, checks, target.reader_url)
    define_spatial_ref_sys(target.owner_url, dataset)
    create_staging_schemas(target.owner_url, dataset, base)
    definitions = dataset.definitions
    try:
        for table in dataset.tables:
            copy_table(target.owner_url, table, base / table.file, definitions)
        add_keys(target.owner_url, dataset)
        verify_dataset(target.owner_url, dataset, base, staged=True)
        publish_dataset(target.owner_url, dataset, fingerprint, target.reader_role)
    except Exception:
        drop_staging(target.owner_url, dataset)
        raise
    checks = verify_dataset(target.owner_url, dataset, base, staged=False)
    return _summary(dataset.database, True, fingerprint, checks, target.reader_url)


def _summary(database: str, changed: bool, fingerprint: str, checks: list[TableCheck],
             reader_url: str | None) -> DatasetLoadSummary:
    return DatasetLoadSummary(database=database, changed=changed, fingerprint=fingerprint,
                              rows={c.table: c.rows for c in checks}, reader_url=reader_url)


if __name__ == "__main__":
    print(load_dataset(Path(sys.argv[1])).model_dump_json(indent=2))
