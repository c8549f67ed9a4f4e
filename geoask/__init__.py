"""geoask: answers questions about spatial data in PostGIS by generating, checking and running code.

Importing geoask sets offline defaults for libraries that would otherwise phone home or download
models (Prefect and chromadb telemetry, Hugging Face hub access); a value the user already set
in the environment wins.
"""

import os

OFFLINE_ENVIRONMENT = {
    "PREFECT_SERVER_ANALYTICS_ENABLED": "false",
    "DO_NOT_TRACK": "1",
    "PREFECT_SERVER_EPHEMERAL_STARTUP_TIMEOUT_SECONDS": "120",
    "ANONYMIZED_TELEMETRY": "False",
    "HF_HUB_OFFLINE": "1",
    "TRANSFORMERS_OFFLINE": "1",
}

for _key, _value in OFFLINE_ENVIRONMENT.items():
    os.environ.setdefault(_key, _value)

__version__ = "0.1.0"
