"""Response headers the site adds itself: ``Permissions-Policy``.

The other security headers come from Django (``SecurityMiddleware``: Referrer-Policy, HSTS,
nosniff, Cross-Origin-Opener-Policy; ``XFrameOptionsMiddleware``) and django-csp
(``Content-Security-Policy``), configured in ``settings.py``.
"""

from __future__ import annotations

from django.conf import settings
from django.http import HttpRequest, HttpResponseBase
from django.utils.deprecation import MiddlewareMixin


class PermissionsPolicyMiddleware(MiddlewareMixin):
    """Adds ``settings.PERMISSIONS_POLICY`` as the ``Permissions-Policy`` header of every response
    that has none: the browser features the site never uses are switched off for it and for
    anything it might embed.  (A ``MiddlewareMixin`` runs on the event loop under ASGI, without a
    thread hop.)"""

    def process_response(self, request: HttpRequest, response: HttpResponseBase) -> HttpResponseBase:
        policy = getattr(settings, "PERMISSIONS_POLICY", "")
        if policy and "Permissions-Policy" not in response:
            response["Permissions-Policy"] = policy
        return response
