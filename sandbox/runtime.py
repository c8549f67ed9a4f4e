"""The sandbox's own Python runtime: a venv of Debian's python3.11 with the analysis libraries.

Run ``python -m sandbox.runtime`` (or ``geoask sandbox setup``); add ``--force`` to rebuild.

Why a separate runtime: the project's venv links to a Python under ``/root/.pyenv`` (mode 0700),
which the sandbox's unprivileged uid cannot read, and it holds far more than generated analysis
code should see (database drivers, model clients). The runtime is a venv of ``/usr/bin/python3.11``
holding only :data:`ANALYSIS_REQUIREMENTS`, world-readable, mounted read-only inside the sandbox.
They and everything they depend on are installed at exactly the versions geoask's own environment
holds (:func:`pinned_requirements`) - the versions of ``uv.lock`` after ``make setup`` - so the
sandbox computes with the same libraries on every machine.

Setup is idempotent: a stamp file records a hash of the requirement list and the base Python;
when either changes, the runtime is rebuilt (into a temporary folder, then swapped in).
"""

from __future__ import annotations

import functools
import hashlib
import json
import os
import shutil
import subprocess
import sys
from dataclasses import dataclass
from importlib import metadata
from pathlib import Path

from packaging.requirements import Requirement
from packaging.utils import canonicalize_name

from geoask.errors import SandboxError
from geoask.settings import get_settings

#: Libraries a generated analysis script may import (pip requirement specifiers).
ANALYSIS_REQUIREMENTS: tuple[str, ...] = (
    "geopandas>=1.0",
    "shapely>=2.0",
    "pyproj>=3.6",
    "pyogrio>=0.9",
    "pyarrow>=16.0",
    "pandas>=2.2",
    "numpy>=1.26",
    "scipy>=1.13",
    "scikit-learn>=1.5",
    "polars>=1.0",
    "matplotlib>=3.8",
    "rasterio>=1.3",
    "rasterstats>=0.19",
)

#: Import names of the analysis libraries, as shown to a script that imports something else.
AVAILABLE_IMPORTS: tuple[str, ...] = (
    "geopandas", "shapely", "pyproj", "pyogrio", "pyarrow", "pandas", "numpy", "scipy",
    "sklearn", "polars", "matplotlib", "rasterio", "rasterstats", "json", "math", "statistics",
    "(the standard library)",
)

#: Modules a sandbox started ahead of its script imports while it waits (:mod:`sandbox.ahead`):
#: the ones nearly every analysis script imports, slowest first (pandas comes with geopandas).
PRELOADED_IMPORTS: tuple[str, ...] = (
    "geopandas", "pyogrio", "pyarrow.parquet", "shapely", "pyproj", "numpy")

STAMP_NAME = "geoask-runtime.json"
MPL_CACHE_DIR = "mplconfig"


@dataclass(frozen=True)
class RuntimeInfo:
    """A ready sandbox runtime.

    Attributes:
        root: the venv folder on the host (mounted read-only at ``/runtime`` in the sandbox).
        python: ``root / "bin" / "python"``.
        requirements_hash: hex SHA-256 of the requirement list and base Python (see
            :func:`requirements_hash`).
        rebuilt: True when this call built the runtime, False when it was already current.

    """

    root: Path
    python: Path
    requirements_hash: str
    rebuilt: bool


@functools.cache
def pinned_requirements(requirements: tuple[str, ...] = ANALYSIS_REQUIREMENTS) -> tuple[str, ...]:
    """``name==version`` for ``requirements`` and all they depend on, as installed here.

    Walks the installed distributions' metadata (``Requires-Dist``, markers evaluated for this
    interpreter, extras followed), so the runtime gets the locked versions of geoask's venv.

    >>> any(pin.startswith("geopandas==") for pin in pinned_requirements(("geopandas",)))
    True

    Raises:
        SandboxError: a requirement is not installed in geoask's environment (run ``make setup``).

    """
    pins: dict[str, str] = {}
    queue = [Requirement(text) for text in requirements]
    seen: set[tuple[str, frozenset[str]]] = set()
    while queue:
        requirement = queue.pop()
        key = (canonicalize_name(requirement.name), frozenset(requirement.extras))
        if key in seen:
            continue
        seen.add(key)
        try:
            distribution = metadata.distribution(requirement.name)
        except metadata.PackageNotFoundError:
            raise SandboxError(
                f"{requirement.name} is not installed in geoask's environment, so the sandbox "
                "runtime cannot be pinned to it; run `make setup`"
            ) from None
        pins[key[0]] = f"{key[0]}=={distribution.version}"
        for text in distribution.requires or ():
            dependency = Requirement(text)
            extras = requirement.extras or {""}
            if dependency.marker is None or any(
                dependency.marker.evaluate({"extra": extra}) for extra in extras
            ):
                queue.append(dependency)
    return tuple(sorted(pins.values()))


def requirements_hash(requirements: tuple[str, ...], base_python: Path) -> str:
    """Hash what the runtime is built from.

    Args:
        requirements: pip requirement specifiers; order does not matter.
        base_python: the interpreter the venv is created from (its resolved path counts).

    Returns:
        64 hex characters; changes when a requirement or the base interpreter changes.

    """
    payload = json.dumps(
        {"requirements": sorted(requirements), "base_python": str(base_python.resolve())},
        sort_keys=True,
    )
    return hashlib.sha256(payload.encode()).hexdigest()


def read_stamp(root: Path) -> str | None:
    """Return the requirements hash recorded in a runtime folder, or None if absent/unreadable."""
    try:
        data = json.loads((root / STAMP_NAME).read_text())
    except (OSError, ValueError):
        return None
    value = data.get("requirements_hash") if isinstance(data, dict) else None
    return value if isinstance(value, str) else None


def runtime_is_current(root: Path, expected_hash: str) -> bool:
    """True when ``root`` holds a runtime built for ``expected_hash`` with a usable interpreter."""
    return read_stamp(root) == expected_hash and (root / "bin" / "python").exists()


def ensure_runtime(
    root: Path,
    base_python: Path,
    requirements: tuple[str, ...] | None = None,
    *,
    force: bool = False,
) -> RuntimeInfo:
    """Build the runtime at ``root`` unless a current one is already there.

    Args:
        root: target venv folder (its parent is created).
        base_python: Debian's interpreter, normally ``/usr/bin/python3.11`` (readable by any uid).
        requirements: pip requirement specifiers to install; default
            :func:`pinned_requirements` (the analysis libraries at this environment's versions).
        force: rebuild even when the stamp matches.

    Returns:
        The runtime description.

    Raises:
        SandboxError: the base Python is missing, or venv creation or pip install failed
            (the message carries pip's last output lines).

    """
    if requirements is None:
        requirements = pinned_requirements()
    expected = requirements_hash(requirements, base_python)
    python = root / "bin" / "python"
    if not force and runtime_is_current(root, expected):
        return RuntimeInfo(root, python, expected, rebuilt=False)
    if not base_python.exists():
        raise SandboxError(
            f"the sandbox runtime needs Debian's Python at {base_python}; install it with "
            "`apt-get install python3 python3-venv` or set GEOASK_SANDBOX_BASE_PYTHON"
        )
    root.parent.mkdir(parents=True, exist_ok=True)
    building = root.with_name(root.name + f".building-{os.getpid()}")
    shutil.rmtree(building, ignore_errors=True)
    try:
        _run([str(base_python), "-m", "venv", str(building)], "create the venv")
        _run(
            [str(building / "bin" / "python"), "-m", "pip", "install", "--quiet",
             "--no-input", *requirements],
            "install the analysis libraries",
        )
        _build_matplotlib_cache(building)
        (building / STAMP_NAME).write_text(
            json.dumps({"requirements_hash": expected, "requirements": list(requirements)})
        )
        _make_world_readable(building)
        old = root.with_name(root.name + f".old-{os.getpid()}")
        if root.exists():
            root.rename(old)
        building.rename(root)
        shutil.rmtree(old, ignore_errors=True)
    finally:
        shutil.rmtree(building, ignore_errors=True)
    return RuntimeInfo(root, python, expected, rebuilt=True)


def _run(command: list[str], what: str) -> None:
    completed = subprocess.run(command, capture_output=True, text=True, check=False)
    if completed.returncode != 0:
        tail = "\n".join((completed.stdout + completed.stderr).strip().splitlines()[-15:])
        raise SandboxError(f"could not {what} for the sandbox runtime:\n{tail}")


def _build_matplotlib_cache(venv: Path) -> None:
    # Building matplotlib's font list takes seconds; do it once here. The sandbox copies the
    # cache into its private, writable MPLCONFIGDIR at start.
    cache = venv / MPL_CACHE_DIR
    cache.mkdir(exist_ok=True)
    env = {"PATH": "/usr/bin:/bin", "MPLCONFIGDIR": str(cache), "MPLBACKEND": "Agg"}
    _run_env(
        [str(venv / "bin" / "python"), "-c", "import matplotlib.font_manager"], env,
        "build matplotlib's font cache",
    )


def _run_env(command: list[str], env: dict[str, str], what: str) -> None:
    completed = subprocess.run(command, capture_output=True, text=True, env=env, check=False)
    if completed.returncode != 0:
        raise SandboxError(f"could not {what} for the sandbox runtime: {completed.stderr[-800:]}")


def _make_world_readable(folder: Path) -> None:
    for directory, subdirs, files in os.walk(folder):
        for name in subdirs:
            path = Path(directory, name)
            if not path.is_symlink():
                path.chmod(path.stat().st_mode | 0o555)
        for name in files:
            path = Path(directory, name)
            if not path.is_symlink():
                path.chmod(path.stat().st_mode | 0o444)
    folder.chmod(folder.stat().st_mode | 0o555)


def main(argv: list[str] | None = None) -> int:
    """Build or check the runtime (``python -m sandbox.runtime [--force]``); return exit code."""
    args = sys.argv[1:] if argv is None else argv
    settings = get_settings()
    try:
        info = ensure_runtime(
            settings.sandbox_runtime_path, settings.sandbox_base_python, force="--force" in args
        )
    except SandboxError as error:
        print(f"error: {error}", file=sys.stderr)
        return 1
    state = "built" if info.rebuilt else "already current"
    print(f"sandbox runtime {state}: {info.root} ({info.requirements_hash[:12]})")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
