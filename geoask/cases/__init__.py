"""Benchmark cases as data: case model, loader, schema, conversations, program runner."""
