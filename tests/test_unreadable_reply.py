"""A tool call the model wrote and its own server could not read (llama-server --jinja and
Ollama parse calls themselves, and answer with an error, most often HTTP 500, in place of the
reply): the model's malformed output, told to the model like any other, not the end of the run.
A server that is broken still ends the run as an endpoint error (exit 1)."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from fake_openai import Answer, FakeOpenAI, completion
from in_process import toolcall

from toolcall_cli.events import (
    AnswerWithoutTools,
    Event,
    FinalAnswer,
    ModelFailed,
    ReplyNotRead,
    RunFinished,
)
from toolcall_cli.loop import Limits, run
from toolcall_cli.messages import Message
from toolcall_cli.models.openai_compat import Endpoint, OpenAICompatModel
from toolcall_cli.strategies import get_strategy
from toolcall_cli.tools.loader import bundled_tools_dir, load_tools
from toolcall_cli.wire import NOTICE_KEY, UNREADABLE_REPLY, ModelError, ModelRequest

BUNDLED = load_tools([bundled_tools_dir()]).registry

# What servers say when their model wrote a call they cannot read (from their issue trackers).
UNREAD = {
    "llama.cpp peg": "The model produced output that does not match the expected peg-native format",
    "llama.cpp at pos": "Failed to parse input at pos 395: <|tool_call_start|>[web_search("
    "query='weather')]<|tool_call_end|>",
    "Ollama": "error parsing tool call: raw='{\"input\":\"x\"}]', err=invalid character ']' "
    "after top-level value",
    "other words": "failed to parse the tool calls in the model output",
}
# A broken server, or a request it could not read: nothing the model can correct.
BROKEN = {
    "plain": "Internal Server Error",
    "memory": "CUDA error: out of memory",
    "the request's history": "Failed to parse tool call arguments as JSON: [json.exception."
    "parse_error.101] unexpected end of input",
    "the request's tools": "Failed to parse tools: type must be string, but is null",
    "the model, not its output": "the model failed to load",
}


def error_answer(message: str, status: int = 500) -> Answer:
    """llama-server's shape of an error (Ollama's OpenAI endpoint nests it the same way)."""
    body = {"error": {"code": status, "message": message, "type": "server_error"}}
    return Answer(status=status, json_body=body, headers={"Retry-After": "0"})


def model_for(server: FakeOpenAI) -> OpenAICompatModel:
    endpoint = Endpoint(base_url=server.base_url, model="m")
    return OpenAICompatModel(endpoint, sleep=lambda _: None)


def refused(model: OpenAICompatModel, body: dict[str, Any] | None = None) -> ModelError:
    request = ModelRequest(body or {"messages": [{"role": "user", "content": "hi"}]})
    with pytest.raises(ModelError) as caught:
        list(model.stream(request))
    return caught.value


# --- the adapter tells the model's fault from the server's --------------------------------------


@pytest.mark.parametrize("said", UNREAD.values(), ids=UNREAD.keys())
def test_a_call_the_server_could_not_read_is_the_models_once_the_retries_are_spent(
    said: str,
) -> None:
    """Retried first, as any 5xx, with the next seed and warmer: a new sample is often read.
    Once the retries are spent, it is the model's malformed output, not a broken server."""
    with FakeOpenAI() as server:
        server.answers += [error_answer(said)] * 3 + [Answer(json_body=completion("late"))]
        model = model_for(server)
        error = refused(model)
        model.close()
        sent = len(server.requests)
    assert error.kind == UNREADABLE_REPLY
    assert error.said == said
    assert "could not read the model's reply as a tool call (HTTP 500)" in str(error)
    assert sent == 3


def test_a_retry_the_server_can_read_is_the_reply() -> None:
    with FakeOpenAI() as server:
        server.answers += [
            error_answer(UNREAD["llama.cpp peg"]),
            Answer(json_body=completion("63")),
        ]
        model = model_for(server)
        request = ModelRequest({"messages": [{"role": "user", "content": "hi"}], "seed": 7})
        chunks = list(model.stream(request))
        model.close()
        seeds = [body.get("seed") for body in server.requests]
    assert seeds == [7, 8]  # the retry is a new sample, not the same one again
    assert "63" in json.dumps(chunks)
    # The user is told why it is retried: not a server that broke, a reply it could not read.
    [notice] = [chunk[NOTICE_KEY] for chunk in chunks if NOTICE_KEY in chunk]
    assert notice.startswith(
        "HTTP 500 (the server could not read the model's reply as a tool call): retry 1 of 2"
    )


def test_a_broken_server_s_retry_is_said_as_a_server_error() -> None:
    with FakeOpenAI() as server:
        server.answers += [error_answer(BROKEN["memory"]), Answer(json_body=completion("63"))]
        model = model_for(server)
        chunks = list(model.stream(ModelRequest({"messages": []})))
        model.close()
    [notice] = [chunk[NOTICE_KEY] for chunk in chunks if NOTICE_KEY in chunk]
    assert notice.startswith("HTTP 500 (server error): retry 1 of 2")


@pytest.mark.parametrize("said", BROKEN.values(), ids=BROKEN.keys())
def test_a_broken_server_is_retried_and_ends_as_a_server_error(said: str) -> None:
    with FakeOpenAI() as server:
        server.answers += [error_answer(said)] * 3
        model = model_for(server)
        error = refused(model)
        model.close()
        sent = len(server.requests)
    assert error.kind == "server" and "after retries" in str(error)
    assert sent == 3


def test_an_empty_500_is_a_broken_server() -> None:
    with FakeOpenAI() as server:
        server.answers += [Answer(status=500, raw=b"", headers={"Retry-After": "0"})] * 3
        model = model_for(server)
        error = refused(model)
        model.close()
    assert error.kind == "server"


def test_a_stream_that_reports_the_unreadable_call_midway_is_the_models_too() -> None:
    """A streamed answer is under way (HTTP 200) when the server finds it cannot read the call:
    the error comes as an event."""
    event = json.dumps({"error": {"message": UNREAD["Ollama"]}})
    with FakeOpenAI() as server:
        server.answers.append(Answer(sse=[event]))
        model = model_for(server)
        error = refused(model, {"messages": [], "stream": True})
        model.close()
    assert error.kind == UNREADABLE_REPLY and error.said == UNREAD["Ollama"]


def test_what_the_server_said_is_masked_of_the_key() -> None:
    key = "sk-test-0123456789abcdef"
    with FakeOpenAI() as server:
        server.answers += [error_answer(f"{UNREAD['llama.cpp peg']} (key {key})")] * 3
        model = OpenAICompatModel(
            Endpoint(base_url=server.base_url, model="m", api_key=key), sleep=lambda _: None
        )
        error = refused(model)
        model.close()
    assert error.kind == UNREADABLE_REPLY
    assert key not in error.said and key not in str(error)


# --- the loop tells the model, and asks again within its limits ---------------------------------


class Unreadable:
    """A model whose server could not read its calls `times` times, then answers."""

    name = "unreadable"

    def __init__(self, times: int, answer: str = "63") -> None:
        self.times = times
        self.answer = answer
        self.requests: list[dict[str, Any]] = []

    def stream(self, request: ModelRequest) -> Iterator[dict[str, Any]]:
        self.requests.append(request.body)
        if len(self.requests) <= self.times:
            raise ModelError(
                f"the server could not read the model's reply as a tool call (HTTP 500): "
                f"{UNREAD['llama.cpp peg']}",
                kind=UNREADABLE_REPLY,
                said=UNREAD["llama.cpp peg"],
            )
        yield completion(self.answer)


def run_with(model: Unreadable, **limits: Any) -> tuple[list[Event], list[Message]]:
    history: list[Message] = []
    events = list(
        run(
            "What's 12*5+3?",
            model=model,
            strategy=get_strategy("schema", schema_mode="tools"),
            registry=BUNDLED,
            history=history,
            limits=Limits(**limits),
        )
    )
    return events, history


def stop_reason(events: list[Event]) -> str:
    finished = events[-1]
    assert isinstance(finished, RunFinished)
    return finished.stop_reason


def test_the_model_is_told_why_and_what_a_call_looks_like_and_asked_again() -> None:
    model = Unreadable(times=1)
    events, history = run_with(model)
    [shown] = [e for e in events if isinstance(e, ReplyNotRead)]
    assert shown.said == UNREAD["llama.cpp peg"] and "HTTP 500" in shown.message
    told = model.requests[1]["messages"][-1]
    assert told["role"] == "user"
    assert "could not be read as a tool call" in told["content"]
    assert UNREAD["llama.cpp peg"] in told["content"]
    assert all(f"`{name}`" in told["content"] for name in BUNDLED.names())
    assert "What's 12*5+3?" in told["content"]  # the question again, last
    assert [e.text for e in events if isinstance(e, FinalAnswer)] == ["63"]
    assert not [e for e in events if isinstance(e, ModelFailed)]
    assert stop_reason(events) == "answered"
    # Nothing of the unread reply reached toolcall, so nothing of it is in the history.
    assert [m.role for m in history] == ["user", "user", "assistant"]


def test_replies_that_are_never_read_withdraw_the_tools_then_reach_the_limit() -> None:
    model = Unreadable(times=100)
    events, _ = run_with(model, max_iterations=5, max_failed_rounds=3)
    withdrawn = [e for e in events if isinstance(e, AnswerWithoutTools)]
    assert len(withdrawn) == 1 and withdrawn[0].failed_rounds == 3
    assert "tools" not in model.requests[3]  # the fourth request offers none
    assert len(model.requests) == 6  # five iterations and the last request without tools
    assert stop_reason(events) == "limit"


# --- as a user sees it ---------------------------------------------------------------------------


def tool_call(name: str, arguments: dict[str, Any]) -> dict[str, Any]:
    function = {"name": name, "arguments": json.dumps(arguments)}
    return {"id": "call_1", "type": "function", "function": function}


def test_a_run_goes_on_after_the_server_could_not_read_a_call(tmp_path: Path) -> None:
    trace = tmp_path / "run.jsonl"
    with FakeOpenAI() as server:
        server.answers += [error_answer(UNREAD["llama.cpp peg"])] * 3 + [
            Answer(json_body=completion(None, [tool_call("calculate", {"expression": "12*5+3"})])),
            Answer(json_body=completion("12*5+3 = 63")),
        ]
        done = toolcall(
            "run", "--model", "m", "--base-url", server.base_url, "--strategy", "schema",
            "--json", "--trace", str(trace), "What's 12*5+3?",
            cwd=tmp_path,
        )  # fmt: skip
        requests = server.requests
    assert done.returncode == 0, done.stderr
    assert len(requests) == 5  # three tries of the first request, then two more
    told = requests[3]["messages"][-1]["content"]
    assert UNREAD["llama.cpp peg"] in told and "`calculate`" in told
    shown = [json.loads(line) for line in done.stdout.splitlines()]
    traced = [json.loads(line) for line in trace.read_text().splitlines()]
    for records in (shown, traced):
        [not_read] = [r for r in records if r["kind"] == "reply_not_read"]
        assert not_read["said"] == UNREAD["llama.cpp peg"]
        assert records[-1]["stop_reason"] == "answered"
    # The trace plays back as the run went: the server's refusal, then the replies.
    replayed = toolcall(
        "replay", str(trace), "--model", "scripted", "--script", str(trace), cwd=tmp_path
    )
    assert replayed.returncode == 0, replayed.stdout[-2000:] + replayed.stderr
    told = toolcall("trace", "show", str(trace), cwd=tmp_path)
    assert told.returncode == 0
    assert "the model is told so and asked again" in " ".join(told.stdout.split())
    diagnosed = toolcall("doctor", str(trace), cwd=tmp_path)
    found = " ".join(diagnosed.stdout.split())
    assert "(reply_not_read): the server could not read the model's reply" in found
    assert "fixed at iteration 2" in found and diagnosed.returncode == 4


@pytest.mark.parametrize("said", [BROKEN["plain"], BROKEN["the request's history"]])
def test_a_broken_server_still_ends_the_run_as_an_endpoint_error(tmp_path: Path, said: str) -> None:
    with FakeOpenAI() as server:
        server.answers += [error_answer(said)] * 3
        done = toolcall(
            "run", "--model", "m", "--base-url", server.base_url, "--strategy", "schema",
            "--json", "--no-trace", "What's 12*5+3?",
            cwd=tmp_path,
        )  # fmt: skip
        sent = len(server.requests)
    assert done.returncode == 1 and done.stderr.count("\n") == 1, done.stderr
    assert "HTTP 500" in done.stderr and said[:30] in done.stderr
    assert sent == 3
    records = [json.loads(line) for line in done.stdout.splitlines()]
    assert records[-1]["stop_reason"] == "model_failed"
