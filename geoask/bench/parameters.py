"""A benchmark run's parameters: its cases, limit, variants, repeats and output folder.

What ``geoask bench`` checks before any run starts, what the ``run-benchmark`` flow and its
deployment's parameter schema accept, and where a model's runs go by default. This module
imports only the case loader and the variant names, so that ``geoask bench --via-api`` (and
``--help``) check their parameters without importing the question pipeline the server runs.
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Final

from pydantic import Field

from geoask.cases.loader import CaseTarget, load_cases, run_target
from geoask.cases.model import BenchmarkCase
from geoask.errors import BenchmarkCaseError, ConfigurationError
from geoask.run.variants import Variant, parse_variant
from geoask.settings import Settings, get_settings

MAX_REPEAT: Final = 20
"""Most runs per case and variant (``--repeat``, the ``repeat`` parameter of a benchmark run).

Twenty runs give the bootstrap interval of a case's mean a stable width; more only multiply the
time and model cost of a run someone started, perhaps through the API, by mistake.
"""

Repeat = Annotated[int, Field(ge=1, le=MAX_REPEAT)]
"""The ``repeat`` parameter: 1 to :data:`MAX_REPEAT` (a deployment's parameter schema says so)."""

CaseLimit = Annotated[int, Field(ge=1)]
"""The ``limit`` parameter: only the first N cases, at least one."""


def safe_name(name: str) -> str:
    """``name`` as one path component: characters other than ``[A-Za-z0-9-_.]`` become ``_``.

    >>> safe_name("openai-compatible:qwen/2.5")
    'openai-compatible_qwen_2.5'
    """
    return "".join(c if c.isalnum() or c in "-_." else "_" for c in name)


def default_out_dir(model: str, settings: Settings) -> Path:
    """``<GEOASK_BENCH_OUT_DIR or <home>/bench-runs>/<model>``."""
    return settings.bench_out_path / safe_name(model)


def load_benchmark_cases(tasks_file: str | Path | None, limit: int | None) -> list[BenchmarkCase]:
    """The cases of ``tasks_file`` (a case file or folder; default GEOASK_BENCH_CASES_PATH).

    Only the first ``limit`` of them when given. Raises as :func:`load_benchmark_run`.
    """
    return load_benchmark_run(tasks_file, limit)[0]


def load_benchmark_run(tasks_file: str | Path | None,
                       limit: int | None) -> tuple[list[BenchmarkCase], CaseTarget]:
    """The cases of ``tasks_file`` (first ``limit`` if given) and the catalog/database they name.

    Raises:
        BenchmarkCaseError: the file is missing or not valid under the case schema, or the
            files name different catalogs or databases (:func:`geoask.cases.loader.run_target`).
        ConfigurationError: ``limit`` is not positive.

    """
    if limit is not None and limit < 1:
        raise ConfigurationError(f"--limit must be at least 1, got {limit}")
    loaded = load_cases(Path(tasks_file or get_settings().bench_cases_path), ())
    if not loaded:
        raise BenchmarkCaseError(f"{tasks_file} holds no benchmark case")
    target = run_target(loaded)
    cases = [item.case for item in loaded]
    return (cases[:limit] if limit else cases), target


def parse_variants(variant: str) -> list[Variant]:
    """``all`` -> the seven variants; else a comma-separated list of variant names.

    >>> [v.value for v in parse_variants("full,base")]
    ['FULL', 'BASE']

    Raises:
        ConfigurationError: an unknown variant name.

    """
    if variant.strip().lower() == "all":
        return list(Variant)
    return list(dict.fromkeys(parse_variant(name) for name in variant.split(",") if name.strip()))
