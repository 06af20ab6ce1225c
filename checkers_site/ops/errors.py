"""Error reports to Sentry, only when ``SENTRY_DSN`` is set (off otherwise: nothing is imported
or sent).

``SENTRY_ENVIRONMENT`` names the deployment (default ``production``),
``SENTRY_RELEASE`` the release, ``SENTRY_TRACES_SAMPLE_RATE`` the share of
requests traced (default 0: errors only).  No personal data is sent (the
SDK's default, ``send_default_pii`` off: no cookies, no user, no client
address), nor the local variables of a traceback's frames (a session key or
a cookie may be one).
"""

from __future__ import annotations

from typing import Any


def init_sentry(dsn: str, environment: str = "production", release: str | None = None,
                traces_sample_rate: float = 0.0, **options: Any) -> bool:
    """Start the Sentry client with the Django integration when ``dsn`` is set; False when it is
    empty (nothing done).  ``options`` go to ``sentry_sdk.init`` (the tests' ``transport``)."""
    if not dsn:
        return False
    import sentry_sdk
    from sentry_sdk.integrations.django import DjangoIntegration

    sentry_sdk.init(dsn=dsn, environment=environment, release=release or None,
                    traces_sample_rate=traces_sample_rate, include_local_variables=False,
                    integrations=[DjangoIntegration()], **options)
    return True
