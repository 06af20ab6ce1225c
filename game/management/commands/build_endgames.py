"""``manage.py build_endgames``: the engine's endgame database, built, checked and put in ``var/endgames/``.

::

    manage.py build_endgames                   # every position with at most 4 pieces (minutes)
    manage.py build_endgames --pieces 3        # at most 3 (seconds)
    manage.py build_endgames --verify-only     # check the database already there

The core builds the distance to the end of every position by retrograde analysis
(docs/engine.md, "Endgame databases") into ``endgames-<pieces>.bin`` (written to a temporary
file first, so a search never reads half a file), then checks it twice:

1. every position's value follows from its moves' values (a win has a move to a position lost
   one ply sooner, a loss only moves to won positions, the longest one ply shorter, a draw no move
   to a lost position and one to a drawn one);
2. ``--samples`` positions drawn at random (``--seed``) agree with a search of the core that does
   not use the database (``--depth`` plies): whenever the search proves a result it is the
   database's, never sooner than the database's distance (the search need not find the quickest
   win, but none can beat the best play), no drawn position gets a proved result, and every win or
   loss within 5 plies is proved.

It prints the time, the size and the counts. Server processes load the file on their first
search (restart them to use a new one). Exit status 1 when a check fails. Needs the compiled
core (``make install``).
"""

from __future__ import annotations

import os
import random
import time

from django.core.management.base import BaseCommand, CommandError, CommandParser

from game.engine import native
from game.rules import Position


class Command(BaseCommand):
    help = "Build the engine's endgame database (positions with few pieces) into var/endgames/ and check it."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--pieces", type=int, default=4, help="most pieces on the board (2-5; default 4)")
        parser.add_argument("--verify-only", action="store_true", help="check the existing file, build nothing")
        parser.add_argument("--samples", type=int, default=200, help="positions checked by a search (200)")
        parser.add_argument("--depth", type=int, default=12, help="depth of those searches in plies (12)")
        parser.add_argument("--seed", type=int, default=1, help="seed of the sample (1)")

    def handle(self, *args: object, **options: object) -> None:
        if not native.available():
            raise CommandError("the engine's compiled core is not built: run `make install`")
        pieces = int(str(options["pieces"]))
        if not 2 <= pieces <= 5:
            raise CommandError(f"--pieces must be 2 to 5, not {pieces}")
        path = native.endgame_path(pieces)
        if options["verify_only"]:
            if not path.is_file():
                raise CommandError(f"{path} does not exist: build it first")
        else:
            path.parent.mkdir(parents=True, exist_ok=True)
            partial = path.with_suffix(f".partial-{os.getpid()}")
            self.stdout.write(f"building every position with at most {pieces} pieces into {path} ...")
            try:
                stats = native.build_endgames(pieces, partial)
                os.replace(partial, path)
            finally:
                partial.unlink(missing_ok=True)
            self.stdout.write(
                f"built in {stats['seconds']:.1f} s: {stats['positions']:,} positions "
                f"({stats['wins']:,} won, {stats['losses']:,} lost, {stats['draws']:,} drawn for the side to move), "
                f"{stats['passes']} passes, longest end {stats['longest']} plies; "
                f"{stats['bytes']:,} bytes ({stats['bytes'] / 2**20:.1f} MiB)")
            if not stats["complete"]:
                raise CommandError("some ends lie beyond 252 plies: the database counts them as draws")
        native.load_endgames(path)
        failed = self.verify_consistency() | self.verify_by_search(int(str(options["samples"])),
                                                                   int(str(options["depth"])),
                                                                   int(str(options["seed"])))
        if failed:
            raise CommandError("the endgame database failed its checks")
        self.stdout.write(f"{path}: every check passed")

    def verify_consistency(self) -> bool:
        """Check 1; True when it failed."""
        started = time.perf_counter()
        wrong, entries = native.verify_endgames()
        self.stdout.write(f"consistency: {entries:,} entries, {wrong:,} not following from their moves "
                          f"({time.perf_counter() - started:.1f} s)")
        return wrong > 0

    def verify_by_search(self, samples: int, depth: int, seed: int) -> bool:
        """Check 2; True when it failed."""
        rng = random.Random(seed)
        _wrong, entries = native.verify_endgames() if samples else (0, 0)
        positions: list[Position] = []
        while len(positions) < samples:
            positions += [p for p in native.endgame_positions([rng.randrange(entries) for _ in range(samples)])
                          if p.legal_moves()]
        started = time.perf_counter()
        proved = longer = beyond = draws = 0
        disagreements: list[tuple[Position, tuple[str, int], int | None]] = []
        for position in positions[:samples]:
            verdict = native.probe_endgame(position)
            assert verdict is not None
            outcome, plies = verdict
            result = native.search(position, depth=depth, endgames=False)
            if outcome == "draw":
                draws += 1
                if result.mate is not None:
                    disagreements.append((position, verdict, result.mate))
                continue
            expected = plies if outcome == "win" else -plies
            if result.mate is None:
                beyond += 1
                if plies <= 5:
                    disagreements.append((position, verdict, None))
            elif result.mate == expected:
                proved += 1
            elif (result.mate > 0) == (expected > 0) and abs(result.mate) > plies:
                longer += 1  # the same result, proved by a longer line than the best one
            else:
                disagreements.append((position, verdict, result.mate))
        self.stdout.write(
            f"search check ({len(positions[:samples])} positions, depth {depth}, "
            f"{time.perf_counter() - started:.1f} s): {proved} results proved alike to the ply, "
            f"{longer} proved alike by a longer line, "
            f"{draws} draws with no result proved, {beyond} results beyond the search's reach, "
            f"{len(disagreements)} disagreements")
        for position, verdict, mate in disagreements[:20]:
            self.stdout.write(f"  {position.fen()}: database {verdict}, search {mate}")
        return bool(disagreements)
