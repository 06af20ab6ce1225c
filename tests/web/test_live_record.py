"""The move path rebuilds only the tail of a game since its last capture or man move.

Random games are played through :func:`game.round.actions.play_move` and, after
every ply, what the service stored and published is compared with a replay of
the whole game: side to move, legal moves, plies without progress, the end
(repetitions and the forty-move rule included) and the snapshot.  The number
of queries a move costs is pinned too, so the full replay cannot creep back.
"""

from __future__ import annotations

import random

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from game import rules
from game.models import Game
from game.round import actions, outages, reads, store

pytestmark = pytest.mark.django_db(transaction=True)

ALICE, BOB = "a" * 32, "b" * 32
#: Kings only: random play soon repeats positions or runs into the forty-move rule.
KINGS = "B:WK22,K29:BK3,K10"


def seen_state(state: dict) -> dict:
    """The fields of a state compared with a replay; ``legal`` ([] when the state has none: it comes
    only to the side to move, and only while the game is in play)."""
    assert ("legal" in state) == (state["status"] == "active")
    return {"turn": state["turn"], "legal": state.get("legal", []), "no_progress": state["no_progress"],
            "termination": state["termination"]}


def expected_state(record: rules.Game) -> dict:
    active = record.outcome is None
    return {
        "turn": record.position.turn.value,
        "legal": [str(m) for m in record.position.legal_moves()] if active else [],
        "no_progress": record.no_progress_plies,
        "termination": record.outcome.termination.value if record.outcome else None,
    }


def play_random_game(seed: int, start_fen: str | None = None, max_plies: int = 200) -> list[str]:
    rng = random.Random(seed)
    game = actions.create_game(ALICE, "alice", "B", start_fen)
    actions.join_game(game.id, BOB, "bob")
    players = {"B": ALICE, "W": BOB}
    replay = rules.Game(rules.Position.from_fen(start_fen) if start_fen else None)
    snapshot = reads.snapshot(game.id, ALICE)
    state, v = snapshot["state"], snapshot["v"]
    while state["status"] == "active" and replay.ply < max_plies:
        move = rng.choice(state["legal"])
        event = actions.play_move(game.id, players[state["turn"]], move, v).events[0]
        replay.play(move)
        state, v = event["state"], event["v"]
        assert seen_state(state) == expected_state(replay)
        stored = Game.objects.get(pk=game.id)
        assert stored.no_progress == replay.no_progress_plies
        assert store.current_record(stored).no_progress_plies == replay.no_progress_plies
        snapshot = reads.snapshot(game.id, players[state["turn"]])
        assert snapshot["moves"] == [str(m) for m in replay.moves]
        assert seen_state(snapshot["state"]) == expected_state(replay)
        watched = reads.snapshot(game.id, None)
        assert "legal" not in watched["state"] and watched["moves"] == snapshot["moves"]
    return [str(m) for m in replay.moves]


@pytest.mark.parametrize("seed", range(3))
def test_random_games_from_the_start_match_a_full_replay(seed):
    moves = play_random_game(seed)
    assert len(moves) > 20


@pytest.mark.parametrize("seed", range(3))
def test_kings_games_end_by_repetition_or_forty_moves_as_a_full_replay_does(seed):
    play_random_game(100 + seed, start_fen=KINGS)
    game = Game.objects.latest("created_at")
    assert game.termination in ("repetition", "forty_moves", "no_pieces", "no_moves")


def test_a_move_costs_a_bounded_number_of_queries(monkeypatch):
    # The other processes' outage windows are read once a second (outages.READ_EVERY_S), whatever
    # the moves: read here, and not again during the test, so that no move counted below happens to
    # be the one that pays for it (a slow or busy machine crossed the second within the test).
    monkeypatch.setattr(outages, "READ_EVERY_S", 3600.0)
    outages.tracker.read_others()
    game = actions.create_game(ALICE, "alice", "B")
    actions.join_game(game.id, BOB, "bob")
    # The other processes' outage windows are read at most once a second, by whichever action
    # comes then (game/round/outages.py): read now, as a process that is up reads them anyway.
    outages.tracker.read_others()
    with CaptureQueriesContext(connection) as man_move:
        actions.play_move(game.id, ALICE, "11-15", 1)
    # the lock, the new move, the conditional update (and, where the backend sends them, the
    # transaction's own statements): no read of the moves right after a man move
    assert not any("game_move" in q["sql"] and q["sql"].lstrip().upper().startswith("SELECT")
                   for q in man_move.captured_queries)
    assert len(man_move.captured_queries) <= 5
    # kings shuffling: the moves since the last capture or man move are read in one query
    game = actions.create_game(ALICE, "alice", "B", KINGS)
    actions.join_game(game.id, BOB, "bob")
    v = 1
    for _ply, (player, move) in enumerate([(ALICE, "3-7"), (BOB, "22-18"), (ALICE, "7-3")], start=1):
        outages.tracker.read_others()
        with CaptureQueriesContext(connection) as queries:
            v = actions.play_move(game.id, player, move, v).events[0]["v"]
        assert len(queries.captured_queries) <= 6
