"""Renewing many entries a slice at a time: a process's thousands of sockets each have entries in
Redis that it renews (:mod:`game.round.presence`, :mod:`game.round.admission`).  One pipeline of
thousands of commands would hold the event loop for tens of milliseconds and delay every move
arriving meanwhile; a :class:`Rotation` hands them out in even slices instead, each member about
once a cycle (docs/performance/04-fourth-round-bursts.md)."""

from __future__ import annotations

import math
from collections.abc import Collection, Hashable
from typing import Generic, TypeVar

T = TypeVar("T", bound=Hashable)


class Rotation(Generic[T]):
    """The members of a changing collection, ``slices`` calls of :meth:`next` to a cycle: each call
    gives the next ``ceil(n / slices)`` of the members as they were when the cycle began (``n`` of
    them).  A member added during a cycle comes up in the next one, so at most two cycles pass
    between two of its turns; one removed may still be given once (check it is still there).

    >>> rotation = Rotation(3)
    >>> [rotation.next(range(7)) for _ in range(4)]
    [[0, 1, 2], [3, 4, 5], [6], [0, 1, 2]]
    >>> Rotation(4).next([])
    []
    """

    def __init__(self, slices: int):
        if slices < 1:
            raise ValueError(f"a cycle has at least one slice, not {slices}")
        self.slices = slices
        self.cycle: list[T] = []
        self.cursor = 0
        self.size = 1

    def next(self, members: Collection[T]) -> list[T]:
        """The next slice (empty when there are no members at all)."""
        if self.cursor >= len(self.cycle):
            self.cycle, self.cursor = list(members), 0
            self.size = max(1, math.ceil(len(self.cycle) / self.slices))
        part = self.cycle[self.cursor:self.cursor + self.size]
        self.cursor += self.size
        return part
