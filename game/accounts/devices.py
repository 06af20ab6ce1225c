"""Each browser's own long-lived cookie (:data:`game.ratings.links.DEVICE_COOKIE`), apart from the
session: the browser an account signs in from (:func:`game.ratings.links.note_sign_in`)."""

from __future__ import annotations

from typing import Any

from django.conf import settings

from game.ratings.links import DEVICE_COOKIE, DEVICE_COOKIE_AGE_S, is_device_id, new_device_id


class DeviceMiddleware:
    """Gives each request its browser's id (``request.device``: the cookie's, or a new one, which
    the response then sets: 32 hex digits, HTTP only, for :data:`DEVICE_COOKIE_AGE_S`)."""

    def __init__(self, get_response: Any):
        self.get_response = get_response

    def __call__(self, request: Any) -> Any:
        found = request.COOKIES.get(DEVICE_COOKIE)
        request.device = found if is_device_id(found) else new_device_id()
        response = self.get_response(request)
        if request.device != found:
            response.set_cookie(DEVICE_COOKIE, request.device, max_age=DEVICE_COOKIE_AGE_S, httponly=True,
                                samesite="Lax", secure=settings.SESSION_COOKIE_SECURE)
        return response
