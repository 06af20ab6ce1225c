"""Fixtures for the consumer and view tests: real sessions, real channel layer, real database."""

from __future__ import annotations

import contextlib
import json
import threading
import uuid
from collections.abc import Iterator
from dataclasses import dataclass

import pytest
from channels.layers import channel_layers
from channels.testing import WebsocketCommunicator
from django.conf import settings
from django.contrib.sessions.backends.signed_cookies import SessionStore
from django.db import connection, transaction

from checkers_site.asgi import application
from game.round import store
from game.round.events import read_publication
from game.round.fanout import transport


@dataclass
class Browser:
    """One visitor's browser: a session with a player id and a display name."""

    name: str
    player_id: str
    cookie: str

    def headers(self, origin: str = "http://127.0.0.1:8000") -> list[tuple[bytes, bytes]]:
        return [
            (b"origin", origin.encode()),
            (b"host", b"127.0.0.1:8000"),
            (b"cookie", f"{settings.SESSION_COOKIE_NAME}={self.cookie}".encode()),
        ]

    async def connect(self, game_id: str, origin: str = "http://127.0.0.1:8000"):
        """Open the game socket; return the communicator and the snapshot it received first."""
        comm = WebsocketCommunicator(application, f"/ws/game/{game_id}/", headers=self.headers(origin))
        connected, _ = await comm.connect(timeout=5)
        assert connected
        snapshot = await comm.receive_json_from(timeout=5)
        assert snapshot["type"] == "snapshot"
        comm.you = snapshot["you"]
        assert_for_its_audience(comm, snapshot)
        return comm, snapshot


def assert_for_its_audience(comm, message: dict) -> None:
    """A game message carries the legal moves only to the seat of the side to move, while the game
    is in play: spectators and the other seat never get them."""
    state = message.get("state")
    if state is None:
        return
    mover = getattr(comm, "you", None) == state["turn"] and state["status"] == "active"
    assert ("legal" in state) == mover, (getattr(comm, "you", None), message["type"], state)


def public(message: dict) -> dict:
    """``message`` without what only the side to move gets (``state.legal``)."""
    if "state" not in message:
        return message
    return {**message, "state": {k: v for k, v in message["state"].items() if k != "legal"}}


async def recv(comm, timeout: float = 5) -> dict:
    """The next game message on ``comm``, passing over ``audience`` notices (who is watching);
    checked to be meant for this socket (:func:`assert_for_its_audience`)."""
    while True:
        message = await comm.receive_json_from(timeout=timeout)
        if message["type"] != "audience":
            if message["type"] == "snapshot":  # a snapshot says whose socket this is now
                comm.you = message.get("you")
            assert_for_its_audience(comm, message)
            return message


class Published:
    """Every game event this process publishes during a test, in order, as the hub and the pages'
    publisher send it (:data:`game.round.fanout.transport.recorders`): what each socket of a game
    is sent, known at once, instead of waiting to see that a socket hears nothing.

    Every publisher of the tests' games runs in the test's process, and a socket of a game hears
    only its events (its role's copy of each) and what is sent to it alone, in answer to its own
    frames.  So a socket that sent nothing hears nothing as long as nothing was published for it:
    :func:`sent_since` after a :func:`mark`."""

    #: The test's record (the ``published`` fixture, for every web test).
    current: Published | None = None

    def __init__(self) -> None:
        self.items: list[tuple[str, str]] = []     # (game id, publication text)
        self.lock = threading.Lock()               # the pages publish from threads

    def __call__(self, game_id: str, texts: list[str]) -> None:
        with self.lock:
            self.items.extend((game_id, text) for text in texts)


def mark() -> int:
    """Where the test's record of publications stands now (for :func:`sent_since`)."""
    assert Published.current is not None, "the published fixture is not active"
    return len(Published.current.items)


def game_of(comm) -> str:
    """The game of a game socket's communicator (from its path, ``/ws/game/<id>/``)."""
    return comm.scope["path"].rstrip("/").rsplit("/", 1)[-1]


def sent_since(since: int, comm) -> list[dict]:
    """The game messages published since ``since`` (a :func:`mark`) that ``comm``'s socket gets:
    its role's copy of each event of its game (a seat's, or a spectator's), ``audience`` notices
    aside, as :func:`recv` and :func:`hears_nothing` pass over them.  Also fails when a message
    other than a notice is already waiting on ``comm``."""
    assert Published.current is not None, "the published fixture is not active"
    waiting = [m for m in comm.output_queue._queue if m.get("type") != "websocket.send"
               or '"type":"audience"' not in (m.get("text") or "")]
    assert not waiting, waiting
    role = getattr(comm, "you", None) or "S"
    game_id = game_of(comm)
    with Published.current.lock:
        items = Published.current.items[since:]
    found = []
    for published_game, text in items:
        if published_game != game_id:
            continue
        _follow, copies = read_publication(text)
        copy = next((json.loads(t) for roles, t in copies if role in roles), None)
        if copy is not None and copy["type"] != "audience":
            found.append(copy)
    return found


async def hears_nothing(comm, timeout: float = 0.2) -> bool:
    """True when ``comm`` receives no game message (``audience`` notices aside) within ``timeout`` s."""
    while not await comm.receive_nothing(timeout=timeout):
        message = await comm.receive_json_from(timeout=1)
        if message["type"] != "audience":
            return False
    return True


def make_browser(name: str) -> Browser:
    store = SessionStore()
    player_id = uuid.uuid4().hex
    store["player_id"] = player_id
    store["name"] = name
    store.save()
    return Browser(name=name, player_id=player_id, cookie=store.session_key)


@contextlib.contextmanager
def row_held(game_id: str, for_s: float = 10.0) -> Iterator[None]:
    """Another connection holds the game's row lock, in a transaction of its own thread, from the
    start of the ``with`` block to its end or for ``for_s`` seconds, whichever comes first."""
    held, release = threading.Event(), threading.Event()

    def hold() -> None:
        try:
            with transaction.atomic():
                store.load_for_update(game_id)
                held.set()
                release.wait(for_s)
        finally:
            connection.close()

    holder = threading.Thread(target=hold)
    holder.start()
    try:
        assert held.wait(10), "the row was not locked"
        yield
    finally:
        release.set()
        holder.join()


@pytest.fixture(autouse=True)
def published() -> Iterator[Published]:
    """The test's record of every game event published in this process (:class:`Published`)."""
    record = Published.current = Published()
    transport.recorders.append(record)
    yield record
    transport.recorders.remove(record)
    Published.current = None


@pytest.fixture(autouse=True)
def fresh_channel_layer():
    """Each test gets its own channel layer object: the Redis layer binds its receive lock to the
    event loop of its first receiver, and every test runs in an event loop of its own."""
    channel_layers.backends = {}
    yield
    channel_layers.backends = {}


@pytest.fixture
def alice() -> Browser:
    return make_browser("alice")


@pytest.fixture
def bob() -> Browser:
    return make_browser("bob")


@pytest.fixture
def carol() -> Browser:
    """A spectator."""
    return make_browser("carol")
