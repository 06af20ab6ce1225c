"""Notifications (the bell) and the live "My games" badge over the people socket: real sockets,
channel layer, Redis and database.

A notification reaches every open page of its player and nobody else's; the opponent's move in a
correspondence game changes the badge and brings a notification at once, through the game's own
events; reading them marks them read on every page; a player keeps a bounded number; bad frames
are answered with a code.
"""

from __future__ import annotations

from datetime import timedelta

import django_rq
import pytest
from channels.db import database_sync_to_async
from channels.testing import WebsocketCommunicator
from django.utils import timezone

from checkers_site.asgi import application
from game.people import notices
from game.people.models import Notification
from game.round import actions
from game.tournaments import arena, jobs
from game.tournaments.models import Tournament
from tests.tournaments.helpers import clear_tournament_jobs
from tests.web.test_challenges import accounts, people
from tests.web.test_challenges import hear as answer

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.asyncio]


async def test_a_notification_reaches_every_page_of_its_player_and_no_one_else():
    ann, ben, cat = await accounts("ann", "ben", "cat")
    a, _ = await people(ann)
    b1, _ = await people(ben)
    b2, _ = await people(ben)
    c, _ = await people(cat)
    assert b1.opened_with["notifications"] == {"type": "notifications", "unread": 0, "items": []}
    await a.send_json_to({"type": "challenge", "to": "ben", "control": "5+0", "color": "B"})
    assert (await answer(a))["type"] == "challenge_sent"
    for page in (b1, b2):
        assert (await answer(page))["type"] == "challenge"
        news = await answer(page)
        assert news["type"] == "notification" and news["unread"] == 1, news
        item = news["item"]
        assert (item["kind"], item["text"], item["url"], item["read"]) == ("challenge", "ann challenges you.",
                                                                           "/games/mine", False)
    await a.send_json_to({"type": "ping"})
    assert (await answer(a))["type"] == "pong"  # ann's page was sent nothing before its pong
    await c.send_json_to({"type": "ping"})
    assert (await answer(c))["type"] == "pong"  # nor cat's
    for page in (a, b1, b2, c):
        await page.disconnect()


async def test_reading_marks_them_read_on_every_page_and_a_decline_tells_the_challenger_why():
    ann, ben = await accounts("ann", "ben")
    a, _ = await people(ann)
    b1, _ = await people(ben)
    b2, _ = await people(ben)
    await a.send_json_to({"type": "challenge", "to": "ben", "control": "5+0", "color": "B"})
    sent = await answer(a)
    for page in (b1, b2):
        assert [(await answer(page))["type"] for _ in range(2)] == ["challenge", "notification"]
    await b1.send_json_to({"type": "read_notifications"})
    for page in (b1, b2):
        assert await answer(page) == {"type": "unread", "count": 0}
    b3, _ = await people(ben)
    listed = b3.opened_with["notifications"]
    assert listed["unread"] == 0 and [(i["kind"], i["read"]) for i in listed["items"]] == [("challenge", True)]
    await b3.send_json_to({"type": "decline", "id": sent["id"], "reason": "too_slow"})
    assert (await answer(a))["type"] == "challenge_gone"
    told = await answer(a)
    assert (told["type"], told["unread"], told["item"]["kind"]) == ("notification", 1, "challenge_declined")
    assert told["item"]["text"] == "ben declined your challenge: Too slow" and told["item"]["url"] == "/@/ben"
    for page in (a, b1, b2, b3):
        await page.disconnect()


async def test_the_text_comes_in_the_language_of_the_page():
    _ann, ben = await accounts("ann", "ben")
    await database_sync_to_async(notices.add)(ben.player_id, "challenge_declined", "ann", "/@/ann",
                                              detail="too_fast")
    french = WebsocketCommunicator(application, "/ws/people/",
                                   headers=[*ben.headers(), (b"accept-language", b"fr")])
    assert (await french.connect(timeout=5))[0]
    messages = [await answer(french) for _ in range(4)]
    [item] = messages[-1]["items"]
    assert item["text"].startswith("ann a refusé") and "Trop rapide" in item["text"], item
    await french.disconnect()


async def test_the_badge_and_the_bell_follow_the_opponents_move_in_a_correspondence_game():
    ann, ben = await accounts("ann", "ben")
    game = await database_sync_to_async(actions.start_game)(black=(ann.player_id, "ann"),
                                                            white=(ben.player_id, "ben"), time_control="1d")
    a, _ = await people(ann)
    b1, _ = await people(ben)
    b2, _ = await people(ben)
    assert (a.opened_with["turns"]["count"], b1.opened_with["turns"]["count"]) == (1, 0)
    board, snapshot = await ann.connect(game.id)
    await board.send_json_to({"type": "move", "move": "11-15", "v": snapshot["v"]})
    assert await answer(a) == {"type": "turns", "count": 0}
    for page in (b1, b2):
        assert await answer(page) == {"type": "turns", "count": 1}
        news = await answer(page)
        assert (news["type"], news["unread"], news["item"]["kind"]) == ("notification", 1, "turn")
        assert news["item"]["url"] == f"/g/{game.id}/" and "ann" in news["item"]["text"]
    # ben answers: ann's turn again, and ben's notification about this game is read (it no longer holds)
    ben_board, ben_snapshot = await ben.connect(game.id)
    await ben_board.send_json_to({"type": "move", "move": "22-18", "v": ben_snapshot["v"]})
    assert await answer(a) == {"type": "turns", "count": 1}
    assert (await answer(a))["item"]["kind"] == "turn"
    for page in (b1, b2):
        assert await answer(page) == {"type": "turns", "count": 0}
        assert await answer(page) == {"type": "unread", "count": 0}
    # ann moves again: ben still has one unread line about this game, renewed
    await board.send_json_to({"type": "move", "move": "15x22", "v": ben_snapshot["v"] + 1})
    await answer(a)
    assert [(await answer(b1))["type"] for _ in range(2)] == ["turns", "notification"]
    stored = await database_sync_to_async(lambda: list(Notification.objects.filter(player=ben.player_id)
                                                       .values_list("kind", "read")))()
    assert sorted(stored) == [("turn", False), ("turn", True)]
    await board.send_json_to({"type": "resign"})
    assert await answer(b1) == {"type": "turns", "count": 0}
    for page in (a, b1, b2, board, ben_board):
        await page.disconnect()


async def test_a_live_games_end_counts_again_and_a_rematch_proposed_while_away_is_a_notification():
    ann, ben = await accounts("ann", "ben")
    game = await database_sync_to_async(actions.start_game)(black=(ann.player_id, "ann"),
                                                            white=(ben.player_id, "ben"), time_control="5+3")
    b, _ = await people(ben)
    board, snapshot = await ann.connect(game.id)
    await board.send_json_to({"type": "move", "move": "11-15", "v": snapshot["v"]})  # a live move: not followed
    await board.send_json_to({"type": "resign"})
    assert await answer(b) == {"type": "turns", "count": 0}  # the game's end counts again
    await board.send_json_to({"type": "rematch_offer"})
    news = await answer(b)
    assert (news["type"], news["item"]["kind"], news["item"]["url"]) == ("notification", "rematch", f"/g/{game.id}/")
    for page in (b, board):
        await page.disconnect()


async def test_a_player_keeps_a_bounded_number_and_the_bell_lists_the_newest():
    [ann] = await accounts("ann")

    def flood() -> None:
        for n in range(notices.KEPT + 5):
            notices.add(ann.player_id, "challenge", f"p{n}", "/games/mine")

    await database_sync_to_async(flood)()
    assert await database_sync_to_async(Notification.objects.filter(player=ann.player_id).count)() == notices.KEPT
    a, _ = await people(ann)
    listed = a.opened_with["notifications"]
    assert listed["unread"] == notices.KEPT and len(listed["items"]) == notices.LISTED
    assert listed["items"][0]["text"] == f"p{notices.KEPT + 4} challenges you."
    await a.disconnect()


async def test_bad_frames_are_answered_with_a_code_and_change_nothing():
    ann, _ben = await accounts("ann", "ben")
    await database_sync_to_async(notices.add)(ann.player_id, "challenge", "ben", "/games/mine")
    a, _ = await people(ann)
    for frame, code in (("{", "bad_message"), ("[1]", "bad_message"), ('{"type": "read_everything"}', "unknown_type")):
        await a.send_to(text_data=frame)
        refused = await answer(a)
        assert (refused["type"], refused["code"]) == ("error", code), frame
    await a.send_to(bytes_data=b"\x00")
    assert (await answer(a))["code"] == "bad_message"
    assert await database_sync_to_async(notices.unread)(ann.player_id) == 1
    with pytest.raises(ValueError):
        await database_sync_to_async(notices.add)(ann.player_id, "bogus", "ben", "/")
    await a.disconnect()


@pytest.fixture
def no_tournament_jobs():
    clear_tournament_jobs()
    yield
    clear_tournament_jobs()


@pytest.mark.usefixtures("no_tournament_jobs")
async def test_the_players_of_a_tournament_are_told_when_it_starts():
    ann, ben = await accounts("ann", "ben")

    def arena_about_to_start() -> str:
        tournament = arena.create(ann.player_id, "Evening arena", "3+0", 30, timezone.now(), rated=False)
        for browser in (ann, ben):
            arena.join(tournament.id, browser.player_id, browser.name)
        return tournament.id

    tournament_id = await database_sync_to_async(arena_about_to_start)()
    a, _ = await people(ann)
    await database_sync_to_async(jobs.tick)(tournament_id)  # its first tick starts it
    news = await answer(a)
    assert (news["type"], news["item"]["kind"], news["item"]["url"]) == ("notification", "tournament",
                                                                         f"/tournaments/{tournament_id}")
    assert news["item"]["text"] == "Evening arena has started: your first game is coming."
    await a.disconnect()


@pytest.mark.usefixtures("no_tournament_jobs")
async def test_the_players_of_a_tournament_are_told_once_a_few_minutes_before_it_starts():
    ann, ben, cat, dan = await accounts("ann", "ben", "cat", "dan")
    starts_at = timezone.now() + timedelta(minutes=30)

    def swiss_to_come() -> str:
        tournament = arena.create(ann.player_id, "Sunday Swiss", "3+2", 0, starts_at, rated=False,
                                  system=Tournament.System.SWISS, rounds=3)
        for browser in (ann, ben, dan):
            arena.join(tournament.id, browser.player_id, browser.name)
        arena.withdraw(tournament.id, dan.player_id)
        jobs.schedule_tick(tournament)
        close = arena.create(cat.player_id, "Too close", "3+0", 30, timezone.now() + timedelta(minutes=2))
        jobs.schedule_tick(close)   # made less than five minutes ahead: no notice to come
        return tournament.id

    tournament_id = await database_sync_to_async(swiss_to_come)()
    queue = django_rq.get_queue(jobs.QUEUE)
    job_id = jobs.soon_job_id(tournament_id, starts_at)
    scheduled = queue.scheduled_job_registry
    assert [j for j in scheduled.get_job_ids() if j.startswith("tournament-soon-")] == [job_id]
    due = scheduled.get_scheduled_time(job_id)
    assert abs((due - (starts_at - timedelta(minutes=jobs.SOON_MINUTES))).total_seconds()) < 1
    pages = {browser.name: (await people(browser))[0] for browser in (ann, ben, dan)}
    job = queue.fetch_job(job_id)
    assert job is not None and job.func_name == "game.tournaments.jobs.starting_soon"
    for _run in range(2):   # run again (a retried job): nobody is told twice
        await database_sync_to_async(job.perform)()
    for name in ("ann", "ben"):
        news = await answer(pages[name])
        assert (news["type"], news["unread"], news["item"]["kind"], news["item"]["url"]) == (
            "notification", 1, "tournament_soon", f"/tournaments/{tournament_id}")
        assert news["item"]["text"] == "Sunday Swiss starts in 5 minutes."
    stored = await database_sync_to_async(lambda: sorted(
        Notification.objects.filter(kind="tournament_soon").values_list("player", flat=True)))()
    assert stored == sorted([ann.player_id, ben.player_id])   # not dan (withdrawn) nor cat (not entered)
    item = notices.raw(await database_sync_to_async(Notification.objects.filter(kind="tournament_soon").first)())
    assert notices.public(item, "fr", {})["text"] == "Sunday Swiss commence dans 5 minutes."
    assert notices.public(item, "es", {})["text"] == "Sunday Swiss empieza dentro de 5 minutos."
    for page in pages.values():
        await page.disconnect()
