"""``manage.py send_turn_mails``: mail the accounts whose move a correspondence game awaits.

Run it every 10 minutes (cron, or ``deploy/systemd/checkers-turn-mails.timer``) and once a day
with ``--digest`` (``deploy/systemd/checkers-turn-digest.timer``): ``docs/correspondence.md``.
A game mails an account at most once per ``TURN_MAIL_EVERY_H`` hours (6) and an account gets
one mail per run listing all its games that are due (:mod:`game.correspondence.mails`).  Safe
to run twice at once.  Prints how many mails went out.
"""

from __future__ import annotations

from django.core.management.base import BaseCommand, CommandParser

from game.correspondence import mails


class Command(BaseCommand):
    help = "Mail the accounts whose move a correspondence game awaits (batched; --digest: the daily digest)."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--digest", action="store_true",
                            help="the daily digest: every game waiting for the account's move")

    def handle(self, *args: object, **options: object) -> None:
        sent = mails.send_turn_mails(digest=bool(options["digest"]))
        kind = "digest" if options["digest"] else "turn"
        self.stdout.write(f"send_turn_mails: sent {sent} {kind} mail{'s' if sent != 1 else ''}")
