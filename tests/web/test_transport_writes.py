"""The site's transport writes a websocket frame at once when nothing waits before it
(checkers_site/serve.py, ``write_now``), and keeps the order of the bytes when the socket cannot
take them all: a real socket pair and a real Twisted TCP connection (on a reactor made for the
test and never run, so no reactor is installed in the test process)."""

from __future__ import annotations

import socket

from twisted.internet import tcp
from twisted.internet.protocol import Protocol
from twisted.internet.selectreactor import SelectReactor

from checkers_site.serve import write_now


def connection() -> tuple[tcp.Server, socket.socket]:
    ours, theirs = socket.socketpair()
    ours.setblocking(False)
    transport = tcp.Server(ours, Protocol(), ("127.0.0.1", 1), None, 1, SelectReactor())
    return transport, theirs


def read_all(transport: tcp.Server, peer: socket.socket, size: int) -> bytes:
    """Read ``size`` bytes on ``peer``, letting Twisted write what it buffered as the socket drains."""
    peer.settimeout(5)
    received = bytearray()
    while len(received) < size:
        transport.doWrite()
        try:
            received += peer.recv(1 << 20)
        except TimeoutError:
            break
    return bytes(received)


def test_a_frame_goes_out_at_once_when_nothing_waits():
    transport, peer = connection()
    write_now(transport, b"frame")
    assert transport._tempDataBuffer == [] and transport.dataBuffer == b""
    peer.settimeout(5)
    assert peer.recv(100) == b"frame"


def test_what_the_socket_cannot_take_waits_and_nothing_overtakes_it():
    transport, peer = connection()
    chunks = [bytes([65 + i % 26]) * 40_000 for i in range(200)]    # 8 MB: more than the socket holds
    for chunk in chunks:
        write_now(transport, chunk)
    assert transport._tempDataBuffer or transport.dataBuffer        # some had to wait for Twisted
    expected = b"".join(chunks)
    assert read_all(transport, peer, len(expected)) == expected


def test_a_closed_connection_takes_nothing_and_raises_nothing():
    transport, peer = connection()
    peer.close()
    write_now(transport, b"x" * 100)      # the socket fails: Twisted's write keeps it, and fails later
    transport.connected = False
    write_now(transport, b"y")
    assert b"y" not in b"".join(transport._tempDataBuffer)
