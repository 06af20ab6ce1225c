"""The first middleware: answers the operations endpoints before any other runs, binds each
request's method and path to its log lines (:mod:`checkers_site.ops.logs`), and times every other
request to its response by view, method and status (:func:`checkers_site.ops.metrics.request_served`).
A function of the async-capable kind, so that under Daphne it adds no hop to a thread and back
(a ``MiddlewareMixin`` middleware, django-prometheus' for one, runs each of its hooks in a thread).

``/healthz``, ``/readyz`` and ``/metrics`` skip the session, CSRF, authentication and the
security middleware (a load balancer probes by address, over plain HTTP): no cookie is read
or set.  Async-capable: under Daphne ``/healthz`` is answered on the event loop.
"""

from __future__ import annotations

import time

from asgiref.sync import iscoroutinefunction, sync_to_async
from django.http import HttpResponseNotAllowed
from django.utils.decorators import sync_and_async_middleware

from checkers_site.ops import health, logs, metrics

HEALTHZ, READYZ, METRICS = "/healthz", "/readyz", "/metrics"
#: The methods the operations endpoints answer; any other is answered 405 with ``Allow``.
OPS_METHODS = ("GET", "HEAD")


@sync_and_async_middleware
def ops_middleware(get_response):
    async def answer_async(request):
        path = request.path_info
        if path in (HEALTHZ, READYZ, METRICS) and request.method not in OPS_METHODS:
            return HttpResponseNotAllowed(OPS_METHODS)
        if path == HEALTHZ:
            return health.liveness()
        if path == READYZ:
            return await health.readiness_async()
        if path == METRICS:
            return await sync_to_async(metrics.view, thread_sensitive=False)(request)
        started = time.monotonic()
        with logs.bound(method=request.method, path=request.path):
            response = await get_response(request)
        metrics.request_served(request, response.status_code, time.monotonic() - started)
        return response

    def answer(request):
        path = request.path_info
        if path in (HEALTHZ, READYZ, METRICS) and request.method not in OPS_METHODS:
            return HttpResponseNotAllowed(OPS_METHODS)
        if path == HEALTHZ:
            return health.liveness()
        if path == READYZ:
            return health.readiness()
        if path == METRICS:
            return metrics.view(request)
        started = time.monotonic()
        with logs.bound(method=request.method, path=request.path):
            response = get_response(request)
        metrics.request_served(request, response.status_code, time.monotonic() - started)
        return response

    return answer_async if iscoroutinefunction(get_response) else answer
