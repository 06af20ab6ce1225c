"""An arena in real browsers: two guests join a casual arena from its page, the arena's worker
(a real ``rqworker`` with RQ's scheduler) starts it and pairs them, both pages go to the game by
themselves, one goes berserk and the other hears of it, the game ends and a spectator sees the
standings move without a reload; the finished arena shows its podium.  Every tournament page has
no axe violations: a Swiss round's pairing board, the creator's invite link, and a late entry
into a Swiss through that link (no password asked)."""

from __future__ import annotations

import re
import subprocess
import sys

import pytest
from playwright.sync_api import Page, expect

from tests.browser.conftest import ROOT
from tests.browser.test_accessibility import assert_clean
from tests.browser.test_game_actions import resign
from tests.browser.test_rated_games import PASSWORD, log_in

CREATE_ARENA = """
from django.utils import timezone
from game.tournaments import arena, jobs
from tests.ratings.helpers import account
t = arena.create(account("arenahost"), "Browser Arena", "3+0", 30, timezone.now(), rated=False)
jobs.schedule_tick(t)
print(t.id)
"""
FINISH_ARENA = """
from datetime import timedelta
from game.tournaments.models import Tournament
Tournament.objects.filter(pk={id!r}).update(starts_at=Tournament.objects.get(pk={id!r}).starts_at - timedelta(hours=1))
"""


def shell(server_env, code: str) -> str:
    done = subprocess.run([sys.executable, "manage.py", "shell", "-c", code], cwd=ROOT, env=server_env,
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr[-3000:]
    return done.stdout.strip().splitlines()[-1] if done.stdout.strip() else ""


@pytest.fixture
def worker(server_env, tmp_path):
    """The site's worker of the ``tournaments`` queue, with RQ's scheduler, as make run starts it."""
    log = (tmp_path / "worker.log").open("w")
    process = subprocess.Popen([sys.executable, "manage.py", "rqworker", "tournaments", "--with-scheduler"],
                               cwd=ROOT, env=server_env, stdout=log, stderr=subprocess.STDOUT)
    yield process
    process.terminate()
    process.wait(timeout=30)
    log.close()


def join(page: Page, url: str) -> None:
    page.goto(url)
    page.click("#join")
    expect(page.locator("#withdraw")).to_be_visible()


def test_an_arena_pairs_two_players_who_berserk_play_and_move_the_standings(server, server_env, new_context,
                                                                           worker):
    page_url = f"{server.url}/tournaments/{shell(server_env, CREATE_ARENA)}"
    alice, bob, carol = (new_context().new_page() for _ in range(3))
    carol.goto(server.url + "/tournaments")
    expect(carol.locator("#running, #upcoming").get_by_text("Browser Arena")).to_be_visible()
    assert_clean(carol, "the tournaments list")
    for page in (alice, bob):
        join(page, page_url)
    assert_clean(alice, "an arena's page, joined")
    for page in (alice, bob):      # the worker's tick starts the arena and pairs them: both go to the game
        page.wait_for_url(re.compile(r"/g/\w+/$"), timeout=30_000)
        expect(page.locator("body[data-status=active]")).to_be_attached()
    black, white = (alice, bob) if alice.locator("body[data-you=B]").count() else (bob, alice)
    assert_clean(black, "an arena game's page")
    black.click("#game-berserk")
    expect(black.locator("#game-berserk")).to_have_count(0)
    expect(white.locator("#status")).to_contain_text("went berserk")
    carol.goto(page_url)
    expect(carol.locator("#top-games li")).to_have_count(1)
    black.click("#sq-11")
    black.click("#sq-15")
    expect(white.locator("body[data-ply='1']")).to_be_attached()
    expect(white.locator("#game-berserk")).to_be_visible()
    white.click("#sq-23")
    white.click("#sq-19")
    expect(black.locator("body[data-ply='2']")).to_be_attached()
    expect(white.locator("#game-berserk")).to_have_count(0)   # gone with the seat's first move, live
    black.click("#sq-8")
    black.click("#sq-11")
    expect(white.locator("body[data-ply='3']")).to_be_attached()
    white.click("#sq-22")
    white.click("#sq-17")
    expect(black.locator("body[data-ply='4']")).to_be_attached()
    resign(black)   # after two moves each: played for, so the winner scores
    expect(black.locator("body[data-status=finished]")).to_be_attached()
    # the spectator's standings move over the socket, without a reload: the winner has 2 points
    expect(carol.locator("#standings-body tr").first.locator("td").nth(1)).to_have_text("2")
    shell(server_env, FINISH_ARENA.format(id=page_url.rsplit("/", 1)[-1]))
    expect(carol.locator("#tournament[data-status=finished]")).to_be_attached(timeout=30_000)
    expect(carol.locator("#podium li")).to_have_count(2)
    assert_clean(carol, "a finished arena's page")


def test_the_new_arena_page_has_no_axe_violations(server, new_context):
    page = new_context().new_page()
    page.goto(server.url + "/tournaments/new")
    expect(page.locator("#sign-in-to-create")).to_be_visible()
    assert_clean(page, "the new arena page")


SWISS_ROUND_ONE = """
import uuid
from django.utils import timezone
from game.tournaments import arena, jobs
from game.tournaments.models import Tournament
from tests.ratings.helpers import account
tag = uuid.uuid4().hex[:6]
t = arena.create(account("swisshost" + tag), "Browser Swiss", "3+0", 0, timezone.now(), rated=False,
                 system=Tournament.System.SWISS, rounds=4)
for i in range(3):
    arena.join(t.id, account(f"swiss{i}{tag}"), f"swissplayer{i}")
jobs.tick(t.id)
print(t.id)
"""


@pytest.mark.parametrize("viewport", [{"width": 390, "height": 844}, {"width": 844, "height": 390}])
def test_a_swiss_rounds_pairing_board_has_no_axe_violations(server, server_env, new_context, viewport, tmp_path):
    tournament_id = shell(server_env, SWISS_ROUND_ONE)
    page = new_context().new_page()
    page.set_viewport_size(viewport)
    page.goto(f"{server.url}/tournaments/{tournament_id}")
    expect(page.locator("#round-text")).to_have_text(re.compile("Round 1 of 4"))
    expect(page.locator("#board-body tr")).to_have_count(2)
    expect(page.locator("#board-body tr").nth(1)).to_contain_text("Bye")
    page.screenshot(path=str(tmp_path / f"swiss-{viewport['width']}.png"), full_page=True)
    assert_clean(page, "a Swiss round's page")


CREATE_LATER = """
from datetime import timedelta
from django.utils import timezone
from game.tournaments import arena
from tests.ratings.helpers import account
later = timezone.now() + timedelta(minutes=30)
print(arena.create(account("chathost"), "Chat Arena", "3+0", 30, later, rated=False).id)
"""


def test_an_entrant_writes_in_the_arena_chat_and_a_spectator_reads_it(server, server_env, new_context):
    page_url = f"{server.url}/tournaments/{shell(server_env, CREATE_LATER)}"
    alice, carol = (new_context().new_page() for _ in range(2))
    join(alice, page_url)
    carol.goto(page_url)
    for page in (alice, carol):
        expect(page.locator("body[data-tournament-socket=open]")).to_be_attached()
    expect(carol.locator("#tournament-chat-readonly")).to_be_visible()
    expect(carol.locator("#tournament-chat-form")).to_have_count(0)
    alice.fill("#tournament-chat-text", "Good luck, everyone!")
    alice.click("#tournament-chat-send")
    for page in (alice, carol):
        expect(page.locator("#tournament-chat-lines li")).to_have_text(re.compile(r"Good luck, everyone!$"))
    alice.fill("#tournament-chat-text", "x" * 10 + "\u202e")
    alice.click("#tournament-chat-send")
    expect(alice.locator("#tournament-chat-error")).to_contain_text("control characters")
    expect(carol.locator("#tournament-chat-lines li")).to_have_count(1)
    assert_clean(alice, "an arena's chat, an entrant's")
    assert_clean(carol, "an arena's chat, a spectator's")


INVITED_SWISS = """
import uuid
from django.contrib.auth.models import User
from django.utils import timezone
from game.models import Account
from game.tournaments import arena, jobs
from game.tournaments.models import Tournament
from tests.ratings.helpers import account
user = User.objects.create_user(username={creator!r}, password={password!r})
creator = Account.objects.create(user=user, player_id=uuid.uuid4().hex).player_id
t = arena.create(creator, "Friends Swiss", "3+0", 0, timezone.now(), rated=False, password="sesame",
                 system=Tournament.System.SWISS, rounds=4)
tag = uuid.uuid4().hex[:6]
for i in range(3):
    arena.join(t.id, account(f"friend{{i}}{{tag}}"), f"friend{{i}}", password="sesame")
jobs.tick(t.id)
print(t.id)
"""


#: A phone held upright: the invite panel's long link and buttons wrap there (landscape and the
#: desktop width were looked at when it was made; the Swiss board's test checks both orientations).
PHONE = {"width": 390, "height": 844}


def test_the_creators_invite_link_lets_a_guest_enter_a_passworded_swiss_late(server, server_env, new_context):
    tournament_id = shell(server_env, INVITED_SWISS.format(creator="swissinviter", password=PASSWORD))
    creator = new_context().new_page()
    creator.set_viewport_size(PHONE)
    log_in(server, creator, "swissinviter")
    creator.goto(f"{server.url}/tournaments/{tournament_id}")
    link = creator.locator("#tournament-invite-url").input_value()
    assert re.fullmatch(rf"{re.escape(server.url)}/tournaments/{tournament_id}/invite/[\w-]{{22}}", link)
    assert_clean(creator, "a Swiss's page, its creator's, with the invite link")
    guest = new_context().new_page()
    guest.set_viewport_size(PHONE)
    guest.goto(link)
    expect(guest.locator("#late-entry")).to_contain_text("you play from round 2")
    expect(guest.locator("#arena-password")).to_have_count(0)
    assert_clean(guest, "a Swiss's page opened from its invite link, a late entry")
    guest.click("#join")
    expect(guest.locator("#withdraw")).to_be_visible()
    creator.click("#new-invite")
    expect(creator.locator("#tournament-invite-url")).not_to_have_value(link)
    other = new_context().new_page()
    other.goto(link)
    expect(other.locator("#arena-password")).to_be_visible()
    expect(other.locator("main")).to_contain_text("This invite link is not valid (any more)")
