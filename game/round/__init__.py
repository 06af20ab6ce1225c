"""One live game: its actions, stored state, clock, events, fan-out and socket (docs/architecture.md)."""
