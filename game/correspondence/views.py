"""The pages of the turn mails: the unsubscribe link's page (no log-in needed) and the
notification settings of a signed-in account (``/settings/notifications``)."""

from __future__ import annotations

from django.contrib.auth.decorators import login_required
from django.http import HttpRequest, HttpResponse
from django.shortcuts import render
from django.views.decorators.http import require_http_methods

from game.correspondence import languages, mails
from game.models import Account


@require_http_methods(["GET", "HEAD", "POST"])
def unsubscribe(request: HttpRequest, token: str) -> HttpResponse:
    """``/mail/unsubscribe/<token>``: GET shows what the link would do and a button; POST turns
    the account's turn mails off.  A forged or damaged token, or one whose account is gone, gets
    a page saying so (status 404) and changes nothing."""
    account = mails.account_of_token(token)
    if account is None:
        return render(request, "correspondence/unsubscribe.html", {"account": None}, status=404)
    done = request.method == "POST"
    if done:
        Account.objects.filter(pk=account.pk).update(turn_emails=False)
    return render(request, "correspondence/unsubscribe.html", {"account": account, "done": done})


@require_http_methods(["GET", "HEAD", "POST"])
@login_required
def notification_settings(request: HttpRequest) -> HttpResponse:
    """``/settings/notifications``: the signed-in account's turn mails on or off (a checkbox
    ``turn_emails``; POST saves); the account's mails take this page's language from now on.
    Signed out: to the log-in page.  A user without an account row (one made in the admin) gets
    404."""
    user = request.user
    account = Account.objects.filter(user__pk=user.pk).first() if user.pk is not None else None
    if account is None:
        return render(request, "404.html", status=404)
    languages.remember(user.pk, languages.of_request(request))   # the mails follow this page's language
    saved = request.method == "POST"
    if saved:
        account.turn_emails = request.POST.get("turn_emails") in ("on", "1", "true")
        account.save(update_fields=["turn_emails"])
    return render(request, "correspondence/notifications.html",
                  {"turn_emails": account.turn_emails, "email": getattr(user, "email", ""), "saved": saved})
