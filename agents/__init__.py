"""The six pydantic-ai agents of the question flow, one per module (see agents/README.md)."""
