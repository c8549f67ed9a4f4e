"""`geoask sandbox run` prints the outcome as JSON; bad input gives a message, not a traceback."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import fsspec
import pytest
from typer.testing import CliRunner

from geoask.app.cli import app, main
from geoask.settings import Settings

POINTS = Path(__file__).resolve().parents[1] / "fixtures" / "sandbox" / "data" / "points.geojson"


@pytest.mark.sandbox
def test_run_prints_outcome_json(tmp_path: Path, sandbox_settings: Settings, monkeypatch) -> None:
    monkeypatch.setenv("GEOASK_SANDBOX_WORK_DIR", str(sandbox_settings.sandbox_work_path))
    monkeypatch.setenv("GEOASK_SANDBOX_ARTIFACTS_URL", str(tmp_path / "artifacts"))
    script = tmp_path / "count.py"
    script.write_text(
        "import json, geopandas\n"
        "frame = geopandas.read_file('/input/points.geojson')\n"
        "parks = int((frame['kind'] == 'park').sum())\n"
        "print(json.dumps({'status': 'success', 'summary': f'{parks} parks', "
        "'result': {'parks': parks}}))\n"
    )
    from geoask.settings import get_settings

    get_settings.cache_clear()
    try:
        result = CliRunner().invoke(
            app, ["sandbox", "run", str(script), "--input", str(POINTS), "--timeout", "60",
                  "--memory", "1536"],
        )
    finally:
        get_settings.cache_clear()
    assert result.exit_code == 0, result.output
    outcome = json.loads(result.output)
    assert outcome["status"] == "success"
    assert outcome["protocol"]["result"] == {"parks": 2}
    assert outcome["wall_time_s"] > 0 and outcome["peak_memory_mib"] > 0


@pytest.mark.sandbox
def test_cells_share_one_session_and_print_one_outcome_per_line(
    tmp_path: Path, sandbox_settings: Settings, monkeypatch
) -> None:
    monkeypatch.setenv("GEOASK_SANDBOX_WORK_DIR", str(sandbox_settings.sandbox_work_path))
    monkeypatch.setenv("GEOASK_SANDBOX_ARTIFACTS_URL", str(tmp_path / "artifacts"))
    load = tmp_path / "load.py"
    load.write_text("import geopandas\nframe = geopandas.read_file('/input/points.geojson')\n")
    count = tmp_path / "count.py"
    count.write_text(
        "import json\nparks = int((frame['kind'] == 'park').sum())\n"
        "print(json.dumps({'status': 'success', 'summary': 'n', 'result': {'parks': parks}}))\n")
    broken = tmp_path / "broken.py"
    broken.write_text("frame['no_such_column']\n")
    from geoask.settings import get_settings

    get_settings.cache_clear()
    try:
        good = CliRunner().invoke(app, ["sandbox", "cells", str(load), str(count),
                                        "--input", str(POINTS)])
        bad = CliRunner().invoke(app, ["sandbox", "cells", str(load), str(broken),
                                       "--input", str(POINTS)])
    finally:
        get_settings.cache_clear()
    assert good.exit_code == 0, good.output
    first, second = (json.loads(line) for line in good.output.splitlines())
    assert first["status"] == "success" and first["protocol"] is None
    assert second["protocol"]["result"] == {"parks": 2}
    assert bad.exit_code == 3
    assert "cell 2" in bad.output and "missing_field" in bad.output


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["sandbox", "run", "/nonexistent/script.py"], "cannot read script"),
        (["sandbox", "cells", "{script}", "/nonexistent/cell.py"], "cannot read cell"),
    ],
)
def test_user_errors_are_one_line_messages(
    tmp_path: Path, monkeypatch, capsys, args: list[str], message: str
) -> None:
    script = tmp_path / "s.py"
    script.write_text("print(1)\n")
    argv = ["geoask", *[arg.replace("{script}", str(script)) for arg in args]]
    monkeypatch.setattr(sys, "argv", argv)
    with pytest.raises(SystemExit) as exited:
        main()
    assert exited.value.code == 1
    error = capsys.readouterr().err
    assert message in error and "Traceback" not in error


@pytest.mark.parametrize(("option", "value"), [("--memory", "10"), ("--memory", "999999999"),
                                               ("--timeout", "1e9"), ("--timeout", "0")])
def test_limits_out_of_range_are_usage_errors(tmp_path: Path, monkeypatch, capsys,
                                              option: str, value: str) -> None:
    script = tmp_path / "s.py"
    script.write_text("print(1)\n")
    monkeypatch.setattr(sys, "argv", ["geoask", "sandbox", "run", str(script), option, value])
    with pytest.raises(SystemExit) as exited:
        main()
    assert exited.value.code == 2
    assert f"Invalid value for '{option}'" in capsys.readouterr().err


@pytest.mark.sandbox
def test_work_dir_under_a_private_folder_is_refused_with_advice(
    tmp_path: Path, sandbox_settings: Settings
) -> None:
    from geoask.errors import SandboxError
    from sandbox.bubblewrap import BubblewrapSandbox

    private = tmp_path / "private"
    private.mkdir(mode=0o700)
    settings = sandbox_settings.model_copy(update={"sandbox_work_dir": private / "runs"})
    with pytest.raises(SandboxError, match="not searchable by other users"):
        BubblewrapSandbox.from_settings(settings).run("print(1)")


@pytest.mark.sandbox
def test_failed_bwrap_setup_is_a_sandbox_error_not_a_script_error(
    sandbox_settings: Settings, monkeypatch
) -> None:
    from geoask.errors import SandboxError
    from sandbox import bubblewrap

    original = bubblewrap.bwrap_options

    def broken_options(**kwargs):
        return [*original(**kwargs), "--ro-bind", "/nonexistent-source", "/nowhere"]

    monkeypatch.setattr(bubblewrap, "bwrap_options", broken_options)
    with pytest.raises(SandboxError, match="could not start"):
        bubblewrap.BubblewrapSandbox.from_settings(sandbox_settings).run("print(1)")


@pytest.mark.sandbox
def test_failed_bwrap_setup_of_a_session_is_a_sandbox_error(
    sandbox_settings: Settings, monkeypatch
) -> None:
    from geoask.errors import SandboxError
    from sandbox import spawn
    from sandbox.bubblewrap import BubblewrapSandbox

    original = spawn.bwrap_options

    def broken_options(**kwargs):
        return [*original(**kwargs), "--ro-bind", "/nonexistent-source", "/nowhere"]

    monkeypatch.setattr(spawn, "bwrap_options", broken_options)
    sandbox = BubblewrapSandbox.from_settings(sandbox_settings)
    with pytest.raises(SandboxError, match="session could not start"):
        sandbox.open_session()
    assert not list(sandbox.work_dir.iterdir())


@pytest.mark.sandbox
def test_setup_is_idempotent(sandbox_settings: Settings) -> None:
    result = CliRunner().invoke(app, ["sandbox", "setup"])
    assert result.exit_code == 0, result.output
    assert "already current" in result.output


@pytest.mark.sandbox
def test_concurrent_runs_are_isolated_from_each_other(sandbox_settings: Settings) -> None:
    from concurrent.futures import ThreadPoolExecutor

    from sandbox.bubblewrap import BubblewrapSandbox

    sandbox = BubblewrapSandbox.from_settings(sandbox_settings)
    script = (
        "import json, os\n"
        "open('/scratch/mine.txt', 'w').write('{n}')\n"
        "seen = sorted(os.listdir('/scratch'))\n"
        "print(json.dumps({{'status': 'success', 'summary': 'ok', "
        "'result': {{'n': {n}, 'seen': seen, 'uid': os.getuid()}}}}))\n"
    )
    with ThreadPoolExecutor(max_workers=3) as pool:
        outcomes = list(pool.map(lambda n: sandbox.run(script.format(n=n)), range(3)))
    for n, outcome in enumerate(outcomes):
        assert outcome.status == "success", outcome.model_dump_json(indent=1)
        assert outcome.protocol is not None
        assert outcome.protocol.result == {"n": n, "seen": ["mine.txt"], "uid": 1000}
        with fsspec.open(outcome.artifacts[0].uri, "r") as handle:
            assert handle.read() == str(n)


@pytest.mark.sandbox
def test_uncapped_scratch_folder_works_when_disabled(sandbox_settings: Settings) -> None:
    from sandbox.bubblewrap import BubblewrapSandbox
    from sandbox.models import SandboxLimits

    script = (
        "import json\n"
        "open('/scratch/out.csv', 'w').write('a,b\\n1,2\\n')\n"
        "print(json.dumps({'status': 'success', 'summary': 'ok', 'result': {}}))\n"
    )
    outcome = BubblewrapSandbox.from_settings(sandbox_settings).run(
        script, limits=SandboxLimits(scratch_mib=0)
    )
    assert outcome.status == "success", outcome.model_dump_json(indent=1)
    assert [(a.name, a.size_bytes, a.media_type) for a in outcome.artifacts] == [
        ("out.csv", 8, "text/csv")
    ]


@pytest.mark.sandbox
def test_stale_runtime_is_refused_with_advice(sandbox_settings: Settings) -> None:
    from geoask.errors import SandboxError
    from sandbox.bubblewrap import BubblewrapSandbox

    sandbox = BubblewrapSandbox.from_settings(sandbox_settings)
    sandbox.runtime_hash = "0" * 64  # as if a requirement had changed since the build
    with pytest.raises(SandboxError, match="geoask sandbox setup"):
        sandbox.run("print(1)")
