"""The analysis board's pasted records (``POST /analysis/pdn``) are read as games played elsewhere
(docs/rules.md, "Records from elsewhere"): Chinook v Tinsley, London 1992, game 1 loads whole, past
the repetition the site would have declared at ply 73, and says so; illegal moves are still refused."""

from pathlib import Path

import pytest
from django.test import Client

pytestmark = pytest.mark.django_db

LONDON = Path(__file__).resolve().parents[1] / "data" / "london1992.pdn"


def paste(text: str):
    return Client().post("/analysis/pdn", {"pdn": text}, content_type="application/json")


def london_game(number: int) -> str:
    return LONDON.read_text(encoding="utf-8").split("\n\n")[number]


def test_a_record_going_on_past_a_repetition_loads_whole_with_the_site_draw():
    response = paste(london_game(0))
    assert response.status_code == 200, response.content
    data = response.json()
    assert len(data["moves"]) == len(data["fens"]) == 103
    assert data["moves"][72] == "28-32" and data["result"] == "1/2-1/2"
    assert data["black"] == "Chinook" and data["white"] == "M Tinsley"
    assert data["site_draw"] == {"ply": 73, "termination": "repetition"}


def test_a_record_ending_on_the_third_occurrence_or_never_reaching_it_has_no_site_draw():
    for number in (2, 3):              # game 7 ends on its third occurrence; game 8 is Chinook's win
        data = paste(london_game(number)).json()
        assert data["site_draw"] is None and len(data["moves"]) in (80, 51)


def test_an_illegal_move_after_the_repetition_is_still_refused():
    text = london_game(0).replace("41. 28-32 19x23", "41. 28-32 19-26")
    response = paste(text)
    assert response.status_code == 400
    data = response.json()
    assert data["error"] == "bad_pdn" and data["message"].startswith("Ply 82, “19-26”, cannot be played")


def test_the_analysis_page_has_the_note_in_place():
    page = Client().get("/analysis").content.decode()
    assert '<p class="game-note" id="game-site-draw" hidden></p>' in page
