"""Correspondence that follows you: the turn mails (:mod:`~game.correspondence.mails`, sent by
``manage.py send_turn_mails``), their unsubscribe link and settings page
(:mod:`~game.correspondence.views`), and conditional moves (:mod:`~game.round.forecasts`).
``docs/correspondence.md`` tells how they work and how to run them in production."""
