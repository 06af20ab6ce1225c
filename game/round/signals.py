"""What the live game tells the rooms above it, which connect at start-up (game/apps.py): the
imports still point down."""

from django.dispatch import Signal

#: A game with the computer in a seat had a socket open or a message carried out: the computer
#: looks at what it should do there now (:func:`game.computer.player.wake`).  Sent on the event
#: loop with ``game_id``; a receiver returns at once.
computer_seat_touched = Signal()

#: A game ended (finished or aborted), sent once its end has committed, with ``game``: the game's
#: row as stored then (:class:`game.models.Game`).  Sent from the thread that stored the end (a
#: database thread, or a page's); a receiver must be quick, or hand its work to a task queue.
game_ended = Signal()

