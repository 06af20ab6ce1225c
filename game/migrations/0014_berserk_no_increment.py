"""Each seat's berserk marked on the game: a berserk seat's clock gets no increment."""

from django.db import migrations, models


class Migration(migrations.Migration):

    dependencies = [
        ('game', '0013_block'),
    ]

    operations = [
        migrations.AddField(
            model_name='game',
            name='black_berserk',
            field=models.BooleanField(default=False),
        ),
        migrations.AddField(
            model_name='game',
            name='white_berserk',
            field=models.BooleanField(default=False),
        ),
    ]
