"""geoask as a service: a local Prefect server, served deployments and an API client.

- :mod:`geoask.service.server`: start/stop a Prefect server on 127.0.0.1 (telemetry off, its
  database in the embedded PostgreSQL cluster or as set) and wait for its health endpoint;
- :mod:`geoask.service.local`: the long-lived server ``ask``/``bench`` use: found through
  ``<home>/prefect/server.json``, else started in the background; stopped by ``server stop``;
- :mod:`geoask.service.deployments`: the deployments ``answer-question`` and
  ``nightly-benchmark`` and serving them;
- :mod:`geoask.service.client`: trigger a deployment through the API and wait for its result;
- :mod:`geoask.service.cli`: ``geoask server [status|stop]``.
"""
