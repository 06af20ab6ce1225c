"""What the log-in, the admin and the sign-up give away to a stranger, on the real database and the
Redis cache (docs/accounts.md, "What is protected"): wrong passwords lock a username out for the
address that typed them only; the admin's log-in is the site's, with its limits, and the admin can
be kept to a list of addresses; sign-up tells nothing of the email addresses already used."""

from __future__ import annotations

import pytest
from allauth.account.models import EmailAddress
from allauth.core.internal.ratelimit import Rate, parse_rates
from django.conf import settings
from django.contrib.auth import SESSION_KEY
from django.contrib.auth.models import User
from django.core import mail
from django.test import Client, override_settings

from tests.web.test_accounts import PASSWORD, guest, log_out, sign_up

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.usefixtures("fresh_rate_limits")]

ATTACKER, OWNER = "203.0.113.66", "198.51.100.7"


def log_in_from(client: Client, address: str, username: str, password: str = PASSWORD, path: str = "/accounts/login/"):
    return client.post(path, {"login": username, "password": password}, REMOTE_ADDR=address)


def signed_in(client: Client) -> bool:
    return SESSION_KEY in client.session


def test_wrong_passwords_from_one_address_do_not_lock_the_owner_out():
    owner = guest()
    sign_up(owner, "victim_1")
    log_out(owner)
    attacker = guest()
    for _ in range(6):
        response = log_in_from(attacker, ATTACKER, "victim_1", "not-the-password")
        assert response.status_code == 200 and not signed_in(attacker)
    refused = log_in_from(attacker, ATTACKER, "victim_1")            # the attacker's address is locked out
    assert refused.status_code == 200 and not signed_in(attacker)
    assert b"Too many failed login attempts" in refused.content
    response = log_in_from(owner, OWNER, "victim_1")                 # the owner, elsewhere, is not
    assert response.status_code == 302 and signed_in(owner)


def test_one_address_is_limited_across_usernames():
    for name in ("ulla_1", "ulla_2"):
        client = guest()
        sign_up(client, name)
        log_out(client)
    attacker = guest()
    for index in range(10):                                          # 10 a minute per address
        assert log_in_from(attacker, ATTACKER, f"nobody_{index}", "wrong-password").status_code == 200
    response = log_in_from(attacker, ATTACKER, "ulla_1")
    assert b"Too many failed login attempts" in response.content and not signed_in(attacker)
    assert log_in_from(guest(), OWNER, "ulla_2").status_code == 302


def test_the_admin_log_in_is_the_sites_with_its_limits():
    User.objects.create_superuser("root", "root@example.com", PASSWORD)
    attacker = Client()
    for _ in range(25):                                   # the admin's own form checks no password
        response = attacker.post("/admin/login/", {"username": "root", "password": "wrong"}, REMOTE_ADDR=ATTACKER)
        assert response.status_code == 302 and response["Location"].startswith("/accounts/login/?next=")
    response = attacker.post("/admin/login/?next=/admin/", {"username": "root", "password": PASSWORD},
                             REMOTE_ADDR=ATTACKER)
    assert response.status_code == 302 and not signed_in(attacker)
    for _ in range(5):                                    # the site's log-in counts them
        log_in_from(attacker, ATTACKER, "root", "wrong", path="/accounts/login/?next=/admin/")
    response = log_in_from(attacker, ATTACKER, "root", path="/accounts/login/?next=/admin/")
    assert b"Too many failed login attempts" in response.content and not signed_in(attacker)
    staff = Client()
    response = log_in_from(staff, OWNER, "root", path="/accounts/login/?next=/admin/")
    assert response.status_code == 302 and response["Location"] == "/admin/"
    assert staff.get("/admin/", REMOTE_ADDR=OWNER).status_code == 200


def test_the_admin_can_be_kept_to_a_list_of_addresses():
    root = User.objects.create_superuser("root", "root@example.com", PASSWORD)
    staff = Client()
    staff.force_login(root)
    with override_settings(ADMIN_ALLOWED_ADDRESSES=["10.0.0.0/8", "2001:db8::1"]):
        for path in ("/admin/", "/admin/login/", "/admin/auth/user/"):
            assert staff.get(path, REMOTE_ADDR=ATTACKER).status_code == 404
        assert staff.get("/admin/", REMOTE_ADDR="10.20.30.40").status_code == 200
        assert staff.get("/admin/", REMOTE_ADDR="2001:db8::1").status_code == 200
        assert staff.get("/", REMOTE_ADDR=ATTACKER).status_code == 200      # the rest of the site is not concerned


def test_the_delete_page_counts_wrong_passwords_as_the_log_in_does():
    client = guest()
    sign_up(client, "dora_x")
    for _ in range(5):
        response = client.post("/accounts/delete/", {"password": "wrong"}, REMOTE_ADDR=ATTACKER)
        assert response.status_code == 400
    response = client.post("/accounts/delete/", {"password": PASSWORD}, REMOTE_ADDR=ATTACKER)
    assert response.status_code == 400 and b"Too many failed login attempts" in response.content
    assert User.objects.filter(username="dora_x").exists()
    assert client.post("/accounts/delete/", {"password": PASSWORD}, REMOTE_ADDR=OWNER).status_code == 302
    assert not User.objects.filter(username="dora_x").exists()


def signup_answer(username: str, email: str):
    client = guest()
    response = client.post("/accounts/signup/", {"username": username, "email": email,
                                                 "password1": PASSWORD, "password2": PASSWORD})
    return response, client


def test_sign_up_does_not_tell_whether_an_email_is_registered():
    signup_answer("wanda_1", "wanda@example.org")
    mail.outbox.clear()
    taken, taken_client = signup_answer("wanda_2", "Wanda@Example.org")
    fresh, _ = signup_answer("wanda_3", "someone-else@example.org")
    assert (taken.status_code, taken["Location"]) == (fresh.status_code, fresh["Location"]) == (302, "/")
    assert signed_in(taken_client)
    # No mail tells anyone more either: the taken address got none (allauth's cooldown of one
    # confirmation mail per address in 3 minutes), the new one its confirmation.
    assert [m.to for m in mail.outbox] == [["someone-else@example.org"]]
    page = taken_client.get("/").content.decode()
    assert "already" not in page.lower()
    # The address still has one owner: only one account can ever confirm it.
    EmailAddress.objects.filter(user__username="wanda_1").update(verified=True)
    second = EmailAddress.objects.get(user__username="wanda_2")
    assert not second.verified and not second.can_set_verified()


def test_sign_ups_are_limited_per_day_as_well_as_per_minute():
    rates = parse_rates(settings.ACCOUNT_RATE_LIMITS["signup"])
    assert Rate(20, 60, "ip") in rates and Rate(50, 86400, "ip") in rates
