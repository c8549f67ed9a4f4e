"""The application layer: the ``geoask`` CLI, the Python API and the benchmark harness."""
