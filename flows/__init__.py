"""geoask Prefect flows: thin wiring of the tasks in tasks/."""

import geoask.base.offline  # noqa: F401  (offline defaults before Prefect is imported)
