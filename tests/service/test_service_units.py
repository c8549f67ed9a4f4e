"""Pure parts of geoask.service: environments, URLs, deployments, prefect.yaml, errors."""

from __future__ import annotations

import socket
from pathlib import Path

import pytest
import yaml

from geoask.errors import ServiceError
from geoask.service import deployments, server
from geoask.service.client import qualified_deployment_name, run_deployment_and_wait
from geoask.settings import Settings

ROOT = Path(__file__).resolve().parents[2]
PREFECT_YAML = ROOT / "deployments" / "prefect.yaml"


@pytest.mark.parametrize(("overrides", "expected"), [
    ({"home": Path("/srv/g"), "database_url": "postgresql://r@ext/db"},
     "sqlite+aiosqlite:////srv/g/prefect/prefect.db"),  # external data server: SQLite
    ({"home": Path("/srv/g"), "server_home": Path("/var/p"),
      "database_url": "postgresql://r@ext/db"}, "sqlite+aiosqlite:////var/p/prefect.db"),
    ({"server_database_url": "postgresql+asyncpg://p:s@db/prefect"},
     "postgresql+asyncpg://p:s@db/prefect"),
])
def test_server_database_url_without_the_embedded_cluster(overrides, expected):
    assert server.prepare_server_database(Settings(**overrides)) == expected


def test_server_environment_is_loopback_offline_and_drops_a_foreign_api_url():
    settings = Settings(home=Path("/srv/g"))
    environment = server.server_environment(
        settings, 4321, "sqlite+aiosqlite:///x.db",
        {"PATH": "/bin", "PREFECT_API_URL": "http://elsewhere/api"})
    assert environment["PATH"] == "/bin"
    assert "PREFECT_API_URL" not in environment
    assert environment["PREFECT_SERVER_API_HOST"] == "127.0.0.1"
    assert environment["PREFECT_SERVER_API_PORT"] == "4321"
    assert environment["PREFECT_UI_API_URL"] == "http://127.0.0.1:4321/api"
    assert environment["PREFECT_SERVER_ANALYTICS_ENABLED"] == "false"
    assert environment["DO_NOT_TRACK"] == "1"
    assert environment["PREFECT_HOME"] == "/srv/g/prefect"
    assert environment["PREFECT_SERVER_DATABASE_CONNECTION_URL"] == "sqlite+aiosqlite:///x.db"
    assert environment["PREFECT_SERVER_SERVICES_TASK_RUN_RECORDER_BATCH_SIZE"] == "200"


def test_server_environment_keeps_a_tuning_variable_the_user_set():
    environment = server.server_environment(
        Settings(home=Path("/srv/g")), 4321, "sqlite+aiosqlite:///x.db",
        {"PREFECT_SERVER_SERVICES_TASK_RUN_RECORDER_BATCH_SIZE": "7"})
    assert environment["PREFECT_SERVER_SERVICES_TASK_RUN_RECORDER_BATCH_SIZE"] == "7"
    assert environment["PREFECT_SERVER_SERVICES_TASK_RUN_RECORDER_FLUSH_INTERVAL"] == "1"


def test_client_environment_persists_results_under_the_server_home():
    environment = server.client_environment(Settings(home=Path("/srv/g")), "http://h:1/api")
    assert environment["PREFECT_API_URL"] == "http://h:1/api"
    assert environment["PREFECT_RESULTS_PERSIST_BY_DEFAULT"] == "true"
    assert environment["PREFECT_LOCAL_STORAGE_PATH"] == "/srv/g/prefect/storage"


@pytest.mark.parametrize(("overrides", "expected"), [
    ({}, "http://127.0.0.1:4200/api"),
    ({"server_port": 4300}, "http://127.0.0.1:4300/api"),
    ({"server_api_url": "http://prefect:4200/api"}, "http://prefect:4200/api"),
])
def test_prefect_api_url(overrides, expected, monkeypatch):
    for name in ("GEOASK_SERVER_PORT", "GEOASK_SERVER_API_URL"):  # a developer's own
        monkeypatch.delenv(name, raising=False)
    assert Settings(**overrides).prefect_api_url == expected


def test_start_refuses_a_taken_port(tmp_path):
    with socket.socket() as listener:
        listener.bind(("127.0.0.1", 0))
        listener.listen()
        port = listener.getsockname()[1]
        prefect_server = server.PrefectServer(Settings(home=tmp_path), port=port)
        with pytest.raises(ServiceError, match=rf"port {port} .* used by another program; set "
                                               r"GEOASK_SERVER_PORT to a free port \(e\.g\. "
                                               r"export GEOASK_SERVER_PORT=\d+\)"):
            prefect_server.start()


def test_no_server_is_a_clear_error(tmp_path):
    settings = Settings(home=tmp_path, server_port=server.free_port())
    with pytest.raises(ServiceError, match=r"no Prefect server answers at .*`geoask server`"):
        run_deployment_and_wait("answer-question", {"question": "q"}, 5, settings=settings)


@pytest.mark.parametrize(("name", "expected"), [
    ("answer-question/answer-question", "answer-question/answer-question"),
    ("run-benchmark/nightly-benchmark", "run-benchmark/nightly-benchmark"),
    ("nightly-benchmark", None),
])
def test_qualified_deployment_name(name, expected):
    assert qualified_deployment_name(name) == expected


@pytest.mark.parametrize(("accepted", "expected"), [
    ({"model", "variant", "limit"}, {"model": "reference", "variant": "FULL"}),
    ({"model"}, {"model": "reference"}),
    (set(), {}),
])
def test_nightly_parameters_only_those_the_flow_accepts(accepted, expected):
    assert deployments.nightly_parameters(Settings(), accepted) == expected


def test_answer_deployment_form_has_question_model_variant_only():
    deployment = deployments.answer_deployment()
    schema = deployment._parameter_openapi_schema.model_dump()
    assert set(schema["properties"]) == set(deployments.ANSWER_PARAMETERS)
    assert schema["required"] == ["question"]
    assert deployment.name == "answer-question"
    # by module name, so a result pickled in the run names flows.answer_question (issue 16)
    assert deployment.entrypoint == "flows.answer_question.answer_question"
    assert deployment.entrypoint_type.value == "module_path"


def test_nightly_benchmark_deployment_is_scheduled():
    flow = deployments.benchmark_flow()
    if flow is None:
        pytest.skip(f"{deployments.BENCHMARK_ENTRYPOINT} does not exist yet")
    deployment = deployments.benchmark_deployment(Settings(benchmark_schedule_cron="15 3 * * *"),
                                                  flow)
    assert deployment is not None
    assert deployment.name == "nightly-benchmark"
    assert [s.schedule.cron for s in deployment.schedules] == ["15 3 * * *"]
    assert deployment.parameters == {"model": "reference", "variant": "FULL"}
    # each scheduled night measures afresh (a dated out folder); an API run keeps its out_dir
    assert [s.parameters for s in deployment.schedules] == [{"dated": True}]


def _refusal(deployment, parameters: dict) -> str | None:
    """What the API answers a run of ``deployment`` with ``parameters``: None, or its reason."""
    from prefect.utilities.schema_tools.validation import ValidationError, validate

    assert deployment.enforce_parameter_schema
    schema = deployment._parameter_openapi_schema.model_dump(exclude_unset=True)
    try:  # the check the server runs on every flow run created from a deployment
        validate(parameters, schema, raise_on_error=True)
    except ValidationError as error:
        return str(error)
    return None


def test_the_served_deployments_refuse_unknown_and_unbounded_parameters():
    nightly = deployments.benchmark_deployment(Settings())
    answer = deployments.answer_deployment()
    assert nightly is not None
    assert _refusal(nightly, {"model": "reference", "repeat": 3, "limit": 5}) is None
    assert "greater than the maximum of 20" in _refusal(nightly, {"repeat": 500})
    assert "less than the minimum of 1" in _refusal(nightly, {"repeat": 0})
    assert "less than the minimum of 1" in _refusal(nightly, {"limit": -1})
    assert "('bogus' was unexpected)" in _refusal(nightly, {"bogus": 1})
    assert _refusal(answer, {"question": "How many airports?"}) is None
    assert "('services' was unexpected)" in _refusal(answer, {"question": "q", "services": {}})


def test_the_flow_refuses_a_repeat_past_the_bound_in_one_line():
    from geoask.bench.parameters import MAX_REPEAT
    from geoask.bench.runs import run_keys
    from geoask.errors import ConfigurationError

    assert len(run_keys("reference", [], MAX_REPEAT, [])) == 0
    with pytest.raises(ConfigurationError, match=f"--repeat must be 1 to {MAX_REPEAT}, got 21"):
        run_keys("reference", [], MAX_REPEAT + 1, [])


def test_the_servers_secret_goes_to_the_server_and_every_client(tmp_path):
    settings = Settings(home=tmp_path)
    secret = server.new_auth_string()
    assert secret.startswith("geoask:") and secret != server.new_auth_string()
    environment = server.server_environment(settings, 4200, "sqlite+aiosqlite://", {},
                                            secret)
    assert environment["PREFECT_SERVER_API_AUTH_STRING"] == secret
    client = server.client_environment(settings, "http://127.0.0.1:4200/api", secret)
    assert client["PREFECT_API_AUTH_STRING"] == secret
    assert "PREFECT_API_AUTH_STRING" not in server.client_environment(
        settings, "http://127.0.0.1:4200/api")


def test_a_refused_run_is_one_line_naming_the_reason():
    import httpx

    from geoask.service.client import refusal_message

    refused = refusal_message("f/d", httpx.Response(409, json={"detail": "Error creating flow "
                                                                "run: Validation failed.\n x"}))
    assert refused == ("the Prefect API refused a run of f/d (HTTP 409): Error creating flow run: "
                       "Validation failed. x")
    assert "PREFECT_API_AUTH_STRING" in refusal_message("f/d", httpx.Response(401, json={}))


# deployments/prefect.yaml must describe the same deployments as geoask server serves.

def prefect_yaml() -> dict:
    return yaml.safe_load(PREFECT_YAML.read_text())


@pytest.mark.parametrize(("name", "entrypoint"), [
    ("answer-question", "flows.answer_question.answer_question"),
    ("nightly-benchmark", "flows.run_benchmark.run_benchmark"),
])
def test_prefect_yaml_entrypoints(name, entrypoint):
    declared = {d["name"]: d for d in prefect_yaml()["deployments"]}
    # module paths, as geoask server serves them: workers import the flows by module name
    assert declared[name]["entrypoint"] == entrypoint
    module, _, function = entrypoint.rpartition(".")
    path = ROOT / (module.replace(".", "/") + ".py")
    assert f"def {function}(" in path.read_text()
    assert declared[name]["work_pool"]["name"] == "geoask-process"


def test_served_deployments_name_their_flows_by_module():
    nightly = deployments.benchmark_deployment(Settings())
    assert nightly is not None
    assert nightly.entrypoint == "flows.run_benchmark.run_benchmark"
    assert nightly.entrypoint_type.value == "module_path"


def test_load_flow_by_module_and_by_file():
    from flows.answer_question import answer_question

    assert deployments.load_flow("flows.answer_question:answer_question") is answer_question
    by_file = deployments.load_flow("tests/service/scripted_flow.py:answer_question")
    assert by_file.name == "answer-question"
    # a flow loaded from a file lives in a module no other process can import by name
    assert deployments.entrypoint_type(by_file).value == "file_path"
    assert deployments.entrypoint_type(answer_question).value == "module_path"


@pytest.mark.parametrize(("entrypoint", "says"), [
    ("flows.answer_question", "must look like"),
    ("flows.no_such_module:flow", "No module named"),
    ("flows.answer_question:QuestionResult", "is not a Prefect flow"),
    ("flows.answer_question:no_such_flow", "cannot load flow"),
    ("no/such/file.py:flow", "cannot load flow"),
])
def test_load_flow_errors_are_one_line(entrypoint, says):
    with pytest.raises(ServiceError, match=says) as caught:
        deployments.load_flow(entrypoint)
    assert "\n" not in str(caught.value)


def test_unreadable_result_messages_name_the_real_cause():
    from geoask.service.client import unreadable_result_message

    missing_code = unreadable_result_message(
        "r", "id", ModuleNotFoundError("No module named 'answer_question'"))
    assert "can't be imported here" in missing_code and "module name" in missing_code
    assert "PREFECT_DEFAULT_RESULT_STORAGE_BLOCK" not in missing_code
    missing_file = unreadable_result_message("r", "id", FileNotFoundError("no such file"))
    assert "PREFECT_DEFAULT_RESULT_STORAGE_BLOCK" in missing_file


# A run through the API may only use the models the server offers (issue 16).

def test_allowed_models_are_the_offline_and_configured_ones():
    from geoask.models.served import allowed_models

    settings = Settings(model="openai-compatible:qwen-plus", model_sql="openai:gpt-4o",
                        server_models=" deepseek:deepseek-chat ,,reference")
    assert allowed_models(settings) == [
        "reference", "reference-faulty", "openai-compatible:qwen-plus", "openai:gpt-4o",
        "deepseek:deepseek-chat"]


@pytest.mark.parametrize("model", [
    "openai-compatible:llama3", "openai:gpt-4o", "http://evil.example/v1", "ollama:qwen",
    "reference ; openai:gpt-4o", 42, ["reference"], " reference",
])
def test_a_model_the_server_does_not_offer_is_refused(model):
    from geoask.errors import ConfigurationError
    from geoask.models.served import check_served_model

    with pytest.raises(ConfigurationError, match="not offered by this server") as caught:
        check_served_model(model, Settings(model="reference"))
    assert "\n" not in str(caught.value)


@pytest.mark.parametrize("model", [None, "", "reference", "reference-faulty", "openai:gpt-4o"])
def test_offered_models_pass(model):
    from geoask.models.served import check_served_model

    check_served_model(model, Settings(model="openai:gpt-4o"))


@pytest.mark.parametrize(("tasks_file", "out_dir"), [
    ("/etc/shadow", None),
    ("{checkout}/benchmark/../pyproject.toml", None),
    ("{home}/link-to-etc/passwd", None),
    (None, "/tmp/evil_out"),
    (None, "{home}/bench-runs/../elsewhere"),
], ids=["system file", "dot-dot", "symlink", "foreign out dir", "dot-dot out dir"])
def test_a_benchmark_path_outside_the_servers_folders_is_refused(tmp_path, tasks_file, out_dir):
    # Attack finding 2: the nightly-benchmark deployment read /etc/shadow into its failure
    # message and wrote report files wherever out_dir said.
    from geoask.errors import ConfigurationError
    from geoask.models.served import BENCHMARK_FOLDER, check_served_paths

    (tmp_path / "link-to-etc").symlink_to("/etc")
    fill = {"checkout": str(BENCHMARK_FOLDER.parent), "home": str(tmp_path)}
    with pytest.raises(ConfigurationError, match="outside the folders this server serves"):
        check_served_paths(tasks_file and tasks_file.format(**fill),
                           out_dir and out_dir.format(**fill), Settings(home=tmp_path))


def test_the_servers_own_benchmark_paths_pass(tmp_path):
    from geoask.models.served import BENCHMARK_FOLDER, check_served_paths

    settings = Settings(home=tmp_path, bench_cases_path=tmp_path / "mine" / "cases.yaml")
    for tasks_file in (None, BENCHMARK_FOLDER / "cases",
                       BENCHMARK_FOLDER / "databases" / "spdata" / "cases",
                       tmp_path / "mine" / "more.yaml"):
        check_served_paths(tasks_file and str(tasks_file), str(tmp_path / "bench-runs" / "m"),
                           settings)


@pytest.mark.parametrize("text", [
    "root:$6$s3cr3thash:20228:0:99999:7:::\ndaemon:*:20228\n",
    "cases:\n- {'s3cr3t: line with $6$ hash': 1}\n",
], ids=["not YAML", "unknown key"])
def test_a_case_file_error_never_quotes_the_file(tmp_path, text):
    from geoask.cases.loader import load_case_file
    from geoask.errors import BenchmarkCaseError

    secret = tmp_path / "shadow.yaml"
    secret.write_text(text)
    with pytest.raises(BenchmarkCaseError, match=r"not valid YAML|does not follow") as caught:
        load_case_file(secret)
    assert "s3cr3t" not in str(caught.value) and "daemon" not in str(caught.value)


def test_only_deployment_runs_are_restricted(prefect_harness):
    from prefect import flow

    from geoask.models.served import in_deployment_run

    @flow
    def probe() -> bool:
        return in_deployment_run()

    assert in_deployment_run() is False
    assert probe() is False  # a flow called in-process (geoask ask) is no deployment run


def test_prefect_yaml_schedule_and_parameters_match_the_settings_defaults():
    nightly = next(d for d in prefect_yaml()["deployments"] if d["name"] == "nightly-benchmark")
    defaults = Settings()
    assert nightly["schedules"] == [{"cron": defaults.benchmark_schedule_cron,
                                     "timezone": "UTC", "active": True,
                                     "parameters": deployments.SCHEDULED_PARAMETERS}]
    assert nightly["parameters"] == {"model": defaults.benchmark_schedule_model,
                                     "variant": "FULL"}


def test_prefect_yaml_parameters_exist_on_the_flows():
    import inspect

    from flows.answer_question import answer_question

    flows = {"answer-question": answer_question, "nightly-benchmark": deployments.benchmark_flow()}
    for declared in prefect_yaml()["deployments"]:
        flow = flows[declared["name"]]
        if flow is None:
            continue
        accepted = set(inspect.signature(flow.fn).parameters)
        assert set(declared["parameters"]) <= accepted, declared["name"]


def test_a_plain_http_api_gets_a_one_certificate_ca_file(tmp_path, monkeypatch):
    import ssl

    monkeypatch.delenv("PREFECT_API_SSL_CERT_FILE", raising=False)
    path = server.plain_http_ca_file("http://127.0.0.1:4200/api", tmp_path)
    assert path is not None and path.read_text().count("BEGIN CERTIFICATE") == 1
    assert ssl.create_default_context(cafile=str(path)).cert_store_stats()["x509_ca"] == 1
    assert server.plain_http_ca_file("https://prefect.example/api", tmp_path) is None
    monkeypatch.setenv("PREFECT_API_SSL_CERT_FILE", "/etc/ssl/mine.pem")
    assert server.plain_http_ca_file("http://127.0.0.1:4200/api", tmp_path) is None


def test_a_certificate_variable_naming_no_usable_bundle_is_one_clear_error(tmp_path):
    # Attack pass: SSL_CERT_FILE=<garbage> ended `geoask ask` in a 76-line ssl.SSLError.
    import certifi

    from geoask.base.tls import check_certificate_files
    from geoask.errors import ConfigurationError

    garbage = tmp_path / "garbage.pem"
    garbage.write_text("not a certificate\n")
    check_certificate_files({"SSL_CERT_FILE": certifi.where()})
    check_certificate_files({})
    with pytest.raises(ConfigurationError, match=r"^SSL_CERT_FILE=.*garbage.pem: not a PEM"):
        check_certificate_files({"SSL_CERT_FILE": str(garbage)})
    with pytest.raises(ConfigurationError, match=r"^PREFECT_API_SSL_CERT_FILE=/nope.pem: no such"):
        check_certificate_files({"PREFECT_API_SSL_CERT_FILE": "/nope.pem"})
    with pytest.raises(ConfigurationError, match=r"^SSL_CERT_FILE=/tmp: cannot be read"):
        check_certificate_files({"SSL_CERT_FILE": "/tmp"})


def test_geoask_ask_with_a_bad_certificate_file_says_so_in_one_line(tmp_path):
    import os
    import subprocess
    import sys

    garbage = tmp_path / "garbage.pem"
    garbage.write_text("not a certificate\n")
    done = subprocess.run([str(Path(sys.executable).parent / "geoask"), "ask",
                           "How many airports are in Texas?", "--model", "reference"],
                          env={**os.environ, "SSL_CERT_FILE": str(garbage)},
                          capture_output=True, text=True, timeout=120, check=False)
    assert done.returncode != 0
    assert done.stderr.strip() == (f"error: SSL_CERT_FILE={garbage}: not a PEM certificate "
                                   "bundle; point it at a PEM file of CA certificates or unset it")


def test_the_run_form_offers_the_served_models_with_the_default_and_plain_help():
    settings = Settings(model="openai:gpt-4o", variant="POSTGIS")
    deployment = deployments.answer_deployment(settings=settings)
    properties = deployment._parameter_openapi_schema.model_dump()["properties"]
    assert properties["model"]["enum"] == ["reference", "reference-faulty", "openai:gpt-4o"]
    assert properties["model"]["default"] == "openai:gpt-4o"
    assert properties["variant"]["default"] == "POSTGIS"
    assert "REACT" in properties["variant"]["enum"]
    assert deployment.parameters == {"model": "openai:gpt-4o", "variant": "POSTGIS"}
    help_texts = [spec["description"] for spec in properties.values()]
    assert all(text and ":mod:" not in text and "``" not in text and ":class:" not in text
               for text in help_texts)
    unconfigured = deployments.answer_deployment(settings=Settings(model=None))
    assert unconfigured.parameters["model"] == "reference"  # a run with only a question works


def test_question_runs_are_named_after_their_question():
    from flows.answer_question import answer_question
    from geoask.run.request import run_name

    assert answer_question.flow_run_name is not None and ":mod:" not in answer_question.description
    assert run_name("airports-006") == "airports-006"
    assert run_name("Which airport is nearest\n to JFK?") == "Which airport is nearest to JFK?"
