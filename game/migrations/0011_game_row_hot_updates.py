"""The game row's per-move ``UPDATE`` made HOT (heap-only: no new index entries).

A move changes ``updated_at`` and the clock and position columns; an index on any of them makes
every move write a new entry into every index of the table.  The ``(status, -updated_at)``
index becomes ``(status, -created_at)``, which no move changes, and on PostgreSQL the table keeps
a fifth of each page free (``fillfactor`` 80) so that a move's new row version finds room on its
page.  SQLite has no such storage option: nothing to do there.
"""

from django.db import migrations, models

FILLFACTOR = 80


def set_fillfactor(apps, schema_editor):
    if schema_editor.connection.vendor == "postgresql":
        schema_editor.execute(f"ALTER TABLE game_game SET (fillfactor = {FILLFACTOR})")


def reset_fillfactor(apps, schema_editor):
    if schema_editor.connection.vendor == "postgresql":
        schema_editor.execute("ALTER TABLE game_game RESET (fillfactor)")


class Migration(migrations.Migration):

    dependencies = [
        ('game', '0010_fair_ratings_and_forecast_positions'),
    ]

    operations = [
        migrations.RemoveIndex(
            model_name='game',
            name='game_game_status_1c8d84_idx',
        ),
        migrations.AddIndex(
            model_name='game',
            index=models.Index(fields=['status', '-created_at'], name='game_game_status_created'),
        ),
        migrations.RunPython(set_fillfactor, reset_fillfactor),
    ]
