"""A socket's rate limits (game/sockets.py: SocketRateLimit, and the Guard that holds a socket's own
limit and those it shares, says when to tell the client and when it floods), on a given clock."""

import limits

from game.sockets import KICK_AFTER_REFUSED, Guard, SocketRateLimit, Verdict


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


# ---- the guard: the limits, the notice, the flood ------------------------------------------------

def verdicts(guard: Guard, times) -> list[tuple[bool, bool, bool]]:
    return [tuple(guard.check(now=t)) for t in times]


def test_the_notice_comes_at_most_once_a_second():
    """A client over its limit for two seconds hears ``rate_limited`` twice, not once a message."""
    guard = Guard("5/second")
    seen = verdicts(guard, [i / 20 for i in range(40)])
    assert [allowed for allowed, _, _ in seen].count(True) == 10  # 5 in each second
    assert [notify for _, notify, _ in seen].count(True) == 2
    assert not any(kick for _, _, kick in seen)


def test_sockets_of_one_session_share_its_limit():
    """Two sockets within their own limits, together over the session's: the second is refused
    (and told so) once the session's budget is gone, and the first gets its share back with time."""
    session = SocketRateLimit.parse("4/second")
    one, two = Guard("3/second", session=session), Guard("3/second", session=session)
    assert verdicts(one, [0.0, 0.1, 0.2]) == [(True, False, False)] * 3
    assert verdicts(two, [0.3, 0.4]) == [(True, False, False), (False, True, False)]
    assert one.check(now=1.05) == Verdict(True)


def test_a_message_refused_by_its_socket_does_not_use_up_the_shared_limits():
    session, address = SocketRateLimit.parse("10/second"), SocketRateLimit.parse("10/second")
    flood, other = Guard("2/second", session, address), Guard("30/second", session, address)
    assert [v.allowed for v in map(flood.check, [i / 100 for i in range(50)])] == [True] * 2 + [False] * 48
    assert [other.check(now=0.6).allowed for _ in range(8)] == [True] * 8
    assert not other.check(now=0.6).allowed  # the session's 10 are used: 2 + 8


def test_a_socket_refused_too_often_is_kicked_once_and_refused_after():
    guard = Guard("1/second")
    seen = verdicts(guard, [i / 100 for i in range(1 + KICK_AFTER_REFUSED + 1)])
    assert seen[0] == (True, False, False)
    assert [kick for _, _, kick in seen] == [False] * (1 + KICK_AFTER_REFUSED) + [True]
    assert guard.kicked
    assert guard.check(now=100.0) == Verdict(False)  # long after: still refused, and nothing said
    assert str(KICK_AFTER_REFUSED) in guard.kick_reason


def test_messages_refused_further_apart_than_the_window_are_no_flood():
    """Over its rate now and then, as a page that sent a burst may be: never kicked."""
    guard = Guard("1/second", kick_after=3, kick_window_s=10.0)
    seen = verdicts(guard, [t + i / 100 for t in (0.0, 11.0, 22.0, 33.0) for i in range(4)])
    assert [allowed for allowed, _, _ in seen] == [True, False, False, False] * 4
    assert not any(kick for _, _, kick in seen)


def test_a_shared_limit_refusing_counts_towards_the_flood():
    session = SocketRateLimit.parse("1/minute")
    guard = Guard("100/second", session=session, kick_after=2)
    assert verdicts(guard, [0.0, 0.1, 0.2, 0.3]) == [
        (True, False, False), (False, True, False), (False, False, False), (False, False, True)]
