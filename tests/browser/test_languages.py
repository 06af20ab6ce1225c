"""Languages in real browsers: two players whose browsers ask for Spanish play a few moves and
see the whole game page in Spanish (the language from Accept-Language for one, from the language
picker for the other, which then remembers it); a refusal from the server arrives in Spanish; the
rules page and a French page are translated too. Screenshots are written to /tmp."""

from __future__ import annotations

import re
from pathlib import Path

from playwright.sync_api import Page, expect

from tests.browser.seats import take_free_seat

SCREENSHOTS = Path("/tmp")


def square(page: Page, n: int):
    return page.locator(f'#board [data-square="{n}"]')


def click_move(page: Page, move: str) -> None:
    start, *landings = (int(n) for n in re.split(r"[-x]", move))
    square(page, start).click()
    expect(square(page, start)).to_have_class(re.compile(r"(^|\s)selected(\s|$)"))
    for n in landings:
        square(page, n).click()


def test_a_game_played_in_spanish(new_context, server):
    # alice's browser asks for Spanish (Accept-Language: es-ES).
    alice = new_context(locale="es-ES").new_page()
    alice.goto(server.url + "/")
    expect(alice.locator("html")).to_have_attribute("lang", "es")
    expect(alice.locator("h1")).to_have_text("Jugar con un amigo")
    expect(alice.locator("#seek-status")).to_have_text(
        "Elige un control de tiempo para enfrentarte al próximo jugador que lo busque, "
        "o juega contra alguien de abajo.")
    alice.get_by_label("Tu nombre").fill("Alicia")
    alice.locator("#id_color label", has_text="Negras (salen primero)").click()
    alice.locator("#create-game").click()
    expect(alice).to_have_url(re.compile(r"/g/[^/]+/$"))
    expect(alice.locator("#turn")).to_have_text("Esperando rival")
    expect(alice.locator("#status")).to_have_text("La partida empieza en cuanto se una tu amigo.")
    expect(alice.locator("#copy-invite")).to_have_text("Copiar enlace")
    url = alice.locator("#invite-url").input_value()

    # bob's browser says English; he picks Spanish in the header, and the site remembers it.
    bob_context = new_context(locale="en-US")
    bob = bob_context.new_page()
    bob.goto(url)
    expect(bob.locator("#join-game")).to_have_text("Join the game")
    bob.locator("#language-select").select_option("es")  # submits itself (static/js/language.js)
    expect(bob.locator("#join-game")).to_have_text("Unirse a la partida")
    assert any(c["name"] == "django_language" and c["value"] == "es" for c in bob_context.cookies())
    bob.locator("#join-form").get_by_label("Tu nombre").fill("Bruno")
    take_free_seat(bob)
    expect(bob.locator("body")).to_have_attribute("data-you", "W")

    for page in (alice, bob):
        expect(page.locator("body")).to_have_attribute("data-status", "active")
        expect(page.locator("#offer-draw")).to_contain_text("Ofrecer tablas")
        expect(page.locator("#resign")).to_contain_text("Abandonar")
        expect(page.locator("#moves-title")).to_have_text("Jugadas")
    expect(alice.locator("#turn")).to_have_text("Te toca")
    expect(bob.locator("#turn")).to_have_text("Le toca a Alicia")
    expect(alice.locator("#player-bottom")).to_contain_text("Negras")
    expect(alice.locator("#player-bottom .tag.you")).to_have_text("tú")
    expect(square(alice, 11)).to_have_attribute("aria-label", re.compile(r"^casilla 11, peón negro"))

    click_move(alice, "11-15")
    expect(bob.locator("#turn")).to_have_text("Te toca")
    expect(alice.locator("#turn")).to_have_text("Le toca a Bruno")
    click_move(bob, "22-18")
    # 18 stands in front of 15: Black must capture, and the page says so in Spanish.
    expect(alice.locator("#turn")).to_have_text("Te toca")
    expect(alice.locator("#status")).to_contain_text("Tienes que capturar")
    click_move(alice, "15x22")
    expect(bob.locator("#turn")).to_have_text("Te toca")
    expect(bob.locator("#status")).to_contain_text("Tienes que capturar")
    click_move(bob, "25x18")
    expect(alice.locator("#turn")).to_have_text("Te toca")
    expect(alice.locator("#move-list li")).to_have_text(["1. 11-15 22-18", "2. 15x22 25x18"])
    click_move(alice, "12-16")
    expect(bob.locator("#turn")).to_have_text("Te toca")
    # alice's page has applied the move too (its version is bob's) before she sends out of turn.
    expect(alice.locator("body")).to_have_attribute("data-version", bob.locator("body").get_attribute("data-version"))

    # A move sent out of turn is refused by the server in alice's language; the code stays English.
    version = int(alice.locator("body").get_attribute("data-version"))
    alice.evaluate("(v) => window.checkers.socket.send({type: 'move', move: '11-16', v})", version)
    expect(alice.locator("#status")).to_have_text("Le toca a tu rival.")

    # Resigning asks for a confirmation, in Spanish too.
    bob.locator("#resign").click()
    expect(bob.locator("#resign-box")).to_contain_text("¿Abandonar esta partida?")
    expect(bob.locator("#resign-confirm")).to_have_text("Sí, abandonar")
    bob.locator("#resign-cancel").click()

    # The whole page is Spanish: nothing of the English interface is left.
    text = alice.locator("body").inner_text()
    for english in ("Your turn", "Offer draw", "Resign", "Moves", "Black", "White", "to move", "Waiting"):
        assert english not in text, english
    alice.screenshot(path=str(SCREENSHOTS / "spanish-game.png"), full_page=True)
    bob.screenshot(path=str(SCREENSHOTS / "spanish-game-white.png"), full_page=True)

    # The rules page, in the language bob chose.
    bob.goto(server.url + "/how-to-play")
    expect(bob.locator("html")).to_have_attribute("lang", "es")
    expect(bob.locator("h1")).to_have_text("Cómo se juega a las damas")
    expect(bob.locator("body")).to_contain_text("La captura es obligatoria")
    bob.screenshot(path=str(SCREENSHOTS / "spanish-how-to-play-top.png"))
    bob.screenshot(path=str(SCREENSHOTS / "spanish-how-to-play.png"), full_page=True)


def test_french_pages_and_the_analysis_board(new_context, server):
    page = new_context(locale="fr-FR").new_page()
    page.goto(server.url + "/analysis?fen=B:W21,22:B5,K9")
    expect(page.locator("html")).to_have_attribute("lang", "fr")
    expect(page.locator("#analysis-title")).to_have_text("Damier d'analyse")
    expect(page.locator("#analysis-status")).to_contain_text("Trait aux noirs")
    expect(page.locator("#analyse")).to_have_text("Meilleur coup")
    # A position the rules refuse, explained in French by the page.
    page.locator("#fen-input").fill("B:W1:B5")
    page.locator("#fen-load").click()
    expect(page.locator("#fen-error")).to_contain_text("Un pion blanc ne peut pas se trouver sur la case 1")
    page.goto(server.url + "/")
    expect(page.locator("#play-computer")).to_have_text("Jouer contre l'ordinateur")
    expect(page.locator("#seek-pool option").first).to_have_text("Sans pendule")
