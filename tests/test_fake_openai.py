"""The fake server the HTTP tests use: quiet when a client hangs up, as many tests make it."""

from __future__ import annotations

import json
import socket
import struct
from urllib.parse import urlsplit

import pytest
from fake_openai import Answer, FakeOpenAI


def post(server: FakeOpenAI) -> socket.socket:
    """A connection that has sent one chat-completions request."""
    address = urlsplit(server.base_url)
    assert address.hostname is not None and address.port is not None
    client = socket.create_connection((address.hostname, address.port))
    body = json.dumps({"messages": []}).encode()
    head = f"POST /v1/chat/completions HTTP/1.1\r\nHost: x\r\nContent-Length: {len(body)}\r\n\r\n"
    client.sendall(head.encode() + body)
    return client


def test_a_client_that_hangs_up_mid_answer_prints_nothing(
    capfd: pytest.CaptureFixture[str],
) -> None:
    with FakeOpenAI() as server:
        server.answers.append(Answer(raw=b"x" * (16 * 1024 * 1024)))
        with post(server) as client:
            assert client.recv(100).startswith(b"HTTP/1.1 200")
            # Linger 0: close with a reset, so the server's next write fails at once.
            client.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
        assert server.wait_handled(1)
    assert capfd.readouterr().err == ""


def test_a_handler_that_breaks_is_still_shown(capfd: pytest.CaptureFixture[str]) -> None:
    """Only hang-ups are silenced: a fake that fails for another reason says so."""
    with FakeOpenAI() as server:
        server.answers.append(Answer(json_body={"not json": object()}))
        with post(server) as client:
            client.recv(100)
        assert server.wait_handled(1)
    assert "TypeError: Object of type object is not JSON serializable" in capfd.readouterr().err
