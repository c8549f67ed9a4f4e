"""Infrastructure with no geoask knowledge: storage, console, interrupts, TLS, YAML, rasters."""
