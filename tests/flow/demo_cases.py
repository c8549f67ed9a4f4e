"""The five "Done when" questions of issue #6 as scripted runs on the demo database.

Each case gives the question, the scripted replies of every agent (the SQL and script text a
model would write; the answer reply copies numbers from the evidence it is shown) and
``expected(connection)``, which computes the answer independently with pandas/geopandas from
the raw tables. Used by tests/flow/test_demo_questions.py and benchmark/flow_overhead.py.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import geopandas as gpd
import pandas as pd
import psycopg
import shapely
from replies import (
    accept,
    answer_from,
    draft,
    intent,
    script,
    sql_plan,
    sql_python_plan,
)

from geoask.vocabulary.answers import AnswerType
from geoask.vocabulary.plan import OperationIntent


@dataclass(frozen=True)
class DemoCase:
    """One scripted question with its independent expected answer."""

    name: str
    question: str
    replies: Callable[[], dict[str, list[Any]]]
    expected: Callable[[psycopg.Connection], Any]


def frame(connection: psycopg.Connection, sql: str) -> pd.DataFrame:
    """Rows of ``sql`` as a DataFrame."""
    with connection.cursor() as cursor:
        cursor.execute(sql)
        columns = [c.name for c in cursor.description or []]
        return pd.DataFrame(cursor.fetchall(), columns=columns)


def geo_frame(connection: psycopg.Connection, sql: str) -> gpd.GeoDataFrame:
    """Rows of ``sql`` (with ``wkb`` = ST_AsBinary(geom)) as a GeoDataFrame in EPSG:4326."""
    data = frame(connection, sql)
    geometry = shapely.from_wkb([bytes(b) for b in data.pop("wkb")])
    return gpd.GeoDataFrame(data, geometry=geometry, crs="EPSG:4326")


# 1. Filter/rank -------------------------------------------------------------------------------

RANK_SQL = """SELECT s.state_abbr, s.state_name, i.per_capita_income_usd
FROM demo.state_income_annual AS i
JOIN demo.us_states AS s ON s.state_fips = i.state_fips
WHERE i.year = 1950
ORDER BY i.per_capita_income_usd DESC, s.state_abbr
LIMIT 5"""


def _rank_payload(records: list[dict[str, Any]]) -> tuple[dict[str, Any], str]:
    items = [{"rank": n, "id": r["state_abbr"], "name": r["state_name"],
              "value": r["per_capita_income_usd"]} for n, r in enumerate(records, start=1)]
    return ({"items": items, "unit": "USD", "order": "descending"},
            f"{items[0]['name']} had the highest per-capita income in 1950 "
            f"({items[0]['value']} USD).")


def _rank_replies() -> dict[str, list[Any]]:
    return {
        "intent": [intent("states by 1950 per-capita income", OperationIntent.RANK_TOP_K,
                          years=(1950,), top_k=5)],
        "planner": [sql_plan("the five states with the highest per-capita income in 1950",
                             AnswerType.RANKED_LIST, ["state_abbr", "per_capita_income_usd"],
                             top_k=5)],
        "sql": [draft(("top_states", RANK_SQL))],
        "reviewer": [accept()],
        "answer": [answer_from(AnswerType.RANKED_LIST, _rank_payload)],
    }


def _rank_expected(connection: psycopg.Connection) -> list[tuple[str, int]]:
    income = frame(connection, "SELECT state_fips, year, per_capita_income_usd "
                               "FROM demo.state_income_annual")
    states = frame(connection, "SELECT state_fips, state_abbr FROM demo.us_states")
    joined = income[income.year == 1950].merge(states, on="state_fips")
    top = joined.sort_values(["per_capita_income_usd", "state_abbr"],
                             ascending=[False, True]).head(5)
    return [(r.state_abbr, int(r.per_capita_income_usd)) for r in top.itertuples()]


# 2. Join + aggregation ------------------------------------------------------------------------

REGION_SQL = """SELECT st.census_region,
       AVG(c.homicide_rate_per_100k) AS mean_homicide_rate,
       COUNT(*) AS counties
FROM demo.county_decadal_stats AS c
JOIN demo.us_counties AS uc ON uc.county_fips = c.county_fips
JOIN demo.us_states AS st ON st.state_fips = uc.state_fips
WHERE c.census_year = 1990
GROUP BY st.census_region
ORDER BY st.census_region"""


def _region_payload(records: list[dict[str, Any]]) -> tuple[dict[str, Any], str]:
    rows = [{"census_region": r["census_region"],
             "mean_homicide_rate": r["mean_homicide_rate"], "counties": r["counties"]}
            for r in records]
    worst = max(rows, key=lambda r: r["mean_homicide_rate"])
    return ({"records": rows, "units": {"mean_homicide_rate": "homicides per 100,000"}},
            f"In 1990 the {worst['census_region']} had the highest mean county homicide rate "
            f"({worst['mean_homicide_rate']} per 100,000).")


def _region_replies() -> dict[str, list[Any]]:
    return {
        "intent": [intent("mean county homicide rate per census region, 1990",
                          OperationIntent.AGGREGATE, years=(1990,))],
        "planner": [sql_plan("mean 1990 county homicide rate per census region",
                             AnswerType.RECORDS, ["census_region", "mean_homicide_rate"],
                             category="grouped_aggregation", granularity="county")],
        "sql": [draft(("region_rates", REGION_SQL))],
        "reviewer": [accept()],
        "answer": [answer_from(AnswerType.RECORDS, _region_payload)],
    }


def _region_expected(connection: psycopg.Connection) -> dict[str, tuple[float, int]]:
    stats = frame(connection, "SELECT county_fips, census_year, homicide_rate_per_100k "
                              "FROM demo.county_decadal_stats")
    counties = frame(connection, "SELECT county_fips, state_fips FROM demo.us_counties")
    states = frame(connection, "SELECT state_fips, census_region FROM demo.us_states")
    joined = (stats[stats.census_year == 1990].merge(counties, on="county_fips")
              .merge(states, on="state_fips"))
    grouped = joined.groupby("census_region")["homicide_rate_per_100k"].agg(["mean", "count"])
    return {region: (float(row["mean"]), int(row["count"])) for region, row in grouped.iterrows()}


# 3. Temporal comparison -----------------------------------------------------------------------

CHANGE_SQL = """SELECT a.per_capita_income_usd AS income_1929,
       b.per_capita_income_usd AS income_2009,
       b.per_capita_income_usd - a.per_capita_income_usd AS change_usd,
       ROUND(100.0 * (b.per_capita_income_usd - a.per_capita_income_usd)
             / a.per_capita_income_usd, 2) AS change_pct
FROM demo.state_income_annual AS a
JOIN demo.state_income_annual AS b ON b.state_fips = a.state_fips
JOIN demo.us_states AS s ON s.state_fips = a.state_fips
WHERE s.state_abbr = 'MS' AND a.year = 1929 AND b.year = 2009"""


def _change_payload(records: list[dict[str, Any]]) -> tuple[dict[str, Any], str]:
    row = records[0]
    return (dict(row), f"Per-capita income in Mississippi rose from {row['income_1929']} USD "
                       f"(1929) to {row['income_2009']} USD (2009), {row['change_pct']} percent.")


def _change_replies() -> dict[str, list[Any]]:
    return {
        "intent": [intent("Mississippi per-capita income", OperationIntent.COMPARE_PERIODS,
                          years=(1929, 2009))],
        "planner": [sql_plan("Mississippi per-capita income in 1929 and 2009 and the change",
                             AnswerType.OBJECT, ["income_1929", "income_2009", "change_pct"],
                             category="temporal_comparison", temporal="period_vs_period")],
        "sql": [draft(("income_change", CHANGE_SQL))],
        "reviewer": [accept()],
        "answer": [answer_from(AnswerType.OBJECT, _change_payload)],
    }


def _change_expected(connection: psycopg.Connection) -> dict[str, float]:
    income = frame(connection, "SELECT i.year, i.per_capita_income_usd FROM "
                               "demo.state_income_annual i JOIN demo.us_states s "
                               "ON s.state_fips = i.state_fips WHERE s.state_abbr = 'MS'")
    by_year = income.set_index("year")["per_capita_income_usd"]
    first, last = int(by_year[1929]), int(by_year[2009])
    return {"income_1929": first, "income_2009": last, "change_usd": last - first,
            "change_pct": round(100.0 * (last - first) / first, 2)}


# 4. Buffer/topology in Python -----------------------------------------------------------------

BUFFER_SCRIPT = '''import json

import geopandas as gpd
from shapely import union_all

incidents = gpd.read_file("/input/incidents.geojson")
roads = gpd.read_file("/input/interstates.geojson")
crs = incidents.estimate_utm_crs()
incidents = incidents.to_crs(crs)
zone = union_all(roads.to_crs(crs).buffer(100).values)
near = incidents[incidents.intersects(zone)]
print(json.dumps({
    "status": "success",
    "summary": f"{len(near)} incidents lie within 100 m of an interstate (EPSG:{crs.to_epsg()})",
    "result": {"incident_count": int(len(near)), "crs": f"EPSG:{crs.to_epsg()}"},
}))
'''


def _buffer_payload(result: dict[str, Any]) -> tuple[dict[str, Any], str]:
    return ({"value": result["incident_count"], "unit": "count"},
            f"{result['incident_count']} incidents happened within 100 m of an interstate.")


def _buffer_replies() -> dict[str, list[Any]]:
    return {
        "intent": [intent("New Haven police incidents near interstates", OperationIntent.COUNT,
                          distance_m=100)],
        "planner": [sql_python_plan(
            "export incident points and interstate centre lines",
            "count incidents within 100 m of an interstate in a metric CRS",
            AnswerType.SCALAR, ["incident_count"], geometry=True, granularity="point",
            category="spatial_geometry")],
        "sql": [draft(
            ("incidents", "SELECT incident_id, geom FROM demo.new_haven_incidents"),
            ("interstates", "SELECT road_id, full_name, geom FROM demo.new_haven_roads "
                            "WHERE road_type = 'I'"))],
        "compute": [script(BUFFER_SCRIPT)],
        "reviewer": [accept()],
        "answer": [answer_from(AnswerType.SCALAR, _buffer_payload)],
    }


def _buffer_expected(connection: psycopg.Connection) -> int:
    incidents = geo_frame(connection, "SELECT incident_id, ST_AsBinary(geom) AS wkb "
                                      "FROM demo.new_haven_incidents")
    roads = geo_frame(connection, "SELECT road_id, ST_AsBinary(geom) AS wkb "
                                  "FROM demo.new_haven_roads WHERE road_type = 'I'")
    crs = incidents.estimate_utm_crs()
    zone = shapely.union_all(roads.to_crs(crs).buffer(100).values)
    return int(incidents.to_crs(crs).intersects(zone).sum())


# 5. Statistics in Python ----------------------------------------------------------------------

CORRELATION_SCRIPT = '''import json

import pandas as pd

data = pd.read_json("/input/county_1990.json")
r = float(data["homicide_rate_per_100k"].corr(data["families_below_poverty_pct"]))
print(json.dumps({
    "status": "success",
    "summary": f"Pearson r = {r:.4f} over {len(data)} counties",
    "result": {"pearson_r": r, "counties": int(len(data))},
}))
'''


def _correlation_payload(result: dict[str, Any]) -> tuple[dict[str, Any], str]:
    r = round(result["pearson_r"], 4)
    return ({"pearson_r": r, "counties": result["counties"]},
            f"Across {result['counties']} counties in 1990 the Pearson correlation between the "
            f"homicide rate and family poverty was {r}.")


def _correlation_replies() -> dict[str, list[Any]]:
    return {
        "intent": [intent("correlation of county homicide rate and family poverty, 1990",
                          OperationIntent.STATISTICS, years=(1990,))],
        "planner": [sql_python_plan(
            "export the 1990 homicide rate and family poverty share of every county",
            "Pearson correlation of the two columns", AnswerType.OBJECT,
            ["pearson_r", "counties"], granularity="county", category="statistics")],
        "sql": [draft(("county_1990", "SELECT county_fips, homicide_rate_per_100k, "
                                      "families_below_poverty_pct FROM demo.county_decadal_stats "
                                      "WHERE census_year = 1990"))],
        "compute": [script(CORRELATION_SCRIPT, "pandas Pearson correlation")],
        "reviewer": [accept()],
        "answer": [answer_from(AnswerType.OBJECT, _correlation_payload)],
    }


def _correlation_expected(connection: psycopg.Connection) -> tuple[float, int]:
    data = frame(connection, "SELECT census_year, homicide_rate_per_100k, "
                             "families_below_poverty_pct FROM demo.county_decadal_stats")
    year = data[data.census_year == 1990].astype({"homicide_rate_per_100k": float,
                                                  "families_below_poverty_pct": float})
    r = year["homicide_rate_per_100k"].corr(year["families_below_poverty_pct"])
    return float(r), len(year)


CASES: tuple[DemoCase, ...] = (
    DemoCase("filter_rank", "Which five states had the highest per-capita income in 1950?",
             _rank_replies, _rank_expected),
    DemoCase("join_aggregation",
             "What was the average county homicide rate in each census region in 1990?",
             _region_replies, _region_expected),
    DemoCase("temporal_comparison",
             "How did per-capita income in Mississippi change between 1929 and 2009?",
             _change_replies, _change_expected),
    DemoCase("buffer_topology",
             "How many New Haven police incidents happened within 100 m of an interstate?",
             _buffer_replies, _buffer_expected),
    DemoCase("statistics",
             "How strongly is the 1990 county homicide rate correlated with family poverty?",
             _correlation_replies, _correlation_expected),
)
