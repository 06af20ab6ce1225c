"""Template tags of the engine's pages: the "Play the computer" panel of the home page."""

from django import template

from game.engine import LEVELS
from game.i18n import level_name
from game.round.takebacks import COMPUTER_GRANTS_UP_TO

register = template.Library()


@register.inclusion_tag("computer_panel.html", takes_context=True)
def computer_panel(context):
    """The "Play the computer" form: level (1-9) and colour; posts to ``/computer``.  After a refusal
    (``computer_form`` in the page's context, bound) it shows the form's errors and keeps the choices."""
    form = context.get("computer_form")
    chosen = form.data if form is not None else {}
    errors = [str(e) for errors in form.errors.values() for e in errors] if form is not None else []
    return {"request": context.get("request"), "csrf_token": context.get("csrf_token"),
            "errors": errors, "chosen_level": str(chosen.get("level", "3")),
            "chosen_color": chosen.get("color", "random"), "chosen_opening": chosen.get("opening", "free"),
            "chosen_ballot": chosen.get("ballot", ""),
            "computer_levels": [{"number": lv.number, "name": level_name(lv.number, lv.name)}
                                for lv in LEVELS],
            "grants_up_to": COMPUTER_GRANTS_UP_TO, "refuses_from": COMPUTER_GRANTS_UP_TO + 1,
            "strongest": len(LEVELS)}
