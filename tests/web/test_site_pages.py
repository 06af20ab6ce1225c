"""What every page carries: the security headers, compression, the error pages in the site's
style, and an admin that only looks at games."""

from __future__ import annotations

import gzip
import os
import secrets
import subprocess
import sys
from pathlib import Path

import pytest
from django.contrib import admin
from django.contrib.auth.models import User
from django.test import Client
from django.urls import path

from checkers_site.urls import urlpatterns as site_urlpatterns
from game.models import Game, Move
from game.round import actions

pytestmark = pytest.mark.django_db(transaction=True)

ROOT = Path(__file__).resolve().parents[2]


def boom(request):
    raise RuntimeError("a bug in a view")


# The site's URLs and one view that fails, for the 500 page (``pytest.mark.urls(__name__)``).
urlpatterns = [*site_urlpatterns, path("test-boom/", boom)]


def game_page():
    game = actions.create_game("a" * 32, "alice", "B")
    return Client().get(f"/g/{game.id}/")


def test_game_page_carries_the_security_headers():
    response = game_page()
    assert response.status_code == 200
    csp = dict(part.strip().split(" ", 1) for part in response["Content-Security-Policy"].split(";"))
    assert csp["script-src"] == "'self'"
    assert csp["default-src"] == "'self'"
    assert csp["connect-src"] == "'self'"
    assert csp["object-src"] == "'none'"
    assert csp["frame-ancestors"] == "'none'"
    assert "unsafe-inline" not in response["Content-Security-Policy"]
    assert response["Referrer-Policy"] == "same-origin"
    assert "camera=()" in response["Permissions-Policy"]
    assert "geolocation=()" in response["Permissions-Policy"]
    assert response["X-Content-Type-Options"] == "nosniff"
    assert response["X-Frame-Options"] == "DENY"
    assert response["Cross-Origin-Opener-Policy"] == "same-origin"


def test_pages_have_no_inline_scripts():
    """``script-src 'self'`` allows no inline code: every script is a file, data is json_script."""
    for response in (Client().get("/"), game_page(), Client().get("/analysis")):
        html = response.content.decode()
        for tag in html.split("<script")[1:]:
            opening = tag.split(">", 1)[0]
            assert ' src="' in opening or 'type="application/json"' in opening, opening
        assert " onclick=" not in html and " onload=" not in html and "javascript:" not in html
        assert ' style="' not in html


def test_pages_are_gzipped_when_the_browser_accepts_it():
    game = actions.create_game("a" * 32, "alice", "B")
    response = Client().get(f"/g/{game.id}/", headers={"accept-encoding": "gzip, deflate, br"})
    assert response["Content-Encoding"] == "gzip"
    assert "Accept-Encoding" in response["Vary"]
    assert b"game-config" in gzip.decompress(response.content)
    assert "Content-Encoding" not in Client().get(f"/g/{game.id}/")


def run_manage(*args: str, **env: str) -> subprocess.CompletedProcess:
    environment = {k: v for k, v in os.environ.items() if not k.startswith("DJANGO_")}
    environment.update({"DJANGO_SETTINGS_MODULE": "checkers_site.settings",
                        "DJANGO_SECRET_KEY": secrets.token_urlsafe(50), **env})
    return subprocess.run([sys.executable, "manage.py", *args], cwd=ROOT, env=environment,
                          capture_output=True, text=True)


def test_collected_static_files_have_brotli_and_gzip_copies(tmp_path):
    result = run_manage("collectstatic", "--noinput", DJANGO_STATIC_ROOT=str(tmp_path))
    assert result.returncode == 0, result.stdout + result.stderr
    scripts = list((tmp_path / "js").glob("main.*.js"))
    assert scripts, sorted(p.name for p in (tmp_path / "js").iterdir())
    for script in scripts:
        assert script.with_name(script.name + ".br").stat().st_size > 0
        assert script.with_name(script.name + ".gz").stat().st_size > 0
    css = next((tmp_path / "css").glob("site.*.css"))
    assert css.with_name(css.name + ".br").exists() and css.with_name(css.name + ".gz").exists()


def test_hsts_preload_only_with_a_year(tmp_path):
    code = ("from django.conf import settings as s; "
            "print(s.SECURE_HSTS_SECONDS, s.SECURE_HSTS_PRELOAD, s.SECURE_HSTS_INCLUDE_SUBDOMAINS)")
    year = run_manage("shell", "--no-imports", "-c", code, DJANGO_SECURE="1", DJANGO_ALLOWED_HOSTS="checkers.example")
    assert year.stdout.split() == ["31536000", "True", "True"], year.stderr
    month = run_manage("shell", "--no-imports", "-c", code, DJANGO_SECURE="1", DJANGO_HSTS_SECONDS="2592000",
                       DJANGO_ALLOWED_HOSTS="checkers.example")
    assert month.stdout.split() == ["2592000", "False", "True"], month.stderr


@pytest.mark.urls(__name__)
def test_404_and_500_pages_are_in_the_site_style(settings):
    settings.DEBUG = False
    missing = Client().get("/g/NoSuchGame/")
    assert missing.status_code == 404
    html = missing.content.decode()
    assert "Page not found" in html and 'class="site-header"' in html and "/static/css/site" in html
    assert "Content-Security-Policy" in missing

    failing = Client(raise_request_exception=False).get("/test-boom/")
    assert failing.status_code == 500
    html = failing.content.decode()
    assert "Something went wrong" in html and 'class="site-header"' in html
    assert "a bug in a view" not in html


@pytest.fixture
def admin_client():
    user = User.objects.create_superuser("root", "root@example.com", "pw")
    client = Client()
    client.force_login(user)
    return client


def test_admin_shows_games_and_moves_read_only(admin_client):
    game = actions.start_game(black=("b" * 32, "alice"), white=("w" * 32, "bob"))
    actions.play_move(game.id, "b" * 32, "11-15", 0)
    version = Game.objects.get(pk=game.id).version

    assert admin_client.get("/admin/game/game/").status_code == 200
    page = admin_client.get(f"/admin/game/game/{game.id}/change/")
    assert page.status_code == 200
    html = page.content.decode()
    assert "11-15" in html
    assert 'name="_save"' not in html and 'name="status"' not in html
    assert admin_client.get("/admin/game/game/add/").status_code == 403
    assert admin_client.get(f"/admin/game/game/{game.id}/delete/").status_code == 403

    posted = admin_client.post(f"/admin/game/game/{game.id}/change/",
                               {"status": "finished", "result": "1-0", "version": "0"})
    assert posted.status_code == 403
    stored = Game.objects.get(pk=game.id)
    assert (stored.status, stored.version) == ("active", version)
    assert Move.objects.filter(game=game).count() == 1
    model_admin = admin.site._registry[Game]
    request = page.wsgi_request
    for inline in model_admin.get_inline_instances(request, stored):
        assert not inline.has_add_permission(request, stored)
        assert not inline.has_change_permission(request, stored)
        assert not inline.has_delete_permission(request, stored)
