"""A server process works on so many websocket handshakes at once; the others wait their turn and
one that waits too long is answered 4503 (busy), not dropped (checkers_site/connect_gate.py).
The gate runs around a plain ASGI application that accepts when the test lets it."""

from __future__ import annotations

import asyncio

from django.test import override_settings

from checkers_site.connect_gate import CLOSE_BUSY, ConnectGate


class Handshake:
    """One websocket connection through the gate: what it received and what the server sent."""

    def __init__(self, gate: ConnectGate, name: str, log: list[str]):
        self.name, self.log = name, log
        self.sent: list[dict] = []
        self.inbox: asyncio.Queue = asyncio.Queue()
        self.inbox.put_nowait({"type": "websocket.connect"})
        self.task = asyncio.ensure_future(gate({"type": "websocket", "name": name}, self.inbox.get, self.send))

    async def send(self, message: dict) -> None:
        self.sent.append(message)


def application(go: dict[str, asyncio.Event], log: list[str]):
    """An ASGI websocket application: notes the handshake's start, accepts when ``go`` says."""
    async def app(scope, receive, send):
        assert (await receive())["type"] == "websocket.connect"
        log.append(f"start {scope['name']}")
        await go[scope["name"]].wait()
        await send({"type": "websocket.accept"})
        log.append(f"accepted {scope['name']}")
    return app


async def until(condition, timeout_s: float = 5) -> None:
    deadline = asyncio.get_running_loop().time() + timeout_s
    while not condition():
        assert asyncio.get_running_loop().time() < deadline, "timed out"
        await asyncio.sleep(0.01)


@override_settings(WEBSOCKET_HANDSHAKES_AT_ONCE=2, WEBSOCKET_SHED_AFTER_S=30)
async def test_handshakes_past_the_limit_wait_their_turn_in_order():
    go = {name: asyncio.Event() for name in "abcd"}
    log: list[str] = []
    gate = ConnectGate(application(go, log))
    shakes = [Handshake(gate, name, log) for name in "abcd"]
    await until(lambda: len(log) == 2)
    assert log == ["start a", "start b"]           # c and d wait: their work has not started
    go["b"].set()
    await until(lambda: "start c" in log)
    assert log == ["start a", "start b", "accepted b", "start c"]
    for name in "acd":
        go[name].set()
    await asyncio.gather(*(s.task for s in shakes))
    assert all(s.sent == [{"type": "websocket.accept"}] for s in shakes)


@override_settings(WEBSOCKET_HANDSHAKES_AT_ONCE=1, WEBSOCKET_SHED_AFTER_S=0.2)
async def test_a_handshake_that_waits_too_long_is_answered_busy_not_dropped():
    go = {name: asyncio.Event() for name in "ab"}
    log: list[str] = []
    gate = ConnectGate(application(go, log))
    first = Handshake(gate, "a", log)
    await until(lambda: log == ["start a"])
    second = Handshake(gate, "b", log)
    await second.task
    assert [m["type"] for m in second.sent] == ["websocket.accept", "websocket.close"]
    assert second.sent[1]["code"] == CLOSE_BUSY
    assert log == ["start a"]                       # the shed one never reached the application
    go["a"].set()
    await first.task
    assert first.sent == [{"type": "websocket.accept"}]


@override_settings(WEBSOCKET_HANDSHAKES_AT_ONCE=1, WEBSOCKET_SHED_AFTER_S=30)
async def test_a_handshake_that_fails_gives_its_turn_back():
    log: list[str] = []

    async def failing(scope, receive, send):
        log.append(scope["name"])
        if scope["name"] == "a":
            raise RuntimeError("the application failed")
        await send({"type": "websocket.accept"})

    gate = ConnectGate(failing)
    first = Handshake(gate, "a", log)
    second = Handshake(gate, "b", log)
    results = await asyncio.gather(first.task, second.task, return_exceptions=True)
    assert isinstance(results[0], RuntimeError)
    assert log == ["a", "b"] and second.sent == [{"type": "websocket.accept"}]


@override_settings(WEBSOCKET_HANDSHAKES_AT_ONCE=1, WEBSOCKET_SHED_AFTER_S=0.05)
async def test_turns_are_never_lost_whatever_the_timing_of_the_sheds():
    """Many handshakes shed while one holds the only turn, some of them as the turn is given back:
    afterwards the gate still has its one turn (a new handshake goes straight in)."""
    log: list[str] = []
    go = {f"h{i}": asyncio.Event() for i in range(40)}
    gate = ConnectGate(application(go, log))
    shakes = []
    for i in range(40):
        shakes.append(Handshake(gate, f"h{i}", log))
        if i % 4 == 0:
            for name in list(go):
                go[name].set()
        await asyncio.sleep(0.01)
    for name in go:
        go[name].set()
    await asyncio.gather(*(s.task for s in shakes))
    turns = gate.turns()
    assert (turns.running, len([w for w in turns.waiting if not w.done()])) == (0, 0)
    late = Handshake(gate, "late", log)
    go["late"] = asyncio.Event()
    go["late"].set()
    await late.task
    assert late.sent == [{"type": "websocket.accept"}]
