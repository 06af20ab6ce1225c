"""ASGI entry point: HTTP goes to Django, websockets to the game consumers.

Websockets pass through ``HandshakeLog`` (a refused handshake is logged with its reason),
``ConnectGate`` (so many handshakes at a time, a burst queued and shed before it times out),
``SameOriginValidator`` (only the site's own origin,
scheme, host and port, may open a socket) and the session middleware (a seat belongs to a session).
Not channels' auth middleware: no socket reads ``scope["user"]``, and resolving it cost every
connect a hop to channels' single sync thread (docs/performance/02-live-load.md).
"""

import os

from django.core.asgi import get_asgi_application

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "checkers_site.settings")
django_asgi_app = get_asgi_application()

from channels.routing import ProtocolTypeRouter, URLRouter  # noqa: E402
from channels.sessions import SessionMiddlewareStack  # noqa: E402

from checkers_site.clients import ClientAddress  # noqa: E402
from checkers_site.connect_gate import ConnectGate  # noqa: E402
from checkers_site.handshakes import HandshakeLog  # noqa: E402
from checkers_site.ops import memory, metrics  # noqa: E402
from checkers_site.ops.logs import RequestContext  # noqa: E402
from checkers_site.origins import SameOriginValidator  # noqa: E402
from game.routing import websocket_urlpatterns  # noqa: E402

# Several server processes (PROMETHEUS_MULTIPROC_DIR): each samples its database pool for /metrics.
metrics.start_process()
# Each server process gives its allocator's free pages back every minute (checkers_site/ops/memory.py).
memory.start_process()

application = ProtocolTypeRouter(
    {
        # Each request's method and path on every log line about it (checkers_site/ops/logs.py).
        "http": RequestContext(django_asgi_app),
        # Every refused handshake is logged with its reason (checkers_site/handshakes.py); the
        # client's address is known to the limits counted per address (checkers_site/clients.py).
        # At most WEBSOCKET_HANDSHAKES_AT_ONCE handshakes at a time, the others queued, and shed
        # with 4503 after WEBSOCKET_SHED_AFTER_S (checkers_site/connect_gate.py).
        "websocket": HandshakeLog(ConnectGate(SameOriginValidator(ClientAddress(
            SessionMiddlewareStack(URLRouter(websocket_urlpatterns))  # type: ignore[arg-type]
        )))),
    }
)
