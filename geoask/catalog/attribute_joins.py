"""Attribute join paths of a draft: declared foreign keys, key-named columns, shared values.

``geoask catalog draft`` proposes three kinds of ``kind: attribute``/``foreign_key`` paths:

1. every declared single-column foreign key (``kind: foreign_key``);
2. *key joins* (:func:`infer_key_joins`): same-named, same-typed columns where one side is a
   primary key or UNIQUE key (the *parent*), or, without a parent, key-looking names
   (:data:`KEY_NAME`: ``*_id``, ``*_fips``, ``geoid``...) in both primary keys;
3. *value joins* (:func:`infer_value_joins`): any other same-named column of compatible type
   (text with text, or an integer with a key-looking name) in two relations - a table and a
   view that groups it by ``county_name`` - whose values match: of at most
   :data:`SAMPLE_VALUES` distinct non-NULL values of the left side (a sample of a big relation),
   at least :data:`MIN_MATCH_SHARE` must be found in the right side. Generic names
   (:data:`GENERIC_NAMES`: ``name``, ``type``, ``year``, ``created_at``...) are never matched.
   The right side is the one whose column is unique, else the one with fewer rows.

Inferred paths carry ``inferred: true``; value joins also ``match_share`` and ``sampled``.
Each value probe is one query under the per-relation time budget
(:func:`geoask.catalog.profile.time_budget`). The draft adds each path's cardinality from the
tables' keys afterwards (:meth:`geoask.catalog.model.Catalog.join_cardinality`).
"""

from __future__ import annotations

import itertools
import re
from collections.abc import Callable, Iterator

import psycopg
from psycopg import sql

from geoask.catalog import profile
from geoask.catalog.introspect import LiveColumn, Relation
from geoask.catalog.model import JoinPath, Table

KEY_NAME = re.compile(
    r"^(.+_(id|fips|code|key|no|num|iso|iso_a[23]|abbr|uid|gid)|fips|geoid|iso_a[23]|"
    r"[a-z]+_fips)$", re.IGNORECASE)
"""Column names that look like keys or codes."""

GENERIC_NAMES = frozenset((
    "id", "gid", "fid", "uid", "objectid", "ogc_fid", "name", "label", "title", "description",
    "comment", "comments", "notes", "note", "type", "kind", "status", "category", "class",
    "source", "url", "geom", "geog", "the_geom", "shape", "wkb_geometry", "created_at",
    "updated_at", "modified_at", "created", "updated", "modified", "date", "year", "month",
    "day", "value", "count", "total", "area", "length", "unit", "units",
))
"""Names shared by unrelated tables: never proposed as value joins."""

SAMPLE_VALUES = 200
"""Distinct left values probed per candidate value join (each one index or hash probe)."""

MAX_NAME_RELATIONS = 12
"""A column name in more relations than this is probed only against its key holders."""

MIN_MATCH_SHARE = 0.5
"""Share of sampled distinct left values that must occur on the right for a value join."""

_INTEGER_TYPES = frozenset(("int2", "int4", "int8"))


def declared_joins(rels: list[Relation]) -> list[JoinPath]:
    """One ``kind: foreign_key`` path per declared single-column foreign key between ``rels``."""
    drafted = {r.name for r in rels}
    return [JoinPath(left=f"{rel.name}.{fk.columns[0]}",
                     right=f"{fk.ref_table}.{fk.ref_columns[0]}", kind="foreign_key",
                     description=f"Declared foreign key of {rel.name}.")
            for rel in rels for fk in rel.foreign_keys
            if len(fk.columns) == 1 and fk.ref_table in drafted]


def is_unique(rel: Relation, column: str) -> bool:
    """Whether ``column`` alone is ``rel``'s primary key or a UNIQUE key."""
    return rel.primary_key == [column] or [column] in rel.unique


def infer_key_joins(rels: list[Relation]) -> list[JoinPath]:
    """Join paths guessed from same-named, same-typed key-like columns of two relations.

    Columns are grouped by (name, type). A relation with a single-column primary key or
    unique key on the column is a *parent*; every other relation with the column joins
    each parent (``child.col ~ parent.col``). With no parent, relations that have the column in
    their primary key and a key-like name (:data:`KEY_NAME`) are paired with each other. The
    bare name ``id`` and spatial columns are never matched. Each path has ``kind: attribute``
    and ``inferred: true``.
    """
    groups: dict[tuple[str, str], list[Relation]] = {}
    for rel in rels:
        for col in rel.columns:
            if col.name != "id" and col.category != "U" and col.name not in rel.spatial:
                groups.setdefault((col.name, col.type), []).append(rel)
    pairs: list[tuple[Relation, Relation, str, str]] = []
    for (name, type_), members in groups.items():
        if len(members) < 2:
            continue
        parents = [r for r in members if is_unique(r, name)]
        if parents:
            pairs += [(child, parent, name, type_) for parent in parents for child in members
                      if child is not parent and child not in parents]
            pairs += [(a, b, name, type_) for a in parents for b in parents if a.name < b.name]
        elif KEY_NAME.match(name):
            keyed = [r for r in members if name in r.primary_key]
            pairs += [(a, b, name, type_) for a in keyed for b in keyed if a.name < b.name]
    return [JoinPath(left=f"{a.name}.{name}", right=f"{b.name}.{name}", kind="attribute",
                     inferred=True, description=f"Inferred: same column name and type "
                     f"({type_}); no foreign key is declared.")
            for a, b, name, type_ in sorted(pairs, key=lambda p: (p[0].name, p[1].name, p[2]))]


def value_family(column: LiveColumn) -> str | None:
    """``text`` or ``integer`` for a column a value join may use, else None.

    >>> col = LiveColumn("county_name", "character varying(40)", "varchar", "S", False, None)
    >>> value_family(col), value_family(LiveColumn("name", "text", "text", "S", False, None))
    ('text', None)
    """
    if column.name.lower() in GENERIC_NAMES:
        return None
    if column.category == "S":
        return "text"
    if column.type_name in _INTEGER_TYPES and KEY_NAME.match(column.name):
        return "integer"
    return None


Probe = Callable[[Relation, Relation, str], tuple[int, int] | None]
"""(left, right, column) -> (matched, sampled) distinct left values, or None if not measured."""


def value_candidates(rels: list[Relation], rows: dict[str, int],
                     taken: set[frozenset[str]]) -> list[tuple[Relation, Relation, str]]:
    """(left, right, column) pairs a value join may join, ``taken`` pairs of ends left out.

    ``rows`` are the drafted row counts (0 when unknown); the right side is the unique one,
    else the one with fewer rows (then the later name). A name shared by more than
    :data:`MAX_NAME_RELATIONS` relations is paired only with the relations where it is unique
    (each member with its key holder: a star, not every pair), and not at all when it is
    unique nowhere: ``condition`` or ``inspector`` in 50 tables is a shared attribute, not a
    join, and probing every pair would grow with the square of the schema.
    """
    groups: dict[tuple[str, str], list[Relation]] = {}
    for rel in rels:
        for col in rel.columns:
            family = value_family(col)
            if family is not None and col.name not in rel.spatial:
                groups.setdefault((col.name, family), []).append(rel)
    out = []
    for (name, _), members in sorted(groups.items()):
        for a, b in _pairs(members, name):
            if frozenset((f"{a.name}.{name}", f"{b.name}.{name}")) in taken:
                continue
            left, right = sorted((a, b), key=lambda r: _parent_rank(r, name, rows))
            out.append((left, right, name))
    return out


def _pairs(members: list[Relation], name: str) -> Iterator[tuple[Relation, Relation]]:
    """Every pair of a name's relations, or for a widely shared name each with a key holder."""
    if len(members) <= MAX_NAME_RELATIONS:
        yield from itertools.combinations(members, 2)
        return
    holders = [rel for rel in members if is_unique(rel, name)]
    for holder in holders:
        yield from ((rel, holder) for rel in members if rel is not holder)


def _parent_rank(rel: Relation, column: str, rows: dict[str, int]) -> tuple[bool, int, str]:
    """Sorts the many side first: not unique, then more rows, then the name."""
    return is_unique(rel, column), -rows.get(rel.name, 0), rel.name


def infer_value_joins(rels: list[Relation], rows: dict[str, int],
                      taken: set[frozenset[str]], probe: Probe) -> list[JoinPath]:
    """Value join paths (see the module) whose measured share reaches :data:`MIN_MATCH_SHARE`."""
    paths = []
    for left, right, name in value_candidates(rels, rows, taken):
        counts = probe(left, right, name)
        if counts is None or counts[1] == 0 or counts[0] < MIN_MATCH_SHARE * counts[1]:
            continue
        matched, sampled = counts
        paths.append(JoinPath(
            left=f"{left.name}.{name}", right=f"{right.name}.{name}", kind="attribute",
            inferred=True, match_share=round(matched / sampled, 4), sampled=sampled,
            description=f"Inferred: same column name; {matched} of {sampled} sampled distinct "
            f"{left.name}.{name} values occur in {right.name}; no key or foreign key is "
            "declared."))
    return paths


def sql_probe(conn: psycopg.Connection, tables: dict[str, Table], budget_s: float,
              timeout_s: int) -> Probe:
    """A :data:`Probe` on the database: one bounded query per pair, under ``budget_s`` seconds.

    The left values are ``SELECT DISTINCT`` over the whole of a small relation or a sample of a
    big one (:func:`geoask.catalog.profile.source`); each is looked up in the right relation.
    Relations with a draft note (their sampling stopped) are not probed.
    """
    def probe(left: Relation, right: Relation, name: str) -> tuple[int, int] | None:
        table = tables[left.name]
        if table.notes or tables[right.name].notes:
            return None  # its sampling already ran out of time
        rows = table.expected_rows if isinstance(table.expected_rows, int) else 0
        from_item, params = profile.source(left, profile.Profile(
            rows, table.rows_estimated, sampled=table.rows_estimated or rows == 0))
        col = sql.Identifier(name)
        query = sql.SQL(
            "SELECT count(*) FILTER (WHERE EXISTS (SELECT 1 FROM {r} AS r WHERE r.{c} = l.v)), "
            "count(*) FROM (SELECT DISTINCT {c} AS v FROM {s} WHERE {c} IS NOT NULL LIMIT %s) l"
        ).format(r=right.identifier, c=col, s=from_item)
        with profile.time_budget(budget_s, timeout_s):
            found = profile.safe_rows(conn, query, [*params, SAMPLE_VALUES])
        return (int(found[0][0]), int(found[0][1])) if found else None
    return probe


def join_paths(rels: list[Relation], tables: list[Table], probe: Probe) -> list[JoinPath]:
    """Declared foreign keys, then key joins, then value joins, each pair of ends once."""
    paths = declared_joins(rels)
    taken = {frozenset((p.left, p.right)) for p in paths}
    paths += [p for p in infer_key_joins(rels) if frozenset((p.left, p.right)) not in taken]
    taken |= {frozenset((p.left, p.right)) for p in paths}
    rows = {t.name: t.expected_rows if isinstance(t.expected_rows, int) else 0 for t in tables}
    return paths + infer_value_joins(rels, rows, taken, probe)
