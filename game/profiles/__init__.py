"""Profiles and history: a player's page (ratings, rating chart, opponents, recent games), the game
archive and its PDN file, "My games" and its badge, the leaderboards.  Reads only: nothing here
changes a game."""
