"""geoask as a service: a local Prefect server, served deployments and an API client.

- :mod:`geoask.service.server`: start/stop a Prefect server on 127.0.0.1 (telemetry off,
  SQLite under ``<home>/prefect`` or PostgreSQL by setting) and wait for its health endpoint;
- :mod:`geoask.service.deployments`: the deployments ``answer-question`` and
  ``nightly-benchmark`` and serving them;
- :mod:`geoask.service.client`: trigger a deployment through the API and wait for its result;
- :mod:`geoask.service.cli`: ``geoask server``.
"""
