"""Each rated game keeps whether each player's rating was provisional when it started (shown with
the rating in every state of the game), instead of the ratings being read again for it."""

from django.db import migrations, models

from game.ratings.categories import category_of

#: A rating is provisional while its deviation is above this (game.ratings.games.PROVISIONAL_DEVIATION).
PROVISIONAL_DEVIATION = 110.0
NEW_DEVIATION = 350.0


def mark_rated_games(apps, schema_editor):
    """The rated games stored before: marked from the players' ratings as they are now (the
    deviation at each game's start was not kept); a player without a rating is a new player."""
    Game = apps.get_model("game", "Game")
    Rating = apps.get_model("game", "Rating")
    deviations = {(r.player_id, r.category): r.deviation for r in Rating.objects.all()}
    for game in Game.objects.filter(rated=True, black_rating__isnull=False).iterator():
        category = category_of(game.time_control) or ""
        for side in ("black", "white"):
            deviation = deviations.get((getattr(game, f"{side}_player"), category), NEW_DEVIATION)
            setattr(game, f"{side}_provisional", deviation > PROVISIONAL_DEVIATION)
        game.save(update_fields=["black_provisional", "white_provisional"])


class Migration(migrations.Migration):

    dependencies = [("game", "0008_account_language")]

    operations = [
        migrations.AddField(model_name="game", name="black_provisional",
                            field=models.BooleanField(blank=True, null=True)),
        migrations.AddField(model_name="game", name="white_provisional",
                            field=models.BooleanField(blank=True, null=True)),
        migrations.RunPython(mark_rated_games, migrations.RunPython.noop),
    ]
