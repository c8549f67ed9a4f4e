"""One module per ``geoask`` sub-command group (a Typer ``app`` each)."""
