"""The municipal/enterprise GIS schema of the scale benchmark: 250+ small tables.

Each asset entity (a hydrant, a water main, a permit, ...) gets its register table (spatial for
field assets) and the four side tables an enterprise asset system keeps beside it: inspections,
work orders, change history and attachments. Names, columns and the table/column COMMENTs are
written so schema retrieval is tested at a realistic size; the rows are few.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Final

ENTITIES: Final[dict[str, list[tuple[str, str, str]]]] = {
    # schema: [(entity table, singular noun, geometry kind: point|line|none)]
    "utilities": [
        ("hydrants", "fire hydrant", "point"),
        ("water_mains", "water main pipe", "line"),
        ("water_valves", "water valve", "point"),
        ("water_meters", "customer water meter", "point"),
        ("service_lines", "water service line", "line"),
        ("pump_stations", "water pump station", "point"),
        ("sewer_mains", "sanitary sewer main", "line"),
        ("sewer_manholes", "sewer manhole", "point"),
        ("lift_stations", "sewage lift station", "point"),
        ("storm_inlets", "storm drain inlet", "point"),
        ("storm_pipes", "stormwater pipe", "line"),
        ("storm_outfalls", "stormwater outfall", "point"),
        ("backflow_devices", "backflow prevention device", "point"),
        ("gas_regulators", "natural gas regulator", "point"),
    ],
    "transport": [
        ("streetlights", "streetlight", "point"),
        ("traffic_signals", "traffic signal", "point"),
        ("street_signs", "street sign", "point"),
        ("bridges", "bridge", "point"),
        ("sidewalks", "sidewalk segment", "line"),
        ("bike_lanes", "bike lane segment", "line"),
        ("bus_stops", "bus stop", "point"),
        ("parking_meters", "parking meter", "point"),
        ("guardrails", "guardrail", "line"),
        ("pavement_sections", "pavement section", "line"),
        ("culverts", "road culvert", "point"),
    ],
    "parks": [
        ("park_trees", "street or park tree", "point"),
        ("playgrounds", "playground", "point"),
        ("trails", "greenway trail", "line"),
        ("park_benches", "park bench", "point"),
        ("sports_fields", "sports field", "point"),
        ("picnic_shelters", "picnic shelter", "point"),
        ("irrigation_controllers", "irrigation controller", "point"),
    ],
    "facilities": [
        ("buildings", "municipal building", "point"),
        ("hvac_units", "HVAC unit", "none"),
        ("generators", "standby generator", "none"),
        ("elevators", "elevator", "none"),
        ("fleet_vehicles", "fleet vehicle", "none"),
        ("radio_towers", "radio tower", "point"),
        ("fuel_tanks", "fuel storage tank", "point"),
    ],
    "permits": [
        ("building_permits", "building permit", "point"),
        ("zoning_cases", "zoning case", "point"),
        ("encroachment_permits", "right-of-way encroachment permit", "point"),
        ("sign_permits", "sign permit", "point"),
        ("demolition_permits", "demolition permit", "point"),
        ("food_licenses", "food service license", "point"),
    ],
    "public_safety": [
        ("fire_incidents", "fire incident", "point"),
        ("code_violations", "code violation", "point"),
        ("emergency_sirens", "outdoor warning siren", "point"),
    ],
    "finance": [
        ("tax_bills", "property tax bill", "none"),
        ("assessments", "property assessment", "none"),
    ],
}
"""Asset entities by schema (50 in all)."""

SIDE_TABLES: Final[list[str]] = ["inspections", "work_orders", "history", "attachments"]
"""The side tables every entity has, as ``<entity>_<side>``."""

_SIDE_COLUMNS: Final[dict[str, list[tuple[str, str, str]]]] = {
    # side: [(column, kind, comment with {noun})]
    "inspections": [
        ("inspection_id", "int", "Inspection number (unique)."),
        ("asset_id", "int", "The inspected {noun} (asset_id of the register)."),
        ("inspected_on", "date", "Date of the inspection."),
        ("inspector", "text", "Name of the inspector."),
        ("result", "result", "Outcome: pass, fail or needs_repair."),
        ("notes", "text", "Free-text findings of the inspector."),
    ],
    "work_orders": [
        ("work_order_id", "int", "Work order number (unique)."),
        ("asset_id", "int", "The {noun} worked on (asset_id of the register)."),
        ("opened_on", "date", "Date the work order was opened."),
        ("closed_on", "date", "Date the work order was closed (empty while open)."),
        ("priority", "priority", "Priority: low, normal, high or emergency."),
        ("cost_usd", "money", "Labour and material cost in US dollars."),
    ],
    "history": [
        ("event_id", "int", "Change event number (unique)."),
        ("asset_id", "int", "The changed {noun} (asset_id of the register)."),
        ("changed_on", "date", "Date of the change."),
        ("field_name", "text", "Attribute that changed."),
        ("old_value", "text", "Value before the change."),
        ("new_value", "text", "Value after the change."),
    ],
    "attachments": [
        ("attachment_id", "int", "Attachment number (unique)."),
        ("asset_id", "int", "The {noun} the document belongs to (asset_id)."),
        ("file_name", "text", "Stored file name of the photo or document."),
        ("media_type", "media", "Media type, e.g. image/jpeg or application/pdf."),
        ("uploaded_on", "date", "Upload date."),
    ],
}

_REGISTER_COLUMNS: Final[list[tuple[str, str, str]]] = [
    ("asset_id", "int", "Asset identifier of the {noun} (unique)."),
    ("asset_tag", "text", "Tag painted or fixed on the {noun} in the field."),
    ("installed_on", "date", "Installation date."),
    ("condition", "condition", "Condition rating: good, fair, poor or critical."),
    ("owner", "owner", "Owning department."),
]

_SIDE_COMMENTS: Final[dict[str, str]] = {
    "inspections": "Field inspections of {noun}s: date, inspector and outcome.",
    "work_orders": "Maintenance and repair work orders on {noun}s, with priority and cost.",
    "history": "Attribute change history (audit log) of the {noun} register.",
    "attachments": "Photos and documents attached to {noun} records.",
}


@dataclass(frozen=True)
class ColumnSpec:
    """One column of a municipal table: name, value kind and COMMENT."""

    name: str
    kind: str
    comment: str


@dataclass(frozen=True)
class TableSpec:
    """One municipal table: schema, name, COMMENT, columns and geometry kind."""

    schema: str
    name: str
    comment: str
    columns: list[ColumnSpec]
    geometry: str  # point | line | none
    noun: str


def municipal_tables(limit: int | None = None) -> list[TableSpec]:
    """Every municipal table spec in a fixed order (the first ``limit`` ones if given)."""
    out: list[TableSpec] = []
    for schema, entities in ENTITIES.items():
        for table, noun, geometry in entities:
            out.append(_register(schema, table, noun, geometry))
            out.extend(_side(schema, table, noun, side) for side in SIDE_TABLES)
    return out[:limit] if limit is not None else out


def _register(schema: str, table: str, noun: str, geometry: str) -> TableSpec:
    columns = [ColumnSpec(n, k, c.format(noun=noun)) for n, k, c in _REGISTER_COLUMNS]
    where = {"point": " with its location", "line": " with its alignment", "none": ""}[geometry]
    comment = f"Register of every {noun} the municipality maintains{where}."
    return TableSpec(schema, table, comment, columns, geometry, noun)


def _side(schema: str, table: str, noun: str, side: str) -> TableSpec:
    columns = [ColumnSpec(n, k, c.format(noun=noun)) for n, k, c in _SIDE_COLUMNS[side]]
    singular = table.removesuffix("s") if not table.endswith("ss") else table
    return TableSpec(
        schema, f"{singular}_{side}", _SIDE_COMMENTS[side].format(noun=noun), columns, "none", noun
    )


REFERENCE_TABLES: Final[list[tuple[str, str]]] = [
    ("lu_condition_codes", "Lookup of asset condition ratings (good, fair, poor, critical)."),
    ("lu_priority_codes", "Lookup of work order priorities and their response times."),
    ("lu_owner_departments", "Lookup of the municipal departments that own assets."),
    ("lu_inspection_results", "Lookup of inspection outcomes (pass, fail, needs_repair)."),
    ("lu_media_types", "Lookup of attachment media types."),
    ("lu_permit_types", "Lookup of permit types and their fees."),
    ("lu_zoning_codes", "Lookup of zoning district codes (R-4, CX, IH, ...) and their uses."),
    ("lu_fund_codes", "Lookup of budget fund codes charged by work orders."),
    ("contractors", "Contractors licensed to work on municipal assets."),
    ("employees", "Field staff: inspectors and crew members."),
]
"""Reference (lookup) tables of the schema ``reference``: code, label, description."""


def reference_tables() -> list[TableSpec]:
    """The lookup tables as :class:`TableSpec` (schema ``reference``, three text columns)."""
    columns = [
        ColumnSpec("code", "code", "Code as stored in the asset tables."),
        ColumnSpec("label", "text", "Human-readable label of the code."),
        ColumnSpec("description", "text", "Longer explanation of the code."),
    ]
    return [
        TableSpec("reference", name, comment, columns, "none", name.replace("_", " "))
        for name, comment in REFERENCE_TABLES
    ]
