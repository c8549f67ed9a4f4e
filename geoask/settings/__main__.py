"""``python -m geoask.settings``: print the settings table README.md embeds."""

from geoask.settings import settings_table

print(settings_table())
