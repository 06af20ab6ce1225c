"""The websocket routes: the game route takes only game ids, and no path is left without a route."""

from __future__ import annotations

import pytest

from game.lobby.socket import LobbyConsumer
from game.models import GAME_ID_ALPHABET, GAME_ID_LENGTH, new_game_id
from game.round.socket import GameConsumer
from game.routing import NoRouteConsumer, websocket_urlpatterns


def routed_to(path: str):
    """The consumer class the first matching route gives ``path`` (without its leading slash), as URLRouter picks."""
    for route in websocket_urlpatterns:
        match = route.pattern.match(path)
        if match:
            return route.callback.consumer_class, match[2]
    return None, None


def test_every_game_id_reaches_the_game_consumer():
    for game_id in (new_game_id(), GAME_ID_ALPHABET[:GAME_ID_LENGTH], GAME_ID_ALPHABET[-GAME_ID_LENGTH:]):
        assert routed_to(f"ws/game/{game_id}/") == (GameConsumer, {"game_id": game_id})


def test_lobby_route():
    assert routed_to("ws/lobby/") == (LobbyConsumer, {})


@pytest.mark.parametrize("game_id", ["", "\x00", "abcdefghi\x00", "abcdefghij\x00", "ABCDEFGHIJ", "abcdefghil",
                                     "abcdefghio", "abcdefghi", "abcdefghijk", "abcde/ghij", "abcdefghij\n",
                                     "\uff41bcdefghij", "abcdefghi\u0663"])
def test_text_no_game_id_can_be_does_not_reach_the_game_consumer(game_id):
    assert routed_to(f"ws/game/{game_id}/") == (NoRouteConsumer, {})


@pytest.mark.parametrize("path", ["", "ws/", "ws/nothing/", "ws/game/a/b/", "ws/lobby/x/", "favicon.ico"])
def test_every_other_path_has_a_route(path):
    assert routed_to(path)[0] is NoRouteConsumer
