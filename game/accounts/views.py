"""The account pages of the site's own (allauth serves sign-up, log-in, log-out and passwords):
deleting an account."""

from __future__ import annotations

from django.contrib import messages
from django.contrib.auth import logout
from django.contrib.auth.decorators import login_required
from django.shortcuts import redirect, render
from django.utils.translation import gettext
from django.views.decorators.http import require_http_methods

from game.accounts.deletion import delete_account
from game.accounts.forms import DeleteAccountForm


@login_required
@require_http_methods(["GET", "HEAD", "POST"])
def delete(request):
    """GET: the page asking for the password.  POST: with the right password, delete the account
    (:func:`game.accounts.deletion.delete_account`: ongoing games resigned, finished ones kept
    under "deleted player"), log the browser out and go home; a wrong password shows the page
    again with its error (status 400)."""
    if request.method == "POST":
        form = DeleteAccountForm(request.user, request.POST)
        if form.is_valid():
            delete_account(request.user)
            logout(request)
            messages.info(request, gettext("Your account has been deleted."))
            return redirect("home")
        return render(request, "account/delete.html", {"form": form}, status=400)
    return render(request, "account/delete.html", {"form": DeleteAccountForm(request.user)})
