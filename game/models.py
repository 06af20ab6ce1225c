"""What is stored: games, their seats and their moves.

A game row holds the current position (PDN FEN), the ply count and a version
that increases with every published event.  Each ply is a :class:`Move` row,
unique per ``(game, ply)``, so two racing submissions for the same ply can
never both be stored, whatever the number of server processes.
"""

from __future__ import annotations

import re
import secrets

from django.db import models

from game.clock import TimeControl
from game.rules import Color

GAME_ID_ALPHABET = "abcdefghijkmnpqrstuvwxyz23456789"
GAME_ID_LENGTH = 10
#: A regular expression (no anchors) for what :func:`new_game_id` makes, for URL routes.
GAME_ID_PATTERN = f"[{GAME_ID_ALPHABET}]{{{GAME_ID_LENGTH}}}"
_GAME_ID = re.compile(GAME_ID_PATTERN)


def new_game_id():
    """Return a fresh, unguessable game id: 10 characters of a 32-letter alphabet (50 bits)."""
    return "".join(secrets.choice(GAME_ID_ALPHABET) for _ in range(GAME_ID_LENGTH))


def is_game_id(text) -> bool:
    r"""Whether ``text`` is something :func:`new_game_id` could have made: only such text is looked up,
    so nothing else (a NUL, which PostgreSQL refuses in text) reaches the database.

    >>> is_game_id(new_game_id()), is_game_id("abcdefghi\x00"), is_game_id("ABCDEFGHIJ")
    (True, False, False)
    """
    return isinstance(text, str) and _GAME_ID.fullmatch(text) is not None


class Game(models.Model):
    """One game of American checkers between a Black seat and a White seat.

    Seats hold a player id (the ``player_id`` kept in a browser's session) and a
    display name; an empty player id is a free seat.  ``version`` counts the
    events published for the game; ``position_version`` is the version of the
    event that set the current position (the start, or the last move).
    ``no_progress`` counts the plies since the last capture or man move (or the
    start): positions before that ply can never occur again, so the rules need
    only the moves after it to decide repetitions and the forty-move rule.

    ``time_control`` is a :class:`game.clock.TimeControl` as text (``untimed``,
    ``5+3``, ``3d``); ``black_ms``/``white_ms`` the time each side had when the
    current turn started (ms) and ``turn_started_at`` when it started.

    ``draw_offer`` is the seat with a pending draw offer (``''`` for none);
    ``black_draw_ply``/``white_draw_ply`` the ply from which that seat may offer
    again after a declined offer; ``rematch_offer`` the seat proposing a
    rematch; ``next_game`` the rematch once both agreed.

    ``takeback_offer`` is the seat proposing to take back its last move (``''`` for none);
    ``black_takeback_ply``/``white_takeback_ply`` the ply from which that seat may propose
    again after a declined proposal.  ``ballot`` is the number of the 3-move ballot the game
    opened with (its three plies are the game's first moves), or None for the free start.
    ``black_berserk``/``white_berserk``: that seat went berserk in an arena (its time halved,
    :mod:`game.round.berserk`): its clock gets no increment.

    ``rated`` games change both players' ratings when they end (both seats held by accounts, a
    timed or correspondence control, chosen at creation).  ``black_rating``/``white_rating`` are
    the seats' ratings when the game started, ``black_provisional``/``white_provisional`` whether
    each was provisional then, ``black_rating_diff``/``white_rating_diff`` the
    change the game's end made (rounded points; None until then, and for unrated games);
    ``finished_at`` when the game ended.  ``unrated_reason``: why a rated game's end counted for
    nothing, its players' accounts being linked (``"browser"`` or ``"sign_up"``,
    :func:`game.ratings.links.link`; ``""`` otherwise).
    """

    class Status(models.TextChoices):
        WAITING = "waiting", "Waiting for an opponent"
        ACTIVE = "active", "In play"
        FINISHED = "finished", "Finished"
        ABORTED = "aborted", "Aborted"

    id = models.CharField(primary_key=True, max_length=16, default=new_game_id, editable=False)
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    start_fen = models.CharField(max_length=120)
    fen = models.CharField(max_length=120)
    ply = models.PositiveIntegerField(default=0)
    no_progress = models.PositiveIntegerField(default=0)
    version = models.PositiveIntegerField(default=0)
    position_version = models.PositiveIntegerField(default=0)

    status = models.CharField(max_length=10, choices=Status.choices, default=Status.WAITING)
    result = models.CharField(max_length=8, default="*")
    termination = models.CharField(max_length=20, blank=True, default="")

    black_player = models.CharField(max_length=32, blank=True, default="")
    black_name = models.CharField(max_length=40, blank=True, default="")
    white_player = models.CharField(max_length=32, blank=True, default="")
    white_name = models.CharField(max_length=40, blank=True, default="")

    time_control = models.CharField(max_length=12, default="untimed")
    black_ms = models.BigIntegerField(null=True, blank=True)
    white_ms = models.BigIntegerField(null=True, blank=True)
    turn_started_at = models.DateTimeField(null=True, blank=True)

    draw_offer = models.CharField(max_length=1, blank=True, default="")
    black_draw_ply = models.PositiveIntegerField(default=0)
    white_draw_ply = models.PositiveIntegerField(default=0)
    rematch_offer = models.CharField(max_length=1, blank=True, default="")
    next_game = models.OneToOneField(
        "self", null=True, blank=True, on_delete=models.SET_NULL, related_name="previous_game"
    )
    takeback_offer = models.CharField(max_length=1, blank=True, default="")
    black_takeback_ply = models.PositiveIntegerField(default=0)
    white_takeback_ply = models.PositiveIntegerField(default=0)
    ballot = models.PositiveSmallIntegerField(null=True, blank=True)
    black_berserk = models.BooleanField(default=False)
    white_berserk = models.BooleanField(default=False)
    rated = models.BooleanField(default=False)
    black_rating = models.PositiveSmallIntegerField(null=True, blank=True)
    white_rating = models.PositiveSmallIntegerField(null=True, blank=True)
    black_rating_diff = models.SmallIntegerField(null=True, blank=True)
    white_rating_diff = models.SmallIntegerField(null=True, blank=True)
    black_provisional = models.BooleanField(null=True, blank=True)
    white_provisional = models.BooleanField(null=True, blank=True)
    finished_at = models.DateTimeField(null=True, blank=True)
    unrated_reason = models.CharField(max_length=10, blank=True, default="")

    class Meta:
        indexes = [
            # No index holds a column a move changes (updated_at, the clocks, the position): a
            # move's UPDATE then stays HOT (migration 0011, docs/scaling.md).
            models.Index(fields=["status", "-created_at"], name="game_game_status_created"),
            models.Index(fields=["black_player", "-created_at"]),
            models.Index(fields=["white_player", "-created_at"]),
        ]

    def __str__(self):
        return f"{self.id}: {self.black_name or '?'} vs {self.white_name or '?'} ({self.status})"

    def seat_of(self, player_id: str | None) -> Color | None:
        """The seat ``player_id`` holds in this game, or None (a spectator, or no player id)."""
        if not player_id:
            return None
        if self.black_player == player_id:
            return Color.BLACK
        if self.white_player == player_id:
            return Color.WHITE
        return None

    def player(self, side: Color) -> str:
        """The player id in ``side``'s seat (``""`` while free)."""
        return self.black_player if side is Color.BLACK else self.white_player

    @property
    def turn(self) -> Color:
        """The side to move."""
        return Color(self.fen[0])

    @staticmethod
    def seat_fields(side: Color) -> tuple[str, str]:
        """The fields of ``side``'s seat: ``(player id field, display name field)``."""
        return ("black_player", "black_name") if side is Color.BLACK else ("white_player", "white_name")

    @staticmethod
    def ms_field(side: Color) -> str:
        """The field of ``side``'s time left (ms): ``"black_ms"`` or ``"white_ms"``."""
        return "black_ms" if side is Color.BLACK else "white_ms"

    @staticmethod
    def berserk_field(side: Color) -> str:
        """The field marking ``side``'s berserk: ``"black_berserk"`` or ``"white_berserk"``."""
        return "black_berserk" if side is Color.BLACK else "white_berserk"

    @staticmethod
    def draw_ply_field(side: Color) -> str:
        """The field of the ply from which ``side`` may offer a draw again."""
        return "black_draw_ply" if side is Color.BLACK else "white_draw_ply"

    @property
    def draw_offer_by(self) -> Color | None:
        """The seat whose draw offer is pending, or None."""
        return Color(self.draw_offer) if self.draw_offer else None

    @property
    def rematch_offer_by(self) -> Color | None:
        """The seat proposing a rematch, or None."""
        return Color(self.rematch_offer) if self.rematch_offer else None

    @property
    def control(self) -> TimeControl:
        """The game's :class:`game.clock.TimeControl`."""
        return TimeControl.parse(self.time_control)

    @property
    def is_over(self) -> bool:
        """True once the game is finished or aborted."""
        return self.status in (self.Status.FINISHED, self.Status.ABORTED)


class Move(models.Model):
    """One ply of a game, in full notation (``11-15``, ``27x18x11``) with the position after it."""

    game = models.ForeignKey(Game, on_delete=models.CASCADE, related_name="move_set")
    ply = models.PositiveIntegerField()
    notation = models.CharField(max_length=80)
    fen_after = models.CharField(max_length=120)
    played_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["game", "ply"]
        constraints = [
            models.UniqueConstraint(fields=["game", "ply"], name="unique_ply_per_game"),
        ]

    def __str__(self):
        return f"{self.game_id} ply {self.ply}: {self.notation}"


class ChatLine(models.Model):
    """One line of a game's chat.

    ``room`` is ``players`` (the two seats write and read it) or ``spectators`` (everyone
    watching writes it; the players read it once the game is over).  ``seat`` is the author's
    seat (``B``/``W``) in the players' room, ``''`` for a spectator; ``name`` the display name
    the author had when writing; ``text`` at most 140 characters, trimmed, no control characters.
    """

    class Room(models.TextChoices):
        PLAYERS = "players", "Players"
        SPECTATORS = "spectators", "Spectators"

    game = models.ForeignKey(Game, on_delete=models.CASCADE, related_name="chat_lines")
    room = models.CharField(max_length=10, choices=Room.choices)
    seat = models.CharField(max_length=1, blank=True, default="")
    name = models.CharField(max_length=40)
    text = models.CharField(max_length=140)
    written_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["game", "id"]
        indexes = [models.Index(fields=["game", "room", "-id"])]

    def __str__(self):
        return f"{self.game_id} {self.room} {self.name}: {self.text}"


class DeliveryOutage(models.Model):
    """A time during which one server process could not deliver game events: its subscription to
    them was lost, or events it published wait to be published again (``game/round/outages.py``).

    ``instance`` names the server process (a random id of its run); ``started_at`` when the
    trouble began; ``seen_at`` the last time the process said it was still on (every few
    seconds); ``ended_at`` when delivery resumed (None while it lasts, or when the process died
    first: then the window ends at its last ``seen_at``); ``games`` the ids of the games whose
    events it held up, separated by spaces (empty: every game).  No clock of those games is
    charged for these times.
    """

    instance = models.CharField(max_length=32)
    started_at = models.DateTimeField()
    seen_at = models.DateTimeField()
    ended_at = models.DateTimeField(null=True, blank=True, db_index=True)
    games = models.TextField(blank=True, default="")

    def __str__(self):
        return f"{self.instance} {self.started_at:%Y-%m-%d %H:%M:%S} - {self.ended_at or '...'}"


class Account(models.Model):
    """A signed-up player: the site's identity for a :class:`django.contrib.auth` user.

    ``player_id`` is the id the account's seats hold (the same 32-hex form as a guest's browser
    session id): every browser signed in to the account plays with it, so the account's seats
    follow it from device to device.  ``turn_emails`` is whether the account wants the
    correspondence mails (a mail when it is its turn, batched, and the daily digest).
    """

    user = models.OneToOneField("auth.User", on_delete=models.CASCADE, related_name="account")
    player_id = models.CharField(max_length=32, unique=True)
    turn_emails = models.BooleanField(default=True)
    #: The language the account last used the site in (one of ``LANGUAGES``; ``""``: not known yet):
    #: its mails are in it (game/correspondence/mails.py).
    language = models.CharField(max_length=8, blank=True, default="")
    created_at = models.DateTimeField(auto_now_add=True)
    #: A keyed hash of the client address the account signed up from (``""``: not known), compared
    #: with other accounts' only (game/ratings/links.py): the address itself is not kept.
    signed_up_from = models.CharField(max_length=32, blank=True, default="", db_index=True)

    def __str__(self):
        return f"{self.user.username} ({self.player_id})"


class Block(models.Model):
    """``blocker`` blocks ``blocked`` (player ids of accounts, docs/people.md "Blocks"): the blocked
    player cannot challenge the blocker, their chat lines are not delivered to the blocker, and the
    lobby never pairs the two.  Here rather than in the people app because the game's chat and the
    lobby, below it, read it."""

    blocker = models.CharField(max_length=32)
    blocked = models.CharField(max_length=32, db_index=True)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        constraints = [models.UniqueConstraint(fields=["blocker", "blocked"], name="block_once")]

    def __str__(self):
        return f"{self.blocker} blocks {self.blocked}"


class Rating(models.Model):
    """One player's Glicko-2 rating in one category (``game/ratings``).

    ``category`` is ``bullet``, ``blitz``, ``rapid``, ``classical`` or ``correspondence``;
    ``rating`` and ``deviation`` are on the Glicko scale (1500 / 350 for a new player),
    ``volatility`` Glicko-2's sigma (0.06 new); ``games`` the rated games counted;
    ``wins``/``losses``/``draws`` their results.
    """

    player_id = models.CharField(max_length=32)
    category = models.CharField(max_length=16)
    rating = models.FloatField(default=1500.0)
    deviation = models.FloatField(default=350.0)
    volatility = models.FloatField(default=0.06)
    games = models.PositiveIntegerField(default=0)
    wins = models.PositiveIntegerField(default=0)
    losses = models.PositiveIntegerField(default=0)
    draws = models.PositiveIntegerField(default=0)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        constraints = [models.UniqueConstraint(fields=["player_id", "category"], name="one_rating_per_category")]
        indexes = [models.Index(fields=["category", "-rating"])]

    def __str__(self):
        return f"{self.player_id} {self.category} {self.rating:.0f}/{self.deviation:.0f}"


class RatingChange(models.Model):
    """What one rated game did to one player's rating: the history a profile's chart draws.

    ``before``/``after`` are ratings (Glicko scale), ``deviation`` the deviation after.
    """

    game = models.ForeignKey(Game, on_delete=models.CASCADE, related_name="rating_changes")
    player_id = models.CharField(max_length=32)
    category = models.CharField(max_length=16)
    before = models.FloatField()
    after = models.FloatField()
    deviation = models.FloatField()
    at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["player_id", "at", "id"]
        constraints = [models.UniqueConstraint(fields=["game", "player_id"], name="one_change_per_game_and_player")]
        indexes = [models.Index(fields=["player_id", "category", "at"])]

    def __str__(self):
        return f"{self.game_id} {self.player_id} {self.before:.0f} -> {self.after:.0f}"


class Forecast(models.Model):
    """A player's conditional moves in a correspondence game (lichess's forecasts).

    ``lines`` is a list of lines, each a list of move texts in full notation starting with the
    opponent's next move: ``[["22-18", "15x22"], ...]`` (the opponent's move, the reply, the
    opponent's next, ...).  ``ply`` and ``fen`` are the game's ply and position (PDN FEN) when the
    forecast was stored: it answers only a move made from that very position, and is never played
    on any other (a takeback in between, say).
    """

    game = models.ForeignKey(Game, on_delete=models.CASCADE, related_name="forecasts")
    player_id = models.CharField(max_length=32)
    ply = models.PositiveIntegerField()
    fen = models.CharField(max_length=120, blank=True, default="")
    lines = models.JSONField(default=list)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        constraints = [models.UniqueConstraint(fields=["game", "player_id"], name="one_forecast_per_player")]

    def __str__(self):
        return f"{self.game_id} {self.player_id} at ply {self.ply}: {len(self.lines)} lines"


class TurnNotice(models.Model):
    """The correspondence mails one account got for one game: when the last one went out, so a
    game mails at most once per few hours (``game/correspondence``)."""

    game = models.ForeignKey(Game, on_delete=models.CASCADE, related_name="turn_notices")
    player_id = models.CharField(max_length=32)
    sent_at = models.DateTimeField()

    class Meta:
        constraints = [models.UniqueConstraint(fields=["game", "player_id"], name="one_notice_per_game_and_player")]

    def __str__(self):
        return f"{self.game_id} {self.player_id} mailed {self.sent_at:%Y-%m-%d %H:%M}"


class AccountDevice(models.Model):
    """A browser an account signed in from: ``device`` is the id of the browser's own long-lived
    cookie (32 hex digits, game/ratings/links.py); ``seen_at`` the last sign-in from it."""

    account = models.ForeignKey(Account, on_delete=models.CASCADE, related_name="devices")
    device = models.CharField(max_length=32, db_index=True)
    seen_at = models.DateTimeField()

    class Meta:
        constraints = [models.UniqueConstraint(fields=["account", "device"], name="one_row_per_account_device")]

    def __str__(self):
        return f"{self.account_id} on {self.device}"


class Departure(models.Model):
    """A rated game a player left unplayed (game/ratings/playban.py): ``kind`` is ``aborted`` (they
    aborted it, or it was aborted because a side had not made its first two moves when they ended
    it), ``no_move`` (they let their first move's time run out) or ``abandoned`` (they left and
    their opponent claimed the game)."""

    player_id = models.CharField(max_length=32)
    game = models.ForeignKey(Game, on_delete=models.CASCADE, related_name="departures")
    kind = models.CharField(max_length=12)
    at = models.DateTimeField()

    class Meta:
        indexes = [models.Index(fields=["player_id", "-at"])]

    def __str__(self):
        return f"{self.player_id} {self.kind} {self.game_id} at {self.at:%Y-%m-%d %H:%M}"

