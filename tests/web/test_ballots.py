"""Games that open with a 3-move ballot (docs/rules.md, "3-move ballots"): created for a friend, against
the computer and through "Play online"; the site plays the three plies (stored as plies 1-3), the
game page shows the ballot, the PDN records it, the clocks and the abort rule start with the
players' own moves, and bad ballot input is refused with nothing created."""

from __future__ import annotations

import io
from datetime import timedelta

import pytest
from channels.db import database_sync_to_async
from django.conf import settings
from django.test import Client
from django.utils import timezone

from game import players, rules
from game.clock import FIRST_MOVE_S
from game.errors import ActionError
from game.models import Game, Move
from game.round import actions, outages, rematcher
from game.rules import ballots
from tests.web.conftest import Browser, recv
from tests.web.test_matchmaking import matchmaking_prefix, next_message, open_lobby, pools, quiet, seek  # noqa: F401

pytestmark = pytest.mark.django_db(transaction=True)

WHITE_DOCTOR = ballots.ballot(68)          # 10-14 22-18 12-16


def browser_of(client: Client, name: str) -> Browser:
    """The :class:`Browser` of a test client's session (to open its game socket)."""
    return Browser(name=name, player_id=client.session["player_id"],
                   cookie=client.cookies[settings.SESSION_COOKIE_NAME].value)


def stored_moves(game: Game) -> list[tuple[int, str, str]]:
    return list(Move.objects.filter(game=game).order_by("ply").values_list("ply", "notation", "fen_after"))


def assert_opened_with(game: Game, opening: ballots.Ballot) -> None:
    """The game's first three plies are the ballot's, stored as moves 1-3, White to move."""
    record = opening.record()
    assert game.ballot == opening.number
    assert game.start_fen == rules.INITIAL_FEN and game.fen == record.position.fen()
    assert (game.ply, game.no_progress, game.turn) == (3, 0, rules.Color.WHITE)
    positions = record.positions[1:]
    assert stored_moves(game) == [(i + 1, opening.moves[i], positions[i].fen()) for i in range(3)]


# ---- a friend's game ------------------------------------------------------------------------------

def test_friend_game_with_a_chosen_ballot_starts_after_its_three_plies_and_shows_it():
    client = Client()
    response = client.post("/", {"name": "alice", "color": "B", "opening": "ballot", "ballot": " 68 "})
    assert response.status_code == 302
    game = Game.objects.get()
    assert_opened_with(game, WHITE_DOCTOR)
    assert game.status == Game.Status.WAITING and game.black_player == client.session["player_id"]
    page = client.get(f"/g/{game.id}/").content.decode()
    assert 'id="ballot-note" data-ballot="68"' in page
    assert "3-move ballot 68" in page and '<span class="ballot-moves">10-14 22-18 12-16</span>' in page
    # A free-start game's page has no ballot note.
    client.post("/", {"name": "alice", "color": "B"})
    free = Game.objects.exclude(pk=game.id).get()
    assert free.ballot is None and free.ply == 0 and stored_moves(free) == []
    assert "ballot-note" not in client.get(f"/g/{free.id}/").content.decode()


def test_friend_game_with_a_random_ballot_draws_an_approved_one():
    drawn = set()
    for _ in range(12):
        assert Client().post("/", {"name": "alice", "color": "W", "opening": "ballot", "ballot": ""}).status_code == 302
    for game in Game.objects.all():
        opening = ballots.ballot(game.ballot)
        assert opening.approved
        assert_opened_with(game, opening)
        drawn.add(game.ballot)
    assert len(drawn) > 1          # 12 draws of 156 all alike: about 1 in 10^25


@pytest.mark.parametrize("typed, words", [
    ("175", "There is no ballot 175: the 3-move ballots are numbered 1 to 174."),
    ("0", "There is no ballot 0"),
    ("3", "Ballot 3 (9-13 21-17 10-14) is barred: it is not played."),
    ("171", "Ballot 171 (12-16 23-19 16x23) is barred"),
    ("abc", "Give the ballot&#x27;s number, from 1 to 174."),
    ("1e2", "Give the ballot&#x27;s number, from 1 to 174."),
    ("-5", "Give the ballot&#x27;s number, from 1 to 174."),
    ("12345678", "Give the ballot&#x27;s number, from 1 to 174."),
    ("123456789", "at most 8 characters"),
])
def test_bad_ballot_input_is_refused_with_its_reason_and_nothing_is_created(typed, words):
    response = Client().post("/", {"name": "alice", "color": "B", "opening": "ballot", "ballot": typed})
    assert response.status_code == 400
    page = response.content.decode()
    assert 'id="ballot-errors"' in page and words in page
    assert Game.objects.count() == 0 and Move.objects.count() == 0


def test_an_unknown_opening_is_refused_and_nothing_is_created():
    response = Client().post("/", {"name": "alice", "color": "B", "opening": "dyke", "ballot": "68"})
    assert response.status_code == 400
    page = response.content.decode()
    assert 'id="ballot-errors"' in page and "Select a valid choice. dyke is not one of the available choices." in page
    response = Client().post("/computer", {"level": "1", "color": "B", "opening": "dyke"})
    assert response.status_code == 400 and "opening" in response.content.decode()
    assert Game.objects.count() == 0 and Move.objects.count() == 0


def test_a_ballot_number_with_the_free_start_chosen_is_ignored():
    assert Client().post("/", {"name": "alice", "color": "B", "opening": "free", "ballot": "3"}).status_code == 302
    assert Game.objects.get().ballot is None


def test_actions_refuse_bad_ballots_with_codes_and_store_nothing():
    cases = [(3, "barred_ballot"), ("3", "barred_ballot"), (175, "bad_ballot"), ("x", "bad_ballot"),
             ("", "bad_ballot"), (True, "bad_ballot"), (6.5, "bad_ballot")]
    for choice, code in cases:
        with pytest.raises(ActionError) as caught:
            actions.create_game("p-alice", "alice", "B", ballot=choice)
        assert caught.value.code == code, choice
        with pytest.raises(ActionError) as caught:
            actions.start_game(("p-alice", "alice"), ("p-bob", "bob"), ballot=choice)
        assert caught.value.code == code, choice
    with pytest.raises(ActionError) as caught:
        actions.create_game("p-alice", "alice", "B", start_fen="B:W21:B1", ballot=68)
    assert caught.value.code == "bad_ballot"
    assert Game.objects.count() == 0 and Move.objects.count() == 0


@pytest.mark.asyncio
async def test_joined_ballot_game_is_played_on_from_whites_first_own_move(alice, bob):
    game = await database_sync_to_async(actions.create_game)(alice.player_id, "alice", "W", ballot=68)
    await database_sync_to_async(actions.join_game)(game.id, bob.player_id, "bob")
    white, snap = await alice.connect(game.id)
    assert snap["you"] == "W"
    state = snap["state"]
    assert state["turn"] == "W" and state["ply"] == 3 and state["status"] == "active"
    assert snap["moves"] == list(WHITE_DOCTOR.moves)
    assert set(state["legal"]) == {str(m) for m in WHITE_DOCTOR.record().position.legal_moves()}
    black, snap_b = await bob.connect(game.id)
    assert "legal" not in snap_b["state"]
    await white.send_json_to({"type": "move", "move": "24-20", "v": snap["v"]})
    event = await recv(white)
    assert event["type"] == "move" and event["ply"] == 4 and event["move"] == "24-20"
    event_b = await recv(black)
    assert event_b["state"]["turn"] == "B" and "16-19" in event_b["state"]["legal"]
    for comm in (white, black):
        await comm.disconnect()


# ---- the PDN --------------------------------------------------------------------------------------

def test_pdn_of_a_ballot_game_names_the_ballot_and_starts_with_its_plies():
    game = actions.start_game(("p-alice", "alice"), ("p-bob", "bob"), ballot=68)
    actions.play_move(game.id, "p-bob", "24-20", v=0)
    text = Client().get(f"/g/{game.id}.pdn").content.decode()
    assert '[Ballot "ACF 68: 10-14 22-18 12-16"]' in text
    assert "[FEN " not in text and "1. 10-14 22-18 2. 12-16 24-20 *" in text
    back = next(rules.read_games(io.StringIO(text)))
    assert back.tags["Ballot"] == "ACF 68: 10-14 22-18 12-16"
    assert back.moves == ["10-14", "22-18", "12-16", "24-20"]
    assert rules.pdn.replay(back).ok
    free = actions.start_game(("p-alice", "alice"), ("p-bob", "bob"))
    assert "Ballot" not in Client().get(f"/g/{free.id}.pdn").content.decode()


@pytest.mark.parametrize("opening", ballots.BALLOTS[::11], ids=lambda b: str(b.number))
def test_every_sampled_ballot_game_is_recorded_in_its_pdn(opening):
    if opening.barred:
        with pytest.raises(ActionError):
            actions.start_game(("p-alice", "alice"), ("p-bob", "bob"), ballot=opening.number)
        return
    game = actions.start_game(("p-alice", "alice"), ("p-bob", "bob"), ballot=opening.number)
    assert_opened_with(game, opening)
    text = Client().get(f"/g/{game.id}.pdn").content.decode()
    assert f'[Ballot "ACF {opening.number}: {opening.text}"]' in text
    assert next(rules.read_games(io.StringIO(text))).moves == list(opening.moves)


# ---- clocks, abort, rematch ------------------------------------------------------------------------

def test_live_clock_starts_with_whites_first_own_move_after_the_ballot():
    t0 = timezone.now()
    game = actions.start_game(("p-alice", "alice"), ("p-bob", "bob"), time_control="5+3", now=t0, ballot=68)
    clock = outages.clock(Game.objects.get(pk=game.id))
    state = clock.state(t0 + timedelta(seconds=10))
    # White's first own move: not timed, but due within 30 s.
    assert state["running"] is None and state["first_move_ms"] == 20_000
    assert state["W"] == state["B"] == 300_000
    assert clock.expiry(t0 + timedelta(seconds=FIRST_MOVE_S)).what == "aborted"
    actions.play_move(game.id, "p-bob", "24-20", v=0, now=t0 + timedelta(seconds=12))
    stored = Game.objects.get(pk=game.id)
    assert stored.white_ms == 300_000                    # no increment for a side's first move
    state = outages.clock(stored).state(t0 + timedelta(seconds=20))
    assert state["running"] is None and state["first_move_ms"] == 22_000   # Black's first own move
    actions.play_move(game.id, "p-alice", "16-19", v=1, now=t0 + timedelta(seconds=15))
    stored = Game.objects.get(pk=game.id)
    state = outages.clock(stored).state(t0 + timedelta(seconds=25))
    assert state["running"] == "W" and state["first_move_ms"] is None and state["W"] == 290_000


def test_abort_allowed_until_both_sides_made_their_own_first_move():
    game = actions.start_game(("p-alice", "alice"), ("p-bob", "bob"), ballot=68)
    actions.play_move(game.id, "p-bob", "24-20", v=0)
    assert actions.abort(game.id, "p-alice").game.status == Game.Status.ABORTED
    game = actions.start_game(("p-alice", "alice"), ("p-bob", "bob"), ballot=68)
    actions.play_move(game.id, "p-bob", "24-20", v=0)
    actions.play_move(game.id, "p-alice", "16-19", v=1)
    with pytest.raises(ActionError) as caught:
        actions.abort(game.id, "p-bob")
    assert caught.value.code == "too_late"


def test_rematch_of_a_ballot_game_plays_the_same_ballot_with_colours_reversed():
    game = actions.start_game(("p-alice", "alice"), ("p-bob", "bob"), ballot=68)
    actions.resign(game.id, "p-bob")
    rematcher.offer_rematch(game.id, "p-bob")
    rematch = rematcher.offer_rematch(game.id, "p-alice").game.next_game
    assert (rematch.black_player, rematch.white_player) == ("p-bob", "p-alice")
    assert_opened_with(Game.objects.get(pk=rematch.pk), WHITE_DOCTOR)


# ---- the computer ---------------------------------------------------------------------------------

@pytest.fixture
def _quick_computer(settings):
    settings.COMPUTER_MIN_THINK_MS = 0


@pytest.mark.asyncio
async def test_computer_game_with_a_ballot_the_computer_plays_whites_first_own_move(alice, _quick_computer):
    client = Client()
    response = await database_sync_to_async(client.post)(
        "/computer", {"level": "1", "color": "B", "opening": "ballot", "ballot": "68"})
    assert response.status_code == 302
    game = await database_sync_to_async(Game.objects.get)()
    assert players.is_computer(game.white_player) and game.black_player == client.session["player_id"]
    await database_sync_to_async(assert_opened_with)(game, WHITE_DOCTOR)
    page = (await database_sync_to_async(client.get)(f"/g/{game.id}/")).content.decode()
    assert 'data-ballot="68"' in page
    person, snap = await browser_of(client, "alice").connect(game.id)
    assert snap["state"]["turn"] == "W" and snap["moves"] == list(WHITE_DOCTOR.moves)
    event = await recv(person, timeout=30)
    assert event["type"] == "move" and event["ply"] == 4 and event["state"]["turn"] == "B"
    assert event["move"] in {str(m) for m in WHITE_DOCTOR.record().position.legal_moves()}
    await person.disconnect()


@pytest.mark.parametrize("typed", ["3", "999", "abc"])
def test_computer_game_with_a_bad_ballot_is_refused_and_nothing_is_created(typed):
    response = Client().post("/computer", {"level": "5", "color": "B", "opening": "ballot", "ballot": typed})
    assert response.status_code == 400
    # The home page again, the reason in the computer panel and what the visitor chose kept.
    html = response.content.decode()
    panel = html[html.index('id="computer-form"'):]
    errors = panel[panel.index('id="computer-errors"'):panel.index("</ul>")]
    expected = {"3": "barred", "999": "numbered 1 to 174", "abc": "1 to 174"}[typed]
    assert expected in errors and "ballot:" not in errors
    assert 'name="level" value="5" checked' in panel and 'name="color" value="B" checked' in panel
    assert '<option value="ballot" selected>' in panel and f'value="{typed}"' in panel
    assert 'id="create-game"' in html   # the rest of the home page is there
    assert Game.objects.count() == 0 and Move.objects.count() == 0


# ---- Play online ----------------------------------------------------------------------------------

@pytest.mark.asyncio
async def test_seekers_in_a_ballot_pool_meet_in_a_ballot_game_and_free_seekers_do_not_join(alice, bob, carol):
    a, b, c = await open_lobby(alice), await open_lobby(bob), await open_lobby(carol)
    await seek(a, pool="untimed-ballot")
    await seek(c)                                 # the free start, untimed: another pool
    await seek(b, pool="untimed-ballot")
    paired_a, paired_b = await next_message(a), await next_message(b)
    assert paired_a["type"] == paired_b["type"] == "paired" and paired_a["game"] == paired_b["game"]
    game = await database_sync_to_async(Game.objects.get)(pk=paired_a["game"])
    assert game.status == Game.Status.ACTIVE and game.time_control == "untimed"
    opening = ballots.ballot(game.ballot)
    assert opening.approved
    await database_sync_to_async(assert_opened_with)(game, opening)
    assert await quiet(c, 0.3) == []
    board, snap = await alice.connect(game.id)
    assert snap["state"]["ply"] == 3 and snap["moves"] == list(opening.moves)
    page = (await database_sync_to_async(Client().get)(f"/g/{game.id}/")).content.decode()
    assert f'data-ballot="{opening.number}"' in page and opening.text in page
    for comm in (a, b, c, board):
        await comm.disconnect()


@pytest.mark.asyncio
async def test_timed_ballot_pool_plays_its_time_control_with_a_ballot(alice, bob):
    a, b = await open_lobby(alice), await open_lobby(bob)
    await seek(a, pool="3+2-ballot")
    await seek(b, pool="3+2-ballot")
    paired = await next_message(a)
    assert paired["type"] == "paired"
    game = await database_sync_to_async(Game.objects.get)(pk=paired["game"])
    assert game.time_control == "3+2" and game.ballot is not None and game.ply == 3
    for comm in (a, b):
        await comm.disconnect()


def test_home_page_offers_the_ballot_toggle_and_the_opening_fields():
    page = Client().get("/").content.decode()
    assert 'id="seek-ballot"' in page  # every pool of "Play online" has a ballot twin: one toggle
    assert '<option value="3+2">3+2 (3 min + 2 s a move)</option>' in page
    assert 'name="opening"' in page and 'id="computer-opening"' in page and 'id="computer-ballot"' in page
