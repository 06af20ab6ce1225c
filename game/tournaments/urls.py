"""The tournaments' HTTP routes (included by :mod:`game.urls`): ids are what
:func:`game.tournaments.models.new_tournament_id` makes, anything else is a plain 404."""

from django.urls import path, re_path

from . import views
from .models import ID_ALPHABET, ID_LENGTH

#: What every tournament id is (:func:`game.tournaments.models.new_tournament_id`).
ID_PATTERN = f"[{ID_ALPHABET}]{{{ID_LENGTH}}}"
ID = rf"(?P<tournament_id>{ID_PATTERN})"

urlpatterns = [
    path("tournaments", views.index, name="tournaments"),
    path("tournaments/new", views.new, name="tournament_new"),
    re_path(rf"^tournaments/{ID}$", views.page, name="tournament"),
    re_path(rf"^tournaments/{ID}/join$", views.join, name="tournament_join"),
    re_path(rf"^tournaments/{ID}/withdraw$", views.withdraw, name="tournament_withdraw"),
    re_path(rf"^tournaments/{ID}/berserk$", views.berserk, name="tournament_berserk"),
    re_path(rf"^tournaments/{ID}/cancel$", views.cancel, name="tournament_cancel"),
    re_path(rf"^tournaments/{ID}/invite/(?P<token>[A-Za-z0-9_-]{{1,64}})$", views.invite, name="tournament_invite"),
    re_path(rf"^tournaments/{ID}/invite$", views.new_invite, name="tournament_new_invite"),
]
