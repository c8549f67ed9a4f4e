"""Verified benchmark cases: model, loader, runner, projection, comparison, verify."""
