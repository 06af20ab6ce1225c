"""Ratings: Glicko-2 (:mod:`~game.ratings.glicko`), the categories a time control is rated in
(:mod:`~game.ratings.categories`) and rated games, whose end changes both players' ratings
(:mod:`~game.ratings.games`).  ``docs/ratings.md`` says how and why."""
