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


#: A game's committed events were published (:func:`game.round.fanout.publish`, or
#: :func:`~game.round.fanout.publish_sync` from a thread), with ``game_id`` and ``events`` (the
#: :class:`game.round.events.Event` list, in order): the one point every move, start, end and
#: offer passes, whatever made it (a socket, the computer, a page, a job).  Sent on the event loop
#: after :func:`~game.round.fanout.publish`, on the publishing thread after ``publish_sync``; a
#: receiver looks at the events and returns at once (its work goes to a task).
events_published = Signal()
