"""The semantic catalog of the demo database (model, YAML, CLI)."""
