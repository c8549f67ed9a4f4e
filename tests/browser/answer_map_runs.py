"""Runs of the demo questions, one per answer type, built from the shipped demo data.

Each run's layers are what the case's SQL step exports (the demo tables as GeoJSON, EPSG:4326,
or the DEM as GeoTIFF), its answer is computed here from the same data the way the case's
verified program computes it (geodesic distances on WGS 84, distances in UTM, zonal means over
pixel centres), and its focus is the intent the reference model gives the case
(:func:`geoask.models.reference.intent.case_intent` through
:func:`geoask.vocabulary.focus.map_focus`), so the maps are drawn as a question run draws them.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path

import geopandas as gpd
import numpy as np
import pandas as pd
from pyproj import Geod

from geoask.cases.loader import load_cases
from geoask.catalog.model import load_catalog
from geoask.maps.key_lookup import KeyedFeatures, best_match, candidates, tables_read_by
from geoask.models.reference.intent import case_intent
from geoask.records.run_artifacts import RunArtifacts
from geoask.vocabulary.answers import FinalAnswer
from geoask.vocabulary.artifacts import ArtifactRef
from geoask.vocabulary.focus import MapFocus, map_focus

DEMO = Path(__file__).resolve().parents[2] / "geoask" / "demo_data"
CASES = Path(__file__).resolve().parents[2] / "benchmark" / "cases"
GEOD = Geod(ellps="WGS84")


@dataclass
class DemoRun:
    """One run: its step artifacts, typed answer, title, focus and what the map must show."""

    steps: list[list[ArtifactRef]]
    answer: FinalAnswer
    title: str
    focus: MapFocus | None = None
    answer_ids: list[str] = field(default_factory=list)
    keyed: KeyedFeatures | None = None


def demo(table: str) -> gpd.GeoDataFrame:
    return gpd.read_parquet(DEMO / f"{table}.parquet")


def layer(store: RunArtifacts, step: str, name: str, frame: gpd.GeoDataFrame) -> ArtifactRef:
    url = store.write_text(f"{step}/{name}.geojson", frame.to_json(drop_id=True, default=str))
    return ArtifactRef(name=name, url=url, format="geojson")


def result(store: RunArtifacts, step: str = "python-1") -> list[ArtifactRef]:
    """A Python step's artifacts: its result JSON (no features)."""
    url = store.write_text(f"{step}/result.json", "{}")
    return [ArtifactRef(name="result", url=url, format="json")]


def case_focus(case_id: str) -> tuple[str, MapFocus]:
    """The question and the map focus of a benchmark case's reference-model intent."""
    (loaded,) = load_cases(CASES, only=[case_id])
    case = loaded.case
    return case.question, map_focus(case_intent(case))


def answer(answer_type: str, payload: dict) -> FinalAnswer:
    return FinalAnswer(answer_type=answer_type, data_payload=payload, summary="")


def geodesic_km(frame: gpd.GeoDataFrame, lon: float, lat: float) -> np.ndarray:
    n = len(frame)
    _, _, metres = GEOD.inv(np.full(n, lon), np.full(n, lat), frame.geometry.x.to_numpy(),
                            frame.geometry.y.to_numpy())
    return np.asarray(metres) / 1000.0


def scalar_count(store: RunArtifacts) -> DemoRun:
    """newhaven-022: incidents within 20 m of I- 95, measured in UTM 18N."""
    roads, incidents = demo("new_haven_roads"), demo("new_haven_incidents")
    i95 = roads[roads["full_name"] == "I- 95"].to_crs(32618).geometry.union_all()
    count = int((incidents.to_crs(32618).distance(i95) <= 20.0).sum())
    question, focus = case_focus("newhaven-022")
    return DemoRun([[layer(store, "sql-1", "roads", roads),
                     layer(store, "sql-1", "incidents", incidents)], result(store)],
                   answer("scalar", {"value": count, "unit": "count"}), question, focus,
                   [str(count)])


def entity_list(store: RunArtifacts) -> DemoRun:
    """airports-024: airports within 50 km of RDU, RDU excluded."""
    airports = demo("airports")
    rdu = airports[airports["iata"] == "RDU"].geometry.iloc[0]
    near = airports[(geodesic_km(airports, rdu.x, rdu.y) <= 50.0) & (airports["iata"] != "RDU")]
    question, focus = case_focus("airports-024")
    ids = sorted(near["iata"])
    return DemoRun([[layer(store, "sql-1", "airports", airports)]],
                   answer("entity_list", {"entities": [{"id": i} for i in ids]}), question,
                   focus, ids)


def nearest(store: RunArtifacts) -> DemoRun:
    """airports-006: the airport nearest to JFK and its geodesic distance."""
    airports = demo("airports")
    jfk = airports[airports["iata"] == "JFK"].geometry.iloc[0]
    km = pd.Series(geodesic_km(airports, jfk.x, jfk.y), index=airports.index)
    km = km[airports["iata"] != "JFK"]
    best = airports.loc[km.idxmin(), "iata"]
    question, focus = case_focus("airports-006")
    return DemoRun([[layer(store, "sql-1", "airports", airports)], result(store)],
                   answer("object", {"iata": best, "distance_km": float(km.min()), "unit": "km"}),
                   question, focus, [str(best)])


def ranked_polygons(store: RunArtifacts) -> DemoRun:
    """states-006: the top five states by per-capita income in 2000."""
    states = demo("us_states")
    income = pd.read_parquet(DEMO / "state_income_annual.parquet")
    joined = states.merge(income[income["year"] == 2000], on="state_fips")
    top = joined.sort_values(["per_capita_income_usd", "state_abbr"],
                             ascending=[False, True]).head(5)
    items = [{"rank": r, "id": row.state_abbr, "name": row.state_name,
              "value": float(row.per_capita_income_usd)}
             for r, row in enumerate(top.itertuples(), start=1)]
    question, focus = case_focus("states-006")
    return DemoRun([[layer(store, "sql-1", "states", joined.drop(columns="year"))]],
                   answer("ranked_list", {"items": items, "unit": "USD", "order": "descending"}),
                   question, focus, list(top["state_abbr"]))


def records_points(store: RunArtifacts) -> DemoRun:
    """Connecticut's airports with their geodesic distance to Bradley (BDL), as records."""
    airports = demo("airports")
    ct = airports[airports["state_abbr"] == "CT"]
    bdl = ct[ct["iata"] == "BDL"].geometry.iloc[0]
    km = geodesic_km(ct, bdl.x, bdl.y)
    rows = [{"iata": i, "distance_km": round(float(d), 1)} for i, d in zip(ct["iata"], km,
                                                                           strict=True)
            if i != "BDL"]
    return DemoRun([[layer(store, "sql-1", "airports", ct)], result(store)],
                   answer("records", {"records": rows, "units": {"distance_km": "km"}}),
                   "How far is each Connecticut airport from Bradley (BDL), geodesically?",
                   None, [row["iata"] for row in rows])


def raster_zonal(store: RunArtifacts) -> DemoRun:
    """luxdem-004: the 12 cantons ranked by mean elevation over pixel centres."""
    import rasterio
    from rasterio.mask import mask

    cantons = demo("lux_cantons")
    means = {}
    with rasterio.open(DEM) as source:
        for name, geometry in zip(cantons["canton_name"], cantons.geometry, strict=True):
            pixels, _ = mask(source, [geometry], crop=True, filled=False)
            means[name] = float(pixels.mean())
    ranked = sorted(means.items(), key=lambda item: (-item[1], item[0]))
    items = [{"rank": r, "id": name, "value": value}
             for r, (name, value) in enumerate(ranked, start=1)]
    dem = store.url("sql-1/lux_elevation.tif")
    Path(dem).parent.mkdir(parents=True, exist_ok=True)
    Path(dem).write_bytes(DEM.read_bytes())
    question, focus = case_focus("luxdem-004")
    return DemoRun([[ArtifactRef(name="lux_elevation", url=dem, format="geotiff"),
                     layer(store, "sql-1", "cantons", cantons)], result(store)],
                   answer("ranked_list", {"items": items, "unit": "m"}), question, focus,
                   [name for name, _ in ranked])


def bbox(store: RunArtifacts) -> DemoRun:
    """The bounding box of Connecticut's airports."""
    ct = demo("airports")
    ct = ct[ct["state_abbr"] == "CT"]
    west, south, east, north = (float(v) for v in ct.total_bounds)
    return DemoRun([[layer(store, "sql-1", "airports", ct)]],
                   answer("bbox", {"bbox": [west, south, east, north]}),
                   "What is the bounding box of the airports recorded in Connecticut?", None,
                   ["bbox"])


def codes_only(store: RunArtifacts) -> DemoRun:
    """states-006 as its verified SQL answers it: postal codes and incomes, no geometry.

    The map's geometry comes from the lookup by key (:mod:`geoask.maps.key_lookup`): its
    query is the one a run sends, its rows are read here from the shipped ``us_states``.
    """
    (loaded,) = load_cases(CASES, only=["states-006"])
    sql = loaded.case.reference.steps[0].statements[0].sql
    states = demo("us_states")
    income = pd.read_parquet(DEMO / "state_income_annual.parquet")
    joined = states.merge(income[income["year"] == 2000], on="state_fips")
    top = joined.sort_values(["per_capita_income_usd", "state_abbr"],
                             ascending=[False, True]).head(5)
    rows = [{"state_abbr": a, "per_capita_income_usd": int(v)}
            for a, v in zip(top["state_abbr"], top["per_capita_income_usd"], strict=True)]
    url = store.write_text("sql-1/top_2000.json", json.dumps(rows))
    items = [{"rank": r, "id": row["state_abbr"], "value": row["per_capita_income_usd"]}
             for r, row in enumerate(rows, start=1)]
    final = answer("ranked_list", {"items": items, "unit": "USD", "order": "descending"})
    steps = [[ArtifactRef(name="top_2000", url=url, format="json", sql=sql)]]
    catalog = load_catalog()
    found = candidates(catalog, final, tables_read_by(steps))
    by_abbr = states.set_index("state_abbr")
    looked_up = [(0, code, by_abbr.loc[code, "state_name"], by_abbr.geometry.loc[code])
                 for code in found[0].values if code in by_abbr.index]
    question, focus = case_focus("states-006")
    return DemoRun(steps, final, question, focus, list(top["state_abbr"]),
                   best_match(catalog, found, looked_up))


DEM = DEMO / "lux_elevation.tif"
RUNS = {"scalar-count": scalar_count, "entity-list": entity_list, "nearest-distance": nearest,
        "ranked-polygons": ranked_polygons, "records": records_points,
        "raster-zonal-ranking": raster_zonal, "bbox": bbox, "codes-only": codes_only}
