"""``manage.py load_puzzles [FILE]``: store the puzzles of a JSON-lines file (the shipped set by
default, ``game/learning/data/puzzles.jsonl``) that the database does not hold yet."""

from __future__ import annotations

from pathlib import Path

from django.core.management.base import BaseCommand

from game.learning import puzzle_store


class Command(BaseCommand):
    help = "Store the puzzles of a JSON-lines file (default: the shipped set) not stored yet."

    def add_arguments(self, parser):
        parser.add_argument("file", nargs="?", default=str(puzzle_store.SHIPPED))

    def handle(self, *args, **options):
        added = puzzle_store.save(puzzle_store.read(Path(options["file"])))
        self.stdout.write(f"{added} new puzzles stored")
