"""Bounded input: a hostile server costs a bounded amount of memory and time, and every bound
can be changed by a flag or the config file's [limits] table."""

from __future__ import annotations

import itertools
import json
import tracemalloc
import zlib
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from fake_openai import Answer, FakeOpenAI, completion, text_stream
from typer.testing import CliRunner

from toolcall_cli.cli import app
from toolcall_cli.events import Event, ModelFailed, RunFinished
from toolcall_cli.loop import Limits, run
from toolcall_cli.models.openai_compat import Endpoint, OpenAICompatModel
from toolcall_cli.models.scripted import ScriptedModel
from toolcall_cli.strategies import get_strategy
from toolcall_cli.tools.registry import ToolRegistry
from toolcall_cli.wire import ModelError, ModelRequest

MiB = 1 << 20
STREAM = ModelRequest({"messages": [], "stream": True})
PLAIN = ModelRequest({"messages": []})


def gzipped(parts: Iterator[bytes]) -> bytes:
    packer = zlib.compressobj(9, zlib.DEFLATED, zlib.MAX_WBITS | 16)
    packed = [packer.compress(part) for part in parts]
    return b"".join([*packed, packer.flush()])


def repeated(block: bytes, total: int) -> Iterator[bytes]:
    """`total` bytes of `block` over and over, a MiB at a time (never all in memory)."""
    piece = block * (MiB // len(block))
    for _ in range(total // len(piece)):
        yield piece


BOMB = 32 * MiB
"""What the bombs inflate to: sixteen times the cap the tests set (reading all of it through
the SSE parser under tracemalloc would take a quarter of the suite's time)."""
CAP = 2 * MiB


@pytest.fixture(scope="module")
def sse_bomb() -> bytes:
    """About 60 KB of gzip that inflates to 32 MB of SSE keep-alive comments."""
    return gzipped(repeated(b": keep-alive\n", BOMB))


@pytest.fixture(scope="module")
def json_bomb() -> bytes:
    """About 30 KB of gzip that inflates to a 32 MB chat completion."""
    head = b'{"choices": [{"message": {"content": "'
    return gzipped(itertools.chain([head], repeated(b"a", BOMB), [b'"}}]}']))


@pytest.fixture
def server() -> Iterator[FakeOpenAI]:
    with FakeOpenAI() as fake:
        yield fake


def model_at(base_url: str, **kwargs: Any) -> OpenAICompatModel:
    return OpenAICompatModel(Endpoint(base_url=base_url, model="m", **kwargs))


def failure_with_peak(model: OpenAICompatModel, request: ModelRequest) -> tuple[ModelError, int]:
    """The ModelError a request ends in, and the peak memory the client used for it."""
    tracemalloc.start()
    try:
        with pytest.raises(ModelError) as caught:
            for _ in model.stream(request):
                pass
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
        model.close()
    return caught.value, peak


# --- size ---------------------------------------------------------------------------------------


def test_a_gzip_bomb_stream_stops_at_the_response_cap(server: FakeOpenAI, sse_bomb: bytes) -> None:
    assert len(sse_bomb) < 500_000
    server.answers.append(
        Answer(raw=sse_bomb, headers={"Content-Encoding": "gzip", "Content-Type": "text/plain"})
    )
    error, peak = failure_with_peak(model_at(server.base_url, max_response_bytes=CAP), STREAM)
    assert error.kind == "too_large"
    assert "2 MiB" in str(error) and "--max-response-bytes" in str(error)
    assert peak < 4 * MiB, f"peak {peak:,} bytes"  # a stream is read a line at a time


def test_the_response_cap_is_32_mib_unless_lowered() -> None:
    assert Endpoint(base_url="http://127.0.0.1:9/v1", model="m").max_response_bytes == 32 * MiB


def test_a_gzip_bomb_completion_stops_at_a_lowered_cap(
    server: FakeOpenAI, json_bomb: bytes
) -> None:
    server.answers.append(Answer(raw=json_bomb, headers={"Content-Encoding": "gzip"}))
    model = model_at(server.base_url, max_response_bytes=CAP)
    error, peak = failure_with_peak(model, PLAIN)
    assert error.kind == "too_large" and "2 MiB" in str(error)
    assert peak < 8 * MiB, f"peak {peak:,} bytes"


def test_deflate_answers_are_read_zlib_wrapped_or_raw(server: FakeOpenAI) -> None:
    body = json.dumps(completion("deflated")).encode()
    raw_deflate = zlib.compressobj(6, zlib.DEFLATED, -zlib.MAX_WBITS)
    deflate = {"Content-Encoding": "deflate"}
    server.answers += [
        Answer(raw=zlib.compress(body), headers=deflate),
        Answer(raw=raw_deflate.compress(body) + raw_deflate.flush(), headers=deflate),
    ]
    model = model_at(server.base_url)
    try:
        for _ in range(2):
            [reply] = list(model.stream(PLAIN))
            assert reply["choices"][0]["message"]["content"] == "deflated"
    finally:
        model.close()
    assert server.headers[0]["accept-encoding"] == "gzip, deflate"


@pytest.mark.parametrize(
    ("headers", "raw", "needle"),
    [
        ({"Content-Encoding": "br"}, b"\x1b\x00", "did not ask for (br)"),
        ({"Content-Encoding": "gzip, gzip"}, b"\x1f\x8b", "did not ask for"),
        ({"Content-Encoding": "gzip"}, b"\x1f\x8bnot really gzip", "corrupt"),
    ],
)
def test_an_encoding_that_cannot_be_read_is_a_protocol_error(
    server: FakeOpenAI, headers: dict[str, str], raw: bytes, needle: str
) -> None:
    server.answers.append(Answer(raw=raw, headers=headers))
    error, _ = failure_with_peak(model_at(server.base_url), PLAIN)
    assert error.kind == "protocol" and needle in str(error)


def test_an_endless_sse_line_stops_at_the_line_cap(server: FakeOpenAI) -> None:
    line = b"data: " + b"x" * (3 * MiB)  # no line end at all
    server.answers.append(Answer(raw=line, headers={"Content-Type": "text/event-stream"}))
    model = model_at(server.base_url, max_line_bytes=256 * 1024)
    error, peak = failure_with_peak(model, STREAM)
    assert error.kind == "too_large"
    assert "256 KiB" in str(error) and "--max-line-bytes" in str(error)
    assert peak < 2 * MiB, f"peak {peak:,} bytes"


def test_the_default_line_cap_is_4_mib(server: FakeOpenAI) -> None:
    event = {"choices": [{"index": 0, "delta": {"content": "y" * (5 * MiB)}}]}
    server.answers.append(Answer(sse=[json.dumps(event), "[DONE]"]))
    error, _ = failure_with_peak(model_at(server.base_url), STREAM)
    assert error.kind == "too_large" and "4 MiB" in str(error)


def chunked(pieces: list[bytes], content_type: str = "text/event-stream") -> OpenAICompatModel:
    def handler(request: httpx.Request) -> httpx.Response:
        return httpx.Response(200, headers={"Content-Type": content_type}, content=iter(pieces))

    endpoint = Endpoint(base_url="http://127.0.0.1:9/v1", model="m")
    return OpenAICompatModel(endpoint, transport=httpx.MockTransport(handler))


@pytest.mark.parametrize("ending", ["\n", "\r\n", "\r"])
@pytest.mark.parametrize("seed", range(4))
def test_lines_are_read_the_same_however_the_bytes_are_split(ending: str, seed: int) -> None:
    import random

    text = "北京今天晴，气温 28°C。" * 4
    lines = [ln.removesuffix("\n\n") for ln in (f"data: {p}\n\n" for p in text_stream(text, 5))]
    stream = (ending * 2).join([": comment", *lines]).encode() + (ending * 2).encode()
    rng = random.Random(seed)
    cuts = sorted(rng.sample(range(1, len(stream)), 40))
    pieces = [stream[a:b] for a, b in itertools.pairwise([0, *cuts, len(stream)])]
    model = chunked(pieces)
    try:
        chunks = list(model.stream(STREAM))
    finally:
        model.close()
    got = "".join(c["choices"][0]["delta"].get("content") or "" for c in chunks)
    assert got == text


def scripted_run(
    reply: str | dict[str, Any], strategy: str = "regex", **limits: Any
) -> list[Event]:
    return list(
        run(
            "hi",
            model=ScriptedModel([reply]),
            strategy=get_strategy(strategy),
            registry=ToolRegistry(),
            history=[],
            limits=Limits(**limits),
        )
    )


@pytest.mark.parametrize("strategy", ["regex", "stream", "schema"])
def test_a_reply_longer_than_the_cap_fails_the_model(strategy: str) -> None:
    events = scripted_run("words " * 500, strategy, max_reply_chars=1000)
    [failed] = [e for e in events if isinstance(e, ModelFailed)]
    assert failed.error_kind == "too_large"
    assert "1,000 characters" in failed.message and "--max-reply-chars" in failed.message
    finished = events[-1]
    assert isinstance(finished, RunFinished) and finished.stop_reason == "model_failed"


def test_tool_call_arguments_count_toward_the_reply_cap() -> None:
    call = {"function": {"name": "calculate", "arguments": {"expression": "1+" * 2000 + "1"}}}
    events = scripted_run({"content": None, "tool_calls": [call]}, "schema", max_reply_chars=1000)
    assert any(isinstance(e, ModelFailed) and e.error_kind == "too_large" for e in events)
    assert not any(isinstance(e, ModelFailed) for e in scripted_run("short", max_reply_chars=1000))


# --- time ---------------------------------------------------------------------------------------


class FakeClock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def test_a_byte_a_second_forever_is_stopped_at_the_request_timeout() -> None:
    clock = FakeClock()
    sent: list[int] = []

    def trickle() -> Iterator[bytes]:
        for count in itertools.count():
            sent.append(count)
            clock.now += 1.0  # a keep-alive byte every (fake) second
            yield b":" if count % 2 == 0 else b"\n"

    def handler(request: httpx.Request) -> httpx.Response:
        return httpx.Response(200, headers={"Content-Type": "text/event-stream"}, content=trickle())

    endpoint = Endpoint(base_url="http://127.0.0.1:9/v1", model="m")
    model = OpenAICompatModel(endpoint, transport=httpx.MockTransport(handler), clock=clock)
    with pytest.raises(ModelError) as caught:
        list(model.stream(STREAM))
    model.close()
    assert caught.value.kind == "timeout"
    assert "300 s" in str(caught.value) and "--request-timeout" in str(caught.value)
    assert 299 <= len(sent) <= 301


@pytest.mark.parametrize("head", [False, True], ids=["body", "headers"])
def test_a_loopback_server_that_trickles_is_stopped(server: FakeOpenAI, head: bool) -> None:
    server.answers.append(Answer(sse=[": keep-alive"], trickle=0.01, trickle_head=head))
    error, _ = failure_with_peak(model_at(server.base_url, request_timeout=0.3), STREAM)
    assert error.kind == "timeout" and "0.3 s" in str(error) and "--request-timeout" in str(error)


def test_retry_waits_count_toward_the_request_timeout(server: FakeOpenAI) -> None:
    clock = FakeClock()
    waits: list[float] = []

    def sleep(seconds: float) -> None:
        waits.append(seconds)
        clock.now += seconds

    server.answers += [Answer(status=429, headers={"Retry-After": "20"}) for _ in range(3)]
    endpoint = Endpoint(base_url=server.base_url, model="m", request_timeout=25.0)
    model = OpenAICompatModel(endpoint, sleep=sleep, clock=clock)
    with pytest.raises(ModelError) as caught:
        list(model.stream(PLAIN))
    model.close()
    assert waits == [20.0, 5.0]
    assert caught.value.kind == "timeout" and len(server.requests) == 2


# --- the flags and the [limits] table -------------------------------------------------------------


def toolcall(*args: str, env: dict[str, str] | None = None) -> tuple[int, str, str]:
    result = CliRunner().invoke(app, list(args), env=env)
    if result.exception is not None and not isinstance(result.exception, SystemExit):
        raise result.exception
    return result.exit_code, result.stdout, result.stderr


def config_file(tmp_path: Path, text: str) -> dict[str, str]:
    path = tmp_path / "config.toml"
    path.write_text(text, encoding="utf-8")
    return {"TOOLCALL_CONFIG": str(path)}


@pytest.mark.parametrize(
    ("flag", "answer", "needle"),
    [
        ("--max-response-bytes", Answer(json_body=completion("x" * 5000)), "--max-response-bytes"),
        ("--max-line-bytes", Answer(sse=text_stream("y" * 5000, 5000)), "--max-line-bytes"),
        ("--max-reply-chars", Answer(json_body=completion("z" * 5000)), "--max-reply-chars"),
    ],
)
def test_each_cap_has_a_flag(server: FakeOpenAI, flag: str, answer: Answer, needle: str) -> None:
    server.answers.append(answer)
    strategy = "stream" if answer.sse else "regex"
    code, _, err = toolcall(
        "run", "hi", "-m", "m", "--base-url", server.base_url, "-s", strategy, flag, "1000", "-q"
    )
    assert code == 1 and err.count("\n") == 1 and needle in err, err


def test_the_request_timeout_flag(server: FakeOpenAI) -> None:
    server.answers.append(Answer(sse=[": keep-alive"], trickle=0.01))
    code, _, err = toolcall(
        "run", "hi", "-m", "m", "--base-url", server.base_url, "--request-timeout", "0.3", "-q"
    )
    assert code == 1 and "0.3 s; --request-timeout" in err and err.count("\n") == 1


def loop_script(tmp_path: Path, replies: int) -> Path:
    """A script that calls a tool in every reply, `replies` long: a run that asks once more
    than that fails for want of a reply, so only the iteration limit can stop it at the end."""
    script = tmp_path / f"loop{replies}.jsonl"
    reply = '<tool_call>{"name": "calculate", "arguments": {"expression": "1+%d"}}</tool_call>'
    script.write_text("\n".join(json.dumps(reply % i) for i in range(replies)), encoding="utf-8")
    return script


def stopped_at_the_limit(out: str) -> int:
    """The iterations of a run that the iteration limit stopped."""
    finished = json.loads(out.splitlines()[-1])
    assert finished["stop_reason"] == "limit", finished
    return int(finished["iterations"])


def test_flags_beat_the_config_file_which_beats_the_defaults(tmp_path: Path) -> None:
    env = config_file(tmp_path, "[limits]\nmax_iterations = 2\nmax_failed_rounds = 9\n")

    def args(replies: int) -> list[str]:
        script = str(loop_script(tmp_path, replies))
        return ["run", "loop", "-m", "scripted", "--script", script, "--json", "--no-final-answer"]

    assert stopped_at_the_limit(toolcall(*args(5))[1]) == 5
    assert stopped_at_the_limit(toolcall(*args(2), env=env)[1]) == 2
    assert stopped_at_the_limit(toolcall(*args(3), "--max-iterations", "3", env=env)[1]) == 3


def test_config_limits_reach_the_http_client(server: FakeOpenAI, tmp_path: Path) -> None:
    server.answers.append(Answer(json_body=completion("x" * 5000)))
    env = config_file(tmp_path, "[limits]\nmax_response_bytes = 1000\n")
    code, _, err = toolcall("run", "hi", "-m", "m", "--base-url", server.base_url, env=env)
    assert code == 1 and "1,000 bytes" in err and "--max-response-bytes" in err


def test_config_show_says_where_each_limit_came_from(tmp_path: Path) -> None:
    env = config_file(tmp_path, "[limits]\nmax_iterations = 7\nrequest_timeout = 60\n")
    code, out, err = toolcall("config", "show", env=env)
    assert code == 0, err
    rows = {line.split()[0]: line.split()[1:] for line in out.splitlines() if line.startswith("  ")}
    assert rows["max_iterations"] == ["7", "[config]"]
    assert rows["request_timeout"] == ["60", "[config]"]
    assert rows["max_response_bytes"] == [str(32 * MiB), "[default]"]
    assert rows["timeout"] == ["(none)", "[default]"]
    assert set(rows) == {
        "max_iterations",
        "tool_timeout",
        "timeout",
        "max_result_chars",
        "max_failed_rounds",
        "max_repeated_rounds",
        "max_calls_per_reply",
        "history_rounds",
        "max_reply_chars",
        "max_response_bytes",
        "max_line_bytes",
        "request_timeout",
    }


@pytest.mark.parametrize(
    ("table", "needle"),
    [
        ('max_iterations = "5"', "[limits] max_iterations must be a whole number ≥ 1"),
        ("max_iterations = 0", "[limits] max_iterations must be a whole number ≥ 1"),
        ("max_iterations = true", "[limits] max_iterations must be a whole number"),
        ("max_iterations = 2.5", "[limits] max_iterations must be a whole number"),
        ("request_timeout = inf", "[limits] request_timeout must be a number of seconds"),
        ("request_timeout = nan", "[limits] request_timeout must be a number of seconds"),
        ("tool_timeout = -1", "[limits] tool_timeout must be a number of seconds from 0.01 to"),
        ("timeout = 1e10", "[limits] timeout must be a number of seconds from 0.1 to 31,536,000"),
        ("timeout = [1]", "[limits] timeout must be a number of seconds"),
        ("history_rounds = -1", "[limits] history_rounds must be a whole number ≥ 0"),
        ("max_bytes = 5", "unknown limit(s) max_bytes"),
    ],
)
def test_a_bad_limit_in_the_config_file_is_one_line_naming_it(
    tmp_path: Path, table: str, needle: str
) -> None:
    env = config_file(tmp_path, f"[limits]\n{table}\n")
    for args in (["run", "hi"], ["config", "show"]):
        code, _, err = toolcall(*args, env=env)
        assert code == 2 and err.count("\n") == 1 and needle in err, err


def test_limits_must_be_a_table(tmp_path: Path) -> None:
    code, _, err = toolcall("run", "hi", env=config_file(tmp_path, "limits = 5\n"))
    assert code == 2 and "[limits] table" in err


@pytest.mark.parametrize("value", ["nan", "inf", "-inf", "1e10"])
@pytest.mark.parametrize("flag", ["--request-timeout", "--tool-timeout", "--timeout"])
def test_a_float_limit_flag_must_be_finite(flag: str, value: str) -> None:
    code, _, err = toolcall("run", "hi", flag, value)
    assert code == 2 and flag in err, err  # typer itself refuses nan and -inf; inf is ours
    if value in ("inf", "1e10"):
        assert err.count("\n") == 1 and "must be a number of seconds" in err, err
        assert f"not {float(value)!r}" in err


def test_limit_flags_are_on_chat_too() -> None:
    code, out, _ = toolcall("chat", "--help")
    assert code == 0
    flags = ("--max-response-bytes", "--max-line-bytes", "--max-reply-chars", "--request-timeout")
    assert all(flag in out for flag in flags)
