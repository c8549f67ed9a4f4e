"""Which SQL functions a checked query may call: an allow-list of read-only function families.

Why an allow-list and not a deny-list: a database can hold any number of functions geoask has
never seen - user-defined ones, extensions (dblink, adminpack, plpython), new releases of
PostgreSQL. A deny-list has to name every dangerous one and silently passes the one it forgot;
an allow-list fails closed, so a forgotten *safe* function costs a rejected query (the agent is
told which function and can rewrite), while a forgotten *dangerous* one cannot be called.
The families below only read: no file or large-object access, no dblink, no configuration
setters, no advisory locks, no sequences, no sleeping, no backend signals, no notifications,
no functions that run SQL text (``query_to_xml``, ``ts_stat``).

Names are compared as PostgreSQL resolves them: unquoted names folded to lower case, quoted
names exactly. Schema-qualified calls are allowed only with ``pg_catalog``.
"""

from __future__ import annotations

import functools

from geoask.catalog.spatial import POSTGIS_TYPE_NAMES
from geoask.sql.postgis_functions import (
    POSTGIS_CATALOG_FUNCTIONS,
    POSTGIS_REVIEWED_FUNCTIONS,
)
from geoask.sql.screens import SCREEN_FUNCTIONS


def _names(text: str) -> frozenset[str]:
    return frozenset(text.split())


AGGREGATE_FUNCTIONS = _names(
    """
    count sum avg min max stddev stddev_pop stddev_samp variance var_pop var_samp corr
    covar_pop covar_samp regr_slope regr_intercept regr_r2 regr_count regr_avgx regr_avgy
    regr_sxx regr_syy regr_sxy percentile_cont percentile_disc mode bool_and bool_or every
    grouping
    array_agg string_agg json_agg jsonb_agg json_object_agg jsonb_object_agg bit_and bit_or
    """
)
WINDOW_FUNCTIONS = _names(
    """
    row_number rank dense_rank percent_rank cume_dist ntile lag lead first_value last_value
    nth_value
    """
)
MATH_FUNCTIONS = _names(
    """
    abs ceil ceiling floor round trunc sign sqrt cbrt power pow exp ln log log10 mod div pi
    degrees radians sin cos tan cot asin acos atan atan2 sind cosd tand asind acosd atand
    sinh cosh tanh width_bucket gcd lcm factorial scale trim_scale min_scale
    """
)
CONDITIONAL_FUNCTIONS = _names("coalesce nullif greatest least num_nonnulls num_nulls")
# `x <> ALL (ARRAY[...])`, `x = SOME/ANY (ARRAY[...])`: sqlglot reads the array form as a call
QUANTIFIERS = _names("all some any")
STRING_FUNCTIONS = _names(
    """
    lower upper initcap length char_length character_length octet_length bit_length substr
    substring left right lpad rpad ltrim rtrim btrim trim replace translate concat concat_ws
    split_part strpos position reverse repeat format regexp_replace regexp_match
    regexp_matches regexp_split_to_array regexp_split_to_table regexp_count regexp_like
    regexp_substr regexp_instr starts_with md5 to_hex ascii chr string_to_array string_to_table
    array_to_string overlay normalize encode decode like_escape similar_to_escape similar_escape
    """
)
DATE_TIME_FUNCTIONS = _names(
    """
    now current_date current_timestamp localtimestamp date_trunc date_part extract age
    make_date make_time make_timestamp make_timestamptz make_interval to_char to_date
    to_timestamp to_number justify_days justify_hours justify_interval isfinite date_bin
    statement_timestamp transaction_timestamp timezone
    """
)
JSON_FUNCTIONS = _names(
    """
    json_build_object jsonb_build_object json_build_array jsonb_build_array to_json to_jsonb
    row_to_json array_to_json json_array_length jsonb_array_length json_extract_path
    jsonb_extract_path json_extract_path_text jsonb_extract_path_text json_each jsonb_each
    json_each_text jsonb_each_text json_array_elements jsonb_array_elements
    json_array_elements_text jsonb_array_elements_text json_typeof jsonb_typeof
    json_object_keys jsonb_object_keys jsonb_pretty json_object jsonb_object
    jsonb_path_query jsonb_path_query_array jsonb_path_query_first jsonb_path_exists
    jsonb_path_match jsonb_path_query_tz jsonb_path_query_array_tz jsonb_path_query_first_tz
    jsonb_path_exists_tz jsonb_path_match_tz json_to_record json_to_recordset jsonb_to_record
    jsonb_to_recordset
    json_populate_record json_populate_recordset jsonb_populate_record jsonb_populate_recordset
    """
)
TEXT_SEARCH_FUNCTIONS = _names(
    """
    to_tsvector to_tsquery plainto_tsquery phraseto_tsquery websearch_to_tsquery ts_rank
    ts_rank_cd ts_headline setweight strip numnode querytree tsvector_to_array
    array_to_tsvector
    """
)
ARRAY_FUNCTIONS = _names(
    """
    array_length cardinality unnest array_position array_positions array_remove array_replace
    array_append array_cat array_prepend array_lower array_upper array_dims array_ndims
    generate_series generate_subscripts row
    """
)

READ_ONLY_FUNCTIONS: frozenset[str] = (
    AGGREGATE_FUNCTIONS
    | WINDOW_FUNCTIONS
    | MATH_FUNCTIONS
    | CONDITIONAL_FUNCTIONS
    | QUANTIFIERS
    | STRING_FUNCTIONS
    | DATE_TIME_FUNCTIONS
    | JSON_FUNCTIONS
    | ARRAY_FUNCTIONS
    | TEXT_SEARCH_FUNCTIONS
)
"""Functions allowed under every policy (PostgreSQL built-ins that only read)."""

POSTGIS_OTHER_FUNCTIONS = _names("geometrytype box2d box3d geometry geography")
"""PostGIS functions without the ``st_`` prefix that only compute (allowed under ``postgis``)."""

#: Management, metadata, catalog-reading and dynamic-SQL functions, refused whichever list
#: (hand-kept or derived from the database's catalog) names them: ``ST_FindExtent`` pastes
#: its column argument into SQL it runs itself (an injection past the guard), and
#: ``ST_EstimatedExtent`` reads planner statistics of any table named as text.
REFUSED_FUNCTIONS: frozenset[str] = frozenset({
    "addgeometrycolumn", "dropgeometrycolumn", "dropgeometrytable", "updategeometrysrid",
    "populate_geometry_columns", "find_srid", "st_estimatedextent", "st_findextent",
    "lockrow", "unlockrows", "addauth", "checkauth", "checkauthtrigger",
    "enablelongtransactions", "disablelongtransactions", "longtransactionsenabled",
    "gettransactionid", "addrasterconstraints", "droprasterconstraints",
    "addoverviewconstraints", "dropoverviewconstraints",
    # raster: out-of-database file paths and GDAL's own file access, table-creating overviews
    "st_bandpath", "st_setbandpath", "st_bandfilesize", "st_bandfiletimestamp",
    "st_fromgdalraster", "st_gdaldrivers", "st_createoverview",
    # ST_BandMetaData returns an out-db band's path, file size and timestamp (issue 31; its
    # in-db facts are ST_BandPixelType, ST_BandNoDataValue, ST_BandIsNoData)
    "st_bandmetadata",
    # ST_FromFlatGeobufToTable creates a table (PostGIS declares it IMMUTABLE)
    "st_fromflatgeobuftotable",
    # ST_AddBand's out-db overload opens any server path with GDAL (probes files: attack pass);
    # ST_Retile builds SQL on a table named in text (like ST_FindExtent)
    "st_addband", "st_retile",
    # raster map algebra runs SQL text (an expression) or any function named by regprocedure
    "st_mapalgebra", "st_mapalgebraexpr", "st_mapalgebrafct", "st_mapalgebrafctngb",
})
POSTGIS_READ_FUNCTIONS: frozenset[str] = (
    POSTGIS_CATALOG_FUNCTIONS | POSTGIS_REVIEWED_FUNCTIONS | POSTGIS_OTHER_FUNCTIONS
) - REFUSED_FUNCTIONS
"""Functions added by the ``postgis`` policy (geometry, geography and raster families)."""

RASTER_EXPORT_FUNCTIONS = _names("st_clip st_asgdalraster st_astiff")
"""Raster functions allowed under ``separated`` too: they cut a raster to a geometry
(``ST_Clip``) or encode it as a file (``ST_AsGDALRaster``, ``ST_AsTIFF``) so that it is exported
for Python; statistics (``ST_SummaryStats``), values (``ST_Value``) and terrain (``ST_Slope``)
stay computation and are refused there."""

SPATIAL_TYPE_NAMES: frozenset[str] = POSTGIS_TYPE_NAMES
"""Type names whose casts (and calls) count as spatial computation under ``separated``.

The catalog's notion (:mod:`geoask.catalog.spatial`): geometry, geography, raster and the
PostGIS box/index types.
"""


def is_spatial_function(name: str) -> bool:
    """True if ``name`` (as PostgreSQL resolves it) is a PostGIS function.

    >>> is_spatial_function("st_area"), is_spatial_function("count")
    (True, False)
    """
    lowered = name.lower()
    return (
        lowered.startswith(("st_", "postgis_", "_st_"))
        or lowered in POSTGIS_READ_FUNCTIONS
        or lowered in SPATIAL_TYPE_NAMES
    )


def computes_spatially(name: str) -> bool:
    """True if calling ``name`` is spatial computation, which policy ``separated`` refuses.

    Every PostGIS function (:func:`is_spatial_function`) except the raster export functions
    (:data:`RASTER_EXPORT_FUNCTIONS`), which only cut and encode a raster for Python.

    >>> computes_spatially("ST_SummaryStats"), computes_spatially("ST_Clip")
    (True, False)
    """
    return is_spatial_function(name) and name.lower() not in RASTER_EXPORT_FUNCTIONS


@functools.lru_cache(maxsize=64)
def allowed_function_names(
    policy: str, extension_functions: frozenset[str] = frozenset()
) -> frozenset[str]:
    """The allow-list for ``policy`` (``"separated"`` or ``"postgis"``), lower-case names.

    Under ``separated`` the box constructors of a bounding-box screen
    (:data:`~geoask.sql.screens.SCREEN_FUNCTIONS`) are on the list; rule ``spatial_policy``,
    which runs first, refuses them anywhere but in a screen.

    ``extension_functions``: PostGIS functions the database's catalog offers read-only
    (:mod:`geoask.sql.catalog_functions`), added under ``postgis`` only. Nothing on
    :data:`REFUSED_FUNCTIONS` is ever allowed.
    """
    if policy == "postgis":
        allowed = READ_ONLY_FUNCTIONS | POSTGIS_READ_FUNCTIONS | extension_functions
    else:
        allowed = READ_ONLY_FUNCTIONS | RASTER_EXPORT_FUNCTIONS | SCREEN_FUNCTIONS
    return allowed - REFUSED_FUNCTIONS


SQL_SYNTAX_FUNCTIONS = _names(
    """
    extract date_part substring position overlay btrim ltrim rtrim timezone similar_to_escape
    normalize is_normalized overlaps
    """
)
"""Functions PostgreSQL's parser calls for SQL syntax (``EXTRACT(f FROM x)``, ``SUBSTRING(s FROM
n)``, ``TRIM(BOTH ...)``, ``x AT TIME ZONE z``, ``SIMILAR TO``): all only compute."""

RECORD_ARGUMENT_FUNCTIONS = _names(
    """
    to_json to_jsonb row_to_json st_asgeojson hstore record_out quote_literal quote_nullable
    pg_typeof pg_column_size num_nulls num_nonnulls
    concat json_build_array jsonb_build_array json_build_object jsonb_build_object
    count array_agg json_agg jsonb_agg st_asmvt st_asgeobuf st_asflatgeobuf
    """
)
"""Functions that take a whole row, so that attribute notation ``a.f`` or ``(a).f`` calls them
as ``f(a)`` when the row has no column ``f`` (see :func:`attribute_call_names`). Type names
(``a.text``, ``a.name``) are no such functions - PostgreSQL 15 reports ``column a.text does not
exist`` - and ``name``/``text`` are common real column names, so they are left out.
Aggregates that take any row count too (``a.count`` is ``count(a)``). A CTE or sub-select
column named like one of these is refused as well (the guard does not resolve which relation
``a`` names): rename it."""


def attribute_call_names(column_names: frozenset[str]) -> frozenset[str]:
    """Names that, written as ``alias.name``, would be a function call rather than a column.

    ``column_names`` are the catalog's real column names (lower case); a real column of that
    name is a column, so it is left out.

    >>> sorted(attribute_call_names(frozenset({"count"})))[:3]
    ['array_agg', 'concat', 'hstore']
    """
    return RECORD_ARGUMENT_FUNCTIONS - column_names
