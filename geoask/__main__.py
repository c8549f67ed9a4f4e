"""``python -m geoask ...``: the ``geoask`` command (:func:`geoask.app.cli.main`)."""

from geoask.app.cli import main

main()
