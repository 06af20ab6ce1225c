"""The address of the scripts' catalog for the page's ``<script>`` (:func:`game.i18n.catalog_path`)."""

from django import template

from game.i18n import catalog_path

register = template.Library()


@register.simple_tag
def script_catalog_url() -> str:
    """The scripts' catalog in the page's language at today's version: ``/jsi18n/es/0123456789ab/``."""
    return catalog_path()
