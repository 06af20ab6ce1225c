"""A player's profile in a real Chromium: the rating chart is drawn (inline SVG, no script), the pages
break no Content-Security-Policy rule and raise no script error (the ``new_context`` fixture fails
the test on either), and they fit a 390-px phone."""

from __future__ import annotations

import os
import subprocess
import sys
import uuid
from pathlib import Path

from playwright.sync_api import expect

ROOT = Path(__file__).resolve().parents[2]
SCREENSHOTS = Path(os.environ.get("BROWSER_SCREENSHOTS_DIR", "/tmp"))

#: Made in the server's database through manage.py: an account with a blitz history of four
#: rated games against a guest, a provisional correspondence rating, and a finished arena it won.
SEED = """
import uuid
from datetime import timedelta
from django.contrib.auth.models import User
from django.utils import timezone
from game import rules
from game.models import Account, Game, Move, Rating, RatingChange
from game.tournaments.models import Entry, Tournament

name = {name!r}
user = User.objects.create_user(username=name, password=None)
account, _ = Account.objects.update_or_create(user=user, defaults={{"player_id": uuid.uuid4().hex}})
pid = account.player_id
Rating.objects.create(player_id=pid, category="blitz", rating=1562, deviation=70, games=4, wins=3, losses=1)
Rating.objects.create(player_id=pid, category="correspondence", rating=1500, deviation=300, games=1, draws=1)
record = rules.Game.from_moves(["11-15", "23-19"])
start = timezone.now() - timedelta(days=10)
for number, after in enumerate((1510, 1535, 1520, 1562)):
    game = Game.objects.create(start_fen=rules.INITIAL_FEN, fen=record.position.fen(), ply=2, status="finished",
                               result="1-0" if after > 1520 else "0-1", black_player=pid, black_name=name,
                               white_player="g" * 32, white_name="Guest <b>7</b>", time_control="3+2",
                               rated=True, black_rating_diff=12)
    for ply, (move, position) in enumerate(zip(record.moves, record.positions[1:]), start=1):
        Move.objects.create(game=game, ply=ply, notation=str(move), fen_after=position.fen())
    change = RatingChange.objects.create(game=game, player_id=pid, category="blitz", before=after - 12,
                                         after=after, deviation=90)
    RatingChange.objects.filter(pk=change.pk).update(at=start + timedelta(days=2 * number))
arena = Tournament.objects.create(name="Seeded Arena", time_control="3+0", minutes=30, starts_at=start,
                                  status="finished")
Entry.objects.create(tournament=arena, player_id=pid, name=name, score=4, games=2, wins=2)
Entry.objects.create(tournament=arena, player_id="h" * 32, name="Other", games=2)
"""


def seed(server_env: dict) -> str:
    name = f"chart{uuid.uuid4().hex[:8]}"
    done = subprocess.run([sys.executable, "manage.py", "shell", "-c", SEED.format(name=name)], cwd=ROOT,
                          env=server_env, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr[-3000:]
    return name


def test_profile_draws_its_rating_chart_and_fits_a_phone(new_context, server, server_env):
    name = seed(server_env)
    page = new_context().new_page()
    page.goto(f"{server.url}/@/{name}")
    expect(page.locator("h1")).to_have_text(name)
    chart = page.locator("#rating-chart")
    expect(chart).to_be_visible()
    expect(chart.locator(".series-blitz polyline")).to_have_count(1)
    expect(chart.locator(".series-blitz circle")).to_have_count(4)
    box = chart.bounding_box()
    assert box is not None and box["width"] > 300 and box["height"] > 80
    # The stylesheet draws the line (no inline style): a stroke, no fill.
    stroke = chart.locator(".series-blitz polyline").evaluate("el => getComputedStyle(el).stroke")
    fill = chart.locator(".series-blitz polyline").evaluate("el => getComputedStyle(el).fill")
    assert stroke not in ("", "none") and fill == "none"
    expect(page.locator('#ratings tr[data-category="correspondence"] abbr')).to_have_text("?")
    expect(page.locator("#opponents")).to_contain_text("Guest <b>7</b>")
    expect(page.locator("#recent-games .game-row")).to_have_count(4)
    expect(page.locator("#trophies li")).to_have_text("1st in Seeded Arena")
    expect(page.locator("#tournaments-played-list tbody tr")).to_contain_text("1 of 2")

    phone = new_context().new_page()
    phone.set_viewport_size({"width": 390, "height": 844})
    for path in (f"/@/{name}", f"/@/{name}/games", "/games/mine", "/leaderboard?category=blitz"):
        phone.goto(server.url + path)
        expect(phone.locator("main h1")).to_be_visible()
        width = phone.evaluate("document.documentElement.scrollWidth")
        assert width <= 390, (path, width)
        phone.screenshot(path=str(SCREENSHOTS / f"profiles-phone-{path.split('/')[-1].split('?')[0]}.png"))
    phone.goto(f"{server.url}/@/{name}/games?result=won")
    expect(phone.locator("#archive .game-row")).to_have_count(2)


def test_profile_pages_have_no_axe_violations(new_context, server, server_env):
    from tests.browser.test_accessibility import assert_clean

    name = seed(server_env)
    for scheme in ("light", "dark"):
        page = new_context(color_scheme=scheme).new_page()
        for path in (f"/@/{name}", f"/@/{name}/games?result=zzz", f"/@/{name}/games", "/games/mine",
                     "/leaderboard?category=blitz"):
            page.goto(server.url + path)
            expect(page.locator("main h1")).to_be_visible()
            assert_clean(page, f"{path} ({scheme})")
