"""What "How to play" says about the site's own rules: the wait after a declined draw offer, the
results' notation, the 30 s first move of a live game; and the game's name in French."""

from __future__ import annotations

import re

import pytest
from django.test import Client

pytestmark = pytest.mark.django_db


def page_text(language: str = "en") -> str:
    response = Client(headers={"accept-language": language}).get("/how-to-play")
    assert response.status_code == 200
    return re.sub(r"\s+", " ", re.sub(r"<[^>]+>", " ", response.content.decode()))


def test_a_declined_draw_offer_is_said_to_make_the_offerer_wait_three_moves():
    text = page_text()
    assert "changes nothing" not in text
    assert "may offer again only after three more moves of their own" in text
    assert "or simply move, which declines it too" in text


def test_results_and_the_live_first_move_are_explained():
    text = page_text()
    assert "1-0 means Black won, 0-1 that White won, and 1/2-1/2 a draw" in text
    assert "must be made within 30 seconds, or the game is aborted" in text


def test_french_names_the_game_les_dames_americaines():
    text = page_text("fr")
    assert "checkers américain" not in text
    assert "aux dames américaines" in text
    assert "trois coups de plus de sa part" in text
