"""The scripted model: replays replies in order, in whatever shape each request asks for."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from toolcall_cli.models.base import ModelError, ModelRequest
from toolcall_cli.models.scripted import ScriptedModel

CALL_MESSAGE = {
    "role": "assistant",
    "content": None,
    "tool_calls": [
        {
            "id": "call_1",
            "type": "function",
            "function": {"name": "calculate", "arguments": {"expression": "12*5+3"}},
        }
    ],
}


def body(stream: bool = False, usage: bool = False) -> dict[str, Any]:
    request: dict[str, Any] = {"model": "m", "messages": [{"role": "user", "content": "hi"}]}
    if stream:
        request["stream"] = True
    if usage:
        request["stream_options"] = {"include_usage": True}
    return request


def test_a_string_reply_becomes_the_completion_content() -> None:
    model = ScriptedModel(["<tool_call>{}</tool_call> done"])
    [completion] = list(model.stream(ModelRequest(body())))
    choice = completion["choices"][0]
    assert completion["object"] == "chat.completion"
    assert choice["message"] == {"role": "assistant", "content": "<tool_call>{}</tool_call> done"}
    assert choice["finish_reason"] == "stop"
    assert completion["usage"]["total_tokens"] > 0


def test_a_message_reply_keeps_its_tool_calls_with_string_arguments() -> None:
    [completion] = list(ScriptedModel([CALL_MESSAGE]).stream(ModelRequest(body())))
    choice = completion["choices"][0]
    assert choice["finish_reason"] == "tool_calls"
    [call] = choice["message"]["tool_calls"]
    assert call["id"] == "call_1"
    assert call["function"] == {"name": "calculate", "arguments": '{"expression": "12*5+3"}'}


def test_a_message_may_force_its_finish_reason() -> None:
    reply = {"role": "assistant", "content": '<tool_call>{"name": ', "finish_reason": "length"}
    [completion] = list(ScriptedModel([reply]).stream(ModelRequest(body())))
    assert completion["choices"][0]["finish_reason"] == "length"


def test_streaming_requests_get_chunks_that_rebuild_the_reply() -> None:
    call = json.dumps({"name": "get_weather", "arguments": {"city": "北京"}}, ensure_ascii=False)
    text = f"Let me check.\n<tool_call>{call}</tool_call>"
    chunks = list(ScriptedModel([text]).stream(ModelRequest(body(stream=True, usage=True))))
    assert all(c["object"] == "chat.completion.chunk" for c in chunks)
    content = "".join(c["choices"][0]["delta"].get("content") or "" for c in chunks if c["choices"])
    assert content == text
    assert len(chunks) > 5
    assert chunks[-1]["choices"] == [] and chunks[-1]["usage"]["completion_tokens"] > 0


def test_streamed_tool_calls_come_as_deltas_keyed_by_index() -> None:
    chunks = list(ScriptedModel([CALL_MESSAGE]).stream(ModelRequest(body(stream=True))))
    deltas = [d for c in chunks for d in c["choices"][0]["delta"].get("tool_calls") or []]
    assert deltas[0]["id"] == "call_1" and deltas[0]["function"]["name"] == "calculate"
    assert {d["index"] for d in deltas} == {0}
    assert "".join(d["function"]["arguments"] for d in deltas) == '{"expression": "12*5+3"}'
    assert chunks[-1]["choices"][0]["finish_reason"] == "tool_calls"


def test_chunking_is_the_same_on_every_replay() -> None:
    def replay() -> list[dict[str, Any]]:
        return list(ScriptedModel(["a fairly long reply text"]).stream(ModelRequest(body(True))))

    assert replay() == replay()


def test_replies_are_used_in_order_and_requests_are_kept() -> None:
    model = ScriptedModel(["one", "two"])
    first = list(model.stream(ModelRequest(body())))
    second = list(model.stream(ModelRequest({**body(), "model": "other"})))
    assert first[0]["choices"][0]["message"]["content"] == "one"
    assert second[0]["choices"][0]["message"]["content"] == "two"
    assert [r["model"] for r in model.requests] == ["m", "other"]


def test_running_out_of_replies_is_a_protocol_error_naming_the_request() -> None:
    model = ScriptedModel(["only"])
    list(model.stream(ModelRequest(body())))
    with pytest.raises(ModelError, match="no reply left for request 2") as caught:
        list(model.stream(ModelRequest(body())))
    assert caught.value.kind == "protocol"


def test_assert_complete_fails_while_replies_are_left() -> None:
    model = ScriptedModel(["one", "two"])
    list(model.stream(ModelRequest(body())))
    with pytest.raises(AssertionError, match="1 scripted reply never requested"):
        model.assert_complete()
    list(model.stream(ModelRequest(body())))
    model.assert_complete()


def test_from_file_reads_a_json_list(tmp_path: Path) -> None:
    path = tmp_path / "script.json"
    path.write_text(json.dumps(["text", CALL_MESSAGE]), encoding="utf-8")
    assert ScriptedModel.from_file(path).replies == ["text", CALL_MESSAGE]


def test_from_file_reads_jsonl_with_strings_and_objects(tmp_path: Path) -> None:
    path = tmp_path / "script.jsonl"
    lines = [json.dumps("第一句"), "", json.dumps(CALL_MESSAGE, ensure_ascii=False)]
    path.write_text("\n".join(lines), encoding="utf-8")
    assert ScriptedModel.from_file(path).replies == ["第一句", CALL_MESSAGE]


@pytest.mark.parametrize(
    ("text", "problem"),
    [("[1, 2]", "item 1"), ('"ok"\n{broken', "line 2 is not JSON"), ("[oops", "not a valid JSON")],
)
def test_from_file_names_what_is_wrong(tmp_path: Path, text: str, problem: str) -> None:
    path = tmp_path / "bad.jsonl"
    path.write_text(text, encoding="utf-8")
    with pytest.raises(ValueError, match=problem):
        ScriptedModel.from_file(path)
