"""The semantic catalog of a database (model, YAML, CLI); the shipped one is the demo's."""
