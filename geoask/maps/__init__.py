"""Maps of an answer: the static PNG, the offline Leaflet page, raster layers."""
