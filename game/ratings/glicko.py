"""Glicko-2 (Mark Glickman, "Example of the Glicko-2 system", 2013): pure Python, no Django.

A player's strength is a :class:`Glicko`: ``rating`` and ``deviation`` on the Glicko scale
(1500 / 350 for a new player), ``volatility`` (sigma, 0.06 new).  :func:`period` rates one rating
period's games; the site makes every rated game a period of its own, as lichess does
(:func:`after_game`).  The steps are Glickman's, numbered as in his paper; :func:`steps` returns
the intermediate values, so ``tests/ratings/test_glicko.py`` checks them against his worked example.

The PyPI ``glicko2`` package (2.1.0) is not used: its volatility step (``Player._f``) squares the
rating (mu) where Glickman's f(x) squares the deviation (phi), right only by chance when the two
are equal (the error is small, but it is not the published formula), and its ``tau`` is one value
shared by the whole process (``docs/ratings.md``).
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from dataclasses import dataclass

#: Glicko scale to Glicko-2 scale: mu = (rating - 1500) / SCALE, phi = deviation / SCALE.
SCALE = 173.7178
#: A new player's rating, deviation and volatility.
NEW_RATING, NEW_DEVIATION, NEW_VOLATILITY = 1500.0, 350.0, 0.06
#: The Illinois iteration's stop: |B - A| at most this (Glickman's epsilon).
EPSILON = 0.000001


@dataclass(frozen=True)
class Glicko:
    """One player's Glicko-2 strength: ``rating``, ``deviation`` (Glicko scale, points) and
    ``volatility`` (sigma)."""

    rating: float = NEW_RATING
    deviation: float = NEW_DEVIATION
    volatility: float = NEW_VOLATILITY

    @property
    def mu(self) -> float:
        """The rating on the Glicko-2 scale."""
        return (self.rating - 1500.0) / SCALE

    @property
    def phi(self) -> float:
        """The deviation on the Glicko-2 scale."""
        return self.deviation / SCALE


@dataclass(frozen=True)
class Steps:
    """The intermediate values of one rating period (Glickman's steps 3 to 8, Glicko-2 scale):
    ``g`` and ``e`` per opponent, ``v`` (estimated variance), ``delta`` (estimated improvement),
    ``volatility`` (sigma'), ``phi_star`` (the deviation before the games), ``phi`` and ``mu``
    (the new deviation and rating), and ``after``, the new :class:`Glicko`."""

    g: tuple[float, ...]
    e: tuple[float, ...]
    v: float
    delta: float
    volatility: float
    phi_star: float
    phi: float
    mu: float
    after: Glicko


def g(phi: float) -> float:
    """Glickman's g(phi): how much an opponent's deviation ``phi`` (Glicko-2 scale) weighs down
    what the result against it says."""
    return 1.0 / math.sqrt(1.0 + 3.0 * phi * phi / (math.pi * math.pi))


def expected(mu: float, mu_j: float, phi_j: float) -> float:
    """Glickman's E: the expected score (0 to 1) of a player rated ``mu`` against an opponent
    ``mu_j`` with deviation ``phi_j`` (Glicko-2 scale)."""
    return 1.0 / (1.0 + math.exp(-g(phi_j) * (mu - mu_j)))


def _volatility(phi: float, sigma: float, v: float, delta: float, tau: float) -> float:
    """Step 5: the new volatility, by the Illinois algorithm on Glickman's f(x)."""
    a = math.log(sigma * sigma)

    def f(x: float) -> float:
        ex = math.exp(x)
        return (ex * (delta * delta - phi * phi - v - ex) / (2.0 * (phi * phi + v + ex) ** 2)
                - (x - a) / (tau * tau))

    big_a = a
    if delta * delta > phi * phi + v:
        big_b = math.log(delta * delta - phi * phi - v)
    else:
        k = 1
        while f(a - k * tau) < 0:
            k += 1
        big_b = a - k * tau
    f_a, f_b = f(big_a), f(big_b)
    while abs(big_b - big_a) > EPSILON:
        big_c = big_a + (big_a - big_b) * f_a / (f_b - f_a)
        f_c = f(big_c)
        if f_c * f_b <= 0:
            big_a, f_a = big_b, f_b
        else:
            f_a /= 2.0
        big_b, f_b = big_c, f_c
    return math.exp(big_a / 2.0)


def steps(player: Glicko, results: Iterable[tuple[Glicko, float]], tau: float) -> Steps:
    """Rate one period of ``player``'s games: ``results`` are ``(opponent, score)`` with score 1
    for a win, 0.5 a draw, 0 a loss; ``tau`` the system constant (0.3 to 1.2).  Returns every
    intermediate value (:class:`Steps`).  A period without games only widens the deviation
    (step 6).  Raises ValueError for a score outside 0..1 or a tau that is not positive."""
    if not tau > 0:
        raise ValueError(f"tau must be positive, not {tau!r}")
    games = list(results)
    for _, score in games:
        if not 0.0 <= score <= 1.0:
            raise ValueError(f"a score is 0, 0.5 or 1, not {score!r}")
    mu, phi, sigma = player.mu, player.phi, player.volatility
    if not games:
        phi_star = math.sqrt(phi * phi + sigma * sigma)
        after = Glicko(player.rating, phi_star * SCALE, sigma)
        return Steps((), (), math.inf, 0.0, sigma, phi_star, phi_star, mu, after)
    gs = tuple(g(opponent.phi) for opponent, _ in games)
    es = tuple(expected(mu, opponent.mu, opponent.phi) for opponent, _ in games)
    v = 1.0 / sum(gj * gj * ej * (1.0 - ej) for gj, ej in zip(gs, es, strict=True))           # step 3
    gain = sum(gj * (score - ej) for gj, ej, (_, score) in zip(gs, es, games, strict=True))
    delta = v * gain                                                                          # step 4
    new_sigma = _volatility(phi, sigma, v, delta, tau)                                        # step 5
    phi_star = math.sqrt(phi * phi + new_sigma * new_sigma)                                   # step 6
    new_phi = 1.0 / math.sqrt(1.0 / (phi_star * phi_star) + 1.0 / v)                          # step 7
    new_mu = mu + new_phi * new_phi * gain
    after = Glicko(SCALE * new_mu + 1500.0, SCALE * new_phi, new_sigma)                       # step 8
    return Steps(gs, es, v, delta, new_sigma, phi_star, new_phi, new_mu, after)


def widened(player: Glicko, periods: float) -> Glicko:
    """``player`` after ``periods`` rating periods without games (a fraction allowed): the
    deviation grows as step 6 makes it, sqrt(phi^2 + periods * sigma^2), rating and volatility
    unchanged.  Raises ValueError for negative ``periods``."""
    if periods < 0:
        raise ValueError(f"periods cannot be negative, not {periods!r}")
    phi = math.sqrt(player.phi * player.phi + periods * player.volatility * player.volatility)
    return Glicko(player.rating, phi * SCALE, player.volatility)


def period(player: Glicko, results: Iterable[tuple[Glicko, float]], tau: float) -> Glicko:
    """``player`` after one rating period of ``results`` (see :func:`steps`)."""
    return steps(player, results, tau).after


def after_game(player: Glicko, opponent: Glicko, score: float, tau: float) -> Glicko:
    """``player`` after one game against ``opponent`` (``score``: 1 won, 0.5 drawn, 0 lost),
    the game being a rating period of its own.  Raises ValueError as :func:`steps`."""
    return period(player, [(opponent, score)], tau)
