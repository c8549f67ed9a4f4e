"""One YAML reader for geoask's files (catalogs, dataset manifests, benchmark cases).

:func:`load_yaml` parses with libyaml's C loader (``yaml.CSafeLoader``) when PyYAML was built
with it - about 8x faster than the pure-Python ``SafeLoader`` on the benchmark's case files,
which the ``reference`` model reads at every question - and with ``SafeLoader`` otherwise. Both
are the *safe* loaders: plain YAML types only, no Python objects.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

import yaml

T = TypeVar("T")

SAFE_LOADER: type[yaml.SafeLoader] = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


def load_yaml(text: str) -> Any:
    """The data of one YAML document ``text`` (dicts, lists, str, int, float, bool, None).

    >>> load_yaml("a: [1, 2.5, x]")
    {'a': [1, 2.5, 'x']}

    Raises:
        yaml.YAMLError: ``text`` is not YAML (``problem_mark`` gives the line and column).

    """
    return yaml.load(text, Loader=SAFE_LOADER)  # noqa: S506 - a safe loader, C or Python


_parsed: dict[tuple[str, Path], tuple[tuple[int, int], Any]] = {}


def parsed_file(path: Path, parse: Callable[[Path], T]) -> T:
    """``parse(path)``, kept for this process while the file's size and mtime stay the same.

    For loaders whose result is immutable (frozen models in a tuple): the ``reference`` model
    reads every benchmark case and conversation file at each question, which a long-lived
    process (the server's warm question worker, a notebook) need not repeat. Errors of
    ``parse`` propagate and nothing is kept.

    Raises:
        OSError: ``path`` cannot be stat'ed (missing, unreadable folder).

    """
    stat = path.stat()
    key, version = (parse.__module__ + "." + parse.__qualname__, path.resolve()), (
        stat.st_mtime_ns, stat.st_size)
    kept = _parsed.get(key)
    if kept is not None and kept[0] == version:
        return kept[1]
    value = parse(path)
    _parsed[key] = (version, value)
    return value
