"""Template tags of the engine's pages: the "Play the computer" panel of the home page."""

from django import template

from game.engine import LEVELS
from game.i18n import level_name

register = template.Library()


@register.inclusion_tag("computer_panel.html", takes_context=True)
def computer_panel(context):
    """The "Play the computer" form: level (1-5) and colour; posts to ``/computer``."""
    return {"request": context.get("request"), "csrf_token": context.get("csrf_token"),
            "computer_levels": [{"number": lv.number, "name": level_name(lv.number, lv.name)}
                                for lv in LEVELS]}
