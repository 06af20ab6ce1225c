"""The shipped puzzles (game/learning/data/puzzles.jsonl) into the database."""

from django.db import migrations

from game.learning import puzzle_store


def load(apps, schema_editor):
    puzzle_store.save(puzzle_store.read(), model=apps.get_model("learning", "Puzzle"))


class Migration(migrations.Migration):
    dependencies = [("learning", "0001_initial")]
    operations = [migrations.RunPython(load, migrations.RunPython.noop)]
