"""The whole-archive PDN file (game/profiles/pdn_file.py, downloads.py) on the real database and
Redis: each game written exactly as its own ``/g/<id>.pdn`` (without replaying it), a batch in
three queries whatever its size, the limits per session, per address and without a session, the
process's slots, and a file that cannot be finished in time cut, never ended as if whole."""

from __future__ import annotations

import io
import random
import sys
import uuid

import pytest
from asgiref.sync import sync_to_async
from django.db import connection, connections
from django.test import AsyncClient, Client, override_settings
from django.test.utils import CaptureQueriesContext

from game import rules
from game.models import Game, Move
from game.profiles import downloads, pdn_file
from game.round import reads
from game.rules import ballots, pdn
from tests.web.test_profiles import account, game

pytestmark = pytest.mark.django_db(transaction=True)

SITE = "testserver"


def played(start_fen: str | None, plies: int, seed: int) -> rules.Game:
    """A legal game of up to ``plies`` random plies from ``start_fen`` (the start when None)."""
    rng = random.Random(seed)
    record = rules.Game(rules.Position.from_fen(start_fen) if start_fen else None)
    while record.ply < plies and record.outcome is None and record.legal_moves():
        record.play(rng.choice(record.legal_moves()))
    return record


def stored(black: str, white: str, record: rules.Game, **fields) -> Game:
    """``record`` stored as a game (``fields`` as in :func:`tests.web.test_profiles.game`)."""
    row = game(black, white, **fields)
    Game.objects.filter(pk=row.pk).update(start_fen=record.start.fen(), fen=record.position.fen(),
                                          ply=record.ply)
    Move.objects.filter(game=row).delete()
    Move.objects.bulk_create([Move(game=row, ply=ply, notation=str(move), fen_after=position.fen())
                              for ply, (move, position) in enumerate(zip(record.moves, record.positions[1:],
                                                                         strict=True), start=1)])
    return row


def varied_games(player: str, other: str) -> list[Game]:
    """Every kind of game a file holds: both seats, timed, correspondence and untimed, rated with
    ratings and their changes, a 3-move ballot, a start position with White to move, in play."""
    made = []
    for index in range(12):
        black, white = (player, other) if index % 2 == 0 else (other, player)
        fields: dict = {"black_name": "ann" if black == player else 'Bo "the" \\ b',
                        "white_name": "ann" if white == player else "Zoë",
                        "result": ("1-0", "0-1", "1/2-1/2")[index % 3],
                        "time_control": ("5+3", "3d", "untimed", "1+0")[index % 4]}
        if index % 3 == 0:
            fields.update(rated=True, black_diff=7, white_diff=-7)
        start = "W:W21,22,23,24,25,K30:B1,2,3,4,K9" if index == 5 else None
        record = played(start, 30 + index * 7, seed=index)
        if record.outcome is not None:        # the site ends a game the rules decide with their result
            fields["result"] = record.outcome.result
        row = stored(black, white, record, **fields)
        if index % 3 == 0:
            Game.objects.filter(pk=row.pk).update(black_rating=1500 + index, white_rating=1490)
        if index == 4:
            Game.objects.filter(pk=row.pk).update(ballot=ballots.ballot(17).number)
        made.append(row)
    made.append(stored(player, other, played(None, 9, seed=99), status=Game.Status.ACTIVE))
    stored(player, other, played(None, 3, seed=98), status=Game.Status.ABORTED)       # in no file
    return made


def whole_file(player_id: str, limit: int = pdn_file.BATCH_GAMES) -> str:
    text, cursor = "", None
    while True:
        batch = pdn_file.batch(player_id, SITE, cursor, limit)
        text += batch.text
        if batch.cursor is None:
            return text
        cursor = batch.cursor


def test_each_game_is_written_as_its_own_pdn_file():
    ann, bo = account("ann"), account("bo")
    made = varied_games(ann.player_id, bo.player_id)
    expected = "".join(reads.game_pdn(g.id, SITE) + "\n" for g in made)
    assert whole_file(ann.player_id) == expected
    assert whole_file(ann.player_id, limit=5) == expected          # batches end anywhere
    assert '[Ballot "ACF 17' in expected and '[FEN "W:W' in expected and "1... " in expected
    assert len(list(pdn.read_games(io.StringIO(expected)))) == len(made)


def test_a_batch_is_three_queries_whatever_its_size():
    ann, bo = account("ann"), account("bo")
    for index in range(40):
        black, white = (ann.player_id, bo.player_id) if index % 2 else (bo.player_id, ann.player_id)
        stored(black, white, played(None, 20, seed=index), result="1-0")
    with CaptureQueriesContext(connection) as queries:
        batch = pdn_file.batch(ann.player_id, SITE, None)
    assert batch.games == 40 and batch.cursor is None and len(queries) == 3


def download(client: Client, name: str = "ann", **extra):
    return client.get(f"/@/{name}/games.pdn", **extra)


@override_settings(PDN_RATE_LIMIT_SESSION="2/minute", PDN_RATE_LIMIT_ADDRESS="3/minute",
                   PDN_RATE_LIMIT_ANONYMOUS="1/minute")
def test_downloads_are_limited_per_session_per_address_and_without_a_session():
    account("ann")
    address = f"10.9.{random.randrange(250)}.{random.randrange(250)}"
    browser = Client()
    browser.get("/", REMOTE_ADDR=address)
    answers = [download(browser, REMOTE_ADDR=address).status_code for _ in range(3)]
    assert answers == [200, 200, 429]                               # the session's 2 a minute
    other = Client()
    other.get("/", REMOTE_ADDR=address)
    assert download(other, REMOTE_ADDR=address).status_code == 200   # another session: the address's 3rd
    refused = download(other, REMOTE_ADDR=address)                  # the address's 4th
    assert refused.status_code == 429 and int(refused["Retry-After"]) >= 1
    stranger = f"10.8.{random.randrange(250)}.{random.randrange(250)}"
    assert download(Client(), REMOTE_ADDR=stranger).status_code == 200   # no cookie at all
    assert download(Client(), REMOTE_ADDR=stranger).status_code == 429   # nor a fresh one: the same address


@override_settings(PDN_DOWNLOADS_PER_PROCESS=1, PDN_RATE_LIMIT_SESSION="", PDN_RATE_LIMIT_ADDRESS="",
                   PDN_RATE_LIMIT_ANONYMOUS="")
async def test_a_full_process_refuses_at_once_and_a_finished_file_frees_its_slot():
    await sync_to_async(lambda: stored(account("ann").player_id, uuid.uuid4().hex, played(None, 12, 1),
                                       result="1-0"))()
    client = AsyncClient()
    interval = sys.getswitchinterval()
    try:
        first = await client.get("/@/ann/games.pdn")
        assert first.status_code == 200
        assert sys.getswitchinterval() == downloads.SWITCH_INTERVAL_S   # the loop gets the GIL within 1 ms
        busy = await client.get("/@/ann/games.pdn")                 # the first one's stream still holds the slot
        assert busy.status_code == 503 and busy["Retry-After"] == str(downloads.BUSY_RETRY_S)
        text = b"".join([chunk async for chunk in first.streaming_content]).decode()
        assert text.count("[Event ") == 1
        again = await client.get("/@/ann/games.pdn")
        assert again.status_code == 200
        assert b"".join([chunk async for chunk in again.streaming_content]).count(b"[Event ") == 1
    finally:
        await sync_to_async(connections.close_all)()
    assert downloads.slots.taken == 0 and sys.getswitchinterval() == interval


async def test_a_file_not_finished_in_time_is_cut_not_ended():
    player = await sync_to_async(lambda: account("ann").player_id)()
    for index in range(3):
        await sync_to_async(stored)(player, uuid.uuid4().hex, played(None, 10, index), result="0-1")
    taken = downloads.slots.take()
    assert taken is not None
    stream = downloads.texts(player, SITE, taken, deadline_s=0.0)
    with pytest.raises(downloads.DownloadCut):
        async for _ in stream:
            pass
    assert downloads.slots.taken == 0
