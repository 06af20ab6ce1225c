"""Template tags of the tournaments shown on other pages: a player's events on their profile."""

from django import template

from game.tournaments import history

register = template.Library()


@register.inclusion_tag("tournaments/_played.html")
def tournaments_played(player_id: str):
    """The "Tournaments" panel of a profile: the player's finished tournaments
    (:func:`game.tournaments.history.played`), their rank and score, a trophy for a podium place."""
    rows = history.played(player_id)
    return {"played": rows, "trophies": [row for row in rows if row.trophy]}
