"""The learning app's HTTP routes (included by :mod:`game.urls`). A review's route takes only what
:func:`game.models.new_game_id` makes, as the game's own routes do: any other text is a plain 404."""

from django.urls import path, re_path

from game.models import GAME_ID_PATTERN

from . import lesson_views, puzzle_views, review_views

urlpatterns = [
    re_path(rf"^g/(?P<game_id>{GAME_ID_PATTERN})/review$", review_views.review, name="game_review"),
    path("puzzles", puzzle_views.puzzle_next, name="puzzles"),
    path("puzzles/streak", puzzle_views.streak_page, name="puzzle_streak"),
    path("puzzles/history", puzzle_views.my_history, name="puzzle_history"),
    path("puzzles/<str:puzzle_id>", puzzle_views.puzzle_page, name="puzzle"),
    path("puzzles/<str:puzzle_id>/move", puzzle_views.puzzle_move, name="puzzle_move"),
    path("@/<str:username>/puzzles", puzzle_views.account_history, name="account_puzzles"),
    path("learn", lesson_views.index, name="lessons"),
    path("learn/print/<str:name>.pdf", lesson_views.sheet, name="learn_sheet"),
    path("learn/<str:key>", lesson_views.lesson_page, name="lesson"),
    path("learn/<str:key>/move", lesson_views.lesson_move, name="lesson_move"),
]
