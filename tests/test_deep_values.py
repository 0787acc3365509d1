"""A value nested hundreds deep, from a model or anywhere else, never breaks a run or its trace:
a model's reply nested too deeply is the model's failure, one line; every writer (the trace,
`--json`) bounds the depth it writes, so whatever reaches an event is recorded."""

from __future__ import annotations

import io
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from fake_openai import Answer, FakeOpenAI, completion
from in_process import toolcall

from toolcall_cli.events import (
    Event,
    FedBack,
    IterationStarted,
    ModelChunk,
    ModelFailed,
    ToolCallParsed,
)
from toolcall_cli.loop import Limits, run
from toolcall_cli.messages import ToolCall
from toolcall_cli.models.scripted import RecordedReply, ScriptedModel
from toolcall_cli.render._jsonl import JsonLinesRenderer
from toolcall_cli.strategies import get_strategy
from toolcall_cli.strictjson import DEEPEST, NOTES_KEY, TOO_DEEP, dumps, nesting_depth
from toolcall_cli.tools.registry import ToolRegistry
from toolcall_cli.trace import TraceWriter, read_trace
from toolcall_cli.trace.files import trace_files

REFUSED = "malformed reply from the model: it is nested more than 100 levels deep"


def nested(depth: int, leaf: Any = 1) -> Any:
    """`{"a": {"a": ... leaf}}`, `depth` objects deep, built without recursion."""
    value = leaf
    for _ in range(depth):
        value = {"a": value}
    return value


def chunk(delta: dict[str, Any], *, finish: str | None = None, usage: Any = None) -> str:
    sent: dict[str, Any] = {
        "object": "chat.completion.chunk",
        "choices": [{"index": 0, "delta": delta, "finish_reason": finish}],
    }
    if usage is not None:
        sent["usage"] = usage
    return json.dumps(sent)


@pytest.fixture
def server() -> Iterator[FakeOpenAI]:
    with FakeOpenAI() as fake:
        yield fake


def only_trace() -> Path:
    from toolcall_cli.trace.files import trace_dir

    [path] = trace_files(trace_dir())
    return path


# --- at the model boundary: refused as the model's failure, in one line ------------------------


DEEP_ANSWERS = {
    "a streamed delta 500 deep": (
        "stream",
        Answer(sse=[chunk({"content": "hi", "x": nested(500)}), chunk({}, finish="stop")]),
    ),
    "a streamed usage 900 deep": (
        "stream",
        Answer(sse=[chunk({"content": "hi"}), chunk({}, finish="stop", usage=nested(900))]),
    ),
    "a whole completion's usage 900 deep": (
        "schema",
        Answer(json_body={**completion("hi"), "usage": nested(900)}),
    ),
    "a whole completion's message 500 deep": (
        "regex",
        Answer(
            json_body={
                **completion("hi"),
                "choices": [
                    {
                        "index": 0,
                        "message": {"role": "assistant", "content": "hi", "x": nested(500)},
                        "finish_reason": "stop",
                    }
                ],
            }
        ),
    ),
}


@pytest.mark.parametrize("case", DEEP_ANSWERS)
def test_a_reply_nested_too_deeply_is_the_model_s_failure_and_the_trace_holds(
    server: FakeOpenAI, tmp_path: Path, case: str
) -> None:
    strategy, answer = DEEP_ANSWERS[case]
    server.answers.append(answer)
    done = toolcall(
        "run", "hi", "-m", "m", "--base-url", server.base_url, "-s", strategy, "-q", cwd=tmp_path
    )
    assert done.returncode == 1, done.stderr
    assert done.stderr == f"toolcall: error: {REFUSED}\n"
    records = read_trace(only_trace()).records
    failed = [r for r in records if r["kind"] == "model_failed"]
    assert [(r["message"], r["error_kind"]) for r in failed] == [(REFUSED, "protocol")]
    assert all(nesting_depth(r, DEEPEST + 1) <= DEEPEST for r in records)


def test_a_reply_just_within_the_depth_is_taken(server: FakeOpenAI, tmp_path: Path) -> None:
    # A chunk's delta sits four levels down: a chunk of 100 levels in all holds 96 here.
    server.answers.append(
        Answer(sse=[chunk({"content": "hi", "x": nested(96)}), chunk({}, finish="stop")])
    )
    done = toolcall(
        "run", "hi", "-m", "m", "--base-url", server.base_url, "-s", "stream", "-q", cwd=tmp_path
    )
    assert (done.returncode, done.stdout) == (0, "hi\n"), done.stderr
    [deep] = [r for r in read_trace(only_trace()).records if r["kind"] == "model_chunk"][:1]
    assert nesting_depth(deep["delta"]["x"], 200) == 96


def scripted_run(model: ScriptedModel, strategy: str) -> list[Event]:
    return list(
        run("hi", model=model, strategy=get_strategy(strategy), registry=ToolRegistry(),
            history=[], limits=Limits())
    )  # fmt: skip


def test_the_scripted_model_s_recorded_reply_nested_too_deeply_is_its_failure() -> None:
    # A trace recorded by an older toolcall, played back with --script: the same boundary.
    played = RecordedReply(
        chunks=(json.loads(chunk({"content": "hi", "x": nested(150)})),), streamed=True
    )
    events = scripted_run(ScriptedModel([played]), "stream")
    failed = [e for e in events if isinstance(e, ModelFailed)]
    assert [(e.message, e.error_kind) for e in failed] == [(REFUSED, "protocol")]
    assert not any(isinstance(e, ModelChunk) for e in events)


def test_a_played_trace_with_a_chunk_too_deep_fails_in_one_line(tmp_path: Path) -> None:
    trace = tmp_path / "old.jsonl"
    request = {"model": "m", "messages": [], "stream": True}
    lines: list[dict[str, Any]] = [
        {"kind": "run_started", "question": "hi", "model": "m", "strategy": "stream", "tools": []},
        {"kind": "iteration_started", "iteration": 1, "request": request},
        {"kind": "model_chunk", "iteration": 1, "delta": {"content": "hi", "x": nested(150)}},
        {"kind": "model_chunk", "iteration": 1, "delta": {}, "finish_reason": "stop"},
        {"kind": "model_replied", "iteration": 1, "raw": "hi", "text": "hi"},
    ]
    trace.write_text("".join(json.dumps(line) + "\n" for line in lines), encoding="utf-8")
    done = toolcall(
        "run", "hi", "-m", "scripted", "--script", str(trace), "-s", "stream", "-q", cwd=tmp_path
    )
    assert done.returncode == 1, done.stderr
    assert done.stderr == f"toolcall: error: {REFUSED}\n"


# --- in the writers: whatever reaches an event is recorded, its depth bounded -------------------


def deep_events(depth: int) -> list[Event]:
    """An event of each kind that carries a JSON value, with that value `depth` deep."""
    call = ToolCall(id="#1.0", name="f", arguments=nested(depth))
    return [
        IterationStarted(iteration=1, request={"model": "m", "tools": [nested(depth)]}),
        ModelChunk(iteration=1, delta={"x": nested(depth)}, usage=nested(depth)),
        ToolCallParsed(call=call),
        FedBack(iteration=1, messages=({"role": "tool", "x": nested(depth)},)),
    ]


@pytest.mark.parametrize("depth", [500, 900, 5000])
def test_every_event_nested_deeply_is_recorded_with_a_note(tmp_path: Path, depth: int) -> None:
    path = tmp_path / "deep.jsonl"
    writer = TraceWriter.open(path, secrets=["sk-SECRET-1234"])
    writer.header({"kind": "trace_header", "format": "toolcall-trace", "version": 1,
                   "tools": [{"name": "f", "parameters": nested(depth)}]})  # fmt: skip
    for event in deep_events(depth):
        writer.write(event)
    writer.close()
    trace = read_trace(path)
    assert [r["kind"] for r in trace.records] == [e.kind for e in deep_events(1)]
    for record in [trace.header, *trace.records]:
        assert record is not None
        assert nesting_depth(record, DEEPEST + 2) <= DEEPEST
        assert TOO_DEEP in json.dumps(record)
        assert any("nested more than 200 levels deep" in note for note in record[NOTES_KEY])


def test_json_lines_output_bounds_the_depth_too() -> None:
    out = io.StringIO()
    renderer = JsonLinesRenderer(out)
    for event in deep_events(900):
        renderer.handle(event)
    lines = [json.loads(line) for line in out.getvalue().splitlines()]
    assert len(lines) == len(deep_events(1)) - 1  # the chunk is the trace's alone
    assert all(TOO_DEEP in json.dumps(line) for line in lines)


def test_a_value_within_the_depth_is_written_unchanged() -> None:
    value = {"x": nested(DEEPEST - 1)}
    assert json.loads(dumps(value)) == value
