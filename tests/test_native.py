"""Native tool_calls: whole messages and streamed deltas, with the quirks real servers have."""

from __future__ import annotations

import json
from typing import Any

from toolcall_cli.events import CallForming, ToolCallParsed
from toolcall_cli.strategies.schema import NativeReplyParser, StructuredReplyParser


def delta(
    *tool_calls: dict[str, Any], finish: str | None = None, content: str | None = None
) -> dict[str, Any]:
    part: dict[str, Any] = {}
    if tool_calls:
        part["tool_calls"] = list(tool_calls)
    if content is not None:
        part["content"] = content
    return {"choices": [{"index": 0, "delta": part, "finish_reason": finish}]}


def entry(
    index: int, id: str | None = None, name: str | None = None, args: Any = None
) -> dict[str, Any]:
    function: dict[str, Any] = {}
    if name is not None:
        function["name"] = name
    if args is not None:
        function["arguments"] = args
    out: dict[str, Any] = {"index": index, "function": function}
    if id is not None:
        out["id"] = id
    return out


def parse(chunks: list[dict[str, Any]]) -> tuple[NativeReplyParser, list[Any]]:
    parser = NativeReplyParser("call_")
    events = [*(e for chunk in chunks for e in parser.feed(chunk)), *parser.close()]
    return parser, events


def test_repeated_id_and_name_are_not_concatenated() -> None:
    parser, _ = parse(
        [
            delta(entry(0, "a", "get_weather", "")),
            delta(entry(0, "a", "get_weather", '{"city": ')),
            delta(entry(0, "a", "get_weather", '"Paris"}')),
            delta(finish="tool_calls"),
        ]
    )
    [call] = parser.reply().calls
    assert (call.id, call.name, call.arguments) == ("a", "get_weather", {"city": "Paris"})


def test_ollama_parallel_calls_share_index_0_but_not_ids() -> None:
    parser, _ = parse(
        [
            delta(entry(0, "x1", "get_weather", {"city": "北京"})),
            delta(entry(0, "x2", "get_weather", {"city": "上海"})),
            delta(finish="tool_calls"),
        ]
    )
    assert [(c.id, c.arguments["city"]) for c in parser.reply().calls] == [
        ("x1", "北京"),
        ("x2", "上海"),
    ]


def test_a_call_is_parsed_as_soon_as_its_arguments_close() -> None:
    parser = NativeReplyParser("call_")
    assert not [
        e
        for e in parser.feed(delta(entry(0, "a", "calc", '{"expression": "1+')))
        if isinstance(e, ToolCallParsed)
    ]
    events = parser.feed(delta(entry(0, None, None, '2"}')))
    assert any(isinstance(e, CallForming) for e in events)
    assert [e.call.arguments for e in events if isinstance(e, ToolCallParsed)] == [
        {"expression": "1+2"}
    ]
    # trailing pieces for a finished call (whitespace, repeats) do not start a new call
    parser.feed(delta(entry(0, None, None, " ")))
    parser.feed(delta(finish="tool_calls"))
    parser.close()
    assert len(parser.reply().calls) == 1 and not parser.reply().errors


def test_missing_finish_reason_and_usage_after_finish() -> None:
    parser, _ = parse(
        [
            delta(entry(0, "a", "f", "{}")),
            {
                "choices": [],
                "usage": {"prompt_tokens": 3, "completion_tokens": 2, "total_tokens": 5},
            },
        ]
    )
    assert [c.name for c in parser.reply().calls] == ["f"]
    assert parser.reply().usage["total_tokens"] == 5


def test_cut_off_arguments_are_a_truncated_call_not_a_repaired_guess() -> None:
    parser, _ = parse(
        [delta(entry(0, "a", "calculate", '{"expression": "12*5')), delta(finish="length")]
    )
    reply = parser.reply()
    assert reply.calls == () and reply.errors[0].truncated
    assert (
        json.loads(reply.raw)["tool_calls"][0]["id"] == "a"
    )  # still echoed back, so its id is answered


def test_a_stream_that_ends_inside_the_arguments_is_truncated() -> None:
    parser, _ = parse([delta(entry(0, "a", "calculate", '{"expression": "12'))])
    assert parser.reply().errors[0].truncated


def test_a_sloppy_but_finished_call_is_repaired() -> None:
    parser, _ = parse([delta(entry(0, "a", "f", "{'x': 1,}")), delta(finish="tool_calls")])
    [call] = parser.reply().calls
    assert call.arguments == {"x": 1} and call.repaired


def test_double_encoded_arguments_are_decoded_once() -> None:
    parser, _ = parse(
        [delta(entry(0, "a", "f", json.dumps(json.dumps({"x": 1})))), delta(finish="tool_calls")]
    )
    assert parser.reply().calls[0].arguments == {"x": 1}


def test_content_null_alongside_tool_calls() -> None:
    message = {
        "role": "assistant",
        "content": None,
        "tool_calls": [
            {"id": "c", "type": "function", "function": {"name": "f", "arguments": "{}"}}
        ],
    }
    parser = NativeReplyParser("call_")
    parser.feed({"choices": [{"index": 0, "message": message, "finish_reason": "tool_calls"}]})
    parser.close()
    assert parser.reply().text == "" and parser.reply().calls[0].name == "f"


def test_reasoning_content_is_kept_apart() -> None:
    parser, _ = parse(
        [
            {"choices": [{"delta": {"reasoning_content": "thinking <tool_call>{}"}}]},
            delta(content="Hi"),
        ]
    )
    reply = parser.reply()
    assert reply.reasoning == "thinking <tool_call>{}" and reply.text == "Hi" and reply.calls == ()


def structured(content: str, finish: str = "stop") -> Any:
    parser = StructuredReplyParser("call_")
    parser.feed(
        {"choices": [{"index": 0, "message": {"content": content}, "finish_reason": finish}]}
    )
    parser.close()
    return parser.reply()


def test_json_mode_call_answer_and_cut() -> None:
    call = structured('{"name": "calculate", "arguments": {"expression": "1+2"}}')
    assert call.calls[0].arguments == {"expression": "1+2"}
    assert structured('{"answer": "3"}').text == "3"
    cut = structured('{"name": "calculate", "arguments": {"expression": "1+', "length")
    assert cut.calls == () and cut.errors[0].truncated
    junk = structured("I think the answer is 3")
    assert junk.errors and not junk.errors[0].truncated


def test_ollama_parallel_calls_without_ids_are_both_kept() -> None:
    parser, _ = parse(
        [
            delta(entry(0, None, "get_weather", {"city": "北京"})),
            delta(entry(0, None, "get_weather", {"city": "上海"})),
            delta(entry(0, None, "get_time", {})),
            delta(finish="tool_calls"),
        ]
    )
    calls = parser.reply().calls
    assert [(c.name, c.arguments) for c in calls] == [
        ("get_weather", {"city": "北京"}),
        ("get_weather", {"city": "上海"}),
        ("get_time", {}),
    ]
    assert len({c.id for c in calls}) == 3


def test_non_object_arguments_reach_the_executor_as_they_are() -> None:
    parser, _ = parse([delta(entry(0, "a", "f", 5)), delta(finish="tool_calls")])
    assert parser.reply().calls[0].arguments == 5
