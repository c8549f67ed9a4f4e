"""An answer payload as people read it: a one-line headline and a compact table.

Values are rounded by their unit (:data:`UNIT_DECIMALS`: kilometres to the metre, degrees of
longitude/latitude to about 0.1 m, counts as they are; an unknown unit to four significant
figures); integers are never rounded. The payload keeps its full precision (``geoask ask
--json``, ``answer.json``); this is only its view.

>>> headline("ranked_list", {"items": [{"rank": 1, "id": "AK", "value": 263},
...     {"rank": 2, "id": "TX", "value": 209}], "unit": "count"})
'2 ranked items: 1. AK 263, 2. TX 209'
>>> headline("object", {"iata": "LGA", "distance_km": 17.198648306014352, "unit": "km"})
'iata LGA, distance_km 17.199; unit km'
"""

from __future__ import annotations

import math
import numbers
from collections.abc import Mapping
from typing import Any, Final

UNIT_DECIMALS: Final[dict[str, int]] = {
    "count": 0, "km": 3, "m": 1, "metre": 1, "meter": 1, "metres": 1, "mm": 1, "cm": 1,
    "mi": 3, "ft": 1, "km2": 2, "km²": 2, "m2": 0, "m²": 0, "ha": 2, "acre": 2,
    "degree": 6, "degrees": 6, "deg": 6, "°": 6, "%": 1, "percent": 1, "usd": 2, "$": 2,
    "years": 1, "year": 0, "people/km²": 1, "persons/km²": 1, "pct": 1,
}
"""Decimals shown per unit (lower-case keys; a unit not listed: four significant figures)."""
HEADLINE_ITEMS: Final = 3
"""Entries a headline names before ``(+N more)``."""
TABLE_ROWS: Final = 20
"""Rows the terminal table shows before ``... N more rows``."""
CELL_WIDTH: Final = 60
"""Characters a table cell or a headline entry shows before ``...`` (``--json``: all)."""
_ROW_KEYS: Final = ("entities", "items", "records")


def rounded(value: Any, unit: str | None = None) -> Any:
    """``value`` rounded for reading by its ``unit`` (see :data:`UNIT_DECIMALS`).

    >>> rounded(17.198648306014352, "km"), rounded(-73.77892699999, "degree")
    (17.199, -73.778927)
    >>> rounded(467.105169), rounded(0.0123456), rounded(3), rounded("x")
    (467.1, 0.01235, 3, 'x')
    """
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        return value
    if isinstance(value, numbers.Integral):
        return int(value)
    number = float(value)
    if not math.isfinite(number) or number == 0:
        return number
    decimals = UNIT_DECIMALS.get((unit or "").strip().lower())
    if decimals is None:
        decimals = min(6, max(0, 3 - math.floor(math.log10(abs(number)))))
    result = round(number, decimals)
    return int(result) if decimals == 0 else result


def field_units(payload: Mapping[str, Any]) -> dict[str, str]:
    """The unit of each value field: a records payload's ``units``, else ``unit`` for values.

    >>> field_units({"records": [], "units": {"area": "km²"}})
    {'area': 'km²'}
    >>> field_units({"items": [], "unit": "m"})
    {'value': 'm'}
    """
    units = payload.get("units")
    if isinstance(units, Mapping):
        return {str(k): str(v) for k, v in units.items()}
    unit = payload.get("unit")
    return {"value": str(unit)} if isinstance(unit, str) and unit else {}


def unit_of(name: str, units: Mapping[str, str]) -> str | None:
    """A field's unit: from ``units``, else a unit its name ends with (``distance_km``).

    >>> unit_of("distance_km", {}), unit_of("change_pct", {}), unit_of("value", {"value": "m"})
    ('km', 'pct', 'm')
    """
    if name in units:
        return units[name]
    suffix = name.rsplit("_", 1)[-1].lower() if "_" in name else ""
    return suffix if suffix in UNIT_DECIMALS else None


def answer_rows(payload: Any, labels: Mapping[str, str] | None = None) -> list[dict[str, Any]]:
    """The answer payload as table rows (one per entity/item/record; one row for a mapping).

    With ``labels`` (a name per code), each row gets a ``name`` right after its code column
    (``id``, else the first column holding a labelled code; empty for a code without a name,
    none at all when the payload has a ``name`` of its own): the terminal table, the notebook
    view, the workspace page and ``AskResult.df`` read the same rows.

    >>> answer_rows({"items": [{"rank": 1, "id": "TX", "value": 3.5}], "unit": "USD"})
    [{'rank': 1, 'id': 'TX', 'value': 3.5}]
    >>> answer_rows({"value": 42, "unit": "count"})
    [{'value': 42, 'unit': 'count'}]
    >>> answer_rows({"records": [{"iata": "LGA", "km": 17.2}]}, {"LGA": "LaGuardia"})
    [{'iata': 'LGA', 'name': 'LaGuardia', 'km': 17.2}]
    """
    rows = _rows(payload)
    columns = list(dict.fromkeys(k for row in rows for k in row))
    key = _labelled(columns, rows, labels or {})
    if key is None:
        return rows
    return [_named(row, key, (labels or {}).get(str(row.get(key)), "")) for row in rows]


def _rows(payload: Any) -> list[dict[str, Any]]:
    if isinstance(payload, Mapping):
        for key in _ROW_KEYS:
            rows = payload.get(key)
            if isinstance(rows, list) and all(isinstance(r, Mapping) for r in rows):
                return [dict(r) for r in rows]
        return [dict(payload)]
    if isinstance(payload, list) and all(isinstance(r, Mapping) for r in payload):
        return [dict(r) for r in payload]
    return [{"value": payload}]


def _named(row: dict[str, Any], key: str, name: str) -> dict[str, Any]:
    named: dict[str, Any] = {}
    for column, value in row.items():
        named[column] = value
        if column == key:
            named["name"] = name
    return named if key in row else {**row, "name": name}


def headline(answer_type: str, payload: Any) -> str:
    """One line written from the payload: the value with its unit, or the first entries.

    >>> headline("scalar", {"value": 26, "unit": "count"}), headline("scalar", {"value": 2.5})
    ('26', '2.5')
    >>> headline("entity_list", {"entities": [{"id": c} for c in "ABCDE"]})
    '5 entities: A, B, C (+2 more)'
    >>> headline("bbox", {"bbox": [-160.1, 18.9, -154.8, 22.2]})
    'bounding box W -160.1, S 18.9, E -154.8, N 22.2 (degrees)'
    """
    data = payload if isinstance(payload, Mapping) else {"value": payload}
    unit = data.get("unit") if isinstance(data.get("unit"), str) else None
    if answer_type == "scalar":
        value = rounded(data.get("value"), unit)
        return f"{value} {unit}" if unit and unit != "count" else str(value)
    if answer_type == "bbox" and isinstance(data.get("bbox"), list):
        west, south, east, north = (rounded(v, "degree") for v in data["bbox"])
        return f"bounding box W {west}, S {south}, E {east}, N {north} (degrees)"
    if answer_type == "geometry" and isinstance(data.get("geometry"), Mapping):
        return f"a {data['geometry'].get('type', 'geometry')}"
    if answer_type in ("entity_list", "ranked_list", "records"):
        return _list_headline(answer_type, data, unit)
    fields = ", ".join(f"{k} {_shown(v, unit_of(k, {}))}" for k, v in data.items()
                       if k != "unit")
    return fields + (f"; unit {unit}" if unit else "")


def answer_lines(answer_type: str, payload: Any, summary: str = "",
                 labels: Mapping[str, str] | None = None) -> list[str]:
    r"""The terminal answer: headline, the summary (unless it repeats it), then the table.

    >>> answer_lines("scalar", {"value": 26, "unit": "count"}, "There are 26.")
    ['26', 'There are 26.', '', 'answer (scalar):', 'value [count]\n           26']
    """
    title = headline(answer_type, payload)
    said = " ".join(summary.split())
    lines = [said] if said.startswith(title) else [title, *([said] if said else [])]
    return [*lines, "", f"answer ({answer_type}):", payload_table(payload, labels)]


def _list_headline(answer_type: str, data: Mapping[str, Any], unit: str | None) -> str:
    rows = answer_rows(data)
    noun = {"entity_list": "entities", "ranked_list": "ranked items",
            "records": "records"}[answer_type]
    if answer_type == "entity_list":
        shown = [_shown(row.get("id"), None) for row in rows[:HEADLINE_ITEMS]]
    elif answer_type == "ranked_list":
        suffix = f" {unit}" if unit and unit != "count" else ""
        shown = [f"{_shown(row.get('rank'), None)}. {_shown(row.get('id'), None)} "
                 f"{_shown(row.get('value'), unit)}{suffix}"
                 for row in rows[:HEADLINE_ITEMS]]
    else:
        return f"{len(rows)} record{'' if len(rows) == 1 else 's'}"
    more = f" (+{len(rows) - HEADLINE_ITEMS} more)" if len(rows) > HEADLINE_ITEMS else ""
    return f"{len(rows)} {noun}: {', '.join(shown)}{more}"


def _shown(value: Any, unit: str | None) -> str:
    return one_line(str(rounded(value, unit)))


def one_line(text: str, width: int = CELL_WIDTH) -> str:
    r"""``text`` as one line of the answer's view, cut to ``width`` characters with ``...``.

    Characters that print as nothing or move the cursor (a newline, an escape, a bidi override)
    are shown as their escapes: a database name or a model's value holding ``"\nevidence:"``
    must not start a line of its own in the report, nor reverse the line it is on.

    >>> one_line("Conn\nevidence: 0 rows"), one_line("\u202eerihspmaH"), one_line("x" * 70)[-5:]
    ('Conn\\nevidence: 0 rows', '\\u202eerihspmaH', 'xx...')
    """
    shown = "".join(c if c.isprintable() else c.encode("unicode_escape").decode("ascii")
                    for c in text)
    return shown if len(shown) <= width else shown[:width - 3] + "..."


def payload_table(payload: Any, labels: Mapping[str, str] | None = None,
                  max_rows: int = TABLE_ROWS) -> str:
    """The payload as an aligned text table, values rounded by their unit.

    Args:
        payload: the answer's ``data_payload``.
        labels: a name for each code (``{"37063": "Durham"}``), shown in a ``name`` column
            beside ``id``, else beside the first column holding a labelled code (a record's
            ``iata``); not when the payload has a ``name`` column of its own.
        max_rows: rows shown before ``... N more rows (--json for all)``.

    >>> print(payload_table({"items": [{"rank": 1, "id": "06", "value": 1.23456}],
    ...     "unit": "km"}, {"06": "California"}))
    rank  id  name        value [km]
       1  06  California       1.235

    """
    data = payload if isinstance(payload, Mapping) else {"value": payload}
    units = field_units(data)
    rows = answer_rows(payload, labels)
    columns = [c for c in dict.fromkeys(k for row in rows for k in row)
               if not (len(rows) == 1 and c in ("unit", "units"))]
    shown = rows[:max_rows]
    cells = [[_cell(row.get(c), unit_of(c, units)) for c in columns] for row in shown]
    heads = [c + (f" [{units[c]}]" if c in units else "") for c in columns]
    numeric = [all(isinstance(row.get(c), numbers.Number) for row in shown if row.get(c)
                   is not None) for c in columns]
    widths = [max([len(h), *(len(r[i]) for r in cells)]) for i, h in enumerate(heads)]
    lines = ["  ".join(_pad(h, w, n) for h, w, n in zip(heads, widths, numeric, strict=True))]
    lines += ["  ".join(_pad(v, w, n) for v, w, n in zip(r, widths, numeric, strict=True))
              for r in cells]
    if len(rows) > max_rows:
        lines.append(f"... {len(rows) - max_rows} more rows (--json for all)")
    return "\n".join(line.rstrip() for line in lines)


def _labelled(columns: list[str], rows: list[dict[str, Any]],
              labels: Mapping[str, str]) -> str | None:
    """The column the names go beside: the one holding the most labelled codes.

    Ties: ``id``, then the first. A record's row ``id`` 1 is not named after canton 1 when its
    ``canton_id`` holds the codes named.
    """
    if not labels or "name" in columns:
        return None
    named = {column: sum(isinstance(row.get(column), str | int)
                         and not isinstance(row.get(column), bool)
                         and str(row.get(column)) in labels for row in rows)
             for column in sorted(columns, key=lambda c: c != "id")}
    column = max(named, key=lambda c: named[c])  # the first of the most
    return column if named[column] else None


def _cell(value: Any, unit: str | None) -> str:
    if value is None:
        return ""
    if isinstance(value, list | Mapping):
        return one_line(", ".join(str(rounded(v, unit)) for v in value)
                        if isinstance(value, list) else str(dict(value)))
    return _shown(value, unit)


def _pad(text: str, width: int, right: bool) -> str:
    return text.rjust(width) if right else text.ljust(width)
