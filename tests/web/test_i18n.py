"""Languages: the shipped catalogs are complete and compiled, every template and script string is
in them, pages follow the browser's language and the language picker, and the sockets send their
refusals in the player's language (the codes stay English)."""

from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path

import polib
import pytest
from channels.db import database_sync_to_async
from channels.testing import WebsocketCommunicator
from django.conf import settings
from django.test import Client

from checkers_site.asgi import application
from game import i18n
from game.round import actions
from tests.web.conftest import recv

LOCALE = Path(settings.BASE_DIR) / "locale"
LANGUAGES = [code for code, _name in settings.LANGUAGES if code != "en"]
DOMAINS = ("django", "djangojs")
CATALOGS = [(lang, domain) for lang in LANGUAGES for domain in DOMAINS]


def catalog(lang: str, domain: str) -> polib.POFile:
    return polib.pofile(str(LOCALE / lang / "LC_MESSAGES" / f"{domain}.po"))


def key(entry: polib.POEntry) -> tuple[str, str, str]:
    return (entry.msgctxt or "", entry.msgid, entry.msgid_plural or "")


def test_two_languages_besides_english_are_shipped():
    assert {"es", "fr"} <= set(LANGUAGES)
    assert settings.LANGUAGE_CODE == "en"


@pytest.mark.parametrize(("lang", "domain"), CATALOGS)
def test_catalog_is_complete_with_no_fuzzy_entry(lang, domain):
    po = catalog(lang, domain)
    assert len(po) > 20
    assert not po.metadata_is_fuzzy, "the header is marked fuzzy"
    assert po.metadata.get("Language") == lang
    forms = int(re.search(r"nplurals=(\d+)", po.metadata["Plural-Forms"]).group(1))
    untranslated = [e.msgid for e in po if not e.obsolete and not e.translated()]
    # Every plural form of the language (Spanish has three: "1", "millones de", the rest).
    short = [e.msgid for e in po if e.msgid_plural and sorted(map(int, e.msgstr_plural)) != list(range(forms))]
    assert short == [], f"plural forms missing in {lang}/{domain}.po"
    fuzzy = [e.msgid for e in po if not e.obsolete and "fuzzy" in e.flags]
    obsolete = [e.msgid for e in po.obsolete_entries()]
    assert untranslated == [], f"untranslated in {lang}/{domain}.po"
    assert fuzzy == [], f"fuzzy in {lang}/{domain}.po"
    assert obsolete == [], f"obsolete entries left in {lang}/{domain}.po"


@pytest.mark.parametrize(("lang", "domain"), CATALOGS)
def test_placeholders_survive_translation(lang, domain):
    """Every %(name)s of a message is in its translation (a lost one would break the page)."""
    names = re.compile(r"%\((\w+)\)s")
    for entry in catalog(lang, domain):
        wanted = set(names.findall(entry.msgid + (entry.msgid_plural or "")))
        translations = list(entry.msgstr_plural.values()) if entry.msgid_plural else [entry.msgstr]
        for text in translations:
            assert set(names.findall(text)) <= wanted | set(names.findall(entry.msgid_plural or "")), entry.msgid
            if not entry.msgid_plural:
                assert set(names.findall(text)) == wanted, (lang, entry.msgid, text)


@pytest.mark.parametrize(("lang", "domain"), CATALOGS)
def test_compiled_catalog_matches_its_source(lang, domain):
    """The committed .mo is the .po compiled: same messages, same translations."""
    po = catalog(lang, domain)
    mo = polib.mofile(str(LOCALE / lang / "LC_MESSAGES" / f"{domain}.mo"))
    compiled = {key(e): (e.msgstr, dict(e.msgstr_plural)) for e in mo}
    source = {key(e): (e.msgstr, {int(k): v for k, v in e.msgstr_plural.items()})
              for e in po if not e.obsolete and e.translated()}
    assert {k: v for k, v in compiled.items() if k[1]} == source, \
        f"locale/{lang}/LC_MESSAGES/{domain}.mo is out of date: run make messages"


@pytest.mark.skipif(shutil.which("xgettext") is None, reason="needs GNU gettext (apt-get install gettext)")
@pytest.mark.parametrize("domain", DOMAINS)
def test_every_marked_string_is_in_the_shipped_catalogs(domain, tmp_path):
    """makemessages run afresh on a copy of the sources finds no message the catalogs lack."""
    base = Path(settings.BASE_DIR)
    for folder in ("game", "templates", "static", "checkers_site"):
        shutil.copytree(base / folder, tmp_path / folder, ignore=shutil.ignore_patterns("__pycache__"))
    shutil.copy(base / "manage.py", tmp_path / "manage.py")
    (tmp_path / "locale").mkdir()
    command = [str(Path(settings.BASE_DIR) / ".venv" / "bin" / "python")
               if (base / ".venv" / "bin" / "python").exists() else "python",
               "manage.py", "makemessages", "-d", domain, "-l", "es", *i18n.MAKEMESSAGES_IGNORE]
    env = {"PATH": __import__("os").environ["PATH"], "DJANGO_DEBUG": "1",
           "DJANGO_SETTINGS_MODULE": "checkers_site.settings"}
    subprocess.run(command, cwd=tmp_path, env=env, check=True, capture_output=True, timeout=120)
    fresh = {key(e) for e in polib.pofile(str(tmp_path / "locale" / "es" / "LC_MESSAGES" / f"{domain}.po"))}
    for lang in LANGUAGES:
        shipped = {key(e) for e in catalog(lang, domain)}
        assert fresh - shipped == set(), f"not in locale/{lang}/LC_MESSAGES/{domain}.po: run make messages"


# ---- pages ----------------------------------------------------------------------------------


@pytest.mark.django_db
def test_home_page_follows_the_browsers_language():
    english = Client().get("/").content.decode()
    spanish = Client().get("/", HTTP_ACCEPT_LANGUAGE="es-ES,es;q=0.9").content.decode()
    french = Client().get("/", HTTP_ACCEPT_LANGUAGE="fr-FR,fr;q=0.9,en;q=0.5").content.decode()
    assert '<html lang="en">' in english and "Play a friend" in english
    assert '<html lang="es">' in spanish and "Jugar con un amigo" in spanish and "Play a friend" not in spanish
    assert '<html lang="fr">' in french and "Jouer contre un ami" in french
    assert "Crear partida" in spanish and "Negras (salen primero)" in spanish


@pytest.mark.django_db
def test_language_picker_switches_and_remembers_the_language():
    client = Client(enforce_csrf_checks=False)
    page = client.get("/", HTTP_ACCEPT_LANGUAGE="en").content.decode()
    assert 'id="language-form"' in page and 'action="/i18n/setlang/"' in page
    response = client.post("/i18n/setlang/", {"language": "es", "next": "/"}, HTTP_ACCEPT_LANGUAGE="en")
    assert response.status_code == 302 and response["Location"] == "/"
    assert response.cookies[settings.LANGUAGE_COOKIE_NAME].value == "es"
    # The cookie wins over the browser's own language from then on.
    assert "Jugar con un amigo" in client.get("/", HTTP_ACCEPT_LANGUAGE="en").content.decode()
    client.post("/i18n/setlang/", {"language": "fr", "next": "/"})
    assert "Jouer contre un ami" in client.get("/", HTTP_ACCEPT_LANGUAGE="es").content.decode()


@pytest.mark.django_db
def test_javascript_catalog_is_an_external_script_in_the_pages_language_cached_a_year():
    """The page names its language and the catalogs' version in the catalog's address; that address
    is kept by browsers for a year, immutable, whatever language the browser asks for."""
    page = Client().get("/", HTTP_ACCEPT_LANGUAGE="es").content.decode()
    version = i18n.catalog_version()
    assert re.fullmatch(r"[0-9a-f]{12}", version)
    assert f'<script src="/jsi18n/es/{version}/"></script>' in page
    catalog_js = Client().get(f"/jsi18n/es/{version}/", HTTP_ACCEPT_LANGUAGE="fr")
    assert catalog_js.status_code == 200 and "javascript" in catalog_js["Content-Type"]
    assert set(catalog_js["Cache-Control"].split(", ")) == {"public", "max-age=31536000", "immutable"}
    text = catalog_js.content.decode()
    assert "Turno de las negras" in text and "Te toca" in text
    assert "Au tour des noirs" in Client().get(f"/jsi18n/fr/{version}/").content.decode()
    assert f'<script src="/jsi18n/en/{version}/"></script>' in Client().get("/").content.decode()


@pytest.mark.django_db
def test_a_catalog_of_another_version_is_todays_and_not_kept():
    """A page of the release before (during a restart) gets today's catalog, asked for again next
    time; a language the site does not offer is a 404."""
    old = Client().get("/jsi18n/es/000000000000/")
    assert old.status_code == 200 and old["Cache-Control"] == "no-cache"
    assert "Turno de las negras" in old.content.decode()
    assert Client().get(f"/jsi18n/de/{i18n.catalog_version()}/").status_code == 404


@pytest.mark.django_db
def test_http_errors_are_translated_but_codes_stay_english():
    response = Client().get("/analysis/game/unknown-game-id!", HTTP_ACCEPT_LANGUAGE="es")
    assert response.status_code == 404
    assert response.json() == {"error": "no_such_game", "message": "No existe esa partida."}
    position = Client().get("/analysis/position", {"fen": "B:W21:B1", "move": "1-9"}, HTTP_ACCEPT_LANGUAGE="fr")
    assert position.json()["error"] == "illegal_move"
    assert "n'est pas un coup légal" in position.json()["message"]


def test_socket_language_from_cookie_then_accept_language():
    scope = {"cookies": {settings.LANGUAGE_COOKIE_NAME: "fr"}, "headers": [(b"accept-language", b"es")]}
    assert i18n.language_of_scope(scope) == "fr"
    assert i18n.language_of_scope({"headers": [(b"accept-language", b"es-MX,es;q=0.8")]}) == "es"
    assert i18n.language_of_scope({"headers": [(b"accept-language", b"de, fr;q=0.5")]}) == "fr"
    assert i18n.language_of_scope({"headers": [(b"accept-language", b"de")]}) == "en"
    assert i18n.language_of_scope({"cookies": {settings.LANGUAGE_COOKIE_NAME: "xx"}}) == "en"


# ---- sockets ---------------------------------------------------------------------------------


@pytest.mark.django_db(transaction=True)
@pytest.mark.asyncio
async def test_refused_move_is_explained_in_the_players_language(alice, bob):
    game = await database_sync_to_async(actions.create_game)(alice.player_id, "alice", "B")
    await database_sync_to_async(actions.join_game)(game.id, bob.player_id, "bob")

    def socket(browser, language_header: bytes | None, cookie_language: str | None = None):
        headers = browser.headers()
        if cookie_language:
            headers = [(k, v + f"; {settings.LANGUAGE_COOKIE_NAME}={cookie_language}".encode())
                       if k == b"cookie" else (k, v) for k, v in headers]
        if language_header:
            headers.append((b"accept-language", language_header))
        return WebsocketCommunicator(application, f"/ws/game/{game.id}/", headers=headers)

    spanish = socket(bob, b"es-ES,es;q=0.9")
    french = socket(bob, b"es-ES", cookie_language="fr")  # the picker's choice beats the header
    english = socket(bob, None)
    answers = []
    for comm in (spanish, french, english):
        assert (await comm.connect(timeout=5))[0]
        snapshot = await recv(comm)
        assert snapshot["type"] == "snapshot" and snapshot["you"] == "W"
        # White tries to move on Black's turn.
        await comm.send_json_to({"type": "move", "move": "22-18", "v": snapshot["v"]})
        answers.append(await recv(comm))
    assert [a["code"] for a in answers] == ["not_your_turn"] * 3
    assert [a["message"] for a in answers] == ["Le toca a tu rival.", "C'est au tour de votre adversaire.",
                                               "It is your opponent's turn."]
    await spanish.send_json_to({"type": "no_such_type"})
    refused = await recv(spanish)
    assert refused == {"type": "error", "code": "unknown_type",
                       "message": "Tipo de mensaje desconocido: 'no_such_type'."}
    for comm in (spanish, french, english):
        await comm.disconnect()


@pytest.mark.django_db(transaction=True)
@pytest.mark.asyncio
async def test_lobby_refusals_are_in_the_players_language(alice):
    headers = [*alice.headers(), (b"accept-language", b"es")]
    comm = WebsocketCommunicator(application, "/ws/lobby/", headers=headers)
    assert (await comm.connect(timeout=5))[0]
    await comm.send_json_to({"type": "seek", "pool": "nope"})
    while (message := await comm.receive_json_from(timeout=5))["type"] != "error":
        pass
    assert message["code"] == "unknown_pool"
    assert message["message"].startswith("No existe la cola 'nope'")
    await comm.disconnect()


def test_lazy_texts_take_the_language_they_are_sent_in():
    from django.utils.translation import gettext_lazy, ngettext_lazy

    message = i18n.lazy_text(gettext_lazy("Choose a display name of 1 to %(max)s characters."), max=24)
    plural = i18n.lazy_text(ngettext_lazy("%(days)s day a move", "%(days)s days a move", "days"), days=3)
    event = {"type": "error", "code": "bad_name", "message": message, "other": plural}
    assert i18n.resolved(event, "es") == {"type": "error", "code": "bad_name",
                                          "message": "Elige un nombre de 1 a 24 caracteres.",
                                          "other": "3 días por jugada"}
    assert i18n.resolved(event, "fr")["other"] == "3 jours par coup"
    assert i18n.resolved(event, "en")["message"] == "Choose a display name of 1 to 24 characters."
