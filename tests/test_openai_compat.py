"""The OpenAI-compatible client against a real HTTP server on 127.0.0.1, and its failures."""

from __future__ import annotations

import json
import socket
from typing import Any

import httpx
import pytest
from conformance import params
from fake_openai import Answer, FakeOpenAI, completion, text_stream

from toolcall_cli.models.openai_compat import RETRY_TEMPERATURE, Endpoint, OpenAICompatModel
from toolcall_cli.strategies.schema import NativeReplyParser
from toolcall_cli.wire import NOTICE_KEY, ModelError, ModelRequest
from toolcall_cli.wire.sse import sse_data

SECRET = "sk-test-SECRET-abcdef123456"


OPEN_MODELS: list[OpenAICompatModel] = []


@pytest.fixture(autouse=True)
def close_models() -> Any:
    yield
    while OPEN_MODELS:
        OPEN_MODELS.pop().close()


def model_at(base_url: str, **kwargs: Any) -> tuple[OpenAICompatModel, list[float]]:
    waits: list[float] = []
    endpoint = Endpoint(base_url=base_url, model="fake-model", api_key=SECRET, **kwargs)
    model = OpenAICompatModel(endpoint, sleep=waits.append)
    OPEN_MODELS.append(model)
    return model, waits


def ask(model: OpenAICompatModel, stream: bool = False) -> list[dict[str, Any]]:
    body: dict[str, Any] = {"model": "x", "messages": [{"role": "user", "content": "hi"}]}
    if stream:
        body["stream"] = True
    return list(model.stream(ModelRequest(body)))


def failure(model: OpenAICompatModel, stream: bool = False) -> ModelError:
    with pytest.raises(ModelError) as caught:
        ask(model, stream)
    assert SECRET not in str(caught.value)
    return caught.value


@pytest.fixture
def server() -> Any:
    with FakeOpenAI() as fake:
        yield fake


def test_plain_completion_sends_model_key_and_body(server: FakeOpenAI) -> None:
    server.answers.append(Answer(json_body=completion("hello")))
    model, _ = model_at(server.base_url)
    [reply] = ask(model)
    assert reply["choices"][0]["message"]["content"] == "hello"
    assert server.requests[0]["model"] == "fake-model"
    assert server.headers[0]["authorization"] == f"Bearer {SECRET}"


def test_stream_split_into_arbitrary_bytes_reassembles(server: FakeOpenAI) -> None:
    text = "北京今天晴，气温 28°C。" * 3
    server.answers.append(Answer(sse=text_stream(text, piece=2), split_seed=7))
    model, _ = model_at(server.base_url)
    chunks = ask(model, stream=True)
    joined = "".join(c["choices"][0]["delta"].get("content") or "" for c in chunks if c["choices"])
    assert joined == text


def test_connection_refused_is_one_clear_line(refusing_port: int) -> None:
    port = refusing_port
    model, _ = model_at(f"http://127.0.0.1:{port}/v1")
    error = failure(model)
    assert error.kind == "connection"
    assert f"127.0.0.1:{port}" in str(error) and "\n" not in str(error)


def test_unresolvable_host(monkeypatch: pytest.MonkeyPatch) -> None:
    def no_such_host(*args: Any, **kwargs: Any) -> Any:
        raise socket.gaierror(-2, "Name or service not known")

    monkeypatch.setattr(socket, "getaddrinfo", no_such_host)
    model, _ = model_at("http://no-such-host.invalid/v1")
    error = failure(model)
    assert error.kind == "connection" and "resolve" in str(error)
    # The URL may be a profile's, never typed as --base-url: the line must not send you there.
    assert "--base-url" not in str(error)


def test_connect_timeout_through_mock_transport() -> None:
    def handler(request: httpx.Request) -> httpx.Response:
        raise httpx.ConnectTimeout("timed out", request=request)

    endpoint = Endpoint(base_url="http://127.0.0.1:9/v1", model="m", connect_timeout=1.5)
    model = OpenAICompatModel(endpoint, transport=httpx.MockTransport(handler))
    OPEN_MODELS.append(model)
    error = failure(model)
    assert error.kind == "timeout" and "1.5 s" in str(error)


def test_read_timeout_is_configurable(server: FakeOpenAI) -> None:
    server.answers.append(Answer(json_body=completion("late"), delay=1.0))
    model, _ = model_at(server.base_url, read_timeout=0.2)
    error = failure(model)
    assert error.kind == "timeout" and "0.2 s" in str(error)
    assert "--read-timeout waits longer" in str(error)  # a queued server is slow, not broken


@pytest.mark.parametrize("status", [401, 403])
def test_bad_key_never_printed(server: FakeOpenAI, status: int) -> None:
    server.answers.append(
        Answer(
            status=status, json_body={"error": {"message": f"Incorrect API key provided: {SECRET}"}}
        )
    )
    model, _ = model_at(server.base_url)
    error = failure(model)
    assert error.kind == "auth" and str(status) in str(error)


def test_404_names_the_model(server: FakeOpenAI) -> None:
    server.answers.append(Answer(status=404, json_body={"error": {"message": "model not found"}}))
    model, _ = model_at(server.base_url)
    error = failure(model)
    assert error.kind == "not_found" and "fake-model" in str(error)


def test_400_shows_the_providers_message(server: FakeOpenAI) -> None:
    server.answers.append(
        Answer(status=400, json_body={"error": {"message": "messages[1].content must be a string"}})
    )
    model, _ = model_at(server.base_url)
    error = failure(model)
    assert error.kind == "bad_request" and "messages[1].content must be a string" in str(error)


def test_model_that_rejects_tools_suggests_regex(server: FakeOpenAI) -> None:
    server.answers.append(
        Answer(status=400, json_body={"error": {"message": "this model does not support tools"}})
    )
    model, _ = model_at(server.base_url)
    error = failure(model)
    assert error.kind == "unsupported" and "--strategy regex" in str(error)


def test_429_honours_retry_after_then_succeeds(server: FakeOpenAI) -> None:
    server.answers += [
        Answer(
            status=429, headers={"Retry-After": "3"}, json_body={"error": {"message": "slow down"}}
        ),
        Answer(json_body=completion("ok")),
    ]
    model, waits = model_at(server.base_url)
    notice, reply = ask(model)
    assert notice == {"x_toolcall_notice": "HTTP 429 (rate limited): retry 1 of 2 in 3 s"}
    assert reply["choices"][0]["message"]["content"] == "ok"
    assert waits == [3.0]


def test_429_retries_are_bounded(server: FakeOpenAI) -> None:
    server.answers += [Answer(status=429, headers={"Retry-After": "100"}) for _ in range(5)]
    model, waits = model_at(server.base_url, max_retries=2, max_retry_wait=5.0)
    error = failure(model)
    assert error.kind == "rate_limit"
    assert waits == [5.0, 5.0]  # capped, and only max_retries of them
    assert len(server.requests) == 3


def test_5xx_retries_with_backoff(server: FakeOpenAI) -> None:
    server.answers += [Answer(status=503), Answer(status=502), Answer(json_body=completion("ok"))]
    model, waits = model_at(server.base_url)
    assert ask(model)[-1]["choices"][0]["message"]["content"] == "ok"
    assert waits == [0.5, 1.0]


def test_5xx_exhausted(server: FakeOpenAI) -> None:
    server.answers += [
        Answer(status=500, json_body={"error": {"message": "boom"}}) for _ in range(3)
    ]
    model, _ = model_at(server.base_url)
    error = failure(model)
    assert error.kind == "server" and "boom" in str(error)


def test_non_json_body(server: FakeOpenAI) -> None:
    server.answers.append(Answer(raw=b"<html>Bad Gateway</html>"))
    model, _ = model_at(server.base_url)
    assert failure(model).kind == "protocol"


def test_malformed_sse_line(server: FakeOpenAI) -> None:
    server.answers.append(
        Answer(sse=['{"choices": [{"delta": {"content": "hi"}}]}', "{not json", "[DONE]"])
    )
    model, _ = model_at(server.base_url)
    error = failure(model, stream=True)
    assert error.kind == "protocol" and "malformed" in str(error)


def test_stream_cut_mid_reply(server: FakeOpenAI) -> None:
    server.answers.append(Answer(sse=text_stream("x" * 300, piece=5), cut_after=200))
    model, _ = model_at(server.base_url)
    received: list[dict[str, Any]] = []
    with pytest.raises(ModelError) as caught:
        for chunk in model.stream(ModelRequest({"messages": [], "stream": True})):
            received.append(chunk)
    assert caught.value.kind == "protocol" and "cut" in str(caught.value)
    assert received, "the chunks before the cut are delivered"


def test_a_stream_that_ends_without_a_finish_reason_or_done_was_cut(server: FakeOpenAI) -> None:
    """The connection closed between two events: before, the text so far was taken as the
    whole reply, so half an answer passed for the answer (exit 0)."""
    cut = text_stream("You should not take the", piece=5)[:-2]  # no finish_reason, no [DONE]
    server.answers.append(Answer(sse=cut))
    model, _ = model_at(server.base_url)
    received: list[dict[str, Any]] = []
    with pytest.raises(ModelError) as caught:
        for chunk in model.stream(ModelRequest({"messages": [], "stream": True})):
            received.append(chunk)
    assert caught.value.kind == "protocol"
    assert str(caught.value) == "the stream was cut: it ended without a finish_reason or [DONE]"
    assert received, "the chunks before the cut are delivered"


def test_sse_parser_skips_comments_and_joins_multiline_data() -> None:
    lines = [
        ": keep-alive",
        "",
        "event: message",
        'data: {"a":',
        "data: 1}",
        "",
        "data: [DONE]",
        "",
    ]
    assert list(sse_data(iter(lines))) == ['{"a":\n1}', "[DONE]"]


# --- recorded streams from the outside corpus's sse_streams.jsonl (tests/conformance.py) ------

SSE_STREAMS = "sse_streams.jsonl"


def as_sse_lines(case: dict[str, Any]) -> list[str]:
    """Raw `data:` lines as recorded, or (the docs example) tool_calls arrays made into chunks."""
    if all(isinstance(c, str) and c.startswith("data:") for c in case["chunks"]):
        # An excerpt may stop before the stream's end, which would now read as a cut stream.
        done = [] if case["chunks"][-1:] == ["data: [DONE]"] else ["data: [DONE]"]
        return [*case["chunks"], *done]
    lines = []
    for delta in case["chunks"]:
        tool_calls = json.loads(delta) if isinstance(delta, str) else delta
        choice = {
            "index": 0,
            "delta": {"tool_calls": tool_calls} if tool_calls else {},
            "finish_reason": None,
        }
        lines.append("data: " + json.dumps({"choices": [choice]}))
    return [*lines, "data: [DONE]"]


@pytest.mark.parametrize("case", params(SSE_STREAMS))
@pytest.mark.parametrize("seed", [1, 2])
def test_recorded_stream_over_http_yields_expected_calls(
    server: FakeOpenAI, case: dict[str, Any], seed: int
) -> None:
    server.answers.append(Answer(sse=as_sse_lines(case), split_seed=seed))
    model, _ = model_at(server.base_url)
    parser = NativeReplyParser("call_")
    for chunk in model.stream(ModelRequest({"messages": [], "stream": True})):
        parser.feed(chunk)
    parser.close()
    reply = parser.reply()
    got = [{"name": c.name, "arguments": c.arguments, "id": c.id} for c in reply.calls]
    assert got == case["expected_calls"]
    assert not reply.errors


@pytest.mark.parametrize(
    ("status", "shown"),
    [
        (400, "(HTTP 400): bad request for key ****"),
        (404, "wrong base URL: bad request for key ****"),
        (422, "(HTTP 422): bad request for key ****"),
        (429, "(HTTP 429) after retries: bad request for key ****"),
        (500, "(HTTP 500) after retries: bad request for key ****"),
        # A rejected key gets advice instead of the provider's words, key and all.
        (401, "rejected the API key (HTTP 401); check --api-key"),
        (403, "rejected the API key (HTTP 403); check --api-key"),
    ],
)
def test_a_key_echoed_in_a_provider_message_is_masked(
    server: FakeOpenAI, status: int, shown: str
) -> None:
    server.answers += [
        Answer(status=status, json_body={"error": {"message": f"bad request for key {SECRET}"}})
        for _ in range(3)
    ]
    model, _ = model_at(server.base_url)
    error = failure(model)  # failure() asserts the key is absent
    assert shown in str(error)


def test_credentials_in_the_url_are_never_shown() -> None:
    model, _ = model_at("http://user:sk-pass-12345678@127.0.0.1:9/v1")
    error = failure(model)
    assert "sk-pass" not in str(error) and "****" in str(error)


def test_an_sse_event_that_is_not_an_object(server: FakeOpenAI) -> None:
    server.answers.append(Answer(sse=["[1, 2]", "[DONE]"]))
    model, _ = model_at(server.base_url)
    assert failure(model, stream=True).kind == "protocol"


def test_a_completion_without_choices(server: FakeOpenAI) -> None:
    server.answers.append(Answer(json_body={"choices": []}))
    model, _ = model_at(server.base_url)
    assert failure(model).kind == "protocol"


def test_a_body_cut_after_the_headers_is_a_protocol_failure(server: FakeOpenAI) -> None:
    server.answers.append(Answer(json_body=completion("x" * 500), cut_after=40))
    model, _ = model_at(server.base_url)
    assert failure(model).kind == "protocol"


# --- every bad HTTP answer is one clear line ----------------------------------------------------


def test_a_json_completion_on_a_streaming_request_is_the_whole_answer(server: FakeOpenAI) -> None:
    server.answers.append(Answer(json_body=completion("the whole answer")))
    model, _ = model_at(server.base_url)
    [reply] = ask(model, stream=True)
    assert reply["choices"][0]["message"]["content"] == "the whole answer"


def test_a_server_that_ignores_stream_still_answers_a_run(server: FakeOpenAI) -> None:
    from toolcall_cli.events import FinalAnswer
    from toolcall_cli.loop import run
    from toolcall_cli.strategies import get_strategy
    from toolcall_cli.tools.registry import ToolRegistry

    server.answers += [
        Answer(json_body=completion("streamed? no")),
        Answer(sse=text_stream("streamed anyway")),
    ]
    model, _ = model_at(server.base_url)
    answers = []
    for strategy in ("stream", "regex"):  # JSON when streaming asked; SSE when it was not
        events = run(
            "hi", model=model, strategy=get_strategy(strategy), registry=ToolRegistry(), history=[]
        )
        answers += [e.text for e in events if isinstance(e, FinalAnswer)]
    assert answers == ["streamed? no", "streamed anyway"]


@pytest.mark.parametrize(
    "raw",
    [
        b"",
        b"  \n\n",
        b"hello\nworld\n",
        b"event: ping\nid: 1\n\n",
        b": keep-alive\n\n: keep-alive\n\n",
        b"data: [DONE]\n\n",
        b"<html>Bad Gateway</html>",
    ],
)
@pytest.mark.parametrize("stream", [True, False])
def test_an_answer_without_events_is_a_protocol_error(
    server: FakeOpenAI, raw: bytes, stream: bool
) -> None:
    server.answers.append(Answer(raw=raw, headers={"Content-Type": "text/event-stream"}))
    model, _ = model_at(server.base_url)
    error = failure(model, stream)
    assert error.kind == "protocol" and "\n" not in str(error)


def test_an_error_object_with_status_200_is_a_server_error(server: FakeOpenAI) -> None:
    server.answers.append(Answer(json_body={"error": {"message": "the model is overloaded"}}))
    model, _ = model_at(server.base_url)
    error = failure(model, stream=True)
    assert error.kind == "server" and "the model is overloaded" in str(error)


def http_date(offset: float) -> str:
    import time
    from email.utils import formatdate

    return formatdate(time.time() + offset, usegmt=True)


@pytest.mark.parametrize(
    ("header", "wait"),
    [
        ("3.5", 3.5),
        ("nan", 0.5),
        ("NaN", 0.5),
        ("inf", 20.0),
        ("-inf", 0.0),
        ("1e999", 20.0),
        ("-5", 0.0),
        ("garbage", 0.5),
        ("", 0.5),
        # Ids that do not change with the clock: parallel workers must collect the same tests.
        pytest.param(http_date(3600), 20.0, id="in an hour"),
        pytest.param(http_date(-3600), 0.0, id="an hour ago"),
        ("Wed, 21 Oct 2015 07:28:00 -0000", 0.0),
        ("Wed, 99 Foo 2015 07:28:00 GMT", 0.5),
        ("Wed, 21 Oct 99999 07:28:00 GMT", 0.5),
    ],
)
def test_every_form_of_retry_after_gives_a_bounded_wait(
    server: FakeOpenAI, header: str, wait: float
) -> None:
    server.answers += [
        Answer(status=429, headers={"Retry-After": header}),
        Answer(json_body=completion("ok")),
    ]
    model, waits = model_at(server.base_url)
    assert ask(model)[-1]["choices"][0]["message"]["content"] == "ok"
    assert waits == [wait]


@pytest.mark.parametrize("status", [301, 302, 303, 307, 308])
@pytest.mark.parametrize("stream", [True, False])
def test_a_redirect_is_named_not_followed(server: FakeOpenAI, status: int, stream: bool) -> None:
    location = "https://new.example/v2/chat/completions"
    server.answers.append(Answer(status=status, headers={"Location": location}))
    model, _ = model_at(server.base_url)
    error = failure(model, stream)
    assert error.kind == "redirect"
    assert f"redirected (HTTP {status}) to https://new.example/v2/chat/completions" in str(error)
    assert "use https://new.example/v2 as --base-url" in str(error)
    assert len(server.requests) == 1


@pytest.mark.parametrize(
    ("location", "shown"),
    [
        (
            "https://u:sk-pass-123456@new.example/v1/chat/completions?key=abc123456",
            "to https://****@new.example/v1/chat/completions?key=****;",
        ),
        ("/v9/chat/completions", "/v9/chat/completions; toolcall does not follow"),
        ("", "without saying where to"),
        ("https://new.example/elsewhere", "to https://new.example/elsewhere; "),
    ],
)
def test_a_redirect_shows_its_location_masked(
    server: FakeOpenAI, location: str, shown: str
) -> None:
    server.answers.append(Answer(status=302, headers={"Location": location} if location else {}))
    model, _ = model_at(server.base_url)
    error = failure(model)
    assert shown in str(error)
    assert "sk-pass" not in str(error) and "abc123456" not in str(error)


DEEP = "[" * 50_000 + "]" * 50_000  # past any recursion limit, under the object cap


@pytest.mark.parametrize(
    "answer",
    [
        Answer(raw=('{"choices": ' + DEEP + "}").encode()),
        Answer(sse=['{"choices": [], "x": ' + DEEP + "}", "[DONE]"]),
        Answer(raw=DEEP.encode()),
    ],
    ids=["completion", "event", "array"],
)
def test_json_nested_too_deeply_is_a_protocol_error(server: FakeOpenAI, answer: Answer) -> None:
    server.answers.append(answer)
    model, _ = model_at(server.base_url)
    error = failure(model, stream=True)
    assert error.kind == "protocol" and "nested too deeply" in str(error)


def test_an_error_body_nested_too_deeply_still_gives_the_status(server: FakeOpenAI) -> None:
    server.answers.append(Answer(status=400, raw=('{"error": ' + DEEP + "}").encode()))
    model, _ = model_at(server.base_url)
    error = failure(model)
    assert error.kind == "bad_request" and "HTTP 400" in str(error)


def test_retry_after_nan_does_not_break_a_real_run(server: FakeOpenAI) -> None:
    from typer.testing import CliRunner

    from toolcall_cli.cli import app

    server.answers += [
        Answer(status=503, headers={"Retry-After": "nan"}),
        Answer(json_body=completion("after the wait")),
    ]
    result = CliRunner().invoke(app, ["run", "hi", "-m", "m", "--base-url", server.base_url, "-q"])
    assert result.exit_code == 0, result.stderr
    assert result.stdout.strip() == "after the wait"


HOSTILE = "bad\nrequest\x1b[2J\x1b[31m red\r\x07 \u202eevil\u2028end"


@pytest.mark.parametrize(
    "answer",
    [
        Answer(status=400, json_body={"error": {"message": HOSTILE}}),
        Answer(status=200, json_body={"error": {"message": HOSTILE}}),
        Answer(sse=[json.dumps({"error": {"message": HOSTILE}})]),
        Answer(status=400, raw=HOSTILE.encode()),
    ],
    ids=["status-400", "status-200", "event", "text"],
)
def test_what_a_server_says_is_shown_on_one_line_without_control_characters(
    server: FakeOpenAI, answer: Answer
) -> None:
    from typer.testing import CliRunner

    from toolcall_cli.cli import app

    server.answers.append(answer)
    result = CliRunner().invoke(
        app, ["run", "hi", "-s", "stream", "-m", "m", "--base-url", server.base_url, "-q"]
    )
    assert result.exit_code == 1
    assert result.stderr.count("\n") == 1 and "bad request" in result.stderr
    assert not any(char in result.stderr for char in "\x1b\r\x07\u202e\u2028")


def test_a_seeded_request_is_retried_with_the_next_seed_after_a_server_error(
    server: FakeOpenAI,
) -> None:
    """A server error may be the reply's (one this client cannot tell from its words); with
    the same seed the model writes the same again, so each retry draws with the next seed."""
    rejected = {"error": {"message": "the slot failed to finish the task"}}
    server.answers += [
        Answer(status=500, json_body=rejected),
        Answer(status=500, json_body=rejected),
        Answer(json_body=completion("ok")),
    ]
    model, _ = model_at(server.base_url)
    chunks = list(model.stream(ModelRequest({"messages": [], "seed": 11})))
    assert [r["seed"] for r in server.requests] == [11, 12, 13]
    notes = [c[NOTICE_KEY] for c in chunks if NOTICE_KEY in c]
    assert [n.rsplit(", ", 1)[-1] for n in notes] == ["with seed 12", "with seed 13"]


def test_a_request_at_temperature_0_is_retried_warmer_after_a_server_error(
    server: FakeOpenAI,
) -> None:
    """At temperature 0 a new seed changes nothing: the model writes the same reply again and
    the server fails on it again. The retry samples a little warmer, and says so."""
    rejected = {"error": {"message": "the slot failed to finish the task"}}
    server.answers += [Answer(status=500, json_body=rejected), Answer(json_body=completion("ok"))]
    model, _ = model_at(server.base_url)
    chunks = list(model.stream(ModelRequest({"messages": [], "seed": 11, "temperature": 0})))
    sent = [(r["seed"], r["temperature"]) for r in server.requests]
    assert sent == [(11, 0), (12, RETRY_TEMPERATURE)] and RETRY_TEMPERATURE > 0
    (note,) = [c[NOTICE_KEY] for c in chunks if NOTICE_KEY in c]
    assert f"with seed 12 and temperature {RETRY_TEMPERATURE:g}" in note
    assert "the same request gets the same reply" in note


def test_a_sampled_request_keeps_its_temperature_on_a_retry(server: FakeOpenAI) -> None:
    rejected = {"error": {"message": "busy"}}
    server.answers += [Answer(status=503, json_body=rejected), Answer(json_body=completion("ok"))]
    model, _ = model_at(server.base_url)
    list(model.stream(ModelRequest({"messages": [], "temperature": 0.7})))
    assert [r["temperature"] for r in server.requests] == [0.7, 0.7]


def test_a_rate_limited_request_keeps_its_seed(server: FakeOpenAI) -> None:
    server.answers += [
        Answer(status=429, headers={"Retry-After": "0"}),
        Answer(json_body=completion("ok")),
    ]
    model, _ = model_at(server.base_url)
    list(model.stream(ModelRequest({"messages": [], "seed": 11})))
    assert [r["seed"] for r in server.requests] == [11, 11]
