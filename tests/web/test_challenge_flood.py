"""A challenger who sends, cancels and sends again to one player (each send a notice on every page
of theirs) is stopped after :data:`game.people.challenges.MAX_TO_ONE_PLAYER` challenges to that
player in the window; others may still be challenged, and the window passes.  A player closed out
of rated play (the playban) is refused a rated challenge when sending it, not its opponent when
accepting."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.utils import timezone

from game.errors import ActionError
from game.models import Account, Departure
from game.people import challenges
from game.people.models import Challenge
from game.ratings import playban
from game.round import actions
from tests.ratings.helpers import account

pytestmark = pytest.mark.django_db(transaction=True)


def test_sending_and_cancelling_to_one_player_is_limited_in_the_window():
    ann, ben, cat = (Account.objects.select_related("user").get(player_id=account(name))
                     for name in ("ann", "ben", "cat"))
    for _ in range(challenges.MAX_TO_ONE_PLAYER):
        sent = challenges.send(ann, "ben", "5+0", "B", False, False)
        challenges.cancel(sent.id, ann.player_id)
    with pytest.raises(ActionError) as refused:
        challenges.send(ann, "ben", "5+0", "B", False, False)
    assert refused.value.code == "challenged_lately"
    assert Challenge.objects.filter(challenged=ben.player_id).count() == challenges.MAX_TO_ONE_PLAYER
    assert challenges.send(ann, "cat", "5+0", "B", False, False).challenged == cat.player_id
    later = timezone.now() + timedelta(seconds=challenges.CHALLENGE_TTL_S + 1)
    assert challenges.send(ann, "ben", "5+0", "B", False, False, now=later).status == Challenge.Status.OPEN


def test_a_player_closed_out_of_rated_play_cannot_send_a_rated_challenge():
    leaver, ben = (Account.objects.select_related("user").get(player_id=account(name)) for name in ("leaver", "ben"))
    game = actions.create_game(leaver.player_id, "leaver", "B", time_control="5+3")
    for _ in range(playban.FREE + 1):
        Departure.objects.create(player_id=leaver.player_id, game=game, kind=playban.ABORTED, at=timezone.now())
    with pytest.raises(ActionError) as refused:
        challenges.send(leaver, "ben", "5+0", "B", True, False)
    assert refused.value.code == "playban"
    assert not Challenge.objects.exists()
    assert challenges.send(leaver, "ben", "5+0", "B", False, False).challenged == ben.player_id
