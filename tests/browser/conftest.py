"""Browser tests: a real Daphne server in a subprocess and Debian's Chromium driven by Playwright.

The server gets a database of its own (a fresh SQLite file, or a fresh
PostgreSQL database when ``DATABASE_URL`` names PostgreSQL, dropped afterwards)
and the same Redis as the rest of the suite.
"""

from __future__ import annotations

import os
import re
from pathlib import Path

import pytest
from django.conf import settings as django_settings

from tests.system.processes import Daphne, server_database, site_env

ROOT = Path(__file__).resolve().parents[2]
CHROMIUM = "/usr/bin/chromium"
CHROMIUM_ARGS = ["--no-sandbox", "--disable-gpu", "--disable-background-networking",
                 "--disable-component-update", "--disable-sync", "--no-first-run"]


#: Where a failed test leaves a screenshot and the HTML of each of its pages, and the server logs.
FAILURES = Path(os.environ.get("BROWSER_FAILURES_DIR", "/tmp/browser-failures"))


def pytest_collection_modifyitems(items):
    for item in items:
        if "tests/browser/" in str(item.fspath):
            item.add_marker(pytest.mark.browser)


@pytest.hookimpl(wrapper=True)
def pytest_runtest_makereport(item, call):
    """When a browser test fails, save what its pages showed while they are still open."""
    report = yield
    factory = getattr(item, "funcargs", {}).get("new_context")
    if report.when == "call" and report.failed and factory is not None:
        try:
            folder = _save_failure(item, factory.contexts)
            report.sections.append(("browser failure details", f"saved in {folder}"))
        except Exception as exc:  # noqa: BLE001 - never hide the test's own failure
            report.sections.append(("browser failure details", f"could not be saved: {exc!r}"))
    return report


@pytest.fixture(scope="session")
def server_env(tmp_path_factory):
    with server_database(tmp_path_factory.mktemp("browser-db")) as database_url:
        env = site_env(database_url, os.environ.get("REDIS_URL", django_settings.REDIS_URL),
                       tmp_path_factory.mktemp("static"))
        env["DJANGO_SECRET_KEY"] = "browser-test-secret-key"
        yield env


class Server(Daphne):
    """A Daphne process serving the site on a loopback port; can be killed and started again."""

    def __init__(self, env: dict, log_path: Path):
        super().__init__(log_path, env)
        self.url = f"http://127.0.0.1:{self.port}"

    def start(self) -> None:
        """Start the server; while it runs, a failed test's folder keeps the tail of its log."""
        super().start()
        if self not in _servers:
            _servers.append(self)

    def stop(self, kill: bool = False) -> None:
        """Stop the server: SIGTERM (a clean shutdown), or SIGKILL with ``kill=True`` (a crash)."""
        if kill:
            self.kill()
        else:
            super().stop()
            if self in _servers:
                _servers.remove(self)


_servers: list[Server] = []


@pytest.fixture(scope="session")
def server(server_env, tmp_path_factory):
    srv = Server(server_env, tmp_path_factory.mktemp("daphne") / "daphne.log")
    srv.start()
    yield srv
    srv.stop()


@pytest.fixture
def own_server(server_env, tmp_path):
    """A server of the test's own (same database, another port), for tests that stop and restart it."""
    srv = Server(server_env, tmp_path / "daphne.log")
    srv.start()
    yield srv
    srv.stop()


@pytest.fixture(scope="package")
def browser():
    """Chromium for the browser tests.  Package-scoped: Playwright's synchronous API keeps an event
    loop running in the main thread while it is open, which must be gone before other packages'
    tests call ``asyncio.run``."""
    from playwright.sync_api import sync_playwright

    if not os.path.exists(CHROMIUM):
        pytest.fail(f"{CHROMIUM} is missing: install Debian's chromium package (`.ci/run` does).")
    with sync_playwright() as p:
        chromium = p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        yield chromium
        chromium.close()


@pytest.fixture(scope="session", autouse=True)
def _expect_timeout():
    """Playwright's ``expect`` waits up to 20 s (its default is 5 s) in the browser tests: CI runs them
    beside the other tests, and a page on a busy machine has taken over 10 s to load.  A passing
    test waits no longer for it."""
    from playwright.sync_api import expect

    expect.set_options(timeout=20_000)


def _save_failure(item, contexts) -> Path:
    """Screenshot and HTML of every open page, and the tail of each server's log."""
    folder = FAILURES / re.sub(r"[^\w.-]+", "_", item.nodeid)
    folder.mkdir(parents=True, exist_ok=True)
    for i, context in enumerate(contexts):
        for j, page in enumerate(context.pages):
            try:
                page.screenshot(path=str(folder / f"page-{i}-{j}.png"), timeout=5_000)
                (folder / f"page-{i}-{j}.html").write_text(f"<!-- {page.url} -->\n" + page.content())
            except Exception as exc:  # noqa: BLE001 - a crashed or closed page: keep going
                (folder / f"page-{i}-{j}.error.txt").write_text(repr(exc))
    for k, srv in enumerate(_servers):
        if srv.log_path.exists():
            (folder / f"server-{k}.log").write_bytes(srv.log_path.read_bytes()[-20_000:])
    return folder


@pytest.fixture
def new_context(browser):
    """Factory for fresh browser contexts (separate cookies: separate people); all closed afterwards.

    Uncaught script errors and Content-Security-Policy refusals on any page of these contexts fail
    the test at teardown. When the test fails, screenshots and HTML of its pages and the server
    logs are saved (``FAILURES``).
    """
    contexts = []
    page_errors = []

    def watch(page):
        page.on("pageerror", lambda err: page_errors.append(f"{page.url}: {err}"))
        # Whatever the Content-Security-Policy refused (an inline script or style, a foreign source).
        page.on("console", lambda msg: page_errors.append(f"{page.url}: {msg.text}")
                if msg.type == "error" and "Content Security Policy" in msg.text else None)

    def make(**options):
        # Reduced motion: no CSS transitions or endless pulses to wait for or to paint.
        # options: more of Playwright's context options, e.g. locale="es-ES" (its Accept-Language).
        context = browser.new_context(viewport={"width": 1100, "height": 850}, reduced_motion="reduce",
                                      **options)
        context.set_default_timeout(20_000)
        context.on("page", lambda page: watch(page))
        contexts.append(context)
        return context

    make.contexts = contexts
    yield make
    for context in contexts:
        context.close()
    assert not page_errors, "uncaught errors in the pages:\n" + "\n".join(page_errors)
