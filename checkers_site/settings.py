"""Django settings for the checkers site.

Every setting that differs between a laptop and production comes from the
environment (django-environ).  The defaults run on one machine with nothing
installed: SQLite in ``var/`` and the embedded Redis that ``make run`` starts.

Environment variables:

``DJANGO_DEBUG``            ``1`` for development pages and errors (default ``0``).
``DJANGO_SECRET_KEY``       required when ``DJANGO_DEBUG`` is off.
``DJANGO_ALLOWED_HOSTS``    comma-separated host names (default ``127.0.0.1,localhost``).
``DJANGO_CSRF_TRUSTED_ORIGINS`` comma-separated origins behind a proxy.
``DJANGO_SECURE``           ``1`` behind HTTPS: secure cookies, HSTS, SSL redirect.
``DATABASE_URL``            e.g. ``postgres://user@127.0.0.1:5432/checkers`` (default SQLite).
``DATABASE_POOL_SIZE``      PostgreSQL connections one server process may hold (default 20; they
                            are pooled: every request and game socket borrows one and gives it back).
``DATABASE_POOL_TIMEOUT``   seconds to wait for a pooled connection before giving up (default 3).
``PASSWORD_HASHERS``        comma-separated hasher classes, the first hashing new passwords (default
                            Django's, PBKDF2 first); the test servers name a cheaper PBKDF2.
``DATABASE_LOCK_TIMEOUT_MS`` PostgreSQL ``lock_timeout``: ms a transaction waits for a row lock (5000),
                            set per transaction (``SET LOCAL``, ``game/locks.py``).
``REDIS_URL``               e.g. ``redis://127.0.0.1:6379/0`` (default: the embedded
                            server on ``127.0.0.1:$EMBEDDED_REDIS_PORT``, 6380 unless set).
``REDIS_CLUSTER_URL``       a Redis Cluster for the game events (sharded pub/sub), presence, admission,
                            the rate limits, the cache and the seek pools: some of its nodes,
                            ``redis://127.0.0.1:7000,127.0.0.1:7001,127.0.0.1:7002`` (default empty: all
                            on ``REDIS_URL``). The lobby's channel layer stays on the plain Redis of
                            ``REDIS_URL`` (``docs/scaling.md``, "Redis Cluster").
``MATCHMAKING_REDIS_URL``   the Redis holding the seek pools (default: ``REDIS_URL``, or the cluster as
                            ``redis+cluster://<its nodes>``).
``MATCHMAKING_PREFIX``      key prefix of the seek pools (default ``mm``).
``MATCHMAKING_SEEK_TTL``    seconds a seek lives once its socket stops refreshing it (default 10).
``MATCHMAKING_HEARTBEAT``   seconds between refreshes (default 3; at most a third of the TTL).
``ENGINE_WORKERS``          the computer's engine worker processes, searches running at once (default 2).
``ENGINE_POOL``             ``process`` (default) or ``thread``.
``ENGINE_MAX_WAITING``      the computer's searches that may wait for a worker (8).
``ANALYSIS_WORKERS``        the analysis board's own engine workers (default 1).
``ANALYSIS_MAX_WAITING``    analysis searches that may wait before the board answers busy (2).
``GAME_SOCKETS_PER_SESSION``, ``GAME_SOCKETS_PER_ADDRESS`` game sockets open at once (16, 256).
``WEBSOCKET_HANDSHAKES_AT_ONCE`` websocket handshakes one process works on at once (32); the others wait,
                            and one that waited ``WEBSOCKET_SHED_AFTER_S`` (3) is closed 4503 (busy).
``GAME_SESSION_RATE_LIMIT`` messages of all of a session's game sockets (``40/second;900/minute``).
``GAME_ADDRESS_RATE_LIMIT`` messages of all of a client address's game sockets (``100/second;3000/minute``).
``ANALYSIS_RATE_LIMIT_SESSION``, ``ANALYSIS_RATE_LIMIT_ADDRESS``, ``GAME_CREATE_RATE_LIMIT_SESSION``,
``GAME_CREATE_RATE_LIMIT_ADDRESS``  HTTP limits on searches and new games (docs/deploy.md).
``TOURNAMENT_JOIN_RATE_LIMIT_SESSION``, ``TOURNAMENT_JOIN_RATE_LIMIT_ADDRESS``  joins of a passworded arena.
``PDN_RATE_LIMIT_SESSION``, ``PDN_RATE_LIMIT_ADDRESS``, ``PDN_RATE_LIMIT_ANONYMOUS``, ``PDN_DOWNLOADS_PER_PROCESS``,
``PDN_DOWNLOAD_THREADS``, ``PDN_DOWNLOAD_DEADLINE_S``  whole-archive downloads (docs/profiles.md).
``COMPUTER_MIN_THINK_MS``   the least time the computer takes over a move (default 400).
``GAME_DB_THREADS``         threads running the game sockets' database work, per process (default 8).
``LOG_FORMAT``              ``json`` (default) or ``text`` (default with ``DJANGO_DEBUG``); ``LOG_LEVEL`` (INFO).
``METRICS_ENABLED``         ``/metrics`` answers at all (default 1); ``METRICS_ALLOWED_ADDRESSES`` (loopback),
                            ``METRICS_TOKEN`` (a bearer token that may read it from anywhere).
``PROMETHEUS_MULTIPROC_DIR`` an empty folder shared by several server processes' metrics (docs/deploy.md).
``SENTRY_DSN``              error reports to Sentry when set; ``SENTRY_ENVIRONMENT``, ``SENTRY_RELEASE``,
                            ``SENTRY_TRACES_SAMPLE_RATE`` (0).
``EMAIL_URL``               how mail goes out (password resets, email confirmations, turn mails), e.g.
                            ``smtp+tls://user:password@smtp.example.org:587`` (``smtps://`` for TLS on
                            connect, ``consolemail://`` to print them); unset: the console with
                            ``DJANGO_DEBUG``, else SMTP to ``EMAIL_HOST``:``EMAIL_PORT`` (localhost:25) with
                            ``EMAIL_HOST_USER``, ``EMAIL_HOST_PASSWORD``, ``EMAIL_USE_TLS``.
``DEFAULT_FROM_EMAIL``      the sender of the site's mail (default ``Checkers live <noreply@localhost>``).
``SITE_URL``                the site's address for the links in mails (default ``http://127.0.0.1:8000``).
``TURN_MAIL_EVERY_H``       hours between two turn mails about one correspondence game (default 6;
                            ``docs/correspondence.md``).
``CACHE_PREFIX``            key prefix of the site's cache in Redis (default ``<CHANNELS_PREFIX>:cache``); the
                            cache holds the log-in and sign-up rate limits, shared by every server process.
``ACCOUNT_LOGIN_FAILURES``  wrong passwords for one username from one address before that address's log-in
                            to it is refused for ``ACCOUNT_LOGIN_FAILURES_SECONDS`` (default 5 in 300 s);
                            10 a minute and 60 an hour per address.
``ACCOUNT_SIGNUP_RATE``     sign-ups per client address, allauth's notation (default ``20/m/ip,50/d/ip``).
``ADMIN_ALLOWED_ADDRESSES`` addresses or networks (``203.0.113.7,10.1.0.0/16``) that may reach ``/admin/``;
                            empty (default): any, through the site's log-in and its limits.
``ALLAUTH_TRUSTED_PROXY_COUNT`` proxies in front of Daphne that add to ``X-Forwarded-For`` (default 0: the
                            address Daphne reports, which ``--proxy-headers`` takes from nginx).
"""

from pathlib import Path

import environ

from checkers_site.ops.errors import init_sentry
from checkers_site.ops.logs import logging_config

BASE_DIR = Path(__file__).resolve().parent.parent
VAR_DIR = BASE_DIR / "var"

env = environ.Env()

DEBUG = env.bool("DJANGO_DEBUG", default=False)
def _development_key() -> str:
    """A random key made once per checkout (``var/development-secret-key``): development sessions
    are signed cookies, so a key known to all would let anyone forge one."""
    import secrets

    path = VAR_DIR / "development-secret-key"
    if not path.exists():
        VAR_DIR.mkdir(exist_ok=True)
        path.write_text(secrets.token_urlsafe(50))
    return path.read_text().strip()


SECRET_KEY = env("DJANGO_SECRET_KEY", default=None) or (
    _development_key() if DEBUG else env("DJANGO_SECRET_KEY"))
ALLOWED_HOSTS = env.list("DJANGO_ALLOWED_HOSTS", default=["127.0.0.1", "localhost"])
CSRF_TRUSTED_ORIGINS = env.list("DJANGO_CSRF_TRUSTED_ORIGINS", default=[])

INSTALLED_APPS = [
    "daphne",
    "django.contrib.admin",
    "django.contrib.auth",
    "django.contrib.contenttypes",
    "django.contrib.sessions",
    "django.contrib.messages",
    "whitenoise.runserver_nostatic",
    "django.contrib.staticfiles",
    "channels",
    "csp",
    "game",
    # Reviews, puzzles and lessons (game/learning, docs/learning.md): an app of its own for its models.
    "game.learning",
    # Tournaments (game/tournaments, docs/tournaments.md): arenas, an app of its own for its models.
    "game.tournaments",
    # Challenges by name (game/people, docs/people.md): an app of its own for its models.
    "game.people",
    # The ISO 3166 country list of the profiles, its names translated (docs/people.md, "Profiles").
    "django_countries",
    # Accounts (game/accounts, docs/accounts.md): sign-up, log-in, password reset.
    "allauth",
    "allauth.account",
    # Work off the request and socket paths (docs/architecture.md, "Work off the request path").
    "django_rq",
]

MIDDLEWARE = [
    # First: /healthz, /readyz and /metrics are answered before any other middleware (no session).
    "checkers_site.ops.middleware.ops_middleware",
    # Next: a client this process refused a new game or a search is refused again at once, before any
    # session, CSRF, database or Redis work (game/http_limits.py).
    "game.http_limits.early_refusals",
    # /admin/ only from ADMIN_ALLOWED_ADDRESSES when set (a 404 elsewhere).
    "checkers_site.admin_access.admin_addresses",
    "django.middleware.security.SecurityMiddleware",
    "whitenoise.middleware.WhiteNoiseMiddleware",
    # Below WhiteNoise, which answers static files itself (precompressed .br and .gz).
    "django.middleware.gzip.GZipMiddleware",
    "csp.middleware.CSPMiddleware",
    "checkers_site.headers.PermissionsPolicyMiddleware",
    "django.contrib.sessions.middleware.SessionMiddleware",
    # Each browser's own cookie, apart from the session (game/ratings/links.py).
    "game.accounts.devices.DeviceMiddleware",
    # The page's language: the language picker's cookie, else the browser's Accept-Language.
    "django.middleware.locale.LocaleMiddleware",
    "django.middleware.common.CommonMiddleware",
    "django.middleware.csrf.CsrfViewMiddleware",
    "django.contrib.auth.middleware.AuthenticationMiddleware",
    "allauth.account.middleware.AccountMiddleware",
    # A session signed in to an account plays with the account's player id; one whose account
    # is gone (logged out or deleted elsewhere, password changed) gets a new guest id.
    "game.accounts.identity.AccountSessionMiddleware",
    "django.contrib.messages.middleware.MessageMiddleware",
    "django.middleware.clickjacking.XFrameOptionsMiddleware",
]

ROOT_URLCONF = "checkers_site.urls"
ASGI_APPLICATION = "checkers_site.asgi.application"

TEMPLATES = [
    {
        "BACKEND": "django.template.backends.django.DjangoTemplates",
        "DIRS": [BASE_DIR / "templates"],
        "APP_DIRS": True,
        "OPTIONS": {
            "context_processors": [
                "django.template.context_processors.request",
                "django.contrib.auth.context_processors.auth",
                "django.contrib.messages.context_processors.messages",
                # "My games" in the header, with the number of games waiting for this browser's move.
                "game.profiles.views.badge",
            ],
        },
    },
]

#: ms a transaction waits for a row lock (PostgreSQL's lock_timeout, set in each transaction that
#: may wait for one: game/locks.py), and how long the game sockets
#: keep trying an action whose game row another transaction holds (game/round/round.py, Round.run).
DATABASE_LOCK_TIMEOUT_MS = env.int("DATABASE_LOCK_TIMEOUT_MS", default=5000)

DATABASES = {
    "default": env.db("DATABASE_URL", default=f"sqlite:///{VAR_DIR / 'db.sqlite3'}"),
}
if DATABASES["default"]["ENGINE"] == "django.db.backends.sqlite3":
    # Writers queue for the lock instead of failing; one writer at a time.
    DATABASES["default"].setdefault("OPTIONS", {}).update(
        {"timeout": 20, "transaction_mode": "IMMEDIATE"}
    )
else:
    # Django's connection pool (psycopg_pool): under ASGI every page request runs in a thread of
    # its own, and a persistent connection per thread left dozens of idle connections behind
    # (once "too many clients"); pooled, a process holds at most DATABASE_POOL_SIZE and reuses
    # them. A pool needs CONN_MAX_AGE 0: closing a connection gives it back.
    DATABASES["default"]["CONN_MAX_AGE"] = 0
    # No test round trip per checkout: a dead connection fails its request at once and the pool
    # is swept (checkers_site/dbpool.py).
    DATABASES["default"]["CONN_HEALTH_CHECKS"] = False
    # No start-up options: PgBouncer in transaction pooling refuses them (or ignores them). The
    # lock_timeout is set in each transaction that waits for a row lock (game/locks.py).
    DATABASES["default"].setdefault("OPTIONS", {})["pool"] = {
        "min_size": 2, "max_size": env.int("DATABASE_POOL_SIZE", default=20),
        # Seconds a request or socket waits for a connection before its action fails as
        # "unavailable" (all in use, or the database unreachable).
        "timeout": env.float("DATABASE_POOL_TIMEOUT", default=3.0)}

DEFAULT_AUTO_FIELD = "django.db.models.BigAutoField"

REDIS_URL = env("REDIS_URL", default=f"redis://127.0.0.1:{env.int('EMBEDDED_REDIS_PORT', default=6380)}/0")
#: A Redis Cluster (checkers_site/redis_cluster.py) for everything but the lobby's channel layer; empty: none.
REDIS_CLUSTER_URL: str = env("REDIS_CLUSTER_URL", default="")

# The task queues (RQ, on the Redis of REDIS_URL; docs/architecture.md, "Work off the request path"):
# each queue's jobs run in the worker processes (`manage.py rqworker default reviews tournaments
# --with-scheduler`, the worker class game.worker.Worker: make run starts one, checkers-worker@.service).
RQ_QUEUES = {name: {"URL": env("RQ_REDIS_URL", default=REDIS_URL), "DEFAULT_TIMEOUT": timeout}
             for name, timeout in (("default", 300), ("reviews", 900), ("tournaments", 120))}
RQ, RQ_SHOW_ADMIN_LINK = {"WORKER_CLASS": "game.worker.Worker"}, True

# The lobby's sockets talk through the channel layer; the game sockets' events go through
# game/round/fanout/ (one Redis PUBLISH per event) and presence through game/round/presence.py,
# on the same Redis and under the same key prefix.
REDIS_PREFIX: str = env("CHANNELS_PREFIX", default="asgi")
CHANNEL_LAYERS = {
    "default": {
        "BACKEND": "checkers_site.channel_layer.WaitingRedisChannelLayer",
        "CONFIG": {
            # redis-py 8 reads with a 5 s socket timeout by default, as long as the layer's
            # blocking pop; a longer one keeps idle sockets from being torn down.
            # It also caps a pool at 100 connections and fails at once beyond: a burst of
            # sockets connecting together (each a group_add) went over it.
            "hosts": [{"address": REDIS_URL, "socket_timeout": 30, "socket_connect_timeout": 5,
                       "max_connections": env.int("CHANNELS_MAX_CONNECTIONS", default=1000)}],
            "prefix": REDIS_PREFIX,
            # Every socket of a process shares one queue in Redis (its "specific.<id>!" key), and
            # the capacity counts that whole queue: 200 dropped events without a word once
            # ~1,500 sockets on a process got busy, and their games stalled
            # (docs/performance/02-live-load.md, first round).
            "capacity": env.int("CHANNELS_CAPACITY", default=20000),
            "expiry": 30,
        },
    },
}
# The cache (allauth's log-in and sign-up rate limits): in Redis, so every server process counts alike.
CACHES = {
    "default": {
        # Django's RedisCache, failing open: a Redis that does not answer leaves the log-in and
        # sign-up pages working, uncounted (checkers_site/cache.py).
        "BACKEND": "checkers_site.cache.FailOpenRedisCache",
        "LOCATION": REDIS_URL,
        "KEY_PREFIX": env("CACHE_PREFIX", default=f"{REDIS_PREFIX}:cache"),
        "OPTIONS": {"socket_timeout": 2, "socket_connect_timeout": 2},
    },
}
if REDIS_CLUSTER_URL:
    # Django's RedisCache speaks to one server; this one is the same on a cluster.
    CACHES["default"].update(BACKEND="checkers_site.cache.FailOpenRedisClusterCache", LOCATION=REDIS_CLUSTER_URL)
# Matchmaking (game/lobby/pools.py, game/lobby/socket.py): the seek pools live in Redis; a seek whose
# server process died expires MATCHMAKING_SEEK_TTL seconds after its last refresh.
# On a cluster, the seek pools are there too (``redis+cluster://`` URL, game/lobby/pools.py).
MATCHMAKING_REDIS_URL = env("MATCHMAKING_REDIS_URL", default=(
    "redis+cluster://" + REDIS_CLUSTER_URL.split("://", 1)[-1] if REDIS_CLUSTER_URL else REDIS_URL))
MATCHMAKING_PREFIX = env("MATCHMAKING_PREFIX", default="mm")
MATCHMAKING_SEEK_TTL = env.float("MATCHMAKING_SEEK_TTL", default=10.0)
MATCHMAKING_HEARTBEAT = env.float("MATCHMAKING_HEARTBEAT", default=3.0)

#: Seconds the player to move must have been away before the opponent may claim the game
#: (live timed games, untimed games); correspondence games are decided by their clock.
CLAIM_AFTER_LIVE_S = env.int("CLAIM_AFTER_LIVE_S", default=60)
CLAIM_AFTER_UNTIMED_S = env.int("CLAIM_AFTER_UNTIMED_S", default=120)

#: Threads (each with its own database connection) that run the game sockets' service calls in a
#: Daphne process, so that moves of different games are stored side by side.
GAME_DB_THREADS = env.int("GAME_DB_THREADS", default=8)
#: Seconds between two returns of the allocator's free memory to the system in a server process
#: (checkers_site/ops/memory.py); 0: never.
MALLOC_TRIM_EVERY_S = env.float("MALLOC_TRIM_EVERY_S", default=60.0)
#: Python's garbage collector in a server process (checkers_site/ops/collector.py): its thresholds
#: (three integers; empty: the site's, 10000,10,10), and whether what the start made is frozen.
GC_THRESHOLDS = env("GC_THRESHOLDS", default="")
GC_FREEZE = env.bool("GC_FREEZE", default=True)

#: Messages one game socket may send (limits' notation); more are refused with ``rate_limited``.
GAME_SOCKET_RATE_LIMIT = env("GAME_SOCKET_RATE_LIMIT", default="30/second;600/minute")
#: Messages all the game sockets of one session on one server process may send together; empty: no limit.
GAME_SESSION_RATE_LIMIT = env("GAME_SESSION_RATE_LIMIT", default="40/second;900/minute")
#: Messages all the game sockets of one client address on one server process may send together
#: (all its sessions: a household, an office or a carrier's NAT shares one); empty: no limit.
#: 100 a second and 3,000 a minute: the 256 sockets an address may hold (GAME_SOCKETS_PER_ADDRESS)
#: each pinging every 20 s (13 a second) and playing a move every 7 s, or a dozen players of a
#: household in bullet games, stay under it; 120 throwaway sessions sending 40 a second each do not.
GAME_ADDRESS_RATE_LIMIT = env("GAME_ADDRESS_RATE_LIMIT", default="100/second;3000/minute")
#: Websocket handshakes one server process works on at once (the others wait their turn), and the
#: seconds one may wait before it is answered 4503 ("busy", the page retries with back-off): well
#: under Daphne's --websocket_connect_timeout, past which a handshake is dropped unanswered
#: (checkers_site/connect_gate.py).
WEBSOCKET_HANDSHAKES_AT_ONCE = env.int("WEBSOCKET_HANDSHAKES_AT_ONCE", default=32)
WEBSOCKET_SHED_AFTER_S = env.float("WEBSOCKET_SHED_AFTER_S", default=3.0)
#: Game sockets one session, and one client address, may hold open across every server process
#: (counted in Redis, game/round/admission.py); more are closed with code 4429. 0: no limit.
GAME_SOCKETS_PER_SESSION = env.int("GAME_SOCKETS_PER_SESSION", default=16)
GAME_SOCKETS_PER_ADDRESS = env.int("GAME_SOCKETS_PER_ADDRESS", default=256)
#: The same for lobby sockets (each may hold a seek), counted apart from game sockets.
LOBBY_SOCKETS_PER_SESSION = env.int("LOBBY_SOCKETS_PER_SESSION", default=8)
LOBBY_SOCKETS_PER_ADDRESS = env.int("LOBBY_SOCKETS_PER_ADDRESS", default=256)
# The people sockets (challenges, follows: every page of a signed-in player keeps one), counted apart.
PEOPLE_SOCKETS_PER_SESSION = env.int("PEOPLE_SOCKETS_PER_SESSION", default=16)
PEOPLE_SOCKETS_PER_ADDRESS = env.int("PEOPLE_SOCKETS_PER_ADDRESS", default=256)

# HTTP requests that cost the server (game/http_limits.py), limits' notation, counted in Redis per
# session and per client address; more are answered 429. Empty: no limit.
ANALYSIS_RATE_LIMIT_SESSION = env("ANALYSIS_RATE_LIMIT_SESSION", default="30/minute;300/hour")
ANALYSIS_RATE_LIMIT_ADDRESS = env("ANALYSIS_RATE_LIMIT_ADDRESS", default="120/minute")
GAME_CREATE_RATE_LIMIT_SESSION = env("GAME_CREATE_RATE_LIMIT_SESSION", default="10/minute;60/hour")
GAME_CREATE_RATE_LIMIT_ADDRESS = env("GAME_CREATE_RATE_LIMIT_ADDRESS", default="60/minute;600/hour")
# Joins of a passworded arena (each a password hashed: game/tournaments/views.py): guessing stops here.
TOURNAMENT_JOIN_RATE_LIMIT_SESSION = env("TOURNAMENT_JOIN_RATE_LIMIT_SESSION", default="10/minute;60/hour")
TOURNAMENT_JOIN_RATE_LIMIT_ADDRESS = env("TOURNAMENT_JOIN_RATE_LIMIT_ADDRESS", default="30/minute;300/hour")
# A player's whole archive as one PDN file (game/profiles/downloads.py, docs/profiles.md): per session,
# per address, per address again for clients without a session; at most so many at once in a process,
# read in so many threads; cut visibly (the connection aborted) when not done within the deadline,
# which must stay under Daphne's --http-timeout (60 s in deploy/systemd/checkers@.service).
PDN_RATE_LIMIT_SESSION = env("PDN_RATE_LIMIT_SESSION", default="4/minute;30/hour")
PDN_RATE_LIMIT_ADDRESS = env("PDN_RATE_LIMIT_ADDRESS", default="8/minute;60/hour")
PDN_RATE_LIMIT_ANONYMOUS = env("PDN_RATE_LIMIT_ANONYMOUS", default="2/minute;10/hour")
PDN_DOWNLOADS_PER_PROCESS = env.int("PDN_DOWNLOADS_PER_PROCESS", default=4)
PDN_DOWNLOAD_THREADS = env.int("PDN_DOWNLOAD_THREADS", default=2)
PDN_DOWNLOAD_DEADLINE_S = env.float("PDN_DOWNLOAD_DEADLINE_S", default=50.0)

# The engine (game/engine, game/computer/player.py): the computer's searches run in ENGINE_WORKERS
# worker processes (or threads), ENGINE_MAX_WAITING more may queue; the analysis board's run in
# a pool of their own, ANALYSIS_WORKERS workers and ANALYSIS_MAX_WAITING waiting, so analysis
# never takes the computer's workers.
ENGINE_WORKERS = env.int("ENGINE_WORKERS", default=2)
ENGINE_POOL = env("ENGINE_POOL", default="process")
ENGINE_MAX_WAITING = env.int("ENGINE_MAX_WAITING", default=8)
ANALYSIS_WORKERS = env.int("ANALYSIS_WORKERS", default=1)
ANALYSIS_MAX_WAITING = env.int("ANALYSIS_MAX_WAITING", default=2)
#: The least time (ms) the computer takes over a move.
COMPUTER_MIN_THINK_MS = env.int("COMPUTER_MIN_THINK_MS", default=400)

SESSION_ENGINE = "django.contrib.sessions.backends.signed_cookies"
SESSION_COOKIE_AGE = 60 * 60 * 24 * 365
SESSION_COOKIE_HTTPONLY = True
SESSION_COOKIE_SAMESITE = "Lax"

AUTH_PASSWORD_VALIDATORS: list[dict[str, str]] = [
    {"NAME": "django.contrib.auth.password_validation.UserAttributeSimilarityValidator"},
    {"NAME": "django.contrib.auth.password_validation.MinimumLengthValidator"},
    {"NAME": "django.contrib.auth.password_validation.CommonPasswordValidator"},
    {"NAME": "django.contrib.auth.password_validation.NumericPasswordValidator"},
]

# Accounts (game/accounts, docs/accounts.md): django-allauth, username and password, email optional
# (needed for a password reset and the turn mails). Django's login() rotates the session key and
# keeps the session's data (the player id, then set to the account's).
AUTHENTICATION_BACKENDS = [
    "django.contrib.auth.backends.ModelBackend",
    "allauth.account.auth_backends.AuthenticationBackend",
]
ACCOUNT_LOGIN_METHODS = {"username"}
ACCOUNT_SIGNUP_FIELDS = ["username*", "email", "password1*", "password2*"]
ACCOUNT_EMAIL_VERIFICATION = "optional"
ACCOUNT_UNIQUE_EMAIL = True
ACCOUNT_USERNAME_MIN_LENGTH = 3
ACCOUNT_USERNAME_VALIDATORS = "game.accounts.usernames.VALIDATORS"
ACCOUNT_ADAPTER = "game.accounts.adapter.AccountAdapter"
ACCOUNT_FORMS = {"signup": "game.accounts.forms.SignupForm"}
ACCOUNT_LOGOUT_ON_PASSWORD_CHANGE = False
ACCOUNT_LOGIN_ON_PASSWORD_RESET = False
ACCOUNT_SESSION_REMEMBER = True
ACCOUNT_DEFAULT_HTTP_PROTOCOL = "https" if env.bool("DJANGO_SECURE", default=False) else "http"
ACCOUNT_RATE_LIMITS = {
    # Wrong passwords: per client address, and per username from that address (the "key":
    # game/accounts/adapter.py), never per username alone, which anyone could keep locked.
    "login_failed": f"10/m/ip,60/h/ip,{env.int('ACCOUNT_LOGIN_FAILURES', default=5)}/"
                    f"{env.int('ACCOUNT_LOGIN_FAILURES_SECONDS', default=300)}s/key",
    "signup": env("ACCOUNT_SIGNUP_RATE", default="20/m/ip,50/d/ip"),
}
# Sign-up tells nothing of the addresses already used: allauth's "strict" enumeration prevention
# (email verification is optional here, so a taken address signs up as any other, unconfirmed, and
# only one account can ever confirm it). The password reset already says nothing.
ACCOUNT_PREVENT_ENUMERATION = "strict"
# The client address allauth's limits count: Daphne's (nginx's X-Forwarded-For with --proxy-headers),
# unless proxies that allauth should skip are counted here.
ALLAUTH_TRUSTED_PROXY_COUNT = env.int("ALLAUTH_TRUSTED_PROXY_COUNT", default=0)
#: Who may reach the admin (checkers_site/admin_access.py); its log-in is the site's (checkers_site/urls.py).
ADMIN_ALLOWED_ADDRESSES = env.list("ADMIN_ALLOWED_ADDRESSES", default=[])

if env("PASSWORD_HASHERS", default=""):
    PASSWORD_HASHERS = env.list("PASSWORD_HASHERS")
LOGIN_REDIRECT_URL = "/"
LOGIN_URL = "account_login"
ACCOUNT_LOGOUT_REDIRECT_URL = "/"

# Mail (password resets, email confirmations, turn mails): EMAIL_URL, else the console in
# development and SMTP to EMAIL_HOST in production; the tests use Django's locmem outbox.
if env("EMAIL_URL", default=""):
    globals().update(env.email_url("EMAIL_URL"))
elif DEBUG:
    EMAIL_BACKEND = "django.core.mail.backends.console.EmailBackend"
else:
    EMAIL_HOST = env("EMAIL_HOST", default="localhost")
    EMAIL_PORT = env.int("EMAIL_PORT", default=25)
    EMAIL_HOST_USER = env("EMAIL_HOST_USER", default="")
    EMAIL_HOST_PASSWORD = env("EMAIL_HOST_PASSWORD", default="")
    EMAIL_USE_TLS = env.bool("EMAIL_USE_TLS", default=False)
EMAIL_TIMEOUT = 10
DEFAULT_FROM_EMAIL = env("DEFAULT_FROM_EMAIL", default="Checkers live <noreply@localhost>")
SERVER_EMAIL = DEFAULT_FROM_EMAIL
# Turn mails (game/correspondence/mails.py, manage.py send_turn_mails): the links' site and how often
# one game may mail one account.
SITE_URL = env("SITE_URL", default="http://127.0.0.1:8000")
TURN_MAIL_EVERY_H = env.float("TURN_MAIL_EVERY_H", default=6.0)

LANGUAGE_CODE = "en"
LANGUAGES = [
    ("en", "English"),
    ("es", "Español"),
    ("fr", "Français"),
]
LOCALE_PATHS = [BASE_DIR / "locale"]
#: The language picker's choice is remembered per browser for a year (docs/playing.md, "Languages").
LANGUAGE_COOKIE_AGE = 60 * 60 * 24 * 365
LANGUAGE_COOKIE_SAMESITE = "Lax"
TIME_ZONE = "UTC"
USE_I18N = True
USE_TZ = True

STATIC_URL = "static/"
STATICFILES_DIRS = [BASE_DIR / "static"]
STATIC_ROOT = env.path("DJANGO_STATIC_ROOT", default=BASE_DIR / "staticfiles")
STORAGES = {
    "default": {"BACKEND": "django.core.files.storage.FileSystemStorage"},
    "staticfiles": {
        "BACKEND": "django.contrib.staticfiles.storage.StaticFilesStorage"
        if DEBUG
        else "checkers_site.storage.StaticStorage",
    },
}
WHITENOISE_USE_FINDERS = DEBUG

# Security headers (checkers_site/headers.py). The pages load only their own ES modules and
# stylesheet; data reaches scripts through json_script blocks, never inline code, and the sockets
# go to the same origin ('self' covers ws: and wss: there).
CONTENT_SECURITY_POLICY = {
    "DIRECTIVES": {
        "default-src": ["'self'"],
        "script-src": ["'self'"],
        "style-src": ["'self'"],
        "img-src": ["'self'", "data:"],  # the favicon is a data: URI
        "connect-src": ["'self'"],
        "object-src": ["'none'"],
        "base-uri": ["'none'"],
        "form-action": ["'self'"],
        "frame-ancestors": ["'none'"],
    },
}
SECURE_REFERRER_POLICY = "same-origin"
PERMISSIONS_POLICY = ("accelerometer=(), camera=(), geolocation=(), gyroscope=(), magnetometer=(), "
                      "microphone=(), payment=(), usb=(), browsing-topics=()")

if env.bool("DJANGO_SECURE", default=False):
    SECURE_PROXY_SSL_HEADER = ("HTTP_X_FORWARDED_PROTO", "https")
    SECURE_SSL_REDIRECT = True
    SESSION_COOKIE_SECURE = True
    CSRF_COOKIE_SECURE = True
    SECURE_HSTS_SECONDS = env.int("DJANGO_HSTS_SECONDS", default=60 * 60 * 24 * 365)
    SECURE_HSTS_INCLUDE_SUBDOMAINS = True
    # The preload list accepts only a max-age of at least a year.
    SECURE_HSTS_PRELOAD = SECURE_HSTS_SECONDS >= 60 * 60 * 24 * 365

# Logs (checkers_site/ops/logs.py): one JSON object a line in production, readable text in
# development, each with its request's or socket's context.
LOG_FORMAT = env("LOG_FORMAT", default="text" if DEBUG else "json")
LOGGING = logging_config(LOG_FORMAT, env("LOG_LEVEL", default="INFO"))

# Metrics (checkers_site/ops/metrics.py): /metrics answers loopback clients, or any client with the
# bearer token; several processes share PROMETHEUS_MULTIPROC_DIR (read by prometheus_client itself).
METRICS_ENABLED = env.bool("METRICS_ENABLED", default=True)
METRICS_ALLOWED_ADDRESSES = env.list("METRICS_ALLOWED_ADDRESSES", default=["127.0.0.1", "::1"])
METRICS_TOKEN = env("METRICS_TOKEN", default="")

# Errors (checkers_site/ops/errors.py): reported to Sentry only when a DSN is set.
SENTRY_DSN = env("SENTRY_DSN", default="")
init_sentry(SENTRY_DSN, environment=env("SENTRY_ENVIRONMENT", default="production"),
            release=env("SENTRY_RELEASE", default="") or None,
            traces_sample_rate=env.float("SENTRY_TRACES_SAMPLE_RATE", default=0.0))
