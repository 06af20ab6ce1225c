"""Methods a page does not answer: ``OPTIONS /`` (and PUT, DELETE...) rendered the home page; every
route answers 405 with ``Allow`` instead, and creates or renders nothing."""

from __future__ import annotations

import pytest
from django.test import Client

from game.models import Game
from game.round import actions

pytestmark = pytest.mark.django_db


def routes(game_id: str) -> dict[str, str]:
    """Every page route (with a real game's id where it takes one) and the methods it answers."""
    return {"/": "GET, HEAD, POST", f"/g/{game_id}/": "GET, HEAD", f"/g/{game_id}/join": "POST",
            f"/g/{game_id}.pdn": "GET, HEAD", "/games/live": "GET, HEAD", "/how-to-play": "GET, HEAD",
            "/computer": "POST", "/analysis": "GET, HEAD", "/analysis/position": "GET, HEAD",
            "/analysis/search": "POST", f"/analysis/game/{game_id}": "GET, HEAD",
            "/healthz": "GET, HEAD", "/readyz": "GET, HEAD", "/metrics": "GET, HEAD"}


@pytest.mark.parametrize("method", ["OPTIONS", "PUT", "DELETE", "PATCH"])
def test_a_method_a_route_does_not_answer_is_405_with_allow(method):
    game = actions.create_game("a" * 32, "alice", "B")
    client = Client()
    for path, allowed in routes(game.id).items():
        response = client.generic(method, path)
        assert (path, response.status_code, response.get("Allow")) == (path, 405, allowed)
        assert b"<html" not in response.content.lower(), path   # no page rendered
    assert Game.objects.count() == 1                               # and nothing created


def test_options_of_the_home_page_is_no_page():
    response = Client().options("/")
    assert response.status_code == 405 and response["Allow"] == "GET, HEAD, POST"
    assert response.content == b""
