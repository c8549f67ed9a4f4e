"""geoask Prefect tasks: one small typed task per stage."""

import geoask  # noqa: F401  (sets the offline environment before Prefect is imported)
