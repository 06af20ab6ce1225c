"""Template filters of the profile pages."""

from __future__ import annotations

from django import template

register = template.Library()


@register.filter
def get_item(mapping, key):
    """``{{ mapping|get_item:key }}``: ``mapping[key]``, or ``""`` when it has no such key."""
    try:
        return mapping[key]
    except (KeyError, TypeError):
        return ""
