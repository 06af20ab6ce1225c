"""The game socket's own rate limit (game/consumers.py, SocketRateLimit), on a given clock."""

import limits

from game.sockets import SocketRateLimit


def test_a_refused_burst_does_not_use_up_the_minute():
    """700 messages in one second: 30 allowed; five seconds later the socket may talk again
    (the 670 refused ones did not count against 600 a minute)."""
    limit = SocketRateLimit(limits.parse_many("30/second;600/minute"))
    allowed = [limit.hit(now=100 + i / 700) for i in range(700)]
    assert allowed.count(True) == 30
    assert allowed[:30] == [True] * 30
    assert limit.hit(now=105) is True


def test_the_minute_limit_holds_over_many_seconds():
    """20 messages a second are within 30 a second, but the 601st in a minute is refused."""
    limit = SocketRateLimit(limits.parse_many("30/second;600/minute"))
    allowed = [limit.hit(now=i / 20) for i in range(700)]
    assert allowed.count(True) == 600
    assert allowed[600] is False
    assert limit.hit(now=60.0) is True  # the first ones have left the minute's window
