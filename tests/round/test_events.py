"""The game socket's messages: their schemas agree with docs/protocol.md, the check catches what does
not match, and each audience gets exactly its copy.

With ``EVENT_SCHEMA_CHECK`` on (the test settings), every event the consumer and action tests make,
and every message a socket encodes, is checked against :data:`game.round.events.SCHEMAS`.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from django.conf import settings

from game.models import Game
from game.round import actions, drawer, events, reads, store
from game.round.events import EVERYONE, SEATS, SPECTATORS, SchemaError, all_but, seat, validate
from game.rules import Color

PROTOCOL = Path(__file__).resolve().parents[2] / "docs" / "protocol.md"
ALICE, BOB = "a" * 32, "b" * 32

pytestmark = pytest.mark.django_db


def _without_parentheses(text: str) -> str:
    while True:
        stripped = re.sub(r"\([^()]*\)", "", text)
        if stripped == text:
            return text
        text = stripped


def _table(heading: str) -> list[list[str]]:
    """The rows (cells) of the first table after ``heading`` in docs/protocol.md."""
    lines = PROTOCOL.read_text(encoding="utf-8").splitlines()
    start = lines.index(heading)
    rows, seen = [], False
    for line in lines[start + 1:]:
        if line.startswith("|"):
            seen = True
            cells = [c.strip() for c in line.strip("|").split("|")]
            if not set("".join(cells)) <= set("-: "):
                rows.append(cells)
        elif seen:
            break
    return rows[1:]  # the header row


def documented_messages() -> dict[str, set[str]]:
    """``{type: {field, ...}}`` from the "Server → client" table of docs/protocol.md."""
    found = {}
    for kind, _to, _when, fields in _table("## Server → client"):
        names = re.findall(r"`([a-z_]+)`", _without_parentheses(fields))
        found[kind.strip("`")] = set(names)
    return found


def documented_state() -> dict[str, str]:
    """``{field: audience}`` from the table of ``state`` fields in docs/protocol.md."""
    lines = PROTOCOL.read_text(encoding="utf-8").splitlines()
    heading = next(line for line in lines if line.startswith("`state` is the state"))
    return {field.strip("`"): to for field, to, _ in _table(heading)}


def test_every_message_type_is_documented_with_exactly_its_fields():
    schemas = {kind: {name.rstrip("?") for name in spec} for kind, spec in events.SCHEMAS.items()}
    assert documented_messages() == schemas


def test_every_state_field_is_documented_and_only_legal_is_for_one_seat():
    documented = documented_state()
    assert set(documented) == {name.rstrip("?") for name in events.STATE_SCHEMA}
    assert {field for field, to in documented.items() if to != "everyone"} == {"legal"}


def test_schema_check_is_on_in_the_test_settings():
    assert settings.EVENT_SCHEMA_CHECK is True
    with pytest.raises(SchemaError):
        events.AudienceEvent(spectators="many", online={"B": True, "W": False}, game_v=1)


@pytest.mark.parametrize("message, problem", [
    ({"type": "pong", "extra": 1}, "unexpected fields"),
    ({"type": "error", "code": "x"}, "missing field 'message'"),
    ({"type": "error", "code": "x", "message": "y", "candidates": "11-15"}, "expected a list"),
    ({"type": "audience", "spectators": True, "online": {"B": True, "W": True}, "game_v": 1},
     "expected an integer"),
    ({"type": "teleport"}, "unknown message type"),
])
def test_validate_refuses_what_does_not_match(message, problem):
    with pytest.raises(SchemaError, match=problem):
        validate(message)


def test_audiences_are_sets_of_roles():
    assert EVERYONE.key == "BWS" and SEATS.key == "BW" and SPECTATORS.key == "S"
    assert seat(Color.BLACK).key == "B" and all_but(Color.WHITE).key == "BS"


def _started() -> Game:
    return actions.start_game(black=(ALICE, "alice"), white=(BOB, "bob"))


def test_a_move_event_gives_the_legal_moves_to_the_side_to_move_only():
    game = _started()
    [event] = actions.play_move(game.id, ALICE, "11-15", game.version).events
    copies = {audience.key: payload for audience, payload in event.deliveries()}
    assert set(copies) == {"W", "BS"}
    assert copies["W"]["state"]["legal"] == [str(m) for m in store.current_record(
        Game.objects.get(pk=game.id)).position.legal_moves()]
    assert "legal" not in copies["BS"]["state"]
    assert {**copies["W"], "state": {k: v for k, v in copies["W"]["state"].items() if k != "legal"}} \
        == copies["BS"]
    assert event.for_role("S") == copies["BS"] and event.for_role("W") == copies["W"]


def test_an_update_after_the_end_is_the_same_for_everyone_without_legal_moves():
    game = _started()
    [event] = actions.resign(game.id, BOB).events
    [(audience, payload)] = event.deliveries()
    assert audience == EVERYONE and "legal" not in payload["state"]
    assert payload["state"]["result"] == "1-0"


def test_a_draw_offer_event_keeps_the_legal_moves_for_the_side_to_move():
    game = _started()
    [event] = drawer.offer_draw(game.id, BOB).events
    assert event.for_role("B")["state"]["legal"][0] == "9-13"
    assert "legal" not in event.for_role("W")["state"] and "legal" not in event.for_role("S")["state"]


def test_snapshots_carry_legal_moves_only_for_the_side_to_move():
    game = _started()
    assert "legal" in reads.snapshot(game.id, ALICE).payload()["state"]
    assert "legal" not in reads.snapshot(game.id, BOB).payload()["state"]
    assert "legal" not in reads.snapshot(game.id, None).payload()["state"]


def test_a_publication_holds_each_audience_copy_once_and_the_clock_to_follow():
    game = actions.start_game(black=(ALICE, "alice"), white=(BOB, "bob"), time_control="5+3")
    [event] = actions.play_move(game.id, ALICE, "11-15", game.version).events
    follow, copies = events.read_publication(events.publication(event))
    assert [roles for roles, _ in copies] == ["W", "BS"]
    assert follow["status"] == "active" and follow["clock"]["control"] == "5+3"
    assert [json.loads(text) for _, text in copies] == [event.for_role("W"), event.for_role("S")]
    for _roles, text in copies:
        validate(json.loads(text))
