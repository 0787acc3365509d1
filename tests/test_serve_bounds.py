"""`toolcall serve` under load and abuse: every request it cannot answer is a 4xx in OpenAI's
error shape (never a 500), the work one request costs is bounded, and 200 clients at once are
all answered. The server runs in this process (ServeServer on a free port) unless the point is
the process itself (its CPU time, its listen backlog)."""

from __future__ import annotations

import http.client
import json
import os
import socket
import threading
import time
from collections.abc import Iterator
from io import StringIO
from pathlib import Path
from typing import Any

import httpx
import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st
from rich.console import Console
from test_serve import WAIT, WEATHER_TOOL, Served, start_serve

from toolcall_cli.models._window import overflow_error
from toolcall_cli.render.serve_log import ServeLog
from toolcall_cli.serve import ServeSettings
from toolcall_cli.serve._answering import Answer, Answerer
from toolcall_cli.serve._body import MAX_NESTING
from toolcall_cli.serve._checks import CONTEXT_TOKENS, MAX_MESSAGES, MAX_TOOLS
from toolcall_cli.serve._http import MAX_BODY_BYTES, WORK_SLOTS, Exchange, ServeServer

QUESTION: Any = [{"role": "user", "content": "What's the weather in Paris?"}]


class CountingAnswerer(Answerer):
    """The offline model's answerer, counting the requests it answers."""

    answered = 0

    def answer(self, body: dict[str, Any]) -> Answer:
        self.answered += 1
        return super().answer(body)


class InProcess:
    """A ServeServer on a free port in a thread, with its log and any exception its log raised."""

    def __init__(self) -> None:
        self.console = Console(file=StringIO(), width=120)
        self.log = ServeLog(self.console)
        self.failures: list[BaseException] = []
        self.answerer = CountingAnswerer(ServeSettings())
        self.server = ServeServer(("127.0.0.1", 0), self.answerer, self._logged)
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self.thread.start()
        self.client = httpx.Client(base_url=self.server.url, timeout=WAIT)

    def _logged(self, exchange: Exchange) -> None:
        try:
            self.log.exchange(exchange)
        except BaseException as error:  # the log of an exchange must never fail either
            self.failures.append(error)
            raise

    def post(self, body: Any) -> httpx.Response:
        content = body if isinstance(body, bytes) else json.dumps(body).encode()
        return self.client.post("/chat/completions", content=content)

    def close(self) -> None:
        self.client.close()
        self.server.shutdown()
        self.server.server_close()


@pytest.fixture(scope="module")
def served() -> Iterator[InProcess]:
    server = InProcess()
    yield server
    server.close()
    assert server.failures == []


def refusal(answer: httpx.Response, status: int = 400) -> dict[str, Any]:
    """The error object of a refusal, checked for OpenAI's shape."""
    assert answer.status_code == status, answer.text
    error = answer.json()["error"]
    assert set(error) == {"message", "type", "param", "code"}
    assert error["type"] == "invalid_request_error" and error["message"]
    return dict(error)


# --- any body is answered or refused, never a 500 -------------------------------------------------

_KEYS = [
    *("role", "content", "tool_calls", "function", "name", "arguments", "type", "parameters"),
    *("properties", "id", "tool_call_id", "enum", "anyOf", "required", "description", "text"),
    *("items", "model", "messages", "tools"),
]
_text = st.text(st.characters(blacklist_categories=()), max_size=12)  # lone surrogates too
json_values = st.recursive(
    st.none()
    | st.booleans()
    | st.integers()
    | st.floats(allow_nan=False, allow_infinity=False)
    | _text
    | st.sampled_from(["user", "assistant", "tool", "system", "function", "Paris", "北京"]),
    lambda inner: (
        st.lists(inner, max_size=4)
        | st.dictionaries(st.sampled_from(_KEYS) | _text, inner, max_size=5)
    ),
    max_leaves=24,
)


@st.composite
def requests(draw: st.DrawFn) -> Any:
    """A request with one part of it (or all of it) replaced by any JSON value."""
    value = draw(json_values)
    tool = json.loads(json.dumps(WEATHER_TOOL))
    body: dict[str, Any] = {"model": "m", "messages": json.loads(json.dumps(QUESTION))}
    body["tools"] = [tool]
    where = draw(
        st.sampled_from(
            [
                "body",
                "messages",
                "message",
                "content",
                "history",
                "tools",
                "tool",
                "parameters",
                "properties",
                "tool_choice",
                "response_format",
                "sampling",
            ]
        )
    )
    if where == "body":
        return value
    if where == "messages":
        body["messages"] = value
    elif where == "message":
        body["messages"].append(value)
    elif where == "content":
        role = draw(st.sampled_from(["user", "system", "assistant"]))
        body["messages"].insert(0, {"role": role, "content": value})
    elif where == "history":  # a call and its result, either of them any value
        arguments = draw(st.sampled_from([value, json.dumps(value)]))
        function = {"name": "get_weather", "arguments": arguments}
        call = {"id": "c", "type": "function", "function": function}
        body["messages"] += [
            {"role": "assistant", "content": None, "tool_calls": [call]},
            {"role": "tool", "tool_call_id": "c", "content": draw(st.sampled_from([value, "x"]))},
        ]
    elif where == "tools":
        body["tools"] = value
    elif where == "tool":
        body["tools"].append(value)
    elif where == "parameters":
        tool["function"]["parameters"] = value
    elif where == "properties":
        tool["function"]["parameters"]["properties"]["city"] = value
    else:
        body[where if where != "sampling" else draw(st.sampled_from(_SAMPLING))] = value
    return body


_SAMPLING = ["temperature", "top_p", "n", "max_tokens", "seed", "stop", "stream", "logprobs"]


@settings(
    max_examples=150,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture],
)
@given(body=requests())
@example(body={"model": "m", "messages": [{"role": "user", "content": "\ud800"}]})
@example(body={"model": "m", "messages": [{"role": "user", "content": "二" * 5000}]})
@example(body={"model": "m", "messages": [{"role": "user", "content": "one " + "hundred " * 3000}]})
@example(body={"model": "m", "messages": [{"\udc00": "user", "role": "user", "content": "hi"}]})
@example(  # an enum of one empty name: no name to look for in the question
    body={
        "model": "m",
        "messages": [{"role": "user", "content": "What's the weather in Paris?"}],
        "tools": [{**WEATHER_TOOL, "function": {**WEATHER_TOOL["function"], "parameters": {
            "type": "object", "properties": {"city": {"enum": [""]}}, "required": ["city"]}}}],
    }
)  # fmt: skip
def test_any_json_in_any_part_of_a_request_gets_an_answer_or_a_4xx_never_a_500(
    served: InProcess, body: Any
) -> None:
    answer = served.post(body)
    assert answer.status_code < 500, answer.text
    if answer.status_code >= 400:
        refusal(answer, answer.status_code)
    assert served.failures == []


def nested(depth: int) -> bytes:
    return b'{"model": "m", "messages": ' + b"[" * depth + b"]" * depth + b"}"


@pytest.mark.parametrize(
    ("raw", "says"),
    [
        (nested(100_000), "nested"),
        (nested(MAX_NESTING + 5), "nested"),
        (b'{"model": "m", "messages": [{"role": "user", "content": "\\ud800"}]}', "surrogate"),
        (b'{"model": "m", "messages": [{"role": "user", "content": "a\\udfffb"}]}', "surrogate"),
        (b'{"model": "m", "messages": [{"role": "user", "content": "hi", "\\ud800": 1}]}', "sur"),
        (b'{"model": "m", "messages": [], "temperature": NaN}', "NaN"),
        (b'{"model": "m", "messages": [], "top_p": Infinity}', "Infinity"),
        (b'{"model": "m", "messages": [], "top_p": -Infinity}', "Infinity"),
        (b'{"model": "m", "messages": [], "temperature": 1e999}', "number"),
        (b'{"model": "m", "messages": [], "seed": 1' + b"0" * 5000 + b"}", "number"),
    ],
)
def test_a_body_that_is_no_json_openai_reads_is_a_400(
    served: InProcess, raw: bytes, says: str
) -> None:
    error = refusal(served.post(raw))
    assert says in error["message"]


@pytest.mark.parametrize(
    ("field", "value", "code"),
    [
        ("temperature", 2.5, "decimal_above_max_value"),
        ("temperature", -0.1, "decimal_below_min_value"),
        ("temperature", "0.7", "invalid_type"),
        ("temperature", True, "invalid_type"),
        ("top_p", 1.01, "decimal_above_max_value"),
        ("top_p", -1, "decimal_below_min_value"),
        ("presence_penalty", 2.5, "decimal_above_max_value"),
        ("frequency_penalty", -3, "decimal_below_min_value"),
        ("max_tokens", 0, "integer_below_min_value"),
        ("max_tokens", 1.5, "invalid_type"),
        ("max_completion_tokens", -1, "integer_below_min_value"),
        ("n", 0, "integer_below_min_value"),
        ("n", 200, "integer_above_max_value"),
        ("n", True, "invalid_type"),
        ("seed", "7", "invalid_type"),
        ("seed", 2**64, "integer_above_max_value"),
        ("top_logprobs", 21, "integer_above_max_value"),
        ("logprobs", "yes", "invalid_type"),
        ("parallel_tool_calls", 1, "invalid_type"),
        ("stop", ["a", "b", "c", "d", "e"], "array_above_max_length"),
        ("stop", 7, "invalid_type"),
        ("user", 5, "invalid_type"),
    ],
)
def test_sampling_values_openai_refuses_are_refused_naming_the_parameter(
    served: InProcess, field: str, value: Any, code: str
) -> None:
    error = refusal(served.post({"model": "m", "messages": QUESTION, field: value}))
    assert (error["param"], error["code"]) == (field, code)


@pytest.mark.parametrize(
    "extra",
    [
        {"temperature": 0, "top_p": 1, "seed": -3},
        {"temperature": 2.0, "top_p": 0.01, "max_tokens": 1},
        {"presence_penalty": -2, "frequency_penalty": 2, "max_completion_tokens": 50},
        {"stop": "\n", "logprobs": True, "top_logprobs": 0, "user": "me"},
        {"stop": ["a", "b", "c", "d"], "parallel_tool_calls": False, "n": 1},
        {"temperature": None, "top_p": None, "max_tokens": None, "stop": None, "seed": None},
    ],
)
def test_sampling_values_openai_accepts_are_answered(
    served: InProcess, extra: dict[str, Any]
) -> None:
    answer = served.post({"model": "m", "messages": QUESTION, **extra})
    assert answer.status_code == 200, answer.text


def test_too_many_messages_or_tools_is_refused_as_openai_refuses_it(served: InProcess) -> None:
    messages = [{"role": "user", "content": "hi"}] * (MAX_MESSAGES + 1)
    error = refusal(served.post({"model": "m", "messages": messages}))
    assert (error["param"], error["code"]) == ("messages", "array_above_max_length")
    tools = [WEATHER_TOOL] * (MAX_TOOLS + 1)
    error = refusal(served.post({"model": "m", "messages": QUESTION, "tools": tools}))
    assert (error["param"], error["code"]) == ("tools", "array_above_max_length")


# --- the work one request costs is bounded ----------------------------------------------------


def test_a_request_longer_than_the_window_is_refused_in_openais_words(
    served: InProcess,
) -> None:
    """The offline model has a context window, as every model does; a longer request gets the
    400 OpenAI sends, which a client (toolcall's own, for one) reads to fit its next request."""
    long = "Paris weather " * (CONTEXT_TOKENS // 3)
    body = {"model": "m", "messages": [{"role": "user", "content": long}]}
    answer = served.post(body)
    error = refusal(answer)
    assert (error["param"], error["code"]) == ("messages", "context_length_exceeded")
    read = overflow_error(400, answer.json(), error["message"])
    assert read is not None and read.window == CONTEXT_TOKENS
    assert read.prompt_tokens is not None and read.prompt_tokens > CONTEXT_TOKENS


def test_a_body_over_the_byte_cap_is_a_413_before_it_is_read(served: InProcess) -> None:
    body = json.dumps({"model": "m", "messages": QUESTION, "pad": "x" * MAX_BODY_BYTES})
    error = refusal(served.post(body.encode()), 413)
    assert error["code"] == "request_too_large"


# Text that made the offline model's work grow with the square of its length: runs of digits
# (also full-width ones), spaces, place names, CJK text, units and currencies, number words,
# percentages, parentheses, tags that open and never close.
_RUNS = (
    "1" * 6000,
    "１" * 3000,
    " " * 6000,
    "Paris " * 700,
    "Hello World. " * 400,
    "北京" * 1200,
    "天气上海" * 500,
    "5 km " * 800,
    "美元" * 800,
    "USD " * 800,
    "hundred " * 500,
    "3% " * 1000,
    "(" * 2000 + "1+2",
    "<tool_call>" * 400,
    '<tool_result id="x" name="y">' * 200,
    "```json\n{" * 300,
    "- a: string (required, default " * 150,
    "is not one of [" * 300,
)


def long_text(tokens: int) -> str:
    """Every run above, repeated up to about `tokens` estimated tokens."""
    from toolcall_cli.wire.tokens import estimate_tokens

    text, runs = "", list(_RUNS)
    while estimate_tokens(text) < tokens:
        text += runs[len(text) % len(runs)] + "\n"
    return text


@pytest.mark.parametrize("where", ["question", "arguments"])
def test_a_message_as_long_as_the_window_allows_is_answered_in_bounded_time(
    served: InProcess, where: str
) -> None:
    """The offline model's work grows with the length of what it reads, not its square: a
    hostile message that fills the window is answered well within the client's timeout (the
    offline model's own tests try each place it reads, past the window)."""
    text = long_text(int(CONTEXT_TOKENS * 0.8))
    messages: list[dict[str, Any]] = [{"role": "user", "content": text}]
    if where == "arguments":
        function = {"name": "get_weather", "arguments": text}
        call = {"id": "c1", "type": "function", "function": function}
        messages = [
            {"role": "user", "content": "Weather in Paris?"},
            {"role": "assistant", "content": None, "tool_calls": [call]},
            {"role": "tool", "tool_call_id": "c1", "content": "Error: unexpected argument"},
        ]
    body = {"model": "m", "messages": messages, "tools": [WEATHER_TOOL], "stream": True}
    answer = served.post(body)  # the client's timeout is WAIT: past it, the test fails
    assert answer.status_code == 200, answer.text
    assert answer.text.rstrip().endswith("data: [DONE]")


def test_a_request_whose_client_hung_up_is_not_answered(served: InProcess) -> None:
    """The client sends a whole request and hangs up while it waits for the server (every
    slot busy): the server sees it gone before the model reads the request, and logs that
    instead of an answer nobody would read."""
    host, port = served.server.server_address[:2]
    body = json.dumps({"model": "m", "messages": QUESTION}).encode()
    head = f"POST /v1/chat/completions HTTP/1.1\r\nHost: x\r\nContent-Length: {len(body)}\r\n\r\n"
    logged(served)  # what earlier tests logged
    answered = served.answerer.answered
    for _ in range(WORK_SLOTS):
        served.server.work.acquire()
    try:
        with socket.create_connection((str(host), port), timeout=WAIT) as connection:
            connection.sendall(head.encode() + body)
    finally:
        for _ in range(WORK_SLOTS):
            served.server.work.release()
    deadline, log = time.monotonic() + WAIT, ""
    while "POST /v1/chat/completions" not in log:
        assert time.monotonic() < deadline, "nothing logged"
        time.sleep(0.05)
        log += logged(served)
    assert "the client hung up before the answer was sent" in log, log
    assert served.answerer.answered == answered  # the model never read it


def logged(served: InProcess) -> str:
    """What the server has logged since the last look (and forgets it)."""
    file = served.console.file
    assert isinstance(file, StringIO)
    text = file.getvalue()
    file.seek(0)
    file.truncate()
    return text


def cpu_seconds(pid: int) -> float:
    """The CPU time a process has used, from /proc (utime + stime)."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


@pytest.mark.skipif(not Path("/proc/self/stat").exists(), reason="reads CPU time from /proc")
def test_the_server_goes_idle_soon_after_a_client_with_a_huge_request_leaves() -> None:
    served = start_serve()
    try:
        port = int(served.url.rsplit(":", 1)[1].split("/")[0])
        content = "北京天气 Paris " * 60_000  # about 1 MB
        body = json.dumps({"model": "m", "messages": [{"role": "user", "content": content}]})
        connection = http.client.HTTPConnection("127.0.0.1", port, timeout=2)
        try:
            connection.request("POST", "/v1/chat/completions", body.encode())
            connection.getresponse().read()
        except TimeoutError:
            pass  # it was still working on it: the client gives up and leaves
        finally:
            connection.close()
        assert_goes_idle(served)
    finally:
        served.stop()


def assert_goes_idle(served: Served) -> None:
    """Within WAIT seconds, a second passes in which the server uses (almost) no CPU."""
    deadline = time.monotonic() + WAIT
    before = cpu_seconds(served.process.pid)
    while time.monotonic() < deadline:
        time.sleep(1.0)
        now = cpu_seconds(served.process.pid)
        if now - before < 0.2:
            return
        before = now
    raise AssertionError("the server kept working on a request whose client had left")


# --- 200 clients at once -----------------------------------------------------------------------

CLIENTS = 200


def test_two_hundred_clients_at_once_are_all_answered() -> None:
    """Each client connects at the same moment and asks a small question; each has a generous
    timeout. A listen backlog of 5 dropped their connections (the kernel retries a dropped
    connection after 1, 3, 7, 15 s ...), and dozens timed out."""
    served = start_serve()
    try:
        port = int(served.url.rsplit(":", 1)[1].split("/")[0])
        body = json.dumps({"model": "m", "messages": QUESTION}).encode()
        start = threading.Barrier(CLIENTS)
        outcomes: list[str] = []

        def client() -> None:
            connection = http.client.HTTPConnection("127.0.0.1", port, timeout=WAIT)
            try:
                start.wait(timeout=WAIT)
                connection.request("POST", "/v1/chat/completions", body)
                answer = connection.getresponse()
                answer.read()
                outcomes.append(str(answer.status))
            except Exception as error:  # a timeout above all: counted, not raised in a thread
                outcomes.append(type(error).__name__)
            finally:
                connection.close()

        threads = [threading.Thread(target=client, daemon=True) for _ in range(CLIENTS)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join(timeout=2 * WAIT)
        assert sorted(set(outcomes)) == ["200"] and len(outcomes) == CLIENTS, outcomes
    finally:
        code, _, err = served.stop()
        assert (code, err) == (0, "")
