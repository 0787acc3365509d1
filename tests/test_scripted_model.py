"""The scripted model: replays replies in order, in whatever shape each request asks for."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from toolcall_cli.models.scripted import ScriptedModel
from toolcall_cli.wire import ModelError, ModelRequest

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
    told = "the script ran out: it holds 1 reply, and request 2 found none left"
    with pytest.raises(ModelError, match=told) as caught:
        list(model.stream(ModelRequest(body())))
    assert caught.value.kind == "protocol"


def test_assert_complete_fails_while_replies_are_left() -> None:
    model = ScriptedModel(["one", "two"])
    list(model.stream(ModelRequest(body())))
    with pytest.raises(AssertionError, match="1 scripted reply never requested"):
        model.assert_complete()
    list(model.stream(ModelRequest(body())))
    model.assert_complete()


@pytest.mark.script_not_played
def test_from_file_reads_a_json_list(tmp_path: Path) -> None:
    path = tmp_path / "script.json"
    path.write_text(json.dumps(["text", CALL_MESSAGE]), encoding="utf-8")
    assert ScriptedModel.from_file(path).replies == ["text", CALL_MESSAGE]


@pytest.mark.script_not_played
def test_from_file_reads_jsonl_with_strings_and_objects(tmp_path: Path) -> None:
    path = tmp_path / "script.jsonl"
    lines = [json.dumps("第一句"), "", json.dumps(CALL_MESSAGE, ensure_ascii=False)]
    path.write_text("\n".join(lines), encoding="utf-8")
    assert ScriptedModel.from_file(path).replies == ["第一句", CALL_MESSAGE]


@pytest.mark.parametrize(
    ("text", "problem"),
    [
        ("[1, 2]", "item 1"),
        ('"ok"\n{broken', "line 2 is not JSON"),
        ("[oops", "the list is not JSON"),
    ],
)
def test_from_file_names_what_is_wrong(tmp_path: Path, text: str, problem: str) -> None:
    path = tmp_path / "bad.jsonl"
    path.write_text(text, encoding="utf-8")
    with pytest.raises(ValueError, match=problem):
        ScriptedModel.from_file(path)


# --- a script is checked whole before the first request -----------------------------------------


def run_script(tmp_path: Path, script: str, *extra: str) -> Any:
    from typer.testing import CliRunner

    from toolcall_cli.cli import app

    path = tmp_path / "script.jsonl"
    path.write_text(script, encoding="utf-8")
    return CliRunner().invoke(
        app, ["run", "hi", "--json", "--model", "scripted", "--script", str(path), *extra]
    )


GOOD = json.dumps("fine")


@pytest.mark.parametrize(
    ("reply", "needles"),
    [
        ({"content": 5}, ["line 2", "`content`", "string or null"]),
        ({"tool_calls": "x"}, ["line 2", "`tool_calls`", "list"]),
        ({"tool_calls": [5]}, ["line 2", "`tool_calls[0]`", "object"]),
        ({"tool_calls": [{"function": {"name": 3}}]}, ["line 2", "`tool_calls[0].function.name`"]),
        ({"tool_calls": [{"function": "f"}]}, ["line 2", "`tool_calls[0].function`", "object"]),
        ({"tool_calls": [{"name": None}]}, ["line 2", "`tool_calls[0].name`", "string"]),
        ({"tool_calls": [{"id": 7, "name": "f"}]}, ["line 2", "`tool_calls[0].id`", "string"]),
        ({"tool_calls": [{"type": "tool", "name": "f"}]}, ["`tool_calls[0].type`", "function"]),
        ({"finish_reason": 1}, ["line 2", "`finish_reason`", "string"]),
        ({"role": "user", "content": "hi"}, ["line 2", "`role`", "assistant"]),
        ({"contents": "typo"}, ["line 2", "unknown key `contents`", "`content`"]),
        ({"content": "x", "reasoning_content": "y"}, ["unknown key `reasoning_content`"]),
        (
            {"tool_calls": [{"function": {"name": "f", "argument": "{}"}}]},
            ["unknown key `tool_calls[0].function.argument`"],
        ),
        (
            {"tool_calls": [{"name": "f", "function": {"name": "f"}}]},
            ["`tool_calls[0]`", "`function` or", "not both"],
        ),
        (5, ["line 2", "string or object"]),
    ],
    ids=lambda value: json.dumps(value)[:40] if not isinstance(value, list) else "",
)
def test_an_invalid_reply_is_a_usage_error_naming_its_line_and_key(
    tmp_path: Path, reply: Any, needles: list[str]
) -> None:
    result = run_script(tmp_path, f"{GOOD}\n{json.dumps(reply)}\n{GOOD}\n")
    assert result.exit_code == 2, result.stdout
    assert result.stdout == ""  # nothing ran: no run_started, no request
    assert result.stderr.count("\n") == 1 and result.stderr.startswith("toolcall: error: ")
    for needle in needles:
        assert needle in result.stderr, (needle, result.stderr)


def test_an_invalid_item_of_a_json_list_is_named_by_its_number(tmp_path: Path) -> None:
    result = run_script(tmp_path, json.dumps(["ok", {"tool_calls": [{"function": {"name": 3}}]}]))
    assert result.exit_code == 2
    assert "item 2" in result.stderr and "`tool_calls[0].function.name`" in result.stderr


def test_a_script_nested_too_deeply_is_a_usage_error(tmp_path: Path) -> None:
    result = run_script(tmp_path, "[" * 100_000 + "]" * 100_000)
    assert result.exit_code == 2 and result.stderr.count("\n") == 1
    assert "nested too deeply" in result.stderr


def test_every_reply_the_format_allows_still_runs(tmp_path: Path) -> None:
    """What a script may hold, including a model's own mistakes (an empty name, broken
    arguments, a forced finish_reason): these are what scripts are for."""
    replies = [
        {
            "role": "assistant",
            "content": None,
            "tool_calls": [
                {"id": "c1", "type": "function", "function": {"name": "", "arguments": "{bad"}},
                {"name": "calculate", "arguments": {"expression": "1+1"}},
            ],
            "finish_reason": "tool_calls",
        },
        {"content": "done", "tool_calls": None, "finish_reason": None},
    ]
    script = "\n".join(json.dumps(r) for r in replies)
    result = run_script(tmp_path, script, "--strategy", "schema")
    assert result.exit_code == 0, result.stderr
    events = [json.loads(line) for line in result.stdout.splitlines()]
    assert [e["call"]["name"] for e in events if e["kind"] == "tool_call_parsed"] == ["calculate"]
    assert events[-1]["stop_reason"] == "answered"


def test_a_script_without_model_scripted_is_a_usage_error(tmp_path: Path) -> None:
    from typer.testing import CliRunner

    from toolcall_cli.cli import app

    path = tmp_path / "script.jsonl"
    path.write_text(GOOD, encoding="utf-8")
    for model in ([], ["--model", "offline"]):
        result = CliRunner().invoke(app, ["run", "hi", "--script", str(path), *model])
        assert result.exit_code == 2 and result.stdout == ""
        assert result.stderr.count("\n") == 1 and "--model scripted" in result.stderr
