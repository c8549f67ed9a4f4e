"""Before ``make setup`` installs anything, check that every port geoask will listen on is free.

Runs with the system Python alone (no venv, no geoask installed): it loads
``geoask/base/ports.py``, which imports only the standard library, by its path, and checks
each port of ``BOUND_PORTS`` under the ``GEOASK_*`` settings of the environment. A taken port
is one line naming the setting and a port that is free now; exit 1.

    python3 scripts/check_ports.py --again "make demo"
"""

from __future__ import annotations

import argparse
import importlib.util
import os
import sys
from pathlib import Path
from types import ModuleType

PORTS = Path(__file__).resolve().parents[1] / "geoask" / "base" / "ports.py"


def load_ports() -> ModuleType:
    """``geoask/base/ports.py`` as a module, without importing the geoask package."""
    spec = importlib.util.spec_from_file_location("geoask_ports", PORTS)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses look their module up
    spec.loader.exec_module(module)
    return module


def main(argv: list[str] | None = None) -> int:
    """Print one ``error:`` line per taken port; 1 if any, else 0."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--again", default="make setup",
                        help="The command to run again after changing a setting.")
    args = parser.parse_args(argv)
    problems = load_ports().taken_ports(os.environ, args.again)
    for line in problems:
        print(f"error: {line}", file=sys.stderr)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
