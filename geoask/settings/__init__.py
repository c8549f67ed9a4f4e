"""geoask configuration: one settings object, read from ``GEOASK_*`` environment variables.

Every field is documented in README.md ("Configuration"); a test checks that it stays so. The
fields are declared by group in this package's modules (database, retrieval, sandbox, models,
runs, service); :class:`Settings` joins them.
"""

from __future__ import annotations

import hashlib
import os
import re
import stat
from collections.abc import Iterable, Mapping
from functools import lru_cache
from pathlib import Path
from typing import Any

from pydantic import SecretStr, ValidationError, field_validator
from pydantic_settings import BaseSettings, SettingsConfigDict

from geoask.base.storage import check_storage_url
from geoask.errors import ConfigurationError
from geoask.settings.database import DatabaseSettings
from geoask.settings.models import ModelSettings
from geoask.settings.paths import PACKAGE
from geoask.settings.retrieval import RetrievalSettings
from geoask.settings.runs import RunSettings
from geoask.settings.sandbox import SandboxSettings
from geoask.settings.service import ServiceSettings

_URL_PASSWORD = re.compile(r"://[^:/@\s]+:([^@\s]+)@|password\s*=\s*(\S+)")


class Settings(ServiceSettings, RunSettings, ModelSettings, SandboxSettings, RetrievalSettings,
               DatabaseSettings, BaseSettings):
    """All geoask settings; environment variable = ``GEOASK_`` + upper-case field name.

    The groups are listed last to first so the fields keep their order: database, retrieval,
    sandbox, models, runs, service (the README's table).
    """

    model_config = SettingsConfigDict(env_prefix="GEOASK_", extra="ignore")

    @field_validator("artifact_root", "sandbox_artifacts_url")
    @classmethod
    def _usable_storage(cls, value: str | None) -> str | None:
        return check_storage_url(value)

    def values_for(self, prefix: str, names: Iterable[str]) -> dict[str, Any]:
        """``{name: <setting prefix + name>}`` for each of ``names`` that is a setting.

        How a part's own configuration (recovery bounds, sandbox limits, retrieval tuning) is
        read from its settings group: the group's fields are named ``<prefix><field>``, so a
        field added to both is read with no copying code; names without a setting keep the
        part's default.

        >>> Settings().values_for("flow_", ["max_replans", "not_a_setting"])
        {'max_replans': 2}
        """
        fields = type(self).model_fields
        return {name: getattr(self, prefix + name) for name in names if prefix + name in fields}

    def secret_values(self) -> list[str]:
        """Every secret this configuration holds, so that no record writes it.

        The value of each ``SecretStr`` field (API keys) and the password of each database
        URL (``postgresql://user:password@host/db`` or ``password=...`` conninfo).

        >>> Settings(openai_api_key="k-123", database_url="postgresql://a:pw1@h/d").secret_values()
        ['k-123', 'pw1']
        """
        secrets = [value.get_secret_value() for value in self.__dict__.values()
                   if isinstance(value, SecretStr) and value.get_secret_value()]
        for url in (self.database_url, self.owner_database_url):
            if url and (found := _URL_PASSWORD.search(url)):
                secrets.append(found.group(1) or found.group(2))
        return secrets

    @property
    def bench_out_path(self) -> Path:
        """Folder of benchmark runs (``bench_out_dir`` or ``<home>/bench-runs``)."""
        return self.bench_out_dir or self.home / "bench-runs"

    @property
    def service_home(self) -> Path:
        """Where state used by other OS users lives (PostgreSQL's user, the sandbox's uids).

        ``home`` itself when every ancestor is searchable by other users; otherwise, as root
        (say, a checkout under /root, mode 0700), ``/var/lib/geoask/<hash of home>``, so no
        permission of the user's folders has to be widened.
        """
        return service_home_for(self.home)

    @property
    def cluster_dir(self) -> Path:
        """Folder of the embedded cluster (data directory, socket, log)."""
        return self.service_home / "postgres"

    @property
    def sandbox_runtime_path(self) -> Path:
        """Sandbox runtime venv (``sandbox_runtime_dir`` or ``<service home>/sandbox-runtime``)."""
        return self.sandbox_runtime_dir or self.service_home / "sandbox-runtime"

    @property
    def sandbox_work_path(self) -> Path:
        """Per-run sandbox folders (``sandbox_work_dir`` or ``<service home>/sandbox-runs``)."""
        return self.sandbox_work_dir or self.service_home / "sandbox-runs"

    @property
    def artifact_root_url(self) -> str:
        """Fsspec URL of the question artifact root (``artifact_root`` or ``<home>/artifacts``)."""
        return self.artifact_root or str(self.home / "artifacts")

    @property
    def prefect_home(self) -> Path:
        """PREFECT_HOME of the server (``server_home`` or ``<home>/prefect``: SQLite, results)."""
        return self.server_home or self.home / "prefect"

    @property
    def prefect_api_url(self) -> str:
        """API URL of the Prefect server (``server_api_url`` or ``http://127.0.0.1:<port>/api``)."""
        return self.server_api_url or f"http://127.0.0.1:{self.server_port}/api"

    @property
    def sandbox_artifacts(self) -> str:
        """Fsspec URL for sandbox artifacts (``sandbox_artifacts_url`` or a local folder)."""
        return self.sandbox_artifacts_url or str(self.home / "artifacts" / "sandbox")


SHARED_STATE_ROOT = Path("/var/lib/geoask")


def searchable_by_others(folder: Path) -> bool:
    """True when ``folder`` and every existing ancestor have the o+x bit."""
    path = folder.absolute()
    return all(not p.exists() or p.stat().st_mode & stat.S_IXOTH for p in (path, *path.parents))


def service_home_for(home: Path) -> Path:
    """``home``, or its stand-in under /var/lib/geoask when other users cannot reach it as root."""
    if os.geteuid() != 0 or searchable_by_others(home):
        return home
    key = hashlib.sha256(str(home.absolute()).encode()).hexdigest()[:16]
    return SHARED_STATE_ROOT / key


@lru_cache(maxsize=1)
def get_settings() -> Settings:
    """Return the process-wide settings (read once from the environment).

    Raises:
        ConfigurationError: a ``GEOASK_*`` variable holds an invalid value; the message names
            each variable, its value and what is expected.

    """
    try:
        return Settings()
    except ValidationError as error:
        raise ConfigurationError(invalid_settings_message(error)) from None


def invalid_settings_message(error: ValidationError) -> str:
    """One readable sentence per invalid ``GEOASK_*`` variable of a settings ValidationError."""
    problems = []
    for item in error.errors():
        name = "GEOASK_" + "_".join(str(part) for part in item["loc"]).upper()
        problems.append(f"{name}={os.environ.get(name, item.get('input'))!r}: "
                        f"{expected_text(item)}")
    return "invalid setting: " + "; ".join(problems)


def expected_text(item: Mapping[str, Any]) -> str:
    """What a setting must be, in plain words, from one pydantic error ``item``.

    >>> expected_text({"type": "literal_error", "msg": "Input should be 'a' or 'b'",
    ...                "ctx": {"expected": "'a' or 'b'"}})
    'use one of a, b'
    >>> expected_text({"type": "value_error", "msg": "Value error, too big"})
    'too big'
    >>> expected_text({"type": "int_parsing", "msg": "Input should be a valid integer"})
    'expected a valid integer'
    """
    expected = (item.get("ctx") or {}).get("expected")
    if item.get("type") in ("literal_error", "enum") and expected:
        choices = [c.strip().strip("'\"") for c in str(expected).replace(" or ", ", ").split(",")]
        return "use one of " + ", ".join(c for c in choices if c)
    message = str(item.get("msg", "")).removeprefix("Value error, ")
    return message.replace("Input should be", "expected", 1)


def settings_table() -> str:
    """The Markdown table of every setting (variable, default, meaning) that README.md embeds.

    Regenerate with ``python -m geoask.settings``; a test keeps README.md in step with it.
    """
    rows = ["| variable | default | meaning |", "|---|---|---|"]
    for name, field in Settings.model_fields.items():
        if field.default_factory is not None:
            default = "see meaning"
        elif isinstance(field.default, Path):
            default = f"`{field.default.relative_to(PACKAGE.parent)}`" if (
                field.default.is_relative_to(PACKAGE.parent)) else f"`{field.default}`"
        else:
            default = "unset" if field.default is None else f"`{field.default}`"
        meaning = (field.description or "").replace("|", "\\|").replace("\n", " ")
        rows.append(f"| `GEOASK_{name.upper()}` | {default} | {meaning} |")
    return "\n".join(rows)


