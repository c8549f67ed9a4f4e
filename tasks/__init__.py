"""geoask Prefect tasks: one small typed task per stage."""

import geoask.base.offline  # noqa: F401  (offline defaults before Prefect is imported)
