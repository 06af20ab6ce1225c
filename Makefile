# Quick start: `make run` serves the site at http://127.0.0.1:8000; `make test` runs every test.
# Defaults: SQLite in var/ and the embedded Redis on 127.0.0.1:6380. Set DATABASE_URL / REDIS_URL
# to use PostgreSQL and an external Redis instead.

PYTHON ?= python3
VENV := .venv
PY := $(VENV)/bin/python
HOST ?= 127.0.0.1
PORT ?= 8000
# `make test` runs the tests on this many pytest-xdist workers (tests/conftest.py says what stays
# together); TEST_WORKERS=0 runs them all in one process.
TEST_WORKERS ?= 4

.PHONY: run test lint install core redis migrate clean messages system-packages node-modules

$(VENV)/.installed: requirements.txt requirements-dev.txt
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip
	$(PY) -m pip install --quiet -r requirements-dev.txt
	touch $@

install: $(VENV)/.installed core

# The engine's compiled core (game/engine/core/core.c -> game/engine/_core*.so), built in place with the
# machine's C compiler; the engine falls back to its Python search without it (docs/engine.md).
core: $(VENV)/.installed
	@$(PY) -c 'import setuptools' 2>/dev/null || $(PY) -m pip install --quiet setuptools
	$(PY) setup.py --quiet build_ext --inplace

redis: install
	@if [ -z "$$REDIS_URL" ]; then $(PY) scripts/embedded_redis.py start; fi

migrate: install
	mkdir -p var
	DJANGO_DEBUG=$${DJANGO_DEBUG:-1} $(PY) manage.py migrate --noinput

# The site and, beside it, one worker of its task queues (with the scheduler, at niceness 10 so that
# a review's search yields to the site: docs/learning.md), stopped with it; the coming hourly arenas
# are created first (docs/tournaments.md, "Scheduling").
run: install redis migrate
	@export DJANGO_DEBUG=$${DJANGO_DEBUG:-1}; \
	$(PY) manage.py schedule_arenas; \
	nice -n 10 $(PY) manage.py rqworker default reviews tournaments --with-scheduler & worker=$$!; \
	trap 'kill $$worker 2>/dev/null' EXIT INT TERM; \
	$(PY) -m checkers_site.serve -b $(HOST) -p $(PORT) checkers_site.asgi:application

# Chromium and nginx for the browser and system tests: installed with apt-get when missing and
# allowed (root, or sudo without a password), else the one command to run is printed and make stops.
# SKIP_SYSTEM_PACKAGES=1 skips the check.
system-packages:
	@if [ "$(SKIP_SYSTEM_PACKAGES)" != 1 ]; then sh scripts/system_packages.sh; fi

# The browser tests' npm tools (package.json: axe-core for tests/browser/test_accessibility.py),
# installed exactly as package-lock.json pins them; again only when the lock file changes.
node_modules/.package-lock.json: package.json package-lock.json
	npm ci --no-audit --no-fund
	touch $@

node-modules: node_modules/.package-lock.json

# Everything: lint (unless SKIP_LINT=1, for a run that has just linted), then every test, on
# TEST_WORKERS workers.
test: system-packages install redis node-modules
	@if [ "$(SKIP_LINT)" != 1 ]; then $(MAKE) --no-print-directory lint; fi
	$(PY) -m pytest -n $(TEST_WORKERS) --dist loadgroup $(PYTEST_ARGS)

# Style, types and the import contracts (settings in pyproject.toml): ruff on everything, mypy on the
# application packages, lint-imports (the rooms import downward only, no circles).
lint: install
	$(VENV)/bin/ruff check .
	$(VENV)/bin/mypy game checkers_site
	$(VENV)/bin/lint-imports --no-cache

# The translations (docs/playing.md, "Languages"): gather every marked string of the pages, the server and
# the scripts into locale/<lang>/LC_MESSAGES/{django,djangojs}.po, then compile the .mo files (both
# are committed; tests/web/test_i18n.py checks that they agree and that nothing is left untranslated).
# Needs GNU gettext (apt-get install gettext).
MESSAGES_IGNORE := -i tests -i bench -i scripts -i staticfiles -i var --add-location file
messages: install
	DJANGO_DEBUG=1 $(PY) manage.py makemessages --all $(MESSAGES_IGNORE)
	DJANGO_DEBUG=1 $(PY) manage.py makemessages -d djangojs --all $(MESSAGES_IGNORE)
	DJANGO_DEBUG=1 $(PY) manage.py compilemessages -i .venv

# Stops every embedded Redis of this checkout (any port), then removes var/ and staticfiles/; the
# pid file of a server that would not stop stays in var/.
clean:
	-$(PY) scripts/embedded_redis.py stop --all
	rm -rf staticfiles
	if [ -d var ]; then find var -mindepth 1 -maxdepth 1 ! -name 'redis-*.pid' -exec rm -rf {} +; \
	  rmdir var 2>/dev/null || true; fi
