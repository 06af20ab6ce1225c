"""Taking the free seat of a game from its page, as a visitor does."""

from __future__ import annotations

from playwright.sync_api import Page, expect


def take_free_seat(page: Page, name: str | None = None) -> None:
    """Join the game open in ``page`` as ``name`` (or the page's guest name), once the page shows
    the game: the snapshot fills the panel above the join form, and a click made while it grows
    can land beside the button."""
    expect(page.locator("body")).to_have_attribute("data-status", "waiting")
    expect(page.locator("#connection")).to_have_attribute("data-state", "open")
    if name is not None:
        page.locator("#join-form").get_by_label("Your name").fill(name)
    page.locator("#join-game").click()
