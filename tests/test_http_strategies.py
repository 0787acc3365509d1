"""Each strategy completes a two-iteration tool question against a real HTTP server on 127.0.0.1."""

from __future__ import annotations

import json
from typing import Any

import pytest
from fake_openai import Answer, FakeOpenAI, completion, text_stream

from toolcall_cli.events import FinalAnswer, RunFinished, ToolFinished
from toolcall_cli.loop import run
from toolcall_cli.messages import Message
from toolcall_cli.models.openai_compat import Endpoint, OpenAICompatModel
from toolcall_cli.strategies import get_strategy
from toolcall_cli.tools.loader import bundled_tools_dir, load_tools

CALL = '<tool_call>{"name": "calculate", "arguments": {"expression": "12*5+3"}}</tool_call>'
NATIVE_CALL = {
    "id": "call_x",
    "type": "function",
    "function": {"name": "calculate", "arguments": '{"expression": "12*5+3"}'},
}


def native_stream() -> list[str]:
    first = {
        "index": 0,
        "id": "call_x",
        "type": "function",
        "function": {"name": "calculate", "arguments": ""},
    }
    pieces = ['{"expre', 'ssion": "12*', '5+3"}']
    chunks: list[dict[str, Any]] = [
        {"choices": [{"index": 0, "delta": {"role": "assistant", "tool_calls": [first]}}]}
    ]
    chunks += [
        {
            "choices": [
                {
                    "index": 0,
                    "delta": {
                        "tool_calls": [
                            {
                                "index": 0,
                                "id": "call_x",
                                "function": {"name": "calculate", "arguments": p},
                            }
                        ]
                    },
                }
            ]
        }
        for p in pieces
    ]
    chunks.append({"choices": [{"index": 0, "delta": {}, "finish_reason": "tool_calls"}]})
    chunks.append(
        {"choices": [], "usage": {"prompt_tokens": 9, "completion_tokens": 3, "total_tokens": 12}}
    )
    return [*map(json.dumps, chunks), "[DONE]"]


CASES: dict[str, tuple[dict[str, Any], list[Answer]]] = {
    "regex": (
        {},
        [
            Answer(json_body=completion(f"Let me compute.\n{CALL}")),
            Answer(json_body=completion("12*5+3 = 63")),
        ],
    ),
    "schema": (
        {},
        [
            Answer(json_body=completion(None, [NATIVE_CALL], "tool_calls")),
            Answer(json_body=completion("12*5+3 = 63")),
        ],
    ),
    "schema-json": (
        {"schema_mode": "json"},
        [
            Answer(
                json_body=completion('{"name": "calculate", "arguments": {"expression": "12*5+3"}}')
            ),
            Answer(json_body=completion('{"answer": "12*5+3 = 63"}')),
        ],
    ),
    "stream": (
        {},
        [
            Answer(sse=text_stream(f"Computing. {CALL} done.", piece=4), split_seed=3),
            Answer(sse=text_stream("12*5+3 = 63"), split_seed=4),
        ],
    ),
    "stream-native": (
        {"stream_mode": "native"},
        [Answer(sse=native_stream(), split_seed=5), Answer(sse=text_stream("12*5+3 = 63"))],
    ),
}


@pytest.mark.parametrize("case", list(CASES))
def test_two_iterations_over_http(case: str) -> None:
    modes, answers = CASES[case]
    registry = load_tools([bundled_tools_dir()]).registry
    history: list[Message] = []
    with FakeOpenAI() as server:
        server.answers += answers
        model = OpenAICompatModel(Endpoint(base_url=server.base_url, model="fake"))
        try:
            events = list(
                run(
                    "What's 12*5+3?",
                    model=model,
                    registry=registry,
                    history=history,
                    strategy=get_strategy(case.split("-")[0], **modes),
                )
            )
        finally:
            model.close()
        requests = server.requests
    results = [e.result for e in events if isinstance(e, ToolFinished)]
    assert [r.content for r in results] == ["63"]
    assert [e.text for e in events if isinstance(e, FinalAnswer)] == ["12*5+3 = 63"]
    assert next(e for e in events if isinstance(e, RunFinished)).iterations == 2
    second = requests[1]
    if case in ("schema", "stream-native"):
        assert second["messages"][-1] == {"role": "tool", "tool_call_id": "call_x", "content": "63"}
        assert second["tools"][0]["type"] == "function"
    else:
        assert (
            '<tool_result id="#1.0" name="calculate">\n63\n</tool_result>'
            in second["messages"][-1]["content"]
        )
    assert bool(second.get("stream")) == case.startswith("stream")


DEEP = "[" * 100_000 + "]" * 100_000


@pytest.mark.parametrize(
    ("strategy", "answer"),
    [
        (
            "schema",
            completion(
                None,
                [
                    {
                        "id": "c",
                        "type": "function",
                        "function": {"name": "calculate", "arguments": DEEP},
                    }
                ],
                "tool_calls",
            ),
        ),
        ("schema-json", completion('{"name": "calculate", "arguments": ' + DEEP + "}")),
        (
            "regex",
            completion('<tool_call>{"name": "calculate", "arguments": ' + DEEP + "}</tool_call>"),
        ),
    ],
)
def test_arguments_nested_too_deeply_go_back_to_the_model(
    strategy: str, answer: dict[str, Any]
) -> None:
    """The model's own output, however deep, is a parse error it can fix, not a crash."""
    from toolcall_cli.events import ModelFailed, ParseError

    registry = load_tools([bundled_tools_dir()]).registry
    modes: dict[str, Any] = {"schema_mode": "json"} if strategy == "schema-json" else {}
    with FakeOpenAI() as server:
        sorry = '{"answer": "sorry"}' if modes else "sorry"
        server.answers += [Answer(json_body=answer), Answer(json_body=completion(sorry))]
        model = OpenAICompatModel(Endpoint(base_url=server.base_url, model="fake"))
        try:
            events = list(
                run(
                    "What's 12*5+3?",
                    model=model,
                    registry=registry,
                    history=[],
                    strategy=get_strategy(strategy.split("-")[0], **modes),
                )
            )
        finally:
            model.close()
    assert not [e for e in events if isinstance(e, ModelFailed)]
    assert [e for e in events if isinstance(e, ParseError)]
    assert [e.text for e in events if isinstance(e, FinalAnswer)] == ["sorry"]
