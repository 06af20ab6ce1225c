"""The game's chat through the game socket (real Redis, real database): the players' room and the
spectators' room each reach exactly their readers, live and in snapshots; every refusal goes to
its sender only and stores nothing; a line never changes the game's version."""

from __future__ import annotations

import uuid

import pytest
from channels.db import database_sync_to_async
from django.contrib.sessions.backends.signed_cookies import SessionStore
from django.test import override_settings

from game.computer import player as computer_player
from game.computer import seat as computer
from game.models import ChatLine, Game
from game.round import actions, chat, fanout
from tests.web.conftest import Browser, make_browser, mark, recv, sent_since

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.asyncio]

HOSTILE = '<img src=x onerror="alert(1)"><script>alert(2)</script> & "quotes"'


def stored(game_id: str) -> tuple:
    """Everything stored about a game and its chat, to compare before and after a refusal."""
    game = Game.objects.get(pk=game_id)
    lines = list(ChatLine.objects.filter(game_id=game_id).order_by("id")
                 .values_list("id", "room", "seat", "name", "text"))
    return (game.fen, game.ply, game.version, game.position_version, game.status, game.result,
            game.updated_at, lines)


async def start_game(alice, bob) -> str:
    game = await database_sync_to_async(actions.create_game)(alice.player_id, "alice", "B")
    await database_sync_to_async(actions.join_game)(game.id, bob.player_id, "bob")
    return game.id


async def say(comm, room: str, text: str) -> None:
    await comm.send_json_to({"type": "chat", "room": room, "text": text})


async def line_of(comm) -> dict:
    """The next message on ``comm``, which must be a chat line; its ``line``."""
    message = await recv(comm)
    assert message["type"] == "chat", message
    assert set(message) == {"type", "line"}
    return message["line"]


async def refused(sender, others, frame, code: str, game_id: str) -> dict:
    """Send ``frame``: the sender alone gets ``error`` ``code``; nothing is stored, nobody else hears
    (nothing was published for them by the time the sender's refusal came)."""
    before = await database_sync_to_async(stored)(game_id)
    since = mark()
    await sender.send_json_to(frame)
    error = await recv(sender)
    assert error["type"] == "error" and error["code"] == code, error
    assert error["message"]
    for other in others:
        assert sent_since(since, other) == []
    assert await database_sync_to_async(stored)(game_id) == before
    return error


async def test_players_lines_reach_both_seats_and_no_spectator(alice, bob, carol):
    game_id = await start_game(alice, bob)
    a, snap_a = await alice.connect(game_id)
    b, _ = await bob.connect(game_id)
    c, snap_c = await carol.connect(game_id)
    assert snap_a["chat"] == {"players": []} and snap_c["chat"] == {"spectators": []}
    since = mark()
    await say(a, "players", "  Good luck!  ")
    first = await line_of(a)
    assert await line_of(b) == first
    assert first == {"id": first["id"], "room": "players", "seat": "B", "name": "alice", "text": "Good luck!"}
    await say(b, "players", HOSTILE)
    second = await line_of(b)
    assert await line_of(a) == second
    assert second["text"] == HOSTILE and second["seat"] == "W" and second["name"] == "bob"
    assert second["id"] > first["id"]
    assert sent_since(since, c) == []
    # Nor in a snapshot: the spectator's has no players' room, the players' have both lines.
    await c.send_json_to({"type": "sync"})
    assert (await recv(c))["chat"] == {"spectators": []}
    await a.send_json_to({"type": "sync"})
    assert (await recv(a))["chat"] == {"players": [first, second]}
    rows = await database_sync_to_async(lambda: list(
        ChatLine.objects.filter(game_id=game_id).values_list("room", "seat", "name", "text")))()
    assert rows == [("players", "B", "alice", "Good luck!"), ("players", "W", "bob", HOSTILE)]
    for comm in (a, b, c):
        await comm.disconnect()


async def test_spectators_room_is_theirs_while_the_game_goes_on(alice, bob, carol):
    dave = make_browser("dave")
    game_id = await start_game(alice, bob)
    a, _ = await alice.connect(game_id)
    b, _ = await bob.connect(game_id)
    c, _ = await carol.connect(game_id)
    d, _ = await dave.connect(game_id)
    since = mark()
    await say(c, "spectators", "What a game")
    line = await line_of(c)
    assert await line_of(d) == line
    assert line == {"id": line["id"], "room": "spectators", "seat": None, "name": "carol", "text": "What a game"}
    assert sent_since(since, a) == sent_since(since, b) == []
    # A player may not write there yet, nor a spectator in the players' room.
    await refused(a, [b, c, d], {"type": "chat", "room": "spectators", "text": "hi"}, "chat_not_allowed", game_id)
    await refused(c, [a, b, d], {"type": "chat", "room": "players", "text": "hi"}, "chat_not_allowed", game_id)
    for comm in (a, b, c, d):
        await comm.disconnect()


async def test_players_read_and_write_the_spectators_room_once_the_game_is_over(alice, bob, carol):
    game_id = await start_game(alice, bob)
    a, _ = await alice.connect(game_id)
    b, _ = await bob.connect(game_id)
    c, _ = await carol.connect(game_id)
    await say(c, "spectators", "during the game")
    during = await line_of(c)
    await say(a, "players", "between us")
    between = await line_of(a)
    assert await line_of(b) == between
    await a.send_json_to({"type": "resign"})
    for comm in (a, b, c):
        assert (await recv(comm))["what"] == "resigned"
    # The players' pages ask for a snapshot once they see the end: now it has both rooms.
    await a.send_json_to({"type": "sync"})
    assert (await recv(a))["chat"] == {"players": [between], "spectators": [during]}
    await say(c, "spectators", "gg both")
    after = await line_of(c)
    assert await line_of(a) == after and await line_of(b) == after
    await say(b, "spectators", "thanks for watching")
    reply = await line_of(b)
    assert reply["seat"] == "W" and reply["name"] == "bob" and reply["room"] == "spectators"
    assert await line_of(a) == reply and await line_of(c) == reply
    since = mark()
    await say(a, "players", "good game")
    farewell = await line_of(a)
    assert await line_of(b) == farewell
    assert sent_since(since, c) == []  # the players' room stays theirs after the game too
    await c.send_json_to({"type": "sync"})
    assert (await recv(c))["chat"] == {"spectators": [during, after, reply]}
    for comm in (a, b, c):
        await comm.disconnect()


async def test_a_late_joiner_gets_the_last_lines_of_each_room_it_reads(alice, bob, carol):
    game_id = await start_game(alice, bob)

    def write_history() -> None:
        for n in range(60):
            ChatLine.objects.create(game_id=game_id, room="players", seat="BW"[n % 2],
                                    name=("alice", "bob")[n % 2], text=f"players {n}")
            ChatLine.objects.create(game_id=game_id, room="spectators", name="eve", text=f"spectators {n}")

    await database_sync_to_async(write_history)()
    c, snap = await carol.connect(game_id)
    assert list(snap["chat"]) == ["spectators"]
    assert [line["text"] for line in snap["chat"]["spectators"]] == [f"spectators {n}" for n in range(10, 60)]
    a, snap = await alice.connect(game_id)
    assert list(snap["chat"]) == ["players"]
    assert [line["text"] for line in snap["chat"]["players"]] == [f"players {n}" for n in range(10, 60)]
    assert [line["seat"] for line in snap["chat"]["players"][:2]] == ["B", "W"]
    for comm in (a, c):
        await comm.disconnect()


async def test_a_line_changes_no_version_and_a_move_made_before_it_is_played(alice, bob, carol):
    game_id = await start_game(alice, bob)
    a, snap = await alice.connect(game_id)
    b, _ = await bob.connect(game_id)
    c, _ = await carol.connect(game_id)
    v = snap["v"]
    await say(b, "players", "your move")
    await line_of(b)
    await line_of(a)
    await say(c, "spectators", "come on")
    await line_of(c)
    await b.send_json_to({"type": "sync", "v": v})
    assert await recv(b) == {"type": "synced", "v": v}
    await a.send_json_to({"type": "move", "move": "11-15", "v": v})  # the version from before the lines
    for comm in (a, b, c):
        event = await recv(comm)
        assert event["type"] == "move" and event["v"] == v + 1
    for comm in (a, b, c):
        await comm.disconnect()


async def test_every_refusal_goes_to_its_sender_only_and_stores_nothing(alice, bob, carol):
    game_id = await start_game(alice, bob)
    a, _ = await alice.connect(game_id)
    b, _ = await bob.connect(game_id)
    c, _ = await carol.connect(game_id)
    cases = [
        ({"type": "chat", "room": "players", "text": "x" * 141}, "chat_too_long"),
        ({"type": "chat", "room": "players", "text": "   \u3000 "}, "chat_empty"),
        ({"type": "chat", "room": "players", "text": ""}, "chat_empty"),
        ({"type": "chat", "room": "players", "text": "two\nlines"}, "chat_invalid"),
        ({"type": "chat", "room": "players", "text": "nul\x00"}, "chat_invalid"),
        ({"type": "chat", "room": "players", "text": "tab\there"}, "chat_invalid"),
        ({"type": "chat", "room": "players", "text": "bell\x07"}, "chat_invalid"),
        ({"type": "chat", "room": "players", "text": "c1\x85c1"}, "chat_invalid"),
        ({"type": "chat", "room": "players", "text": "abc\u202edcba"}, "chat_invalid"),
        ({"type": "chat", "room": "players", "text": "lone \ud800"}, "chat_invalid"),
        ({"type": "chat", "room": "lobby", "text": "hi"}, "bad_message"),
        ({"type": "chat", "text": "hi"}, "bad_message"),
        ({"type": "chat", "room": "players", "text": 7}, "bad_message"),
        ({"type": "chat", "room": "players"}, "bad_message"),
    ]
    for frame, code in cases:
        await refused(a, [b, c], frame, code, game_id)
    # 140 characters after trimming are fine (emoji count as one character each).
    await say(a, "players", "  " + "\U0001f600" * 140 + "  ")
    assert (await line_of(a))["text"] == "\U0001f600" * 140
    await line_of(b)
    # Three lines in five seconds per socket; the fourth is refused.
    for n in range(2):
        await say(a, "players", f"line {n}")
        await line_of(a)
        await line_of(b)
    error = await refused(a, [b, c], {"type": "chat", "room": "players", "text": "fourth"}, "chat_too_fast", game_id)
    assert "3" in error["message"] and "5" in error["message"]
    # The spectator's own rate is its own.
    await say(c, "spectators", "still fine")
    await line_of(c)
    for comm in (a, b, c):
        await comm.disconnect()


async def test_the_rate_is_per_seat_across_the_players_tabs(alice, bob):
    game_id = await start_game(alice, bob)
    tab1, _ = await alice.connect(game_id)
    tab2, _ = await alice.connect(game_id)
    b, _ = await bob.connect(game_id)
    for comm, text in ((tab1, "one"), (tab1, "two"), (tab2, "three")):
        await say(comm, "players", text)
        for reader in (tab1, tab2, b):
            assert (await line_of(reader))["text"] == text
    # tab2 has sent one line only, but the seat has sent three.
    await refused(tab2, [tab1, b], {"type": "chat", "room": "players", "text": "four"}, "chat_too_fast", game_id)
    await say(b, "players", "bob is not alice")
    assert (await line_of(b))["text"] == "bob is not alice"
    for comm in (tab1, tab2, b):
        await comm.disconnect()


async def test_a_spectator_without_a_name_writes_as_a_guest(alice, bob):
    game_id = await start_game(alice, bob)
    store = SessionStore()
    store["player_id"] = "f" * 32
    store.save()
    guest = Browser(name="", player_id="f" * 32, cookie=store.session_key)
    g, _ = await guest.connect(game_id)
    await say(g, "spectators", "hello")
    line = await line_of(g)
    assert line["name"].startswith("Guest ") and line["name"][6:].isdigit()
    assert line["seat"] is None
    await g.disconnect()


async def computer_game(person) -> str:
    black, white = computer.seats(person.player_id, person.name, "B", 1)
    game = await database_sync_to_async(actions.start_game)(black=black, white=white)
    return game.id


async def test_no_chat_with_the_computer_and_it_says_good_game_once(alice, carol):
    game_id = await computer_game(alice)
    a, snap = await alice.connect(game_id)
    c, _ = await carol.connect(game_id)
    assert snap["chat"] == {"players": []}
    await refused(a, [c], {"type": "chat", "room": "players", "text": "hello computer"}, "chat_computer", game_id)
    await say(c, "spectators", "watching the machine")
    await line_of(c)
    since = mark()
    await a.send_json_to({"type": "resign"})
    assert (await recv(a))["what"] == "resigned"
    assert (await recv(c))["what"] == "resigned"
    farewell = await line_of(a)
    assert farewell == {"id": farewell["id"], "room": "players", "seat": "W", "name": "Computer (level 1)",
                        "text": chat.FAREWELL}
    assert [m.get("what") for m in sent_since(since, c)] == ["resigned"]   # not the farewell
    since = mark()
    # More wakes (after every message of every socket) say nothing more, nor does a second farewell.
    await computer_player.wake(game_id)
    again = await database_sync_to_async(chat.farewell)(game_id, computer.player_id(1))
    assert again.events == []
    await a.send_json_to({"type": "ping"})
    assert (await recv(a))["type"] == "pong"
    working = fanout.hub().round(game_id).computer    # woken after the ping too
    if working is not None:
        await working
    assert sent_since(since, a) == []
    lines = await database_sync_to_async(lambda: list(
        ChatLine.objects.filter(game_id=game_id, room="players").values_list("seat", "text")))()
    assert lines == [("W", "Good game")]
    # Still no line to the computer after the game.
    await refused(a, [c], {"type": "chat", "room": "players", "text": "thanks"}, "chat_computer", game_id)
    for comm in (a, c):
        await comm.disconnect()


async def test_an_aborted_game_gets_no_farewell(alice):
    game_id = await computer_game(alice)
    a, _ = await alice.connect(game_id)
    since = mark()
    await a.send_json_to({"type": "abort"})
    assert (await recv(a))["what"] == "aborted"
    await computer_player.wake(game_id)    # the computer's work, the abort's wake's too, is done
    assert [m.get("what") for m in sent_since(since, a)] == ["aborted"]
    assert not await database_sync_to_async(ChatLine.objects.filter(game_id=game_id).exists)()
    await a.disconnect()


async def test_a_snapshot_the_server_keeps_never_hides_a_newer_line(alice, bob, carol):
    """Each server process keeps snapshots by version (game.round.snapshots); a line changes no
    version, so the kept ones must go with it."""
    game_id = await start_game(alice, bob)
    c, first = await carol.connect(game_id)
    d, again = await make_browser("dave").connect(game_id)  # most likely served from the kept one
    assert first["chat"] == again["chat"] == {"spectators": []}
    await say(c, "spectators", "new line")
    line = await line_of(c)
    await line_of(d)
    e, late = await make_browser("erin").connect(game_id)
    assert late["chat"] == {"spectators": [line]}
    await d.send_json_to({"type": "sync"})
    assert (await recv(d))["chat"] == {"spectators": [line]}
    for comm in (c, d, e):
        await comm.disconnect()


async def test_the_writers_rate_lets_lines_through_when_redis_cannot_count():
    """Honest players are never refused for a failure of ours: with no Redis, only the socket's own
    rate holds (a port nothing listens on refuses the connection at once)."""
    with override_settings(REDIS_URL="redis://127.0.0.1:1/0"):
        assert all(chat.writer_allows("nosuchgame1", "a" * 32) for _ in range(chat.RATE_LINES + 2))
    # With Redis the fourth line in the window is refused.
    writer = uuid.uuid4().hex  # a key of its own, whatever ran before
    assert [chat.writer_allows("nosuchgame2", writer) for _ in range(4)] == [True, True, True, False]


async def test_a_tab_watching_before_its_browser_joins_becomes_the_seats_socket(alice, bob):
    """Bob's tab watches the waiting game, then Bob joins (as from another tab): that watching
    socket becomes White's at once — a snapshot for the seat, the players' room and the legal
    moves — and no longer gets the spectators' room while the game is on."""
    game = await database_sync_to_async(actions.create_game)(alice.player_id, "alice", "B")
    a, _ = await alice.connect(game.id)
    watching, snap = await bob.connect(game.id)
    assert snap["you"] is None and "players" not in snap["chat"]
    progress = await database_sync_to_async(actions.join_game)(game.id, bob.player_id, "bob")
    await fanout.publish(game.id, progress.events)  # as the join view does
    seats = await recv(watching)
    assert seats["type"] == "seats"
    again = await recv(watching)
    assert again["type"] == "snapshot" and again["you"] == "W" and "players" in again["chat"]
    while (await recv(a))["type"] != "seats":
        pass
    await a.send_json_to({"type": "move", "move": "11-15", "v": again["v"]})
    moved = await recv(watching)
    assert moved["type"] == "move" and moved["state"]["legal"]
    await say(a, "players", "hello bob")
    while (message := await recv(watching))["type"] != "chat":
        pass
    assert message["line"]["room"] == "players" and message["line"]["text"] == "hello bob"
