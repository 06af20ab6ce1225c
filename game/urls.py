"""HTTP routes of the game app.

The game routes take only what :func:`game.models.new_game_id` makes (the pattern the websocket routes of
:mod:`game.routing` use too), so any other text in their place (a NUL, which PostgreSQL refuses in text;
other characters; another length) is a plain 404 and never reaches the database.
"""

from django.urls import include, path, re_path, register_converter

from game import howto, views
from game.computer import views as computer_views
from game.models import GAME_ID_PATTERN
from game.people import views as people_views
from game.profiles import views as profile_views
from game.tournaments.urls import ID_PATTERN as TOURNAMENT_ID_PATTERN


class GameIdConverter:
    """``<game_id:...>``: a game id, as :func:`game.models.new_game_id` makes them."""

    regex = GAME_ID_PATTERN

    def to_python(self, value: str) -> str:
        return value

    def to_url(self, value: str) -> str:
        return value


register_converter(GameIdConverter, "game_id")

urlpatterns = [
    path("", views.home, name="home"),
    path("g/<game_id:game_id>/", views.game_page, name="game"),
    path("g/<game_id:game_id>/join", views.join, name="join"),
    path("g/<game_id:game_id>.pdn", views.game_pdn, name="game_pdn"),
    path("games/live", views.live_games, name="live_games"),
    path("tv", views.tv_page, name="tv"),
    path("tv/game", views.tv_game, name="tv_game"),
    path("tv/<str:channel>", views.tv_page, name="tv_channel"),
    path("games/mine", profile_views.my_games, name="my_games"),
    path("@/<str:username>", people_views.profile, name="profile"),
    path("@/<str:username>/block", people_views.block, name="profile_block"),
    path("@/<str:username>/report", people_views.report, name="profile_report"),
    path("settings/country", people_views.country, name="account_country"),
    path("games/search", profile_views.search, name="game_search"),
    path("games/search.pdn", profile_views.search_pdn, name="game_search_pdn"),
    path("@/<str:username>/games", profile_views.games, name="profile_games"),
    path("@/<str:username>/games.pdn", profile_views.games_pdn, name="profile_games_pdn"),
    path("leaderboard", profile_views.leaderboard, name="leaderboard"),
    path("how-to-play", howto.how_to_play, name="how_to_play"),
    path("computer", views.play_computer, name="play_computer"),
    path("analysis", computer_views.analysis_page, name="analysis"),
    path("analysis/position", computer_views.analysis_position, name="analysis_position"),
    path("analysis/search", computer_views.analysis_search, name="analysis_search"),
    path("analysis/pdn", computer_views.analysis_pdn, name="analysis_pdn"),
    path("analysis/game/<game_id:game_id>", computer_views.analysis_game, name="analysis_game"),
    path("analysis/game/<path:text>", computer_views.analysis_not_a_game),
    # Reviews, puzzles and lessons (docs/learning.md).
    path("", include("game.learning.urls")),
    # Tournaments (docs/tournaments.md).
    re_path(rf"^tournaments/(?P<tournament_id>{TOURNAMENT_ID_PATTERN})\.pdn$", views.tournament_pdn,
            name="tournament_pdn"),
    path("", include("game.tournaments.urls")),
]
