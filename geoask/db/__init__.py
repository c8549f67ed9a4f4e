"""Embedded PostGIS cluster, connections and the demo-data loader."""
