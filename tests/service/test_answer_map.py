"""The answer maps: scale-bar arithmetic, and PNG + HTML drawn from a run's GeoJSON files."""

from __future__ import annotations

import base64
import io
import json
import re
from pathlib import Path

import pytest
from PIL import Image

from geoask.maps import answer_features, answer_map
from geoask.maps.answer_features import AnswerFeatures
from geoask.records.run_artifacts import RunArtifacts
from geoask.vocabulary.answers import FinalAnswer
from geoask.vocabulary.artifacts import ArtifactRef


@pytest.mark.parametrize(("max_length_m", "expected"), [
    (1.0, 1.0), (1.9, 1.0), (2.0, 2.0), (4.99, 2.0), (5.0, 5.0), (9.9, 5.0), (10.0, 10.0),
    (3700.0, 2000.0), (74_000.0, 50_000.0), (0.03, 0.02), (1_234_567.0, 1_000_000.0),
])
def test_nice_scale_length(max_length_m, expected):
    assert answer_map.nice_scale_length(max_length_m) == pytest.approx(expected)


@pytest.mark.parametrize("bad", [0.0, -5.0, float("nan")])
def test_nice_scale_length_rejects_non_positive(bad):
    with pytest.raises(ValueError, match="positive length"):
        answer_map.nice_scale_length(bad)


@pytest.mark.parametrize(("length_m", "label"), [
    (1.0, "1 m"), (500.0, "500 m"), (999.0, "999 m"), (1000.0, "1 km"), (2500.0, "2.5 km"),
    (200_000.0, "200 km"),
])
def test_scale_label(length_m, label):
    assert answer_map.scale_label(length_m) == label


def feature_collection(features: list[tuple[dict, dict]]) -> str:
    return json.dumps({"type": "FeatureCollection", "features": [
        {"type": "Feature", "geometry": g, "properties": p} for g, p in features]})


RED = (214, 39, 40)  # ANSWER_COLOUR, also the first layer colour without an answer


def colours(png: bytes) -> set[tuple[int, int, int]]:
    image = Image.open(io.BytesIO(png))
    assert image.format == "PNG"
    assert image.width > 400 and image.height > 150
    return {c for _, c in image.convert("RGB").getcolors(maxcolors=1 << 20)}


def airport_run(store: RunArtifacts) -> list[list[ArtifactRef]]:
    """A run whose SQL step fetched 40 airports spread over 40 degrees, then a JSON step."""
    airports = store.write_text("sql-1/airports.geojson", feature_collection([
        ({"type": "Point", "coordinates": [-120.0 + i, 30.0 + (i % 7)]},
         {"iata": f"A{i:02d}", "name": f"Airport {i}"}) for i in range(40)]))
    result = store.write_text("python-1/result.json", "[]")
    return [[ArtifactRef(name="airports", url=airports, format="geojson")],
            [ArtifactRef(name="result", url=result, format="json")]]


def test_the_answer_is_drawn_prominently_over_the_muted_context_and_zoomed_to(tmp_path: Path):
    from geoask.maps.answer_features import pick_answer, read_layers

    store = RunArtifacts(str(tmp_path), "run-1")
    refs = airport_run(store)
    answer = FinalAnswer(answer_type="entity_list", summary="two",
                         data_payload={"entities": [{"id": "A10"}, {"id": "A11"}]})
    features = pick_answer(answer, read_layers([("airports", refs[0][0].url)]))
    assert features.answer is not None and list(features.answer["iata"]) == ["A10", "A11"]
    assert features.bounds() == (-110.0, 33.0, -109.0, 34.0)
    styles = answer_features.layer_styles(features)
    assert [(s.colour, s.answer) for _, s in styles] == [
        (answer_features.CONTEXT_COLOURS[0], False), (answer_features.ANSWER_COLOUR, True)]
    assert len(styles[0][0]) == 40 and len(styles[1][0]) == 2
    view = answer_map.map_view(features.bounds())
    xmin, ymin, xmax, ymax = view.limits
    assert view.units_per_metre == 1.0  # a UTM zone for a 1-degree extent
    assert 85_000 * 1.3 < xmax - xmin < 95_000 * 1.3  # ~91 km wide + 15 % a side
    assert 105_000 * 1.3 < ymax - ymin < 115_000 * 1.3  # ~111 km high
    assert RED in colours(answer_map.render_answer_map(features, "Two airports"))
    plain = answer_features.layer_styles(AnswerFeatures(None, features.context))
    assert [(s.colour, s.answer) for _, s in plain] == [(answer_features.LAYER_COLOURS[0], False)]
    wide = answer_map.map_view(AnswerFeatures(None, features.context).bounds())
    assert wide.crs == "EPSG:5070"  # 39 degrees wide (7 UTM zones) in the US: Conus Albers
    assert 0.99 < wide.units_per_metre < 1.01  # its scale at 33 N, between its standard parallels


def test_draw_answer_maps_writes_png_and_html_and_their_markdown(tmp_path: Path):
    store = RunArtifacts(str(tmp_path), "run-1")
    answer = FinalAnswer(answer_type="ranked_list", summary="top 3", data_payload={
        "items": [{"rank": r, "id": f"A{r:02d}", "value": float(r)} for r in (1, 2, 3)]})
    maps = answer_map.draw_answer_maps(store, airport_run(store), answer, "Top airports")
    assert maps is not None
    assert maps.png == store.url("map.png") and maps.html == store.url("map.html")
    assert RED in colours(Path(maps.png).read_bytes())
    page = Path(maps.html).read_text(encoding="utf-8")
    assert "Leaflet 1.9.4" in page and "<title>Top airports</title>" in page
    assert "http://" not in page.replace("http://www.w3.org", "")  # nothing to fetch
    embedded = re.search(r"data:image/png;base64,([A-Za-z0-9+/=]+)", maps.markdown)
    assert embedded and base64.b64decode(embedded.group(1)) == Path(maps.png).read_bytes()
    assert "answer id values matched 'iata' of airports" in maps.markdown
    assert maps.html in maps.markdown


def test_dollar_signs_in_title_and_labels_draw_literally(tmp_path: Path):
    # Attack finding 7: an unbalanced $ made matplotlib's mathtext raise and both maps vanish.
    store = RunArtifacts(str(tmp_path), "run-3")
    answer = FinalAnswer(answer_type="ranked_list", summary="top 3", data_payload={
        "items": [{"rank": r, "id": f"A{r:02d}", "value": float(r)} for r in (1, 2, 3)]})
    maps = answer_map.draw_answer_maps(store, airport_run(store), answer,
                                          r"costs $\frac{$ between $20 and $30?")
    assert maps is not None and Path(maps.png).stat().st_size > 0
    assert Path(maps.html).exists()


def test_draw_answer_maps_without_geometry_draws_nothing(tmp_path: Path):
    store = RunArtifacts(str(tmp_path), "run-2")
    result = store.write_text("python-1/result.json", "{}")
    refs = [[ArtifactRef(name="result", url=result, format="json")]]
    assert answer_map.draw_answer_maps(store, refs, None, "q") is None
    assert not (tmp_path / "run-2" / "map.png").exists()
    assert not (tmp_path / "run-2" / "map.html").exists()


def test_render_answer_map_needs_a_layer():
    with pytest.raises(ValueError, match="at least one layer"):
        answer_map.render_answer_map(AnswerFeatures(None, {}), "q")


DEM = Path(__file__).parents[2] / "geoask" / "demo_data" / "lux_elevation.tif"


def test_raster_backdrop_hillshades_one_band_and_hides_nodata():
    from geoask.maps.raster_map import raster_backdrop, raster_bounds_wgs84

    bounds = raster_bounds_wgs84(DEM.read_bytes())
    assert [round(v, 4) for v in bounds] == [5.7417, 49.4417, 6.5333, 50.1917]
    backdrop = raster_backdrop(DEM.read_bytes(), "EPSG:32632")
    assert backdrop.label == "band 1, hillshaded (141 to 547)"
    left, right, bottom, top = backdrop.extent
    assert 50_000 < right - left < 65_000 and 80_000 < top - bottom < 90_000  # metres
    alpha = backdrop.rgba[..., 3]
    assert (alpha == 0).any() and (alpha == 1).any()  # outside Luxembourg is transparent


def test_raster_backdrop_of_a_multiband_image_is_false_colour():
    import numpy as np

    from geoask.base.raster import RasterTile, to_geotiff_bytes
    from geoask.maps.raster_map import raster_backdrop

    bands = np.stack([np.full((20, 30), 10 * (b + 1), "uint8") for b in range(6)])
    bands[3, :, 15:] = 200  # bright near infrared in the east half
    tiff = to_geotiff_bytes(RasterTile(bands, (290000.0, 30.0, 0.0, 9120000.0, 0.0, -30.0),
                                       31985, (None,) * 6))
    backdrop = raster_backdrop(tiff, "EPSG:31985")
    assert backdrop.label == "bands 4, 3, 2 as red, green, blue"
    red = backdrop.rgba[..., 0]
    assert red[:, -1].mean() > red[:, 0].mean()


def test_publish_draws_zones_over_a_raster_and_a_raster_alone(tmp_path: Path):
    store = RunArtifacts(str(tmp_path), "run-r")
    dem = store.url("sql-1/dem.tif")
    Path(dem).parent.mkdir(parents=True, exist_ok=True)
    Path(dem).write_bytes(DEM.read_bytes())
    zone = store.write_text("sql-1/zone.geojson", feature_collection([(
        {"type": "Polygon", "coordinates": [[[5.9, 49.6], [6.2, 49.6], [6.2, 49.9], [5.9, 49.9],
                                             [5.9, 49.6]]]}, {"name": "box"})]))
    raster_only = answer_map.draw_answer_maps(
        store, [[ArtifactRef(name="dem", url=dem, format="geotiff")]], None, "relief")
    assert raster_only is not None
    image = Image.open(io.BytesIO(Path(raster_only.png).read_bytes())).convert("RGB")
    alone = {c for _, c in image.getcolors(maxcolors=1 << 20)}
    with_zone = answer_map.draw_answer_maps(
        store, [[ArtifactRef(name="dem", url=dem, format="geotiff"),
                 ArtifactRef(name="zone", url=zone, format="geojson")]], None, "relief")
    assert with_zone is not None
    drawn = colours(Path(with_zone.png).read_bytes())
    assert RED in drawn and RED not in alone  # the zone's outline over the relief
    assert len(alone) > 200  # shaded relief, not a blank frame
    page = Path(with_zone.html).read_text(encoding="utf-8")
    rasters = json.loads(re.search(r'id="geoask-rasters">(.*?)</script>', page).group(1))
    assert len(rasters) == 1 and rasters[0]["url"].startswith("data:image/png;base64,")
    (south, west), (north, east) = rasters[0]["bounds"]
    # the grid warped to EPSG:3857 covers the raster's extent to within a pixel (1/120 degree)
    assert [west, south, east, north] == pytest.approx([5.7417, 49.4417, 6.5333, 50.1917],
                                                       abs=1 / 120)


@pytest.mark.parametrize(("bounds", "crs"), [
    ((-79.0, 35.5, -78.2, 36.1), "EPSG:32617"),  # a county: its UTM zone
    ((-120.0, 30.0, -81.0, 36.0), "EPSG:5070"),  # several zones in the US: Conus Albers
    ((-10.0, 36.0, 30.0, 70.0), "EPSG:3035"),  # Europe: LAEA Europe
    ((-179.0, -80.0, 179.0, 80.0), "EPSG:8857"),  # the world: Equal Earth
])
def test_the_scale_bar_matches_ground_metres_at_the_centre_of_the_map_crs(bounds, crs):
    from pyproj import Geod, Transformer

    view = answer_map.map_view(bounds)
    assert view.crs == crs
    lon, lat = (bounds[0] + bounds[2]) / 2, (bounds[1] + bounds[3]) / 2
    east_lon, east_lat, _ = Geod(ellps="WGS84").fwd(lon, lat, 90.0, 1000.0)
    to_map = Transformer.from_crs(4326, crs, always_xy=True)
    (x0, x1), (y0, y1) = to_map.transform([lon, east_lon], [lat, east_lat])
    map_units = ((x1 - x0) ** 2 + (y1 - y0) ** 2) ** 0.5
    assert map_units / 1000.0 == pytest.approx(view.units_per_metre, rel=2e-3)


def geoparquet_airports(store: RunArtifacts) -> str:
    """The airports of :func:`airport_run` exported as GeoParquet (a large result's format)."""
    import shapely

    from geoask.sql.executor import QueryResult, ResultColumn
    from geoask.sql.export import export_result

    rows = [(f"A{i:02d}", shapely.set_srid(shapely.Point(-120.0 + i, 30.0 + (i % 7)), 4326))
            for i in range(40)]
    result = QueryResult((ResultColumn("iata", "text"), ResultColumn("geom", "geometry", True)),
                         rows, 100, "SELECT iata, geom FROM airports")
    exported = export_result(result, store.url("sql-1"), name="airports", columnar_rows=10)
    assert exported.format == "geoparquet"
    return exported.data_path


def test_the_map_reads_a_geoparquet_layer(tmp_path: Path):
    from geoask.maps.answer_features import feature_layers, pick_answer, read_layers

    store = RunArtifacts(str(tmp_path), "run-4")
    url = geoparquet_airports(store)
    refs = [[ArtifactRef(name="airports", url=url, format="geoparquet")]]
    layers = read_layers(feature_layers(refs))
    assert list(layers) == ["airports"] and len(layers["airports"]) == 40
    assert layers["airports"].crs.to_epsg() == 4326
    answer = FinalAnswer(answer_type="entity_list", summary="two",
                         data_payload={"entities": [{"id": "A10"}, {"id": "A11"}]})
    features = pick_answer(answer, layers)
    assert features.answer is not None and list(features.answer["iata"]) == ["A10", "A11"]
    assert features.bounds() == (-110.0, 33.0, -109.0, 34.0)
    maps = answer_map.draw_answer_maps(store, refs, answer, "Two airports")
    assert maps is not None and RED in colours(Path(maps.png).read_bytes())


def test_a_parquet_table_without_geo_metadata_is_no_layer_and_a_csv_no_map_file(tmp_path):
    import pyarrow as pa
    import pyarrow.parquet as pq

    from geoask.maps.answer_features import read_layers

    table = tmp_path / "table.parquet"
    pq.write_table(pa.table({"n": [1, 2]}), table)
    assert read_layers([("table", str(table))]) == {}
    with pytest.raises(ValueError, match=r"notes\.csv is no map layer"):
        read_layers([("notes", str(tmp_path / "notes.csv"))])


def planar_run(store: RunArtifacts, units: str) -> list[list[ArtifactRef]]:
    """A lon/lat layer, then parcels in planar coordinates (SRID 0 declared planar)."""
    airports = airport_run(store)[0]
    parcels = json.loads(feature_collection([
        ({"type": "Polygon", "coordinates": [[[985000.0 + 900 * i, 200000.0],
                                              [985600.0 + 900 * i, 200000.0],
                                              [985600.0 + 900 * i, 200250.0],
                                              [985000.0 + 900 * i, 200000.0]]]},
         {"id": i}) for i in range(3)]))
    parcels["crs"] = {"type": "name", "properties": {"name": "planar", "units": units}}
    url = store.write_text("sql-2/parcels.geojson", json.dumps(parcels))
    return [airports, [ArtifactRef(name="parcels", url=url, format="geojson")]]


@pytest.mark.parametrize(("units", "scale_bars"), [("foot", [(500.0, "foot")]),
                                                   ("unknown", [])])
def test_planar_data_is_drawn_alone_in_its_own_units_and_gets_no_leaflet_map(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, units: str, scale_bars: list,
):
    store = RunArtifacts(str(tmp_path), "run-1")
    drawn: list[AnswerFeatures] = []
    labels: list[tuple[float, str]] = []
    render, label = answer_map.render_answer_map, answer_map.planar_scale_label
    monkeypatch.setattr(answer_map, "render_answer_map",
                        lambda features, *args: drawn.append(features) or render(features, *args))
    monkeypatch.setattr(answer_map, "planar_scale_label",
                        lambda length, u: labels.append((length, u)) or label(length, u))
    maps = answer_map.draw_answer_maps(store, planar_run(store, units), None, "Parcels")
    assert maps is not None and maps.html is None and Path(maps.png).exists()
    assert not (tmp_path / "run-1" / "map.html").exists()
    assert f"planar coordinates in {units} units" in maps.markdown
    (features,) = drawn
    assert list(features.context) == ["parcels"]  # the lon/lat airports cannot be placed with it
    assert features.context["parcels"].crs is None
    assert features.bounds() == (985000.0, 200000.0, 987400.0, 200250.0)
    assert labels == scale_bars


def test_a_large_raster_backdrop_is_read_decimated():
    """Issue 31: a map reads at most MAX_BACKDROP_PIXELS of a large export, not all of it."""
    import numpy as np
    from rasterio.io import MemoryFile
    from rasterio.transform import from_origin

    from geoask.maps.raster_map import MAX_BACKDROP_PIXELS, raster_backdrop

    values = np.tile(np.arange(4000, dtype="uint16"), (3000, 1))
    with MemoryFile() as memory:
        with memory.open(driver="GTiff", width=4000, height=3000, count=1, dtype="uint16",
                         crs="EPSG:32632", transform=from_origin(500000, 5300000, 10, 10),
                         compress="deflate") as sink:
            sink.write(values[np.newaxis])
        data = bytes(memory.read())
    with MemoryFile(data) as memory, memory.open() as source:
        assert source.width * source.height > 2 * MAX_BACKDROP_PIXELS
    backdrop = raster_backdrop(data, "EPSG:32632")
    height, width = backdrop.rgba.shape[:2]
    assert height * width <= 1.2 * MAX_BACKDROP_PIXELS
    assert backdrop.extent[0] == pytest.approx(500000, abs=30)
    assert backdrop.extent[1] == pytest.approx(540000, abs=30)
