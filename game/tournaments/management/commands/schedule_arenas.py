"""``manage.py schedule_arenas``: create the hourly arenas of the next hours and the next daily Swiss
now, and put the hourly job that keeps creating them on RQ's scheduler (docs/tournaments.md,
"Scheduling")."""

from django.core.management.base import BaseCommand

from game.tournaments import schedule


class Command(BaseCommand):
    help = "Create the coming hourly arenas and schedule the job that creates the next ones."

    def handle(self, *args, **options):
        schedule.schedule_arenas()
        upcoming = schedule.Tournament.objects.filter(schedule_key__isnull=False, status="created")
        arenas = upcoming.filter(system=schedule.Tournament.System.ARENA).count()
        self.stdout.write(f"{arenas} scheduled arenas and {upcoming.count() - arenas} daily Swiss to come")
