"""The chat in real browsers: two players and two spectators on one Daphne server, each in the room
that is theirs; a hostile line shows as text and runs nothing; mute and hide are remembered."""

from __future__ import annotations

import re

from playwright.sync_api import Page, expect

from tests.browser.test_live_game import start_game

HOSTILE = '<img src=x onerror="window.__pwned=1"><script>window.__pwned=2</script><b>bold</b>'


def guest(text: str) -> re.Pattern:
    """A line of a spectator who typed no name: the site calls them "Guest <number>"."""
    return re.compile(r"^Guest \d{4}: " + re.escape(text) + "$")


def chat_texts(page: Page) -> list[str]:
    """The lines the chat shows, as "name: text"."""
    return page.locator("#chat-lines .chat-line").all_inner_texts()


def say(page: Page, text: str) -> None:
    page.locator("#chat-input").fill(text)
    page.locator("#chat-input").press("Enter")


def no_markup_ran(page: Page) -> None:
    assert page.evaluate("() => window.__pwned") is None
    assert page.locator("#chat-lines img, #chat-lines script, #chat-lines b").count() == 0


def test_players_and_spectators_chat_in_their_own_rooms(new_context, server):
    table = start_game(new_context, server, spectators=("carol", "dave"))
    alice, bob = table.black.page, table.white.page
    carol, dave = (person.page for person in table.spectators)
    dialogs = []
    for page in (alice, bob, carol, dave):
        page.on("dialog", lambda dialog: (dialogs.append(dialog.message), dialog.dismiss()))
        expect(page.locator("#chat")).to_be_visible()
    # Each sees one room while the game goes on: the players theirs, the spectators theirs.
    for page in (alice, bob):
        expect(page.locator("#chat-title")).to_have_text("Players' chat")
        expect(page.locator("#chat-tabs")).to_be_hidden()
    for page in (carol, dave):
        expect(page.locator("#chat-title")).to_have_text("Spectators' chat")
        expect(page.locator("#chat-mute-row")).to_be_hidden()

    # Too fast: the fourth line within five seconds is refused, to alice alone, and given back.
    for text in ("one", "two", "three"):
        say(alice, text)
        expect(bob.locator("#chat-lines .chat-line").last).to_have_text(f"alice: {text}")
    say(alice, "four is too many")
    expect(alice.locator("#chat-note")).to_have_class("chat-note error")
    expect(alice.locator("#chat-note")).to_contain_text("at most 3 chat lines every 5 seconds")
    expect(alice.locator("#chat-input")).to_have_value("four is too many")
    expect(bob.locator("#chat-note")).to_be_hidden()
    expect(bob.locator("#chat-lines .chat-line")).to_have_count(3)
    alice.wait_for_timeout(5_000)  # the window passes

    say(alice, "Good luck!")
    expect(bob.locator("#chat-lines .chat-line").last).to_have_text("alice: Good luck!")  # then bob answers
    bob.locator("#chat-quick button", has_text="Hello").click()
    mine = ["alice: one", "alice: two", "alice: three", "alice: Good luck!"]
    for page in (alice, bob):
        expect(page.locator("#chat-lines .chat-line")).to_have_text([*mine, "bob: Hello"])
    expect(alice.locator("#chat-input")).to_have_value("")
    expect(alice.locator("#chat-lines .chat-line.mine")).to_have_text(mine)

    say(carol, HOSTILE)
    # Two sockets' lines are ordered by when the server stores them: dave speaks once carol's is in.
    expect(dave.locator("#chat-lines .chat-line")).to_have_text([guest(HOSTILE)])
    say(dave, "   what a game   ")
    for page in (carol, dave):
        expect(page.locator("#chat-lines .chat-line")).to_have_text([guest(HOSTILE), guest("what a game")])
        no_markup_ran(page)
    carol_name, dave_name = (name.inner_text() for name in carol.locator("#chat-lines .chat-name").all())
    assert carol_name != dave_name
    # The players never got the spectators' lines, nor the spectators the players'.
    for page in (alice, bob):
        expect(page.locator("#chat-lines .chat-line")).to_have_count(5)
    assert not any("alice" in text or "bob" in text for text in chat_texts(carol) + chat_texts(dave))
    assert not any("Guest" in text for text in chat_texts(alice) + chat_texts(bob))

    # bob mutes alice: her lines go from his page, and stay gone after a reload.
    bob.locator("#chat-mute").check()
    expect(bob.locator("#chat-lines .chat-line")).to_have_text(["bob: Hello"])
    bob.reload()
    expect(bob.locator("#chat-mute")).to_be_checked()
    expect(bob.locator("#chat-lines .chat-line")).to_have_text(["bob: Hello"])
    expect(bob.locator("#chat-note")).to_have_text("Your opponent's lines are hidden.")
    bob.locator("#chat-mute").uncheck()
    expect(bob.locator("#chat-lines .chat-line")).to_have_count(5)

    # dave hides the chat altogether: remembered too.
    dave.locator("#chat-hide").click()
    expect(dave.locator("#chat-body")).to_be_hidden()
    dave.reload()
    expect(dave.locator("#chat-body")).to_be_hidden()
    expect(dave.locator("#chat-hide")).to_have_text("Show chat")

    # The game ends: the players now read the spectators' room, its history included, as text.
    alice.locator("#resign").click()
    alice.locator("#resign-confirm").click()
    for page in (alice, bob):
        expect(page.locator("body")).to_have_attribute("data-status", "finished")
        expect(page.locator("#chat-tabs")).to_be_visible()
        page.locator("#chat-tab-spectators").click()
        expect(page.locator("#chat-lines .chat-line")).to_have_text([guest(HOSTILE), guest("what a game")])
        no_markup_ran(page)
    say(bob, "thanks for watching")
    for page in (alice, bob, carol):
        expect(page.locator("#chat-lines .chat-line").last).to_have_text("bob: thanks for watching")
    # The players' room stays theirs.
    alice.locator("#chat-tab-players").click()
    say(alice, "good game bob")
    expect(bob.locator("#chat-tab-players")).to_have_class("chat-tab unread")
    assert "alice: good game bob" not in chat_texts(carol)
    carol.reload()
    expect(carol.locator("#chat-lines .chat-line")).to_have_text(
        [f"{carol_name}: {HOSTILE}", f"{dave_name}: what a game", "bob: thanks for watching"])
    for page in (alice, bob, carol, dave):
        no_markup_ran(page)
    assert dialogs == []
    bob.locator("#chat").scroll_into_view_if_needed()
    bob.screenshot(path="/tmp/chat-desktop.png")


def test_the_chat_sits_below_the_board_on_a_phone(new_context, server):
    table = start_game(new_context, server, spectators=())
    # A Spanish phone: the quick lines are worded for its page, and stored as sent.
    page = new_context(locale="es-ES").new_page()
    page.set_viewport_size({"width": 390, "height": 844})
    page.goto(table.url)
    expect(page.locator("#chat")).to_be_visible()
    expect(page.locator("#chat-title")).to_have_text("Chat de los espectadores")
    expect(page.locator("#chat-quick button")).to_have_text(["Hola", "Buena suerte", "Buena partida", "Gracias"])
    page.locator("#chat-quick button", has_text="Buena suerte").click()
    say(page, "watching from my phone, a long line to see that it wraps inside the panel")
    expect(page.locator("#chat-lines .chat-text")).to_have_text(
        ["Buena suerte", "watching from my phone, a long line to see that it wraps inside the panel"])
    # The session's guest name, worded in the socket's language once its catalog has it.
    expect(page.locator("#chat-lines .chat-name").first).to_have_text(re.compile(r"^(Invitado|Guest) \d{4}$"))
    board = page.locator("#board").bounding_box()
    chat = page.locator("#chat").bounding_box()
    assert chat["y"] >= board["y"] + board["height"], (board, chat)
    assert chat["x"] >= 0 and chat["x"] + chat["width"] <= 390, chat
    # Nothing in the chat is wider than the panel (long lines wrap).
    assert page.evaluate("() => { const c = document.getElementById('chat'); return c.scrollWidth <= c.clientWidth; }")
    page.locator("#chat").scroll_into_view_if_needed()
    page.screenshot(path="/tmp/chat-phone.png")


def test_no_chat_with_the_computer_and_its_good_game_in_the_page_language(new_context, server):
    page = new_context(locale="es-ES").new_page()
    page.goto(server.url + "/")
    page.fill("#id_name", "alice")
    page.locator("#computer-form input[name=level][value='1']").check(force=True)
    page.locator("#computer-form input[name=color][value=B]").check(force=True)
    page.click("#play-computer")
    expect(page).to_have_url(re.compile(r"/g/\w+/$"))
    expect(page.locator("body")).to_have_attribute("data-status", "active")
    expect(page.locator("#connection")).to_have_attribute("data-state", "open")
    expect(page.locator("#chat")).to_be_hidden()  # no players' room with the computer
    page.click("#resign")
    page.click("#resign-confirm")
    expect(page.locator("body")).to_have_attribute("data-status", "finished")
    expect(page.locator("#chat")).to_be_visible()
    expect(page.locator("#chat-tabs")).to_be_visible()  # the players' room, and the spectators'
    # The player's own room is shown without a click, even though the spectators' room opened first
    # (at the end) and the computer's line came after it.
    expect(page.locator("#chat-tab-players")).to_have_attribute("aria-selected", "true")
    expect(page.locator("#chat-lines .chat-line")).to_have_text(["Ordenador (nivel 1): Buena partida"])
    expect(page.locator("#chat-note")).to_have_text("No hay chat con el ordenador.")
    expect(page.locator("#chat-form")).to_be_hidden()
    page.locator("#chat-tab-spectators").click()
    expect(page.locator("#chat-form")).to_be_visible()
