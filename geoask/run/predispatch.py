"""Pre-dispatch checks: before a step runs, its input artifacts are what it expects.

After GeoFaham's pre-dispatch validation: every input is registered in the typed artifact
registry (:mod:`geoask.records.artifact_registry`), its file still exists, features are in the
export
CRS, a step built on earlier turns' artifacts that needs geometry gets some, and no two inputs
share a file name. Each check is a pure function of :class:`StepInputs` with a docstring
example, run in the order of :data:`DISPATCH_RULES` by :func:`dispatch_problems`;
:func:`check_inputs` asks the filesystem which files exist and runs them.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

from geoask.base.storage import filesystem_for
from geoask.records.artifact_registry import EXPORT_SRID, ArtifactKind, RegistryEntry

CRS_PROBLEM = "crs: "
"""Opens a problem about an input's CRS (the report counts it as a CRS error)."""


@dataclass(frozen=True)
class StepInputs:
    """What a step about to run reads, and what it expects of it.

    Attributes:
        step: the step id.
        refs: the registry refs it reads (in-run ``sql-1.cells``, reused
            ``turn-1.sql-1.cells``).
        entries: the registry, ref -> entry (this run's and the conversation's reusable ones).
        existing: refs whose files exist (the caller asks the filesystem; rules stay pure).
        geometry_needed: the plan's constraint: the step computes with geometries.
        outside: refs whose files lie outside the artifact root (the caller resolves paths).

    """

    step: str
    refs: tuple[str, ...]
    entries: Mapping[str, RegistryEntry]
    existing: frozenset[str]
    geometry_needed: bool = False
    outside: frozenset[str] = frozenset()


def inputs_registered(inputs: StepInputs) -> str | None:
    """Every input is a registered artifact.

    >>> inputs_registered(StepInputs("python-1", ("turn-9.sql-1.x",), {}, frozenset()))
    'python-1 reads turn-9.sql-1.x, which no earlier step or turn registered'
    """
    missing = [ref for ref in inputs.refs if ref not in inputs.entries]
    return (f"{inputs.step} reads {', '.join(missing)}, which no earlier step or turn "
            "registered" if missing else None)


def inputs_inside_artifact_root(inputs: StepInputs) -> str | None:
    """Every input file lies under the artifact root.

    An edited conversation file cannot point a step at ``/etc/passwd`` or a forged copy.

    >>> inputs_inside_artifact_root(StepInputs("python-1", ("turn-1.sql-1.x",), {},
    ...                                         frozenset(), outside=frozenset({"turn-1.sql-1.x"})))
    'python-1 reads turn-1.sql-1.x from outside the artifact root; it is not used'
    """
    outside = [ref for ref in inputs.refs if ref in inputs.outside]
    return (f"{inputs.step} reads {', '.join(outside)} from outside the artifact root; it is "
            "not used" if outside else None)


def input_files_exist(inputs: StepInputs) -> str | None:
    """The file of every registered input still exists."""
    gone = [ref for ref in inputs.refs if ref in inputs.entries and ref not in inputs.existing]
    return (f"the files of {', '.join(gone)} no longer exist ({inputs.entries[gone[0]].url})"
            if gone else None)


def features_in_export_crs(inputs: StepInputs) -> str | None:
    """Feature inputs are in the export CRS (EPSG:4326), as the compute agent is told.

    Planar features (SRID 0 the catalog declares planar) are the one exception: they have no
    lon/lat, so the export keeps their own coordinates and the agent is told to measure in them.
    """
    wrong = [f"{ref} (EPSG:{inputs.entries[ref].srid})" for ref in inputs.refs
             if ref in inputs.entries and inputs.entries[ref].kind is ArtifactKind.FEATURES
             and inputs.entries[ref].srid != EXPORT_SRID and not inputs.entries[ref].planar]
    return (f"{CRS_PROBLEM}{inputs.step} expects features in EPSG:{EXPORT_SRID} (or planar "
            f"ones), got {', '.join(wrong)}" if wrong else None)


def geometry_available(inputs: StepInputs) -> str | None:
    """A step that needs geometry and reads only earlier turns' artifacts gets some features.

    (Within one run the plan's own SQL steps decide what is exported; a variant may run a
    script on records, so the rule looks only at steps built on reused artifacts.)
    """
    if not inputs.geometry_needed or not inputs.refs or not all(
            ref.startswith("turn-") for ref in inputs.refs):
        return None
    known = [inputs.entries[ref] for ref in inputs.refs if ref in inputs.entries]
    if not known or any(e.kind is ArtifactKind.FEATURES for e in known):
        return None
    return (f"{inputs.step} needs geometries but its inputs "
            f"{', '.join(e.ref for e in known)} hold none")


def input_names_distinct(inputs: StepInputs) -> str | None:
    """No two inputs share a file name (they are mounted side by side under /input)."""
    names = [inputs.entries[ref].url.rsplit("/", 1)[-1] for ref in inputs.refs
             if ref in inputs.entries]
    twice = sorted({n for n in names if names.count(n) > 1})
    return f"{inputs.step} would mount two files named {', '.join(twice)}" if twice else None


DISPATCH_RULES: tuple[Callable[[StepInputs], str | None], ...] = (
    inputs_registered,
    inputs_inside_artifact_root,
    input_files_exist,
    features_in_export_crs,
    geometry_available,
    input_names_distinct,
)
"""The pre-dispatch checks, in the order their messages are reported."""


def dispatch_problems(inputs: StepInputs) -> list[str]:
    """Every pre-dispatch rule ``inputs`` break (empty: the step may run)."""
    return [problem for rule in DISPATCH_RULES if (problem := rule(inputs)) is not None]


def check_inputs(step: str, refs: Sequence[str], entries: Mapping[str, RegistryEntry], *,
                 geometry_needed: bool = False, roots: Sequence[str] = ()) -> list[str]:
    """:func:`dispatch_problems` of a step reading ``refs``, asking the filesystem which exist.

    Refs that are not registered (an in-run artifact of a run without a registry) are
    skipped, except reused ``turn-`` refs, which must be registered. With ``roots`` (the
    artifact root and the sandbox's), a file whose resolved path is under none counts as
    outside.
    """
    checked = tuple(ref for ref in refs if ref in entries or ref.startswith("turn-"))
    existing, outside = set(), set()
    resolved_roots = [_resolved(root) + "/" for root in roots]
    for ref in checked:
        if ref in entries:
            fs, path = filesystem_for(entries[ref].url)
            if resolved_roots and not _resolved(entries[ref].url).startswith(
                    tuple(resolved_roots)):
                outside.add(ref)
            if fs.exists(path):
                existing.add(ref)
    return dispatch_problems(StepInputs(step, checked, entries, frozenset(existing),
                                        geometry_needed, frozenset(outside)))


def _resolved(url: str) -> str:
    """``url`` with a local path made absolute and its links and ``..`` resolved."""
    import os

    from fsspec.implementations.local import LocalFileSystem


    fs, path = filesystem_for(url)
    if isinstance(fs, LocalFileSystem):
        return os.path.realpath(path).rstrip("/")
    return url.rstrip("/")


def reused_refs(inputs: Sequence[str]) -> list[str]:
    """Those of a plan step's ``inputs`` that name an earlier turn's artifact.

    >>> reused_refs(["sql-1", "turn-1.sql-1.cells"])
    ['turn-1.sql-1.cells']
    """
    return [name for name in inputs if name.startswith("turn-") and "." in name]
