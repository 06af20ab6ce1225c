"""The join form of a game with a free seat, in a real Chromium: it stays where it is while the
page fills in around it, so a visitor's click lands on the button."""

from __future__ import annotations

from playwright.sync_api import expect

from tests.browser.test_game_actions import create_game, new_page

#: The join button's top (px from the top of the page), with the audience line hidden and shown.
BUTTON_TOPS = """() => {
  const line = document.getElementById('audience');
  const top = () => document.getElementById('join-game').getBoundingClientRect().top;
  const shown = top();
  line.hidden = true;
  const hidden = top();
  line.hidden = false;
  return [hidden, shown];
}"""


def test_the_audience_line_keeps_its_room_above_the_join_form(server, new_context):
    alice = new_page(new_context)
    url = create_game(server, alice)
    visitor = new_page(new_context)
    visitor.goto(url)
    expect(visitor.locator("body")).to_have_attribute("data-status", "waiting")
    # The first spectator (the visitor) is counted up to a second after the page shows the game.
    expect(visitor.locator("#audience")).to_have_text("1 spectator watching")
    hidden, shown = visitor.evaluate(BUTTON_TOPS)
    assert hidden == shown, f"the join button moved from {hidden} to {shown} px when the line showed"
    expect(visitor.locator("#join-game")).to_be_visible()
