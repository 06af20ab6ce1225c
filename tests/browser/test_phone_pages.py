"""What a new player sees on a phone held upright (390x844): the home page's first screen offers the
three ways to play; a guest on a rated arena's page is sent to sign in (and back); a rated arena
game's player bar shows the name, not one letter, beside the rating and the "you" tag; a lesson's
board shows the square numbers its text speaks of, and the box under it hides them."""

from __future__ import annotations

import re

from playwright.sync_api import expect

from tests.browser.test_accessibility import assert_clean
from tests.browser.test_tournaments import shell

PHONE = {"width": 390, "height": 844}
# A rated arena with two long-named accounts paired by a tick; prints the game and a signed session
# cookie of the player who is to move (Black: the bar shows the rating, "you" and "to move").
PAIRED_ARENA = """
import uuid
from django.contrib.auth.models import User
from django.contrib.sessions.backends.signed_cookies import SessionStore
from django.utils import timezone
from game.tournaments import arena, jobs
from game.tournaments.models import Pairing
from tests.ratings.helpers import account
tag = uuid.uuid4().hex[:4]
t = arena.create(account("phonehost" + tag), "Phone Arena", "3+0", 30, timezone.now())
for name in ("Alexandrina" + tag, "Maximiliano" + tag):
    arena.join(t.id, account(name), name)
jobs.tick(t.id)
game = Pairing.objects.get(tournament_id=t.id).game
user = User.objects.get(account__player_id=game.black_player)
session = SessionStore()
session.update({"_auth_user_id": str(user.pk), "_auth_user_hash": user.get_session_auth_hash(),
                "_auth_user_backend": "django.contrib.auth.backends.ModelBackend"})
session.save()
print(game.id, session.session_key)
"""


def phone_page(new_context):
    page = new_context().new_page()
    page.set_viewport_size(PHONE)
    return page


def test_the_home_pages_first_screen_on_a_phone_offers_the_three_ways_to_play(server, new_context):
    page = phone_page(new_context)
    page.goto(server.url + "/")
    for link, target in (("#play-quick", "#lobby"), ("#play-friend-link", "#play-friend"),
                         ("#play-computer-link", "#computer")):
        box = page.locator(link).bounding_box()
        assert box is not None and box["y"] + box["height"] <= PHONE["height"], link
        assert page.locator(link).get_attribute("href") == target and page.locator(target).count() == 1
    expect(page.locator(".mini-board")).to_be_hidden()
    assert_clean(page, "the home page on a phone")
    page.set_viewport_size({"width": 844, "height": 390})   # held sideways: under 500 px high
    expect(page.locator("#play-quick")).to_be_visible()
    expect(page.locator(".mini-board")).to_be_hidden()


def test_a_rated_arena_games_player_bar_on_a_phone_shows_the_name(server, server_env, new_context):
    game_id, cookie = shell(server_env, PAIRED_ARENA).split()
    context = new_context()
    context.add_cookies([{"name": "sessionid", "value": cookie, "url": server.url}])
    page = context.new_page()
    page.set_viewport_size(PHONE)
    page.goto(f"{server.url}/g/{game_id}/")
    bar = page.locator("#player-bottom")
    expect(bar.locator(".tag.you")).to_be_visible()
    expect(bar.locator(".player-rating")).to_be_visible()
    expect(bar).to_have_class(re.compile("to-move"))
    width = bar.locator(".player-name").evaluate(
        "el => el.getBoundingClientRect().width / parseFloat(getComputedStyle(el).fontSize)")
    assert width >= 5.5, f"the name is {width:.1f} em wide"


def test_a_lessons_board_shows_the_square_numbers_and_the_box_hides_them(server, new_context):
    page = phone_page(new_context)
    page.goto(server.url + "/learn/moves")
    expect(page.locator("#board .sq-num").first).to_be_visible()
    page.uncheck("#board-numbers")
    expect(page.locator("#board .sq-num").first).to_be_hidden()
    page.reload()
    expect(page.locator("#board-numbers")).not_to_be_checked()
    expect(page.locator("#board .sq-num").first).to_be_hidden()


RATED_ARENA = """
import uuid
from datetime import timedelta
from django.utils import timezone
from game.tournaments import arena
from tests.ratings.helpers import account
print(arena.create(account("ratedhost" + uuid.uuid4().hex[:4]), "Rated Arena", "3+0", 30,
                   timezone.now() + timedelta(minutes=10)).id)
"""


def test_a_guest_on_a_rated_arenas_page_is_asked_to_sign_in_and_comes_back(server, server_env, new_context):
    tournament_id = shell(server_env, RATED_ARENA)
    page = phone_page(new_context)
    page.goto(f"{server.url}/tournaments/{tournament_id}")
    expect(page.locator("#join")).to_have_count(0)
    expect(page.locator("#sign-in-to-join")).to_contain_text("Rated tournaments are for players with an account.")
    assert_clean(page, "a rated arena's page, for a guest")
    page.click("#sign-in-join")
    expect(page).to_have_url(re.compile(rf"/accounts/login/\?next=/tournaments/{tournament_id}$"))
