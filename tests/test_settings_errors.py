"""An invalid GEOASK_* value is a clear ConfigurationError naming the variable, not a traceback."""

from __future__ import annotations

import pytest

from geoask.errors import ConfigurationError
from geoask.settings import get_settings


@pytest.mark.parametrize(
    ("variable", "value", "message"),
    [
        ("GEOASK_DB_PORT", "abc", "valid integer"),
        ("GEOASK_DB_PORT", "99999", "less than or equal to 65535"),
        ("GEOASK_SQL_ROW_CAP", "-1", "greater than or equal to 1"),
        ("GEOASK_RETRIEVAL_ALPHA", "0.2", "greater than 0.5"),
        ("GEOASK_SQL_POLICY", "anything", "separated"),
    ],
)
def test_invalid_values_name_the_variable(monkeypatch, variable, value, message):
    monkeypatch.setenv(variable, value)
    get_settings.cache_clear()
    try:
        with pytest.raises(ConfigurationError) as caught:
            get_settings()
    finally:
        get_settings.cache_clear()
    assert f"{variable}={value!r}" in str(caught.value)
    assert message in str(caught.value)
