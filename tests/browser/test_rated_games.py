"""A rated game in real browsers: two accounts log in through the login page, one creates a rated
5+0 game with the home page's Rated box, the other joins through the invite link; both see the
ratings beside the names, play, one resigns, and both players and a spectator see the rating
changes ("+N", or "-N" with a minus sign) on the end banner.  A guest who opens a rated invite
link is asked to sign in."""

from __future__ import annotations

import re
import subprocess
import sys

from playwright.sync_api import Page, expect

from tests.browser.conftest import ROOT
from tests.browser.seats import take_free_seat

PASSWORD = "Rated-Pass-2026!"
CREATE_ACCOUNTS = """
import uuid
from django.contrib.auth.models import User
from game.models import Account
for name in {names!r}:
    user = User.objects.create_user(username=name, password={password!r})
    Account.objects.get_or_create(user=user, defaults={{"player_id": uuid.uuid4().hex}})
"""


def create_accounts(server_env, *names: str) -> None:
    """Users and their accounts in the server's database, as sign-up leaves them."""
    done = subprocess.run([sys.executable, "manage.py", "shell", "-c",
                           CREATE_ACCOUNTS.format(names=list(names), password=PASSWORD)],
                          cwd=ROOT, env=server_env, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr[-3000:]


def log_in(server, page: Page, username: str) -> None:
    page.goto(server.url + "/accounts/login/")
    page.fill("input[name=login]", username)
    page.fill("input[name=password]", PASSWORD)
    page.locator("form button[type=submit]").last.click()
    page.wait_for_url(re.compile(r"^(?!.*/accounts/login/).*$"))


def test_two_accounts_play_a_rated_game_and_both_see_the_rating_changes(server, server_env, new_context):
    create_accounts(server_env, "ratedalice", "ratedbob")
    alice, bob, carol = (new_context().new_page() for _ in range(3))
    log_in(server, alice, "ratedalice")
    log_in(server, bob, "ratedbob")

    alice.goto(server.url + "/")
    alice.click("label[for=id_color_1]")          # Black (moves first)
    expect(alice.locator("#id_rated")).to_be_disabled()   # untimed, the default: never rated
    alice.select_option("#id_time_control", "5+0")
    alice.check("#id_rated")
    alice.click("#create-game")
    alice.wait_for_url(re.compile(r"/g/\w+/$"))
    url = alice.locator("#invite-url").input_value()

    carol.goto(server.url + "/")                    # a guest has no Rated box
    expect(carol.locator("#create-game")).to_be_visible()
    expect(carol.locator("#id_rated")).to_have_count(0)
    carol.goto(url)                                 # a guest: asked to sign in, no join form
    expect(carol.locator("#sign-in-to-join-link")).to_be_visible()
    expect(carol.locator("#join-form")).to_have_count(0)

    bob.goto(url)
    take_free_seat(bob)
    for page, you in ((alice, "B"), (bob, "W")):
        expect(page.locator(f"body[data-status=active][data-you={you}]")).to_be_attached()
        # New players: 1500, provisional.
        expect(page.locator("#player-bottom .player-rating")).to_have_text("(1500?)")
        expect(page.locator("#player-top .player-rating")).to_have_text("(1500?)")
        expect(page.locator("#time-control")).to_have_text("5+0 · Rated")

    # Two moves a side: from there a rated game's result counts (docs/ratings.md).
    for ply, (page, move) in enumerate(((alice, "11-15"), (bob, "23-19"), (alice, "8-11"), (bob, "22-18")),
                                       start=1):
        expect(page.locator("#board.interactive")).to_be_attached()
        for square in move.split("-"):
            page.click(f"#sq-{square}")
        expect(alice.locator(f"body[data-ply='{ply}']")).to_be_attached()
        expect(bob.locator(f"body[data-ply='{ply}']")).to_be_attached()

    bob.click("#resign")
    bob.click("#resign-confirm")
    carol.goto(url)                                 # a spectator who comes afterwards sees them too
    for page in (alice, bob, carol):
        banner = page.locator("#result-banner")
        expect(banner).to_contain_text("Black wins (ratedalice)")
        changes = banner.locator(".result-ratings")
        expect(changes.locator("li[data-color=black]")).to_contain_text("ratedalice (1500?)")
        expect(changes.locator("li[data-color=black] .rating-diff")).to_have_text(re.compile(r"^\+\d+$"))
        expect(changes.locator("li[data-color=white]")).to_contain_text("ratedbob (1500?)")
        expect(changes.locator("li[data-color=white] .rating-diff")).to_have_text(re.compile("^\u2212\\d+$"))
    gained = int(alice.locator("li[data-color=black] .rating-diff").inner_text().lstrip("+"))
    assert 100 < gained < 400          # two new players: a big first step, Glicko-2's

    # Both profiles: the new blitz rating (still provisional after one game), a point on the rating
    # chart, and the game among the recent ones with its result and change.
    game_path = re.search(r"/g/\w+/", url).group(0)
    for page, name, outcome, sign in ((alice, "ratedalice", "Won", "+"), (bob, "ratedbob", "Lost", "\u2212")):
        page.goto(f"{server.url}/@/{name}")
        row = page.locator("#ratings tr[data-category=blitz]")
        rating = int(re.match(r"\d+", row.locator("td.rating").inner_text()).group(0))
        assert (abs(rating - (1500 + gained)) <= 1) if sign == "+" else (rating < 1500), (name, rating, gained)
        expect(page.locator("#rating-chart g[data-category=blitz] circle")).to_have_count(1)
        recent = page.locator(f"#recent-games tr:has(a[href='{game_path}'])")
        expect(recent).to_have_count(1)
        expect(recent.locator("td.outcome")).to_contain_text(outcome)
        expect(recent.locator(".rating-diff")).to_have_text(re.compile("^[+\u2212-]\\d+$"))


LINKED_GAME = """
import uuid
from django.contrib.auth.models import User
from game.models import Account
from game.ratings import links
from game.round import actions, reads
ids = []
for name in ("samenetsister", "samenetbrother"):
    user = User.objects.create_user(username=name, password="x-Pass-2026!")
    account = Account.objects.create(user=user, player_id=uuid.uuid4().hex)
    links.note_sign_in(account, None, "203.0.113.11", new=True)
    ids.append(account.player_id)
game = actions.create_game(ids[0], "samenetsister", "B", time_control="5+0", rated=True)
actions.join_game(game.id, ids[1], "samenetbrother")
for ply, text in enumerate(("11-15", "23-19", "8-11", "22-17")):
    actions.play_move(game.id, ids[ply % 2], text, reads.version(game.id))
actions.resign(game.id, ids[1])
print(game.id)
"""


def test_a_game_between_linked_accounts_says_why_it_was_not_rated(server, server_env, new_context, tmp_path):
    """Two accounts signed up from one address: the end banner says the game was not rated and why,
    in the page's language, with no axe violation, on a phone held either way."""
    from tests.browser.test_accessibility import assert_clean

    done = subprocess.run([sys.executable, "manage.py", "shell", "-c", LINKED_GAME], cwd=ROOT, env=server_env,
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr[-3000:]
    url = f"{server.url}/g/{done.stdout.split()[-1]}/"
    for locale, words in (("en-US", "Not rated: both accounts were created from the same network address."),
                          ("fr-FR", "Non classée : les deux comptes ont été créés depuis la même adresse réseau."),
                          ("es-ES", "No puntuable: las dos cuentas se crearon desde la misma dirección de red.")):
        page = new_context(locale=locale).new_page()
        page.goto(url)
        banner = page.locator("#result-banner")
        expect(banner.locator(".rating-diff").first).to_have_text("+0")
        expect(banner.locator(".result-unrated")).to_have_text(words)
        if locale == "en-US":
            assert_clean(page, "a finished game not rated")
    for name, size in (("portrait", {"width": 390, "height": 844}), ("landscape", {"width": 844, "height": 390})):
        page = new_context().new_page()
        page.set_viewport_size(size)
        page.goto(url)
        expect(page.locator("#result-banner .result-unrated")).to_be_visible()
        page.locator("#result-banner").scroll_into_view_if_needed()
        page.screenshot(path=str(tmp_path / f"unrated-{name}.png"))
