#!/bin/sh
# What the browser and system tests need from the system: Debian's Chromium (/usr/bin/chromium),
# nginx and its Brotli module (deploy/nginx/checkers.conf loads it), and GNU gettext (msgfmt,
# xgettext: make messages, and the test that every marked string is in the catalogs), npm
# (axe-core for the accessibility browser test, package.json), and redis-server 7 with redis-cli
# (the Redis Cluster tests, tests/cluster_support.py: sharded pub/sub needs Redis 7), and PgBouncer
# (tests/web/test_lock_timeouts.py runs a private one in transaction pooling, as production does).  `make test` and .ci/run call
# this first.  When something is missing it is installed with apt-get if that is allowed (run as
# root, or sudo without a password); otherwise this stops at once with the one command to run.
set -eu

PACKAGES="chromium nginx libnginx-mod-http-brotli-static gettext npm redis-server pgbouncer"

# Where each is looked for (the tests of this script point them elsewhere).
CHROMIUM=${CHROMIUM:-/usr/bin/chromium}
NGINX=${NGINX:-/usr/sbin/nginx}
BROTLI_MODULE=${BROTLI_MODULE:-/usr/lib/nginx/modules/ngx_http_brotli_static_module.so}
MSGFMT=${MSGFMT:-/usr/bin/msgfmt}
NPM=${NPM:-$(command -v npm || echo /usr/bin/npm)}
REDIS_SERVER=${REDIS_SERVER:-/usr/bin/redis-server}
PGBOUNCER=${PGBOUNCER:-/usr/sbin/pgbouncer}

missing=""
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
