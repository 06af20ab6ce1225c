"""Accounts on the real database and Redis: sign-up, log-in, log-out, password reset (locmem
mail), a guest's seats moving to its account, the same account's seat on a second device, the
log-in rate limit, the username rules and deleting an account (game/accounts, docs/accounts.md)."""

from __future__ import annotations

import asyncio
import re
import socket
import uuid

import pytest
from django.conf import settings
from django.contrib.auth.models import User
from django.core import mail
from django.test import Client

from game import players
from game.accounts import deletion, usernames
from game.models import Account, Game, Rating
from game.round import actions
from tests.web.conftest import Browser, hears_nothing, recv

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.usefixtures("fresh_rate_limits")]

PASSWORD = "checkers-squares-32"


def guest() -> Client:
    """A new browser that opened the home page: a guest with a player id."""
    client = Client()
    assert client.get("/").status_code == 200
    return client


def sign_up(client: Client, username: str, email: str = "") -> None:
    response = client.post("/accounts/signup/", {"username": username, "email": email,
                                                 "password1": PASSWORD, "password2": PASSWORD})
    assert response.status_code == 302, response.content.decode()[-2000:]


def log_in(client: Client, username: str, password: str = PASSWORD):
    return client.post("/accounts/login/", {"login": username, "password": password})


def log_out(client: Client) -> None:
    assert client.post("/accounts/logout/").status_code == 302


def browser_of(client: Client, name: str = "") -> Browser:
    """The game sockets' view of ``client``: its session cookie and player id."""
    return Browser(name=name, player_id=client.session["player_id"],
                   cookie=client.cookies[settings.SESSION_COOKIE_NAME].value)


def create_game(client: Client, color: str = "B") -> Game:
    response = client.post("/", {"name": "", "color": color, "time_control": "untimed", "opening": "free"})
    assert response.status_code == 302, response.content.decode()[-2000:]
    return Game.objects.get(pk=response["Location"].strip("/").split("/")[-1])


def test_sign_up_keeps_the_guest_seats_and_plays_under_the_username():
    client = guest()
    pid = client.session["player_id"]
    game = create_game(client)
    assert game.black_player == pid
    sign_up(client, "Ann_42")
    account = Account.objects.get(user__username="Ann_42")
    assert account.player_id == pid == client.session["player_id"]    # the guest's id is the account's
    page = client.get(f"/g/{game.id}/")
    assert page.context["seat"] is not None                             # still the seat
    home = client.get("/").content.decode()
    assert 'id="account-name">Ann_42<' in home and 'href="/@/Ann_42" class="account-profile"' in home
    own = client.get("/@/Ann_42").content.decode()       # the own profile leads to the account's settings
    assert 'href="/accounts/password/change/" id="account-settings-link"' in own
    assert 'id="account-settings-link"' not in Client().get("/@/Ann_42").content.decode()
    # Signed in, a typed name is ignored: the game is played under the username.
    response = client.post("/", {"name": "Someone Else", "color": "W", "time_control": "untimed",
                                 "opening": "free"})
    new_game = Game.objects.get(pk=response["Location"].strip("/").split("/")[-1])
    assert (new_game.white_player, new_game.white_name) == (pid, "Ann_42")


def test_log_out_gives_a_new_guest_and_log_in_gives_the_account_back():
    client = guest()
    sign_up(client, "bert")
    account_pid = client.session["player_id"]
    log_out(client)
    assert b'id="login-link"' in client.get("/").content
    guest_pid = client.session["player_id"]
    assert guest_pid != account_pid
    response = log_in(client, "BERT")                    # usernames are found whatever the case
    assert response.status_code == 302
    assert client.session["player_id"] == account_pid
    assert client.session["account"] == "bert"


def test_log_in_moves_the_guests_seats_to_the_account(alice):
    owner = guest()
    sign_up(owner, "Dora")
    dora = Account.objects.get(user__username="Dora")
    log_out(owner)
    visitor = guest()                                    # another browser, a guest for now
    game = create_game(visitor, color="W")
    guest_pid = visitor.session["player_id"]
    actions.join_game(game.id, alice.player_id, "alice")
    game.refresh_from_db()
    version = game.version

    async def scenario():
        a, snap = await alice.connect(game.id)
        assert snap["you"] == "B"
        # The visitor logs in to Dora: the seat moves, and Alice's board is told.
        assert (await asyncio.to_thread(log_in, visitor, "Dora")).status_code == 302
        event = await recv(a)
        assert event["type"] == "seats" and event["v"] == version + 1
        # The visitor's browser, and a second device logged in to Dora, are both White's seat.
        second = Client()
        assert (await asyncio.to_thread(log_in, second, "Dora")).status_code == 302
        v1, snap1 = await browser_of(visitor).connect(game.id)
        v2, snap2 = await browser_of(second).connect(game.id)
        assert snap1["you"] == snap2["you"] == "W"
        await a.send_json_to({"type": "move", "move": "11-15", "v": snap["v"] + 1})
        assert (await recv(a))["type"] == "move"
        await recv(v1)
        moved = await recv(v2)
        await v2.send_json_to({"type": "move", "move": "23-19", "v": moved["v"]})
        reply = await recv(v1)
        assert reply["type"] == "move" and reply["move"] == "23-19"
        for comm in (a, v1, v2):
            await comm.disconnect()

    asyncio.run(scenario())
    game.refresh_from_db()
    assert game.white_player == dora.player_id == visitor.session["player_id"]
    assert guest_pid not in (game.black_player, game.white_player)
    assert game.ply == 2


def test_password_reset_by_the_link_in_the_mail():
    client = guest()
    sign_up(client, "carla", email="carla@example.org")
    log_out(client)
    mail.outbox.clear()
    response = client.post("/accounts/password/reset/", {"email": "carla@example.org"})
    assert response.status_code == 302
    assert len(mail.outbox) == 1 and mail.outbox[0].to == ["carla@example.org"]
    link = re.search(r"https?://[^/\s]+(/accounts/password/reset/key/\S+/)", mail.outbox[0].body).group(1)
    response = client.get(link, follow=True)
    assert response.status_code == 200
    form_url = response.redirect_chain[-1][0] if response.redirect_chain else link
    new = "a-brand-new-password-7"
    response = client.post(form_url, {"password1": new, "password2": new})
    assert response.status_code == 302, response.content.decode()[-2000:]
    assert log_in(client, "carla").status_code == 200          # the old password no longer works
    assert log_in(client, "carla", new).status_code == 302


def test_wrong_passwords_are_rate_limited():
    client = guest()
    sign_up(client, "eve_x")
    log_out(client)
    for _ in range(5):
        response = log_in(client, "eve_x", "not-the-password")
        assert response.status_code == 200 and "account" not in client.session
    response = log_in(client, "eve_x")                  # even the right one, for a while
    assert response.status_code == 200 and "account" not in client.session
    assert b"Too many failed login attempts" in response.content


@pytest.mark.parametrize("name", ["ab", "a" * 21, "Guest_1234", "guest", "GUEST-x", "Computer", "computer_level_3",
                                  "bot-9", "___", "--", "ann smith", "ann.smith", "Zoë", "deleted_player", "admin",
                                  "Invite_4821", "Invitado4821", "Ordinateur-3", "ORDENADOR"])
def test_usernames_refused(name):
    with pytest.raises(Exception) as refused:
        usernames.check(name)
    assert refused.type.__name__ == "ValidationError"
    client = guest()
    response = client.post("/accounts/signup/", {"username": name, "password1": PASSWORD, "password2": PASSWORD})
    assert response.status_code == 200 and not User.objects.filter(username=name).exists()


def test_usernames_are_unique_whatever_the_case():
    sign_up(guest(), "Frank")
    response = guest().post("/accounts/signup/", {"username": "fRANK", "password1": PASSWORD, "password2": PASSWORD})
    assert response.status_code == 200
    assert User.objects.filter(username__iexact="frank").count() == 1
    usernames.check("Frank_2-x")                          # letters, digits, _ and -: fine


def test_weak_passwords_are_refused():
    response = guest().post("/accounts/signup/", {"username": "gina", "password1": "12345678",
                                                  "password2": "12345678"})
    assert response.status_code == 200 and not User.objects.filter(username="gina").exists()


def test_deleting_an_account_resigns_its_games_and_keeps_finished_ones(alice, bob):
    client = guest()
    sign_up(client, "Hana")
    pid = client.session["player_id"]
    ongoing = create_game(client)
    actions.join_game(ongoing.id, alice.player_id, "alice")
    finished = create_game(client)
    actions.join_game(finished.id, bob.player_id, "bob")
    actions.resign(finished.id, bob.player_id)
    waiting = create_game(client)
    Rating.objects.create(player_id=pid, category="blitz")

    async def scenario():
        a, _ = await alice.connect(ongoing.id)
        response = await asyncio.to_thread(client.post, "/accounts/delete/", {"password": "wrong"})
        assert response.status_code == 400
        assert await asyncio.to_thread(User.objects.filter(username="Hana").exists)
        response = await asyncio.to_thread(client.post, "/accounts/delete/", {"password": PASSWORD})
        assert response.status_code == 302
        event = await recv(a)                            # Alice's board shows the resignation at once
        assert event["type"] == "update" and event["what"] == "resigned"
        assert event["state"]["status"] == "finished"
        seats = await recv(a)
        assert seats["type"] == "seats"
        assert seats["state"]["seats"]["B"]["name"] == deletion.DELETED_NAME
        await a.disconnect()

    asyncio.run(scenario())
    assert not User.objects.filter(username="Hana").exists()
    assert not Account.objects.filter(player_id=pid).exists()
    assert not Rating.objects.filter(player_id=pid).exists()
    for game in (ongoing, finished, waiting):
        game.refresh_from_db()
        assert players.is_deleted(game.black_player) and game.black_name == "deleted player"
    assert (ongoing.status, ongoing.result, ongoing.termination) == ("finished", "0-1", "resignation")
    assert (finished.status, finished.result) == ("finished", "1-0")
    assert waiting.status == "aborted"
    assert b'id="login-link"' in client.get("/").content
    assert client.session["player_id"] != pid                     # a guest again
    record = Client().get(f"/g/{finished.id}.pdn").content.decode()
    assert '[Black "deleted player"]' in record and '[White "bob"]' in record


def test_a_session_of_a_deleted_account_becomes_a_guest():
    phone = guest()
    sign_up(phone, "Ivo")
    laptop = Client()
    assert log_in(laptop, "Ivo").status_code == 302
    pid = laptop.session["player_id"]
    assert phone.post("/accounts/delete/", {"password": PASSWORD}).status_code == 302
    laptop.get("/")
    assert laptop.session["player_id"] != pid and "account" not in laptop.session


ACCOUNT_PAGES_AS_GUEST = ["/accounts/login/", "/accounts/signup/", "/accounts/password/reset/",
                          "/accounts/password/reset/done/"]
ACCOUNT_PAGES_SIGNED_IN = ["/accounts/password/change/", "/accounts/email/", "/accounts/delete/",
                           "/accounts/logout/"]


def assert_site_page(response) -> None:
    """An account page in the site's look, with the strict policy and no inline script (a JSON data
    block is no script)."""
    assert response.status_code == 200
    html = response.content.decode()
    assert 'class="site-header"' in html and 'href="/static/css/accounts.css"' in html
    assert "script-src 'self'" in response["Content-Security-Policy"]
    for tag in html.split("<script")[1:]:
        head = tag.split(">", 1)[0]
        assert "src=" in head or 'type="application/json"' in head, head
    assert " onclick=" not in html and " onload=" not in html and "javascript:" not in html
    assert ' style="' not in html


@pytest.mark.parametrize("language", ["en", "fr", "es"])
def test_account_pages_are_the_sites_in_every_language(language):
    client = guest()
    client.cookies[settings.LANGUAGE_COOKIE_NAME] = language
    for path in ACCOUNT_PAGES_AS_GUEST:
        assert_site_page(client.get(path))
    assert client.get("/accounts/delete/").status_code == 302          # signed in only
    sign_up(client, f"pages_{language}")
    for path in ACCOUNT_PAGES_SIGNED_IN:
        assert_site_page(client.get(path))
    assert f'lang="{language}"'.encode() in client.get("/accounts/password/change/").content


def test_password_change_keeps_the_browser_signed_in():
    client = guest()
    sign_up(client, "jules")
    pid = client.session["player_id"]
    new = "another-long-password-8"
    response = client.post("/accounts/password/change/", {"oldpassword": PASSWORD, "password1": new,
                                                          "password2": new})
    assert response.status_code == 302, response.content.decode()[-2000:]
    client.get("/")
    assert client.session["player_id"] == pid and client.session["account"] == "jules"
    log_out(client)
    assert log_in(client, "jules", new).status_code == 302


def test_signed_in_players_join_and_seek_under_their_username(alice, settings):
    from game.lobby import pools as matchmaking
    from tests.web.test_matchmaking import next_message, open_lobby, seek

    settings.MATCHMAKING_PREFIX = f"{settings.MATCHMAKING_PREFIX}-accounts-{uuid.uuid4().hex[:8]}"
    client = guest()
    sign_up(client, "Kim_9")
    pid = client.session["player_id"]
    game = actions.create_game(alice.player_id, "alice", "B")
    assert b'value="Kim_9"' in client.get(f"/g/{game.id}/").content    # the name box shows the username
    assert client.post(f"/g/{game.id}/join", {"name": "Not Kim"}).status_code == 302
    game.refresh_from_db()
    assert (game.white_player, game.white_name) == (pid, "Kim_9")

    async def scenario():
        kim = await open_lobby(browser_of(client))
        other = await open_lobby(alice)
        try:
            await seek(kim, pool="untimed", name="Not Kim")
            await seek(other, pool="untimed")
            paired = await next_message(kim)
            assert paired["type"] == "paired"
            return paired["game"]
        finally:
            for comm in (kim, other):
                await comm.disconnect()
            await matchmaking.close_all()

    paired = Game.objects.get(pk=asyncio.run(scenario()))
    names = {paired.black_player: paired.black_name, paired.white_player: paired.white_name}
    assert names[pid] == "Kim_9"


def test_a_mail_server_that_cannot_be_reached_fails_no_page(settings, caplog):
    with socket.socket() as probe:                      # a port nothing listens on
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    settings.EMAIL_BACKEND = "django.core.mail.backends.smtp.EmailBackend"
    settings.EMAIL_HOST, settings.EMAIL_PORT, settings.EMAIL_TIMEOUT = "127.0.0.1", port, 2
    client = guest()
    sign_up(client, "lena", email="lena@example.org")    # the confirmation mail cannot go: still signed up
    assert client.session["account"] == "lena"
    log_out(client)
    assert client.post("/accounts/password/reset/", {"email": "lena@example.org"}).status_code == 302
    assert "could not send" in caplog.text


def test_the_headers_links_come_back_to_the_page_but_not_to_an_account_page():
    client = guest()
    game = create_game(client)
    page = client.get(f"/g/{game.id}/").content.decode()
    assert f'href="/accounts/signup/?next=/g/{game.id}/"' in page
    login_page = client.get("/accounts/login/").content.decode()
    assert 'href="/accounts/signup/" id="signup-link"' in login_page


MAIL_SETTINGS = ("from django.conf import settings as s; "
                 "print(s.EMAIL_BACKEND, s.EMAIL_HOST, s.EMAIL_PORT, s.EMAIL_HOST_USER, s.EMAIL_USE_TLS, "
                 "s.DEFAULT_FROM_EMAIL, sep='|')")


@pytest.mark.parametrize(("env", "expected"), [
    ({"DJANGO_DEBUG": "1"}, "django.core.mail.backends.console.EmailBackend|localhost|25||False"),
    ({}, "django.core.mail.backends.smtp.EmailBackend|localhost|25||False"),
    ({"EMAIL_HOST": "relay.example.org", "EMAIL_PORT": "2525", "EMAIL_USE_TLS": "1"},
     "django.core.mail.backends.smtp.EmailBackend|relay.example.org|2525||True"),
    ({"EMAIL_URL": "smtp+tls://mailer:s3cret@smtp.example.org:587", "DJANGO_DEBUG": "1"},
     "django.core.mail.backends.smtp.EmailBackend|smtp.example.org|587|mailer|True"),
])
def test_mail_settings_come_from_the_environment(env, expected):
    from tests.web.test_site_pages import run_manage

    result = run_manage("shell", "-c", MAIL_SETTINGS, **{"DEFAULT_FROM_EMAIL": "Checkers <mail@example.org>", **env})
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip().splitlines()[-1] == expected + "|Checkers <mail@example.org>"


def test_a_username_taken_in_another_case_while_signing_up_is_refused():
    from allauth.account.forms import SignupForm
    from allauth.core.exceptions import ImmediateHttpResponse
    from django.contrib.messages import get_messages

    client = guest()
    request = client.get("/accounts/signup/").wsgi_request
    form = SignupForm({"username": "mona", "password1": PASSWORD, "password2": PASSWORD})
    assert form.is_valid(), form.errors                  # checked while the name was free...
    User.objects.create_user("Mona", password=PASSWORD)  # ...then another sign-up took it
    with pytest.raises(ImmediateHttpResponse) as answer:
        form.try_save(request)
    assert answer.value.response["Location"] == "/accounts/signup/"
    assert "taken a moment ago" in " ".join(str(m) for m in get_messages(request))
    assert list(User.objects.filter(username__iexact="mona").values_list("username", flat=True)) == ["Mona"]


def test_a_user_deleted_in_the_admin_is_deleted_as_an_account(alice):
    client = guest()
    sign_up(client, "Nils")
    pid = client.session["player_id"]
    game = create_game(client)
    actions.join_game(game.id, alice.player_id, "alice")
    root = User.objects.create_superuser("root", "root@example.com", PASSWORD)
    admin = Client()
    admin.force_login(root)
    user = User.objects.get(username="Nils")
    response = admin.post(f"/admin/auth/user/{user.pk}/delete/", {"post": "yes"})
    assert response.status_code == 302, response.content.decode()[:3000]
    game.refresh_from_db()
    assert (game.status, game.termination, game.black_name) == ("finished", "resignation", "deleted player")
    assert not Account.objects.filter(player_id=pid).exists()
    assert admin.get("/admin/game/account/").status_code == 200
    # An account deleted from the accounts' admin page goes the same way.
    client = guest()
    sign_up(client, "Olga")
    account = Account.objects.get(user__username="Olga")
    other = create_game(client)
    actions.join_game(other.id, alice.player_id, "alice")
    assert admin.post(f"/admin/game/account/{account.pk}/delete/", {"post": "yes"}).status_code == 302
    other.refresh_from_db()
    assert (other.status, other.black_name) == ("finished", "deleted player")
    assert not User.objects.filter(username="Olga").exists()


def test_a_tab_open_before_the_log_in_reconnects_as_the_seat(alice):
    owner = guest()
    sign_up(owner, "Pia")
    log_out(owner)
    visitor = guest()
    game = create_game(visitor, color="W")
    actions.join_game(game.id, alice.player_id, "alice")
    before = browser_of(visitor)                           # the other tab's cookie, still a guest's

    async def scenario():
        tab, snap = await before.connect(game.id)
        a, _ = await alice.connect(game.id)
        assert snap["you"] == "W"
        assert (await asyncio.to_thread(log_in, visitor, "Pia")).status_code == 302
        assert (await recv(tab))["type"] == "seats"
        assert (await recv(a))["type"] == "seats"
        closing = await tab.receive_output(timeout=5)       # its session no longer holds the seat
        assert closing == {"type": "websocket.close", "code": 4409}
        again, snap = await browser_of(visitor).connect(game.id)   # the page's reconnect, signed in
        assert snap["you"] == "W"
        assert await hears_nothing(a, 0.3)                  # Alice's socket is not closed
        for comm in (again, a):
            await comm.disconnect()

    asyncio.run(scenario())


def test_the_sign_up_page_holds_the_username_box_to_the_username_rules():
    """The page lets no more be typed than a username may have (the user model's 150 allowed 60-character
    names to be typed and then refused)."""
    page = guest().get("/accounts/signup/").content.decode()
    box = re.search(r'<input[^>]*name="username"[^>]*>', page)
    assert box is not None, page
    assert 'maxlength="20"' in box.group(0) and 'minlength="3"' in box.group(0), box.group(0)


def test_the_account_pages_say_sign_in_and_sign_up_as_the_header_does_and_spanish_says_tu():
    login = Client().get("/accounts/login/").content.decode()
    signup = Client().get("/accounts/signup/").content.decode()
    assert re.search(r'id="login-link">Sign in<', login) and re.search(r'id="signup-link">Sign up<', login)
    assert "<h1>Sign in</h1>" in re.sub(r"\s+", " ", login).replace("<h1> ", "<h1>").replace(" </h1>", "</h1>")
    assert "Sign In" not in login and "Sign Up" not in signup and "Log in" not in login
    assert "Already have an account?" in signup
    es_login = Client().get("/accounts/login/", HTTP_ACCEPT_LANGUAGE="es").content.decode()
    es_signup = Client().get("/accounts/signup/", HTTP_ACCEPT_LANGUAGE="es").content.decode()
    assert "¿Olvidaste tu contraseña?" in es_login and "¿Aún no tienes cuenta?" in es_login
    assert "¿Ya tienes cuenta?" in es_signup and "Tu contraseña no puede ser completamente numérica." in es_signup
    for page in (es_login, es_signup):     # the site says "tú": none of the libraries' "usted"
        assert not re.search(r"\b(Su contraseña|su contraseña|inicie sesión|regístrese|Ya tiene una)\b", page)
