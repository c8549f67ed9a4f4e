"""geoask Prefect flows: thin wiring of the tasks in tasks/."""

import geoask  # noqa: F401  (sets the offline environment before Prefect is imported)
