"""Glicko-2 against Glickman's worked example ("Example of the Glicko-2 system", 2013), step by
step, and the categories of time controls."""

from __future__ import annotations

import pytest

from game.clock import TimeControl
from game.ratings import glicko
from game.ratings.categories import category_of, expected_duration_s
from game.ratings.glicko import Glicko

PLAYER = Glicko(1500, 200, 0.06)
RESULTS = [(Glicko(1400, 30), 1.0), (Glicko(1550, 100), 0.0), (Glicko(1700, 300), 0.0)]


def test_the_worked_example_step_by_step():
    steps = glicko.steps(PLAYER, RESULTS, tau=0.5)
    # Step 2: the Glicko-2 scale.
    assert PLAYER.mu == 0 and PLAYER.phi == pytest.approx(1.1513, abs=1e-4)
    assert [o.mu for o, _ in RESULTS] == pytest.approx([-0.5756, 0.2878, 1.1513], abs=1e-4)
    # Step 3: g(phi_j), E and the estimated variance (the paper rounds as it goes: 1.7785).
    assert steps.g == pytest.approx((0.9955, 0.9531, 0.7242), abs=1e-4)
    assert steps.e == pytest.approx((0.639, 0.432, 0.303), abs=1e-3)
    assert steps.v == pytest.approx(1.7785, abs=1e-3)
    # Step 4: the estimated improvement.
    assert steps.delta == pytest.approx(-0.4834, abs=1e-3)
    # Steps 5 to 7: the new volatility, the pre-period deviation, the new deviation and rating.
    assert steps.volatility == pytest.approx(0.05999, abs=1e-5)
    assert steps.phi_star == pytest.approx(1.152862, abs=1e-4)
    assert steps.phi == pytest.approx(0.8722, abs=1e-4)
    assert steps.mu == pytest.approx(-0.2069, abs=1e-4)
    # Step 8: back on the Glicko scale.
    assert steps.after.rating == pytest.approx(1464.06, abs=0.01)
    assert steps.after.deviation == pytest.approx(151.52, abs=0.01)
    assert steps.after.volatility == pytest.approx(0.05999, abs=1e-5)


def test_a_game_is_a_rating_period_of_its_own():
    new = Glicko()
    won = glicko.after_game(new, Glicko(), 1.0, tau=0.75)
    lost = glicko.after_game(new, Glicko(), 0.0, tau=0.75)
    drawn = glicko.after_game(new, Glicko(), 0.5, tau=0.75)
    assert won.rating > 1500 > lost.rating
    assert won.rating - 1500 == pytest.approx(1500 - lost.rating)
    assert drawn.rating == pytest.approx(1500)
    assert won.deviation < 350 and won.deviation == pytest.approx(lost.deviation)
    # Two new players: the winner takes what the loser gives.
    assert glicko.after_game(Glicko(), Glicko(), 1.0, 0.75) == won


def test_beating_a_stronger_player_gains_more_and_the_engine_is_symmetric_away_from_1500():
    strong, weak = Glicko(1900, 80, 0.06), Glicko(1700, 80, 0.06)
    upset = glicko.after_game(weak, strong, 1.0, 0.75).rating - weak.rating
    expected_win = glicko.after_game(strong, weak, 1.0, 0.75).rating - strong.rating
    assert upset > expected_win > 0
    # The volatility step depends on the deviation, not on where the rating sits.
    shifted = glicko.after_game(Glicko(1000, 80, 0.06), Glicko(1200, 80, 0.06), 1.0, 0.75)
    assert shifted.rating - 1000 == pytest.approx(upset)
    assert shifted.volatility == pytest.approx(glicko.after_game(weak, strong, 1.0, 0.75).volatility)


def test_a_period_without_games_only_widens_the_deviation():
    after = glicko.period(PLAYER, [], tau=0.5)
    assert after.rating == 1500 and after.deviation > 200


def test_time_away_widens_the_deviation_as_periods_without_games():
    settled = Glicko(1800, 60, 0.06)
    assert glicko.widened(settled, 0).deviation == pytest.approx(60)
    # lichess's 0.21436 periods a day: a year away brings RD 60 back to 110, provisional again.
    year = glicko.widened(settled, 365 * 0.21436)
    assert (year.rating, year.volatility) == (1800, 0.06) and year.deviation == pytest.approx(110.0, abs=0.01)
    # One period away is step 6 of a period without games.
    assert glicko.widened(settled, 1).deviation == pytest.approx(glicko.period(settled, [], tau=0.5).deviation)
    with pytest.raises(ValueError):
        glicko.widened(settled, -1)


@pytest.mark.parametrize("score, tau", [(1.5, 0.5), (-0.1, 0.5), (1.0, 0.0)])
def test_bad_input_is_refused(score, tau):
    with pytest.raises(ValueError):
        glicko.after_game(PLAYER, Glicko(), score, tau)


@pytest.mark.parametrize("control, category", [
    ("1+0", "bullet"), ("2+1", "bullet"),          # 120 + 40 = 160 s
    ("1+2", "bullet"),                             # 60 + 80 = 140 s
    ("3+0", "blitz"), ("3+2", "blitz"), ("5+0", "blitz"), ("5+3", "blitz"),   # 420 s
    ("2+3", "blitz"),                              # 120 + 120 = 240 s
    ("8+0", "rapid"), ("10+5", "rapid"), ("15+2", "rapid"), ("20+10", "classical"),
    ("15+10", "rapid"), ("30+0", "classical"), ("180+60", "classical"),
    ("1d", "correspondence"), ("3d", "correspondence"), ("7d", "correspondence"),
    ("untimed", None),
])
def test_categories_by_expected_duration(control, category):
    assert category_of(control) == category


def test_the_category_limits_are_lichess_s():
    # Up to 179 s bullet, up to 479 s blitz, up to 1499 s rapid, longer classical.
    assert expected_duration_s(TimeControl.parse("1+3")) == 180
    assert category_of("1+2") == "bullet"       # 140 s
    assert category_of("1+3") == "blitz"        # 180 s
    assert category_of("7+1") == "blitz"        # 460 s
    assert category_of("8+0") == "rapid"        # 480 s
    assert category_of("24+1") == "rapid"       # 1480 s
    assert category_of("25+0") == "classical"   # 1500 s


def test_the_steps_agree_with_the_glicko2_package_where_its_volatility_formula_is_right():
    """An independent implementation: the PyPI ``glicko2`` package squares the rating (mu) where
    Glickman's f(x) squares the deviation (phi), so the two agree exactly when mu^2 = phi^2: a
    1700 player with RD 200 (docs/ratings.md, "Why not the glicko2 package")."""
    import glicko2 as package

    theirs = package.Player(1700, 200, 0.06)
    theirs._tau = 0.5
    theirs.update_player([o.rating for o, _ in RESULTS], [o.deviation for o, _ in RESULTS],
                         [score for _, score in RESULTS])
    ours = glicko.period(Glicko(1700, 200, 0.06), RESULTS, tau=0.5)
    assert (ours.rating, ours.deviation, ours.volatility) == (
        pytest.approx(theirs.rating, abs=1e-9), pytest.approx(theirs.rd, abs=1e-9),
        pytest.approx(theirs.vol, abs=1e-12))
