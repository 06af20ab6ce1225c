"""Turn mails on the real database with Django's locmem outbox: batching per game and account,
the daily digest, the unsubscribe link and the settings page, and nobody mailed who should not be."""

from __future__ import annotations

import re
import uuid
from datetime import timedelta

import pytest
from django.contrib.auth.models import User
from django.core import mail
from django.core.management import call_command
from django.urls import reverse
from django.utils import timezone

from game.correspondence import mails
from game.models import Account, Game, TurnNotice
from game.round import actions

pytestmark = pytest.mark.django_db


@pytest.fixture(autouse=True)
def _locmem(settings):
    settings.EMAIL_BACKEND = "django.core.mail.backends.locmem.EmailBackend"
    settings.SITE_URL = "https://checkers.example"
    settings.TURN_MAIL_EVERY_H = 6


def account(name: str, email: str | None = None, turn_emails: bool = True, confirmed: bool = True) -> Account:
    """An account whose address (``<name>@example.org`` unless given) its owner confirmed, unless
    not ``confirmed``."""
    from allauth.account.models import EmailAddress

    user = User.objects.create_user(name, email=f"{name}@example.org" if email is None else email,
                                    password="a long enough secret 42")
    if user.email:
        EmailAddress.objects.create(user=user, email=user.email, verified=confirmed, primary=True)
    return Account.objects.create(user=user, player_id=uuid.uuid4().hex, turn_emails=turn_emails)


def game(black: str, white: str, control: str = "3d", moves: tuple[str, ...] = ()) -> Game:
    """A game in play between two player ids (Black to move unless ``moves`` were played)."""
    started = actions.start_game((black, "black"), (white, "white"), time_control=control)
    for number, text in enumerate(moves):
        mover = black if number % 2 == 0 else white
        actions.play_move(started.id, mover, text, Game.objects.get(pk=started.id).version)
    return Game.objects.get(pk=started.id)


def urls_in(message) -> list[str]:
    return re.findall(r"https://checkers\.example/\S+", message.body)


def test_a_game_mails_once_per_six_hours_and_then_again():
    alice, now = account("alice"), timezone.now()
    played = game(alice.player_id, uuid.uuid4().hex)
    assert mails.send_turn_mails(now) == 1
    assert mails.send_turn_mails(now + timedelta(hours=5, minutes=59)) == 0
    assert len(mail.outbox) == 1
    message = mail.outbox[0]
    assert message.to == ["alice@example.org"]
    assert f"https://checkers.example/g/{played.id}/" in urls_in(message)
    assert any("/mail/unsubscribe/" in url for url in urls_in(message))
    assert "List-Unsubscribe" in message.extra_headers
    assert TurnNotice.objects.get(game=played, player_id=alice.player_id).sent_at == now
    assert mails.send_turn_mails(now + timedelta(hours=6)) == 1
    assert len(mail.outbox) == 2


def test_an_account_with_three_games_gets_one_mail_listing_the_three():
    alice = account("alice")
    games = [game(alice.player_id, uuid.uuid4().hex) for _ in range(3)]
    game(uuid.uuid4().hex, alice.player_id)  # Black to move: not alice's turn
    game(alice.player_id, uuid.uuid4().hex, control="5+3")  # live: no mail
    call_command("send_turn_mails")
    assert len(mail.outbox) == 1
    assert sorted(url for url in urls_in(mail.outbox[0]) if "/g/" in url) == \
        sorted(f"https://checkers.example/g/{g.id}/" for g in games)
    assert "3" in mail.outbox[0].subject


def test_only_due_games_are_listed_and_the_digest_lists_every_waiting_game():
    alice, bob_id, now = account("alice"), uuid.uuid4().hex, timezone.now()
    first = game(alice.player_id, bob_id)
    assert mails.send_turn_mails(now) == 1
    second = game(alice.player_id, bob_id)
    assert mails.send_turn_mails(now + timedelta(hours=1)) == 1
    assert [u for u in urls_in(mail.outbox[1]) if "/g/" in u] == [f"https://checkers.example/g/{second.id}/"]
    assert mails.send_turn_mails(now + timedelta(hours=2)) == 0
    call_command("send_turn_mails", "--digest")
    assert len(mail.outbox) == 3
    digest = mail.outbox[2]
    assert {u for u in urls_in(digest) if "/g/" in u} == \
        {f"https://checkers.example/g/{g.id}/" for g in (first, second)}
    assert "digest" in digest.subject.lower()


def test_no_mail_for_guests_accounts_without_email_or_opted_out_and_after_the_move():
    quiet, nomail, bob = account("quiet", turn_emails=False), account("nomail", email=""), account("bob")
    game(uuid.uuid4().hex, bob.player_id)                 # a guest to move
    game(quiet.player_id, bob.player_id, moves=("11-15",))  # bob to move ...
    game(nomail.player_id, uuid.uuid4().hex)
    game(quiet.player_id, uuid.uuid4().hex)
    assert mails.send_turn_mails() == 1
    assert [m.to for m in mail.outbox] == [["bob@example.org"]]
    # ... once he has moved, nothing waits for him any more.
    played = Game.objects.get(black_player=quiet.player_id, ply=1)
    actions.play_move(played.id, bob.player_id, "22-18", played.version)
    assert mails.send_turn_mails(timezone.now() + timedelta(hours=7)) == 0


def test_an_address_its_owner_has_not_confirmed_is_never_mailed():
    """Anyone may type a stranger's address at sign-up: it gets no turn mail until confirmed."""
    from allauth.account.models import EmailAddress

    typed = account("typed", email="stranger@example.org", confirmed=False)
    game(typed.player_id, uuid.uuid4().hex)
    assert mails.send_turn_mails() == 0 and mail.outbox == []
    EmailAddress.objects.filter(user=typed.user).update(verified=True)
    assert mails.send_turn_mails() == 1
    assert [m.to for m in mail.outbox] == [["stranger@example.org"]]


def test_a_game_out_of_time_or_finished_mails_nobody():
    alice = account("alice")
    late = game(alice.player_id, uuid.uuid4().hex)
    Game.objects.filter(pk=late.id).update(turn_started_at=timezone.now() - timedelta(days=4))
    over = game(alice.player_id, uuid.uuid4().hex)
    actions.resign(over.id, alice.player_id)
    assert mails.send_turn_mails() == 0


def test_the_unsubscribe_link_asks_then_turns_the_mails_off_without_a_login(client):
    alice = account("alice")
    game(alice.player_id, uuid.uuid4().hex)
    mails.send_turn_mails()
    link = next(u for u in urls_in(mail.outbox[0]) if "/mail/unsubscribe/" in u)
    path = link.removeprefix("https://checkers.example")
    page = client.get(path)
    assert page.status_code == 200 and b'id="unsubscribe-form"' in page.content
    assert Account.objects.get(pk=alice.pk).turn_emails      # a GET (a mail scanner) changes nothing
    done = client.post(path)
    assert done.status_code == 200 and b'id="unsubscribe-done"' in done.content
    assert not Account.objects.get(pk=alice.pk).turn_emails
    assert mails.send_turn_mails(timezone.now() + timedelta(days=1), digest=True) == 0
    forged = path[:-3] + ("abc" if not path.endswith("abc") else "xyz")
    assert client.post(forged).status_code == 404
    assert client.get(reverse("turn_mails_unsubscribe", args=["nonsense"])).status_code == 404


def test_the_settings_page_turns_the_mails_off_and_on(client):
    alice = account("alice")
    assert client.get(reverse("notification_settings")).status_code == 302  # signed out: log in first
    client.force_login(alice.user)
    page = client.get(reverse("notification_settings"))
    assert page.status_code == 200 and b'id="turn-emails" checked' in page.content
    assert b'class="account-nav"' in page.content        # one of the account's settings pages
    assert f'href="{reverse("notification_settings")}"'.encode() in \
        client.get(reverse("account_change_password")).content
    client.post(reverse("notification_settings"), {})
    assert not Account.objects.get(pk=alice.pk).turn_emails
    client.post(reverse("notification_settings"), {"turn_emails": "on"})
    assert Account.objects.get(pk=alice.pk).turn_emails


def test_a_failing_mail_records_nothing_and_goes_next_run(settings):
    alice = account("alice")
    game(alice.player_id, uuid.uuid4().hex)
    settings.EMAIL_BACKEND = "django.core.mail.backends.smtp.EmailBackend"
    settings.EMAIL_HOST, settings.EMAIL_PORT, settings.EMAIL_TIMEOUT = "127.0.0.1", 9, 1
    assert mails.send_turn_mails() == 0
    assert not TurnNotice.objects.exists()
    settings.EMAIL_BACKEND = "django.core.mail.backends.locmem.EmailBackend"
    assert mails.send_turn_mails() == 1


def test_mails_are_in_the_language_the_account_last_logged_in_with(client, settings):
    alice = account("alice")
    client.cookies[settings.LANGUAGE_COOKIE_NAME] = "fr"
    response = client.post("/accounts/login/", {"login": "alice", "password": "a long enough secret 42"})
    assert response.status_code == 302
    assert Account.objects.get(pk=alice.pk).language == "fr"
    game(alice.player_id, uuid.uuid4().hex)
    mails.send_turn_mails()
    french = mail.outbox[0]
    assert french.subject == "Votre coup dans 1 partie par correspondance", french.subject
    assert "Bonjour alice" in french.body
    # The settings page, opened in Spanish, moves the mails to Spanish.
    client.cookies[settings.LANGUAGE_COOKIE_NAME] = "es"
    client.get(reverse("notification_settings"))
    assert Account.objects.get(pk=alice.pk).language == "es"


def test_an_account_whose_language_is_not_known_gets_english():
    alice = account("alice")
    assert alice.language == "" and mails.mail_language(alice) == "en"
    game(alice.player_id, uuid.uuid4().hex)
    mails.send_turn_mails()
    assert mail.outbox[0].subject == "Your move in 1 correspondence game"
    assert mail.outbox[0].body.startswith("Hello alice,")


@pytest.mark.parametrize("method", ["OPTIONS", "PUT", "DELETE", "PATCH"])
def test_the_pages_answer_other_methods_with_405(client, method):
    alice = account("alice")
    token = mails.unsubscribe_token(alice)
    for path in (reverse("turn_mails_unsubscribe", args=[token]), reverse("notification_settings")):
        response = client.generic(method, path)
        assert (response.status_code, response.get("Allow")) == (405, "GET, HEAD, POST"), path
    assert Account.objects.get(pk=alice.pk).turn_emails
