"""Offline defaults for libraries that would otherwise phone home or download models.

Prefect and chromadb telemetry, Hugging Face hub access: each is set unless the user already set
it in the environment. ``geoask/__init__`` imports this module, so importing any geoask module
sets them; ``flows`` and ``tasks`` import it before Prefect.
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
