"""Game.no_progress: plies since the last capture or man move, filled in for stored games."""

from django.db import migrations, models


def fill(apps, schema_editor):
    from game import rules

    Game = apps.get_model("game", "Game")
    Move = apps.get_model("game", "Move")
    for game in Game.objects.filter(ply__gt=0).only("id", "start_fen").iterator():
        moves = Move.objects.filter(game_id=game.id).order_by("ply").values_list("notation", flat=True)
        record = rules.Game.from_moves(list(moves), start_fen=game.start_fen)
        Game.objects.filter(pk=game.pk).update(no_progress=record.no_progress_plies)


class Migration(migrations.Migration):

    dependencies = [
        ("game", "0003_clocks"),
    ]

    operations = [
        migrations.AddField(
            model_name="game",
            name="no_progress",
            field=models.PositiveIntegerField(default=0),
        ),
        migrations.RunPython(fill, migrations.RunPython.noop),
    ]
