"""The synthetic region of the scale benchmark: cities, districts, airports, categories.

A fictitious state with North Carolina's longitude/latitude extent (EPSG:4326). City centres,
airport codes and weights are fixed here so every size and every seed shares them; the
generator (``generate.py``) draws the big tables around them.
"""

from __future__ import annotations

from typing import Final

EXTENT: Final = (-84.3, 33.9, -75.5, 36.55)
"""min lon, min lat, max lon, max lat of the region (EPSG:4326)."""

CITIES: Final[list[tuple[str, float, float, float]]] = [
    # name, lon, lat, weight (share of clustered features)
    ("Charlotte", -80.84, 35.23, 0.20),
    ("Raleigh", -78.64, 35.78, 0.16),
    ("Greensboro", -79.79, 36.07, 0.09),
    ("Durham", -78.90, 35.99, 0.08),
    ("Winston-Salem", -80.24, 36.10, 0.07),
    ("Fayetteville", -78.88, 35.05, 0.06),
    ("Wilmington", -77.94, 34.23, 0.06),
    ("Asheville", -82.55, 35.60, 0.05),
    ("Greenville", -77.37, 35.61, 0.05),
    ("High Point", -80.00, 35.96, 0.04),
    ("Jacksonville", -77.43, 34.75, 0.04),
    ("Rocky Mount", -77.79, 35.94, 0.03),
    ("Boone", -81.67, 36.22, 0.03),
    ("Elizabeth City", -76.25, 36.30, 0.02),
    ("Hickory", -81.34, 35.73, 0.02),
]

AIRPORTS: Final[list[tuple[str, str, float, float]]] = [
    ("RDU", "Raleigh-Durham International", -78.7875, 35.8776),
    ("CLT", "Charlotte Douglas International", -80.9431, 35.2140),
    ("GSO", "Piedmont Triad International", -79.9373, 36.0978),
    ("ILM", "Wilmington International", -77.9026, 34.2706),
    ("AVL", "Asheville Regional", -82.5418, 35.4362),
    ("OAJ", "Albert J. Ellis", -77.6121, 34.8292),
]

DISTRICT_NAMES: Final[list[str]] = [
    "High Country",
    "Foothills",
    "Metrolina",
    "Triad",
    "Blue Ridge",
    "Sandhills",
    "Triangle",
    "Albemarle",
    "Smoky Mountains",
    "Cape Fear",
    "Coastal Plain",
    "Pamlico",
]
"""Twelve districts on a 4 x 3 grid over EXTENT, west to east, north row first."""

DISTRICT_GRID: Final = (4, 3)
"""Columns and rows of the district grid."""

POI_CATEGORIES: Final[dict[str, float]] = {
    "restaurant": 0.28,
    "place_of_worship": 0.16,
    "retail_store": 0.15,
    "gas_station": 0.08,
    "bank": 0.06,
    "school": 0.06,
    "pharmacy": 0.045,
    "park": 0.04,
    "post_office": 0.025,
    "library": 0.015,
    "fire_station": 0.015,
    "police_station": 0.01,
    "hospital": 0.005,
    "museum": 0.005,
}
"""Point-of-interest categories and their shares (a long-tailed, OSM-like skew)."""

LAND_USES: Final[dict[str, tuple[float, float]]] = {
    # class: (share, median side length in metres)
    "residential": (0.62, 30.0),
    "commercial": (0.10, 60.0),
    "industrial": (0.05, 110.0),
    "agricultural": (0.12, 280.0),
    "institutional": (0.04, 90.0),
    "vacant": (0.07, 50.0),
}
"""Parcel land-use classes, their shares and typical parcel size."""

ROAD_CLASSES: Final[dict[str, tuple[float, float, int]]] = {
    # class: (share, mean segment length in metres, speed limit in mph)
    "interstate": (0.05, 3000.0, 70),
    "primary": (0.12, 1500.0, 55),
    "secondary": (0.25, 700.0, 45),
    "residential": (0.58, 180.0, 25),
}
"""Road classes, their shares, mean segment length and speed limit."""

POI_SRID: Final = 4326
PARCEL_SRID: Final = 32617
"""WGS 84 / UTM zone 17N (metres)."""
ROAD_SRID: Final = 2264
"""NAD83 / North Carolina (US survey feet)."""
