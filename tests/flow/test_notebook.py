"""The Python API in Jupyter: a real notebook, executed by nbclient on an ipykernel.

ipykernel runs an event loop in the kernel's main thread; ``ask`` must work there as in a script
(it runs the question in a thread of its own). The notebook asks a benchmark question with the
offline ``reference`` model; the test reads the rendered outputs: the answer table and the map
inline (the result's ``_repr_html_``), and ``.gdf`` / ``.to_geopackage`` round-trips printed by
the notebook's last cell.
"""

from __future__ import annotations

import json
import os

import nbformat
import pytest
from nbclient import NotebookClient

from geoask.cases.loader import DEFAULT_CASES_DIR, load_cases

CASE = next(item.case for item in load_cases(DEFAULT_CASES_DIR, ())
            if item.case.id == "airports-024")

CHECK = """
import json, tempfile, pyogrio, geopandas as gpd
gdf = result.gdf
folder = tempfile.mkdtemp()
gdf.to_parquet(f"{folder}/answer.parquet")
back = gpd.read_parquet(f"{folder}/answer.parquet")
package = result.to_geopackage(f"{folder}/run.gpkg")
layers = {name: pyogrio.read_info(package.url, layer=name)["crs"] for name in package.layers}
print(json.dumps({
    "ids": sorted(gdf["iata"]), "crs": gdf.crs.to_string(),
    "round_trip": bool(back.geometry.geom_equals_exact(gdf.geometry, 1e-9).all()
                       and back.drop(columns="geometry").equals(gdf.drop(columns="geometry"))),
    "layers": layers, "sql": len(result.sql), "scripts": len(result.scripts),
    "df": sorted(result.df["id"]),
}))
"""


@pytest.mark.db
@pytest.mark.sandbox
def test_a_notebook_renders_the_answer_table_and_map_and_the_gdf_round_trips(api_settings):
    from prefect.settings import PREFECT_API_URL

    notebook = nbformat.v4.new_notebook(cells=[
        nbformat.v4.new_code_cell("import asyncio; asyncio.get_running_loop()"),
        nbformat.v4.new_code_cell(
            f"from geoask import ask\nresult = ask({CASE.question!r}, model='reference')\nresult"),
        nbformat.v4.new_code_cell(CHECK),
    ])
    env = {**os.environ, "PREFECT_API_URL": str(PREFECT_API_URL.value())}
    NotebookClient(notebook, timeout=600, kernel_name="python3",
                   resources={"metadata": {"path": "/tmp"}}).execute(env=env)

    rendered = notebook.cells[1].outputs[-1]["data"]["text/html"]
    assert "<table>" in rendered and 'src="data:image/png;base64,' in rendered
    expected = sorted(CASE.expected.value)
    assert all(f"<td>{code}</td>" in rendered for code in expected)
    printed = json.loads(notebook.cells[2].outputs[-1]["text"])
    assert printed["ids"] == expected and printed["df"] == expected
    assert printed["crs"] == "EPSG:4326" and printed["round_trip"] is True
    assert printed["layers"] == {"sql-1_rdu": "EPSG:4326", "sql-1_candidates": "EPSG:4326",
                                 "python-1_result": None}
    assert printed["sql"] == 2 and printed["scripts"] == 1
