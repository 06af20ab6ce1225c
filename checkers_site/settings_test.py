"""Settings for the test suite: the production settings with a fixed secret key.

The database and Redis still come from ``DATABASE_URL`` and ``REDIS_URL``, so the
same tests run against SQLite and the embedded Redis or PostgreSQL and a real
Redis server.
"""

import os
from urllib.parse import urlparse

os.environ.setdefault("DJANGO_SECRET_KEY", "test-suite-secret-key-not-for-production")
os.environ.setdefault("CHANNELS_PREFIX", "asgi-test")
os.environ.setdefault("MATCHMAKING_PREFIX", "mm-test")
# Each pytest-xdist worker keeps its keys, channels and seek pools to itself: the workers share one
# Redis.  The servers a worker starts inherit these variables, and CHECKERS_TEST_WORKER says that
# they are the worker's already (a test may also hand its servers prefixes of its own).
if os.environ.get("PYTEST_XDIST_WORKER", "") not in ("", os.environ.get("CHECKERS_TEST_WORKER")):
    os.environ["CHECKERS_TEST_WORKER"] = os.environ["PYTEST_XDIST_WORKER"]
    for _name in ("CHANNELS_PREFIX", "MATCHMAKING_PREFIX"):
        os.environ[_name] = f"{os.environ[_name]}-{os.environ['PYTEST_XDIST_WORKER']}"

from .settings import *  # noqa: F403 - after the environment above

# Each worker's task queues in a Redis database of their own (1-15; REDIS_URL's is 0): a burst worker
# run by one test drains its own worker's queues only.  Its servers and workers inherit the URL.
if os.environ.get("CHECKERS_TEST_WORKER") and not os.environ.get("RQ_REDIS_URL"):
    _number = 1 + int("".join(filter(str.isdigit, os.environ["CHECKERS_TEST_WORKER"])) or 0) % 15
    os.environ["RQ_REDIS_URL"] = urlparse(REDIS_URL)._replace(path=f"/{_number}").geturl()
    for _queue in RQ_QUEUES.values():
        _queue["URL"] = os.environ["RQ_REDIS_URL"]

# Hashed static file names need collectstatic; the tests read the files where they are.
STORAGES = {**STORAGES, "staticfiles": {"BACKEND": "django.contrib.staticfiles.storage.StaticFilesStorage"}}

# A file, not shared-cache memory, so that concurrent connections queue for SQLite's lock
# as they do in production instead of failing at once.
if DATABASES["default"]["ENGINE"] == "django.db.backends.sqlite3":
    VAR_DIR.mkdir(exist_ok=True)
    DATABASES["default"]["TEST"] = {"NAME": str(VAR_DIR / f"test-{os.getpid()}.sqlite3")}

# The flush after each test that commits keeps the content types and permissions, and deletes
# rows instead of truncating tables on PostgreSQL (checkers_site/test_databases).
DATABASES["default"]["ENGINE"] = {
    "django.db.backends.postgresql": "checkers_site.test_databases.postgresql",
    "django.db.backends.sqlite3": "checkers_site.test_databases.sqlite3",
}[DATABASES["default"]["ENGINE"]]

# Every message the game socket encodes is checked against its schema (game.round.events.SCHEMAS).
EVENT_SCHEMA_CHECK = True

# Mail goes to Django's locmem outbox (django.core.mail.outbox), as pytest-django also sets.
EMAIL_BACKEND = "django.core.mail.backends.locmem.EmailBackend"

# Passwords hashed as in production (PBKDF2), at a thousand iterations (checkers_site/test_hashers.py).
PASSWORD_HASHERS = ["checkers_site.test_hashers.FewIterationsPBKDF2PasswordHasher"]
