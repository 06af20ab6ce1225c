"""What the tournaments tell the rooms above them, which connect at start-up (the imports still
point down)."""

from django.dispatch import Signal

#: A tournament started (its players free to pair), sent once by the job that started it
#: (:func:`game.tournaments.jobs.tick`), with ``tournament``: its row
#: (:class:`game.tournaments.models.Tournament`).  Sent from an RQ worker's thread; a receiver
#: must not raise (it is sent with ``send_robust``).
started = Signal()

#: A tournament starts in a few minutes (``minutes``), sent by the job that runs then
#: (:func:`game.tournaments.jobs.starting_soon`, once or, should the job run again, more), with
#: ``tournament``: its row.  Sent from an RQ worker's thread; a receiver must not raise (it is
#: sent with ``send_robust``), and must tell each player once however often it is sent.
starting_soon = Signal()
