"""One YAML reader for geoask's files (catalogs, dataset manifests, benchmark cases).

:func:`load_yaml` parses with libyaml's C loader (``yaml.CSafeLoader``) when PyYAML was built
with it - about 8x faster than the pure-Python ``SafeLoader`` on the benchmark's case files,
which the ``reference`` model reads at every question - and with ``SafeLoader`` otherwise. Both
are the *safe* loaders: plain YAML types only, no Python objects.
"""

from __future__ import annotations

from typing import Any

import yaml

SAFE_LOADER: type[yaml.SafeLoader] = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


def load_yaml(text: str) -> Any:
    """The data of one YAML document ``text`` (dicts, lists, str, int, float, bool, None).

    >>> load_yaml("a: [1, 2.5, x]")
    {'a': [1, 2.5, 'x']}

    Raises:
        yaml.YAMLError: ``text`` is not YAML (``problem_mark`` gives the line and column).

    """
    return yaml.load(text, Loader=SAFE_LOADER)  # noqa: S506 - a safe loader, C or Python
