"""A server that echoes the API key back: the key must not reach any output, whole or in
pieces. The server on 127.0.0.1 reads the key from the Authorization header and sends it back a
character per chunk (in content, reasoning, a call's arguments, JSON-escaped), as a call's name,
in a whole completion and in an error; `toolcall` is run as a user runs it, the key in
$OPENAI_API_KEY, and every output is searched: stdout, stderr, the trace, --json, the live view,
the history a chat sends back, a replay."""

from __future__ import annotations

import json
import os
import pty
import re
import select
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest
from fake_openai import Answer, FakeOpenAI, text_stream
from in_process import toolcall

from toolcall_cli.models.openai_compat import Endpoint, OpenAICompatModel
from toolcall_cli.wire import ModelRequest

if TYPE_CHECKING:
    from toolcall_cli.keys import SecretMask

KEY = "sk-echo-SECRET-7f3a9c2e5b8d1046"
DECOY = "xx-decoy-value-000000000000000"
"""Echoed instead of the key for the normal output: what a run shows when nothing is leaked."""
SHORTEST_FRAGMENT = 6


def fragments(secret: str) -> set[str]:
    """Every run of 6 or more characters of `secret`."""
    return {
        secret[start:end]
        for start in range(len(secret))
        for end in range(start + SHORTEST_FRAGMENT, len(secret) + 1)
    }


def leaked(text: str, normal: str = "") -> list[str]:
    """The fragments of the key in `text` that the normal output does not hold, longest first."""
    found = [piece for piece in fragments(KEY) if piece in text and piece not in normal]
    return sorted(found, key=len, reverse=True)


# --- the server -----------------------------------------------------------------------------------

Reply = tuple[int, str, bytes]
"""Status, content type and body."""


def sse(chunks: list[dict[str, Any]]) -> Reply:
    events = [{"object": "chat.completion.chunk", "choices": [chunk]} for chunk in chunks]
    body = "".join(f"data: {json.dumps(event)}\n\n" for event in events) + "data: [DONE]\n\n"
    return 200, "text/event-stream", body.encode()


def each_character(field: str, text: str) -> list[dict[str, Any]]:
    return [{"index": 0, "delta": {field: char}, "finish_reason": None} for char in text]


def finished(reason: str = "stop") -> dict[str, Any]:
    return {"index": 0, "delta": {}, "finish_reason": reason}


def escaped(secret: str) -> str:
    """`secret` as JSON may write it: every third character a \\u escape."""
    return "".join(f"\\u{ord(c):04x}" if i % 3 == 0 else c for i, c in enumerate(secret))


def tool_call_chunks(name: str, arguments: str, piece: int) -> list[dict[str, Any]]:
    start = {"index": 0, "id": "call_1", "type": "function", "function": {"name": name}}
    chunks = [{"index": 0, "delta": {"tool_calls": [start]}, "finish_reason": None}]
    for at in range(0, len(arguments), piece):
        part = {"index": 0, "function": {"arguments": arguments[at : at + piece]}}
        chunks.append({"index": 0, "delta": {"tool_calls": [part]}, "finish_reason": None})
    return [*chunks, finished("tool_calls")]


def done() -> Reply:
    return sse([*each_character("content", "done"), finished()])


def content(echo: str, turn: int) -> Reply:
    return sse([*each_character("content", f"Your key is {echo}, keep it safe."), finished()])


def reasoning(echo: str, turn: int) -> Reply:
    said = each_character("reasoning_content", f"The key I was sent is {echo}.")
    return sse([*said, *each_character("content", "ok"), finished()])


def arguments(echo: str, turn: int) -> Reply:
    if turn:
        return done()
    text = json.dumps({"text": "KEY"}).replace("KEY", escaped(echo))
    return sse(tool_call_chunks("echo", text, piece=1))


def tagged(echo: str, turn: int) -> Reply:
    """A tagged call in the content (the stream strategy's text protocol), the key escaped."""
    if turn:
        return done()
    call = '<tool_call>{"name": "echo", "arguments": {"text": "KEY"}}</tool_call>'
    return sse([*each_character("content", call.replace("KEY", escaped(echo))), finished()])


def name(echo: str, turn: int) -> Reply:
    if turn:
        return done()
    return sse(tool_call_chunks(echo, "{}", piece=2))


def completion(echo: str, turn: int) -> Reply:
    message = {"role": "assistant", "content": f"Your key is {echo}."}
    body = {"object": "chat.completion", "choices": [{"index": 0, "message": message}]}
    return 200, "application/json", json.dumps({**body, "id": f"id-{echo}"}).encode()


def error(echo: str, turn: int) -> Reply:
    body = {"error": {"message": f"invalid request for key {echo}", "type": echo}}
    return 400, "application/json", json.dumps(body).encode()


Scenario = Callable[[str, int], Reply]
SCENARIOS: dict[str, tuple[Scenario, tuple[str, ...]]] = {
    "content": (content, ("--strategy", "stream")),
    "reasoning": (reasoning, ("--strategy", "stream")),
    "arguments": (arguments, ("--strategy", "stream", "--stream-mode", "native")),
    "tagged": (tagged, ("--strategy", "stream")),
    "name": (name, ("--strategy", "stream", "--stream-mode", "native")),
    "completion": (completion, ("--strategy", "regex")),
    "error": (error, ("--strategy", "stream")),
}


class QuietServer(ThreadingHTTPServer):
    """Says nothing when a client hangs up (a run that ends leaves its connection open)."""

    daemon_threads = True

    def handle_error(self, request: Any, client_address: Any) -> None:
        if not isinstance(sys.exc_info()[1], ConnectionError):
            super().handle_error(request, client_address)


@dataclass
class EchoServer:
    """Answers each chat request by `scenario`, with the key its Authorization header carried
    (or the decoy when `decoy` is set), one character per chunk; keeps each request's body."""

    scenario: Scenario = content
    decoy: bool = False
    bodies: list[str] = field(default_factory=list)
    keys: list[str] = field(default_factory=list)

    def __post_init__(self) -> None:
        self._server = QuietServer(("127.0.0.1", 0), self._handler())
        self._thread = threading.Thread(target=self._server.serve_forever, args=(0.01,))

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self._server.server_address[1]}/v1"

    def __enter__(self) -> EchoServer:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._server.shutdown()
        self._server.server_close()
        self._thread.join()

    def _handler(self) -> type[BaseHTTPRequestHandler]:
        echo = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args: Any) -> None:
                pass

            def do_GET(self) -> None:  # the context-window probes: not this server's
                self._send(404, "application/json", b"{}")

            def do_POST(self) -> None:
                body = self.rfile.read(int(self.headers.get("Content-Length", 0)))
                if not self.path.endswith("/chat/completions"):
                    self._send(404, "application/json", b"{}")
                    return
                key = self.headers.get("Authorization", "").removeprefix("Bearer ")
                echo.keys.append(key)
                echo.bodies.append(body.decode())
                said = DECOY if echo.decoy else key
                self._send(*echo.scenario(said, len(echo.bodies) - 1))

            def _send(self, status: int, kind: str, payload: bytes) -> None:
                self.send_response(status)
                self.send_header("Content-Type", kind)
                self.send_header("Content-Length", str(len(payload)))
                self.end_headers()
                self.wfile.write(payload)

        return Handler


def key_for(server: EchoServer) -> dict[str, str]:
    """The environment a user of an OpenAI-compatible server has: its key, and its URL (the key
    goes only where $OPENAI_BASE_URL points)."""
    return {"OPENAI_API_KEY": KEY, "OPENAI_BASE_URL": server.base_url}


@pytest.fixture
def tools(tmp_path: Path) -> Path:
    folder = tmp_path / "tools"
    folder.mkdir()
    (folder / "echo.py").write_text(
        "from toolcall_cli import tool\n\n\n@tool\ndef echo(text: str) -> str:\n"
        '    """Say the text back."""\n    return text\n',
        encoding="utf-8",
    )
    return folder


@dataclass(frozen=True)
class Outputs:
    code: int
    texts: dict[str, str]
    """Where each output went: stdout, stderr, the trace, each request sent after the first."""


def run(scenario: str, mode: str, tmp_path: Path, tools: Path, *, decoy: bool) -> Outputs:
    reply, flags = SCENARIOS[scenario]
    trace = tmp_path / f"{scenario}-{mode}-{decoy}.jsonl"
    shown = {"plain": (), "json": ("--json",), "quiet": ("-q",)}[mode]
    with EchoServer(reply, decoy=decoy) as server:
        finished = toolcall(
            "run", "hi", "-m", "m", "--base-url", server.base_url, *flags, *shown,
            "--tools", str(tools), "--no-default-tools", "--trace", str(trace), "--yes",
            cwd=tmp_path,
            env=key_for(server),
        )  # fmt: skip
    assert server.keys and set(server.keys) == {KEY}, "the key went to the server"
    texts = {"stdout": finished.stdout, "stderr": finished.stderr, "trace": trace.read_text()}
    texts.update({f"request {n + 1}": body for n, body in enumerate(server.bodies[1:], 1)})
    return Outputs(finished.returncode, texts)


# --- run: plain, --json, --quiet, the trace and the history sent back -----------------------------


@pytest.mark.parametrize("mode", ["plain", "json", "quiet"])
@pytest.mark.parametrize("scenario", list(SCENARIOS))
def test_an_echoed_key_reaches_no_output_whole_or_in_pieces(
    scenario: str, mode: str, tmp_path: Path, tools: Path
) -> None:
    normal = run(scenario, mode, tmp_path, tools, decoy=True)
    echoed = run(scenario, mode, tmp_path, tools, decoy=False)
    assert echoed.code == normal.code, echoed.texts["stderr"]
    for where, text in echoed.texts.items():
        assert leaked(text, "".join(normal.texts.values())) == [], f"{where}: {text[-600:]}"
    # The run went as it would have: the echo is there, masked, where the decoy was shown.
    assert DECOY in "".join(normal.texts.values())
    assert "****" in "".join(echoed.texts.values())


def test_a_key_escaped_inside_call_arguments_reaches_the_tool_masked(
    tmp_path: Path, tools: Path
) -> None:
    echoed = run("arguments", "json", tmp_path, tools, decoy=False)
    events = [json.loads(line) for line in echoed.texts["stdout"].splitlines()]
    results = [e for e in events if e["kind"] == "tool_finished"]
    assert [e["result"]["content"] for e in results] == ["****"], results


# --- the live view, a chat and its history, a replay ----------------------------------------------

_ESCAPES = re.compile(r"\x1b\[[0-?]*[ -/]*[@-~]|\x1b\][^\x07]*\x07|\x1b[()][A-Z0-9]|[\r\x1b]")


def on_a_terminal(args: list[str], env: dict[str, str], cwd: Path) -> str:
    """What `toolcall ARGS` shows on a terminal (a pseudo-terminal: the live view), escape
    sequences removed."""
    leader, follower = pty.openpty()
    process = subprocess.Popen(
        [sys.executable, "-m", "toolcall_cli", *args],
        stdin=follower,
        stdout=follower,
        stderr=follower,
        cwd=cwd,
        env={**os.environ, **env, "COLUMNS": "200", "LINES": "50", "TERM": "xterm"},
    )
    os.close(follower)
    shown = bytearray()
    ends = time.monotonic() + 60
    try:
        while time.monotonic() < ends:
            ready, _, _ = select.select([leader], [], [], 0.5)
            if not ready:
                if process.poll() is not None:
                    break
                continue
            try:
                data = os.read(leader, 65536)
            except OSError:  # the terminal's other end is closed: the program is gone
                break
            if not data:
                break
            shown += data
    finally:
        process.kill()
        process.wait()
        os.close(leader)
    return _ESCAPES.sub("", shown.decode("utf-8", errors="replace"))


@pytest.mark.parametrize("scenario", ["content", "arguments"])
def test_the_live_view_shows_an_echoed_key_masked(
    scenario: str, tmp_path: Path, tools: Path
) -> None:
    reply, flags = SCENARIOS[scenario]
    screens = {}
    for decoy in (True, False):
        with EchoServer(reply, decoy=decoy) as server:
            screens[decoy] = on_a_terminal(
                ["run", "hi", "-m", "m", "--base-url", server.base_url, *flags, "--pace", "0",
                 "--tools", str(tools), "--no-default-tools", "--no-trace", "--yes"],
                key_for(server),
                tmp_path,
            )  # fmt: skip
    assert DECOY in screens[True], screens[True][-2000:]
    assert "****" in screens[False]
    assert leaked(screens[False], screens[True]) == [], screens[False][-2000:]


def test_a_chat_sends_back_and_keeps_no_echoed_key(tmp_path: Path, tools: Path) -> None:
    trace = tmp_path / "chat.jsonl"
    with EchoServer(content) as server:
        chat = toolcall(
            "chat", "-m", "m", "--base-url", server.base_url, "--strategy", "stream",
            "--tools", str(tools), "--no-default-tools", "--trace", str(trace),
            "--history-file", str(tmp_path / "history"),
            cwd=tmp_path,
            env=key_for(server),
            stdin="hi\nsay it again\n",
        )  # fmt: skip
        assert chat.returncode == 0, chat.stderr
        assert len(server.bodies) == 2
        replay = toolcall(
            "replay", str(trace), "--base-url", server.base_url,
            cwd=tmp_path,
            env=key_for(server),
        )  # fmt: skip
    history = json.loads(server.bodies[1])["messages"]
    said = [m["content"] for m in history if m["role"] == "assistant"]
    assert said == ["Your key is ****, keep it safe."]
    outputs = {
        "chat stdout": chat.stdout,
        "chat stderr": chat.stderr,
        "trace": trace.read_text(),
        "history file": (tmp_path / "history").read_text(),
        "request 2": server.bodies[1],
        "replay stdout": replay.stdout,
        "replay stderr": replay.stderr,
    }
    assert "****" in chat.stdout and replay.stdout
    for where, text in outputs.items():
        assert leaked(text) == [], f"{where}: {text[-600:]}"


# --- the mask itself ------------------------------------------------------------------------------


def streamed(mask: SecretMask, pieces: list[str]) -> str:
    redactor = mask.streaming()
    return "".join(redactor.feed(piece) for piece in pieces) + redactor.flush()


def splits(text: str, cuts: int, seed: int) -> list[str]:
    import random

    rng = random.Random(seed)
    places = sorted(rng.sample(range(1, len(text)), cuts))
    return [text[a:b] for a, b in zip([0, *places], [*places, len(text)], strict=True)]


@pytest.mark.parametrize("seed", range(40))
def test_a_key_split_over_any_number_of_pieces_is_masked_and_the_rest_kept(seed: int) -> None:
    from toolcall_cli.keys import SecretMask

    mask = SecretMask([KEY])
    text = f"a{KEY}b sk-echo {KEY}{escaped(KEY)} s"
    pieces = splits(text, cuts=1 + seed % 12, seed=seed)
    assert streamed(mask, pieces) == "a****b sk-echo ******** s" == mask.redact(text)


def test_the_mask_holds_back_only_what_could_still_be_the_key() -> None:
    from toolcall_cli.keys import SecretMask

    redactor = SecretMask([KEY]).streaming()
    assert redactor.feed("plain text ") == "plain text "
    assert redactor.feed("then sk-ec") == "then "  # held: it may go on to be the key
    assert redactor.feed("ho.") == "sk-echo."  # it did not
    assert redactor.feed("\\u0073") == ""  # an escaped "s"
    assert redactor.feed("\\") == ""
    assert redactor.feed("x") == "\\u0073\\x"
    assert redactor.feed(KEY[:20]) == ""
    assert redactor.flush() == "****"  # most of a key is still the key


def test_a_short_secret_is_masked_only_whole() -> None:
    from toolcall_cli.keys import SecretMask

    mask = SecretMask(["2024-02-01"])  # an api-version query value: masked whole, not its start
    assert mask.redact("on 2024-02-01 and 2024-02-15") == "on **** and 2024-02-15"


def test_a_url_token_echoed_is_masked_and_a_short_query_value_is_left_to_the_reply() -> None:
    token = "tok-7f3a9c2e5b8d1046aa"
    said = f'{{"flag": true, "as": "json", "on": "2024-02-01", "token": "{token}"}}'
    with FakeOpenAI() as server:
        server.answers.append(Answer(sse=text_stream(said, piece=1)))
        url = f"{server.base_url}?api-version=2024-02-01&format=json&key={token}"
        model = OpenAICompatModel(Endpoint(base_url=url, model="m", api_key=KEY))
        try:
            chunks = list(model.stream(ModelRequest({"messages": [], "stream": True})))
        finally:
            model.close()
    text = "".join(c["choices"][0]["delta"].get("content") or "" for c in chunks)
    assert text == said.replace(token, "****")


def joined(chunks: list[dict[str, Any]]) -> dict[str, str]:
    """Each field as a reader joins it: the content, and each call's arguments by index."""
    fields: dict[str, str] = {}
    for chunk in chunks:
        for choice in chunk.get("choices", []):
            part = choice.get("message") or choice.get("delta") or {}
            fields["content"] = fields.get("content", "") + (part.get("content") or "")
            for call in part.get("tool_calls") or []:
                name = f"arguments {call['index']}"
                fields[name] = fields.get(name, "") + call["function"].get("arguments", "")
    return fields


def test_joined_fields_are_masked_across_chunks_and_a_held_tail_precedes_the_next_call() -> None:
    def call(index: int, arguments: str, **more: Any) -> dict[str, Any]:
        entry = {"index": index, "function": {"arguments": arguments}, **more}
        return {"choices": [{"index": 0, "delta": {"tool_calls": [entry]}}]}

    events = [
        {"choices": [{"index": 0, "delta": {"content": f"Key: {KEY[:9]}"}}]},
        call(0, '{"text": "' + KEY[:4], id="a"),
        call(0, KEY[4:] + '", "more": "sk'),  # "sk" is held: it could begin the key
        {"choices": [{"index": 0, "delta": {"content": KEY[9:]}}]},
        call(1, '{"text": "' + KEY[:10], id="b"),  # a short opening, and the reply ends
        {"choices": [{"index": 0, "delta": {}, "finish_reason": "tool_calls"}]},
    ]
    with FakeOpenAI() as server:
        server.answers.append(Answer(sse=[json.dumps(e) for e in events]))  # no [DONE]
        model = OpenAICompatModel(Endpoint(base_url=server.base_url, model="m", api_key=KEY))
        try:
            chunks = list(model.stream(ModelRequest({"messages": [], "stream": True})))
        finally:
            model.close()
    assert joined(chunks) == {
        "content": "Key: ****",
        "arguments 0": '{"text": "****", "more": "sk',
        "arguments 1": '{"text": "' + KEY[:10],
    }
    order = [
        call["index"]
        for chunk in chunks
        for call in chunk["choices"][0]["delta"].get("tool_calls") or []
    ]
    assert order == sorted(order)  # call 0's last piece came before call 1 began
    assert KEY not in json.dumps(chunks)
