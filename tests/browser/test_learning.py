"""Learning in a real Chromium: a review asked for on a finished game, run by a worker of the
``reviews`` queue, its progress and its chart, a click on the chart showing that position; a puzzle
solved and one failed (the refutation and the solution shown only then); a lesson finished and
kept in the browser; axe finds nothing on these pages; French and Spanish pages."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
from playwright.sync_api import Page, expect

from game.engine import native
from game.learning import puzzle_store
from tests.browser.conftest import ROOT, Server
from tests.browser.test_accessibility import assert_clean
from tests.browser.test_game_actions import play, resign, start

SCREENSHOTS = Path(os.environ.get("BROWSER_SCREENSHOTS_DIR", "/tmp/learning-screens"))

pytestmark = pytest.mark.skipif(not native.available(), reason="the compiled core is not built")


@pytest.fixture(scope="module")
def learning_server(server_env, tmp_path_factory):
    """A server whose processes (and the review worker) load a database of positions with at most 3 pieces."""
    directory = tmp_path_factory.mktemp("endgames")
    native.build_endgames(3, directory / "endgames-3.bin")
    env = {**server_env, "ENGINE_ENDGAME_DIR": str(directory)}
    srv = Server(env, tmp_path_factory.mktemp("daphne-learning") / "daphne.log")
    srv.start()
    srv.env_for_workers = env
    yield srv
    srv.stop()


def shot(page: Page, name: str, sizes=((1100, 850),)) -> None:
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    for width, height in sizes:
        page.set_viewport_size({"width": width, "height": height})
        page.screenshot(path=str(SCREENSHOTS / f"{name}-{width}x{height}.png"), full_page=True)
    page.set_viewport_size({"width": 1100, "height": 850})


PHONES = ((1100, 850), (390, 844), (844, 390))
#: A short game whose third ply, 12-16, gives a man away: the review marks it a blunder.
BLUNDER = ["10-15", "23-19", "12-16", "19x12", "15-18", "22x15", "11x18", "26-23"]


def click_move(page: Page, move: str) -> None:
    expect(page.locator("#board.interactive")).to_be_attached()
    for square in re.split(r"[-x]", move):
        page.click(f"#sq-{square}")


def test_a_review_is_asked_for_shown_with_its_progress_and_its_chart_opens_a_position(learning_server,
                                                                                         new_context):
    table = start(learning_server, new_context)
    play(table, BLUNDER)
    resign(table.alice)
    carol = table.carol
    expect(carol.locator("#review")).to_be_visible()
    french = new_context(locale="fr-FR").new_page()     # the longest label stays inside its panel
    french.set_viewport_size({"width": 1280, "height": 800})
    french.goto(table.url)
    expect(french.locator("#request-review")).to_have_text("Demander une analyse par l’ordinateur")  # noqa: RUF001
    button, panel = (french.locator(selector).bounding_box() for selector in ("#request-review", "#review"))
    assert button["x"] + button["width"] <= panel["x"] + panel["width"], (button, panel)
    carol.click("#request-review")
    expect(carol.locator("#review-progress-text")).to_contain_text("Waiting for the engine")
    worker = subprocess.run([sys.executable, "manage.py", "rqworker", "reviews", "--burst"], cwd=ROOT,
                            env=learning_server.env_for_workers, capture_output=True, timeout=300)
    assert worker.returncode == 0, worker.stderr.decode()[-2000:]
    expect(carol.locator("#review-chart")).to_be_visible(timeout=20_000)
    expect(carol.locator("#review-accuracy-B")).to_contain_text("%")
    expect(carol.locator("#review-marks [data-ply='3'] .mark-name")).to_have_text("Blunder")
    expect(carol.locator("#move-list [data-ply='3'] .review-symbol")).to_have_text("??")
    carol.locator("#review-marks button[data-ply='3']").click()
    expect(carol.locator("#board")).to_have_attribute("data-shown-ply", "3")
    carol.locator(".chart-column[data-ply='2']").click(force=True)
    expect(carol.locator("#board")).to_have_attribute("data-shown-ply", "2")
    expect(carol.locator("#move-list [data-ply='2']")).to_have_attribute("aria-current", "step")
    assert_clean(carol, "a finished game with its review")
    shot(carol, "review", PHONES)
    # The players' pages, opened afresh, show the same stored review; axe in the dark scheme too.
    table.alice.reload()
    expect(table.alice.locator("#review-chart")).to_be_visible()
    dark = new_context(color_scheme="dark").new_page()
    dark.goto(table.url)
    expect(dark.locator("#review-chart")).to_be_visible()
    assert_clean(dark, "a finished game with its review (dark)")


def shipped(predicate) -> dict:
    return next(p for p in puzzle_store.read() if predicate(p))


def test_a_puzzle_solved_and_one_failed(learning_server, new_context):
    page = new_context().new_page()
    solved = shipped(lambda p: len(p["line"]) >= 3)
    page.goto(f"{learning_server.url}/puzzles/{solved['id']}")
    expect(page.locator("#puzzle-feedback")).to_contain_text("find the best move")
    assert solved["line"][2] not in page.content().split('id="puzzle-config"')[1]  # the solution stays on the server
    assert_clean(page, "a puzzle")
    shot(page, "puzzle", PHONES)
    plays = int(page.locator("#puzzle-plays").inner_text())
    for step in range(0, len(solved["line"]), 2):
        click_move(page, solved["line"][step])
        if step + 2 < len(solved["line"]):
            expect(page.locator("#puzzle-feedback")).to_contain_text(f"answers {solved['line'][step + 1]}")
            # the line below says the same move, not the one before the puzzle's first move
            expect(page.locator("#puzzle-last-move")).to_have_text(
                f"The opponent just played {solved['line'][step + 1]}.")
    expect(page.locator("#puzzle-feedback")).to_have_text("Solved!")
    expect(page.locator("#puzzle-plays")).to_have_text(str(plays + 1))    # this attempt counted
    themes = page.locator("#puzzle-themes")
    if solved.get("themes"):
        expect(themes).to_be_visible()
    else:
        expect(themes).to_have_count(0)     # no empty "Themes:" label
    expect(page.locator("#puzzle-solution-moves")).to_have_text(" ".join(solved["line"]))

    failed = shipped(lambda p: p["id"] != solved["id"] and p["refutations"].get("0"))
    wrong, reply = next(iter(failed["refutations"]["0"].items()))
    page.goto(f"{learning_server.url}/puzzles/{failed['id']}")
    click_move(page, wrong)
    expect(page.locator("#puzzle-feedback")).to_contain_text(f"{wrong} is answered by {reply}")
    expect(page.locator("#puzzle-solution-moves")).to_have_text(" ".join(failed["line"]))
    shot(page, "puzzle-failed")
    assert_clean(page, "a failed puzzle")


def test_a_lesson_finished_is_ticked_on_the_lessons_page(learning_server, new_context):
    page = new_context().new_page()
    page.goto(f"{learning_server.url}/learn/capture")
    click_move(page, "10x17")
    expect(page.locator("#lesson-feedback")).to_have_text("Right!")
    expect(page.locator("#lesson-progress")).to_have_text("Board 2 of 2")
    expect(page.locator("#lesson-feedback")).to_have_text("")       # the first board's "Right!" went with it
    page.goto(f"{learning_server.url}/learn/multi_jump")
    expect(page.locator("#lesson-prompt")).to_have_text("Take both white men in one move.")
    assert_clean(page, "a lesson")
    click_move(page, "9x18x27")
    expect(page.locator("#lesson-done-note")).to_be_visible()
    shot(page, "lesson", PHONES)
    page.goto(f"{learning_server.url}/learn")
    expect(page.locator("[data-lesson='multi_jump'] [data-done-mark]")).to_be_visible()
    assert_clean(page, "the lessons")
    shot(page, "lessons")
    dark = new_context(color_scheme="dark").new_page()
    for path in ("/learn", "/learn/crowning", "/learn/two_kings", "/puzzles", "/puzzles/streak", "/puzzles/history"):
        dark.goto(learning_server.url + path)
        assert_clean(dark, f"{path} (dark)")


@pytest.mark.parametrize(("locale", "words"), [("fr-FR", ("Problème", "Apprendre les dames")),
                                               ("es-ES", ("Problema", "Aprender a jugar a las damas"))])
def test_the_learning_pages_in_french_and_spanish(learning_server, new_context, locale, words):
    page = new_context(locale=locale).new_page()
    page.goto(f"{learning_server.url}/puzzles")
    expect(page.locator("#puzzle-title")).to_have_text(words[0])
    expect(page.locator("#puzzle-feedback")).not_to_be_empty()
    page.goto(f"{learning_server.url}/learn")
    expect(page.locator("h1")).to_have_text(words[1])
    assert_clean(page, f"the lessons ({locale})")
