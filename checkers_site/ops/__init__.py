"""What the people running the site need of it: health endpoints (:mod:`.health`), Prometheus
metrics (:mod:`.metrics`), structured logs with the request's or socket's context (:mod:`.logs`)
and optional error reports to Sentry (:mod:`.errors`).  :mod:`.middleware` answers ``/healthz``,
``/readyz`` and ``/metrics`` before the session, CSRF and the rest of the middleware run."""
