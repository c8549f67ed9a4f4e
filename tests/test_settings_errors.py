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
        ("GEOASK_MODEL_MAX_OUTPUT_TOKENS", "99999999999999999999",
         "less than or equal to 2147483647"),
        ("GEOASK_RETRIEVAL_ALPHA", "0.2", "greater than 0.5"),
        ("GEOASK_SQL_POLICY", "anything", "use one of separated, postgis"),
        ("GEOASK_VARIANT", "WEIRD", "use one of FULL, POSTGIS, NO_STCA, NO_PLANNER, BASE, "
                                    "REACT, PLAN_EXECUTE"),
        ("GEOASK_ARTIFACT_ROOT", "weird://x", "unknown storage protocol 'weird'"),
        ("GEOASK_SANDBOX_ARTIFACTS_URL", "s3://bucket/x", "Install s3fs"),
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
    assert "Input should be" not in str(caught.value) and "\n" not in str(caught.value)


@pytest.mark.parametrize(("url", "message"), [
    ("weird://x", "is not a storage location geoask can write to"),
    ("s3://bucket/x", "needs a filesystem package that is not installed"),
])
def test_unusable_storage_url_is_one_artifact_error(url, message):
    from geoask.base.storage import filesystem_for, write_atomic
    from geoask.errors import ArtifactWriteError

    with pytest.raises(ArtifactWriteError, match=message):
        filesystem_for(url)
    with pytest.raises(ArtifactWriteError, match=message):
        write_atomic(f"{url}/result.json", b"{}")


def test_local_paths_and_known_protocols_pass_the_settings_check(tmp_path):
    from geoask.base.storage import check_storage_url

    assert check_storage_url(str(tmp_path)) == str(tmp_path)
    assert check_storage_url("memory://runs") == "memory://runs"
    assert check_storage_url(None) is None
