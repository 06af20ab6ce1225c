"""Tournaments with the 3-move ballot, on the real database and Redis: an arena's games each open
with an approved ballot; a Swiss event in ballot pairs plays one ballot a round, each pairing
twice with the colours reversed, the round scored only once both games are over, its score the
sum, the Dutch pairing's colour history the first games'; a bye worth a pair won."""

from __future__ import annotations

import random
from collections import Counter
from datetime import timedelta

import django_rq
import pytest
from django.utils import timezone
from rq import SimpleWorker

from game import rules
from game.errors import ActionError
from game.models import Game
from game.round import actions, drawer
from game.rules import ballots
from game.tournaments import arena, jobs, schedule, standings, swiss
from game.tournaments.models import Entry, Pairing, Tournament
from tests.ratings.helpers import account
from tests.tournaments.helpers import clear_tournament_jobs

pytestmark = [pytest.mark.django_db(transaction=True)]


@pytest.fixture(autouse=True)
def empty_queue():
    clear_tournament_jobs()
    yield
    clear_tournament_jobs()


def work() -> None:
    """Run the jobs queued on the ``tournaments`` queue in a burst worker."""
    queue = django_rq.get_queue(jobs.QUEUE)
    django_rq.get_worker(jobs.QUEUE, worker_class=SimpleWorker).work(burst=True)
    assert queue.failed_job_registry.count == 0


def finish(game: Game, outcome: str) -> None:
    """Two moves of each side (the first legal one each time), then ``black``/``white`` wins (the
    other resigns) or ``draw`` (agreed)."""
    for _ in range(4):
        game.refresh_from_db()
        move = rules.Position.from_fen(game.fen).legal_moves()[0]
        actions.play_move(game.id, game.player(game.turn), str(move), game.version)
    if outcome == "draw":
        drawer.offer_draw(game.id, game.black_player)
        drawer.accept_draw(game.id, game.white_player)
    else:
        actions.resign(game.id, game.white_player if outcome == "black" else game.black_player)


def started(system: str, players: int, **options) -> tuple[Tournament, list[str]]:
    tournament = arena.create(account("creator"), "Ballots", "3+0", 30, timezone.now() + timedelta(minutes=5),
                              rated=False, system=system, **options)
    ids = [account(f"ballot{i}") for i in range(players)]
    for index, player in enumerate(ids):
        arena.join(tournament.id, player, f"ballot{index}")
    Tournament.objects.filter(pk=tournament.id).update(starts_at=timezone.now())
    jobs.tick(tournament.id)
    tournament.refresh_from_db()
    return tournament, ids


def test_an_arena_with_the_ballot_opens_each_game_with_an_approved_one():
    tournament, _ = started(Tournament.System.ARENA, 4, ballot=True)
    games = list(Game.objects.filter(pairing__tournament=tournament))
    assert len(games) == 2
    for game in games:
        assert game.ballot is not None and ballots.ballot(game.ballot).approved
        assert (game.ply, game.turn) == (3, rules.Color.WHITE)


def test_ballot_pairs_are_refused_in_an_arena_and_without_the_ballot():
    host = account("host")
    for system, ballot in ((Tournament.System.ARENA, True), (Tournament.System.SWISS, False)):
        with pytest.raises(ActionError) as refused:
            arena.create(host, "Pairs", "3+0", 30, timezone.now(), system=system, rounds=3,
                         ballot=ballot, ballot_pairs=True)
        assert refused.value.code == "bad_ballot_pairs"
    assert not Tournament.objects.exists()


def _round_ballot(tournament: Tournament, round_number: int) -> set[int | None]:
    return set(Game.objects.filter(pairing__tournament=tournament, pairing__round=round_number)
               .values_list("ballot", flat=True))


def test_a_swiss_in_ballot_pairs_plays_each_ballot_twice_colours_reversed():
    tournament, ids = started(Tournament.System.SWISS, 5, rounds=3, ballot=True, ballot_pairs=True)
    rng = random.Random(7)
    for round_number in (1, 2, 3):
        tournament.refresh_from_db()
        assert (tournament.status, tournament.round) == (Tournament.Status.STARTED, round_number)
        firsts = list(Pairing.objects.filter(tournament=tournament, round=round_number, leg=1))
        assert len(firsts) == 2 and len(_round_ballot(tournament, round_number)) == 1    # one ballot a round
        for pairing in firsts:
            finish(Game.objects.get(pk=pairing.game_id), rng.choice(("black", "white", "draw")))
        work()
        tournament.refresh_from_db()
        assert tournament.round == round_number     # the return games are to come: the round goes on
        returns = list(Pairing.objects.filter(tournament=tournament, round=round_number, leg=2))
        assert sorted((p.white, p.black) for p in returns) == sorted((p.black, p.white) for p in firsts)
        assert len(_round_ballot(tournament, round_number)) == 1       # the same ballot, colours reversed
        board = standings.public(tournament.id)["board"]
        assert [(row["board"], row["leg"]) for row in board] == [(1, 1), (1, 2), (2, 1), (2, 2), (3, 1)]
        for pairing in returns:
            finish(Game.objects.get(pk=pairing.game_id), rng.choice(("black", "white", "draw")))
        work()
    tournament.refresh_from_db()
    assert tournament.status == Tournament.Status.FINISHED
    firsts = list(Pairing.objects.filter(tournament=tournament, leg=1))
    assert len({frozenset((p.black, p.white)) for p in firsts}) == 6           # nobody met twice
    # the score is the sum of both games of each pair, a bye a pair won (2)
    score: Counter = Counter()
    for pairing in Pairing.objects.filter(tournament=tournament).select_related("game"):
        score[pairing.black] += {"1-0": 1, "1/2-1/2": 0.5}.get(pairing.game.result, 0)
        score[pairing.white] += {"0-1": 1, "1/2-1/2": 0.5}.get(pairing.game.result, 0)
    for entry in Entry.objects.filter(tournament=tournament, bye_round__isnull=False):
        score[entry.player_id] += 2
    assert {row["player"]: row["score"] for row in standings.table(tournament)} == {p: score[p] for p in ids}
    # the Dutch pairing's colour history: one colour a round, the first game's
    entries = list(Entry.objects.filter(tournament=tournament))
    for history in swiss._histories(tournament, entries):
        player = next(e.player_id for e in entries if e.number == history.number)
        mine = sorted((p for p in firsts if player in (p.black, p.white)), key=lambda p: p.round or 0)
        assert history.colours == tuple("black" if p.black == player else "white" for p in mine)


def test_the_daily_swiss_is_played_in_ballot_pairs():
    made = schedule.create_daily_swiss()
    assert made is not None and made.ballot and made.ballot_pairs
