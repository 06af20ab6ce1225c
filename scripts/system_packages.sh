#!/bin/sh
# What the site, its build and its tests need from the system, on a bare Debian: PostgreSQL (the
# second test run's database; .ci/run starts it), python3-venv and the Python headers with a C
# compiler and make (`make install`: the virtualenv and the engine's compiled core), Debian's
# Chromium (/usr/bin/chromium), nginx and its Brotli module (deploy/nginx/checkers.conf loads it),
# GNU gettext (msgfmt, xgettext: make messages, and the test that every marked string is in the
# catalogs), npm (axe-core for the accessibility browser test, package.json), redis-server 7 with
# redis-cli (.ci/run starts it; the Redis Cluster tests, tests/cluster_support.py: sharded pub/sub
# needs Redis 7), and PgBouncer (tests/web/test_lock_timeouts.py starts a private one in
# transaction pooling, as production runs it).  `make test` and .ci/run call this first.  When
# something is missing it is installed with apt-get if that is allowed (run as root, or sudo
# without a password); otherwise this stops at once with the one command to run.
set -eu

PACKAGES="postgresql python3-venv python3-dev gcc make chromium nginx libnginx-mod-http-brotli-static gettext npm \
redis-server pgbouncer"

# Where each is looked for (the tests of this script point them elsewhere).
POSTGRES_LIB=${POSTGRES_LIB:-/usr/lib/postgresql}
PG_CTLCLUSTER=${PG_CTLCLUSTER:-/usr/bin/pg_ctlcluster}
PYTHON=${PYTHON:-python3}
C_COMPILER=${C_COMPILER:-$(command -v cc || echo /usr/bin/cc)}
MAKE_TOOL=${MAKE_TOOL:-$(command -v make || echo /usr/bin/make)}
CHROMIUM=${CHROMIUM:-/usr/bin/chromium}
NGINX=${NGINX:-/usr/sbin/nginx}
BROTLI_MODULE=${BROTLI_MODULE:-/usr/lib/nginx/modules/ngx_http_brotli_static_module.so}
MSGFMT=${MSGFMT:-/usr/bin/msgfmt}
NPM=${NPM:-$(command -v npm || echo /usr/bin/npm)}
REDIS_SERVER=${REDIS_SERVER:-/usr/bin/redis-server}
PGBOUNCER=${PGBOUNCER:-/usr/sbin/pgbouncer}

postgres_server() {
  for server in "$POSTGRES_LIB"/*/bin/postgres; do
    [ -x "$server" ] && return 0
  done
  return 1
}

missing=""
{ postgres_server && [ -x "$PG_CTLCLUSTER" ]; } || missing="$missing postgresql"
# Debian's python3 has the venv module without ensurepip (python3-venv), and no headers (python3-dev).
"$PYTHON" -c 'import ensurepip, venv' >/dev/null 2>&1 || missing="$missing python3-venv"
"$PYTHON" -c 'import os, sys, sysconfig; sys.exit(not os.path.exists(os.path.join(sysconfig.get_paths()["include"], "Python.h")))' \
  >/dev/null 2>&1 || missing="$missing python3-dev"
[ -x "$C_COMPILER" ] || missing="$missing gcc"
[ -x "$MAKE_TOOL" ] || missing="$missing make"
[ -x "$CHROMIUM" ] || missing="$missing chromium"
[ -x "$NGINX" ] || missing="$missing nginx"
[ -f "$BROTLI_MODULE" ] || missing="$missing libnginx-mod-http-brotli-static"
[ -x "$MSGFMT" ] || missing="$missing gettext"
[ -x "$NPM" ] || missing="$missing npm"
[ -x "$REDIS_SERVER" ] || missing="$missing redis-server"
[ -x "$PGBOUNCER" ] || missing="$missing pgbouncer"
[ -z "$missing" ] && exit 0

echo "system packages missing for the tests:$missing"
if ! command -v apt-get >/dev/null 2>&1; then
  echo "install them (Debian names: $PACKAGES), or skip the browser and system tests:" >&2
  echo "  SKIP_SYSTEM_PACKAGES=1 PYTEST_ARGS=\"-m 'not browser' --ignore=tests/system\" make test" >&2
  exit 1
fi
if [ "$(id -u)" = 0 ]; then
  sudo=""
elif command -v sudo >/dev/null 2>&1 && sudo -n true 2>/dev/null; then
  sudo="sudo"
else
  echo "run this once, then make test again:" >&2
  echo "  sudo apt-get install -y $PACKAGES" >&2
  exit 1
fi
export DEBIAN_FRONTEND=noninteractive
# shellcheck disable=SC2086  # $missing is a list of package names
$sudo apt-get update -q
$sudo apt-get install -y -q $missing
