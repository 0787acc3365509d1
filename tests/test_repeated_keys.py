"""A key written twice in a call's JSON: the model's meaning is a guess, so the call is refused
back to it, by the text parser (whole and streamed), native `tool_calls` and structured output
alike. Python's reader alone keeps the last value and says nothing."""

from __future__ import annotations

import json
from typing import Any

import pytest

from toolcall_cli.strategies._repair import JsonProblem, load_json
from toolcall_cli.strategies.schema import NativeReplyParser, StructuredReplyParser
from toolcall_cli.strategies.text_parser import CallTextParser, ParsedText, parse_text

ARGUMENTS = [
    # (arguments as written, a phrase the refusal must carry)
    ('{"city": "Paris", "city": "Rome"}', 'the key "city" two values ("Paris", then "Rome")'),
    (
        '{"city": "北京", "unit": "c", "city": "上海"}',
        'the key "city" two values ("北京", then "上海")',
    ),
    ('{"n": 1, "n": true}', 'the key "n" two values (1, then true)'),
    ('{"filter": {"a": 1, "a": 2}}', 'the key "a" two values (1, then 2)'),
    ('{"city": "Paris", "city": "Paris"}', 'writes the key "city" twice'),
    # The same constant twice: json.dumps gives one shared string for each of them.
    ('{"celsius": true, "celsius": true}', 'writes the key "celsius" twice'),
    ('{"unit": null, "unit": null}', 'writes the key "unit" twice'),
    ('{"a": {"b": false, "b": false}}', 'writes the key "b" twice'),
]


@pytest.mark.parametrize(("arguments", "phrase"), ARGUMENTS)
def test_load_json_refuses_a_repeated_key_saying_which(arguments: str, phrase: str) -> None:
    with pytest.raises(JsonProblem, match="write each key once") as caught:
        load_json(arguments)
    assert phrase in str(caught.value)


def test_keys_written_once_read_as_before() -> None:
    loaded = load_json(
        '{"city": "Paris", "nested": {"city": "Rome"}, "list": [{"a": 1}, {"a": 2}]}'
    )
    assert loaded.value == {
        "city": "Paris",
        "nested": {"city": "Rome"},
        "list": [{"a": 1}, {"a": 2}],
    }
    assert loaded.repaired is False


def text_readings(text: str) -> list[ParsedText]:
    parsed = [parse_text(text)]
    for size in (1, 3):
        parser = CallTextParser()
        for start in range(0, len(text), size):
            parser.feed(text[start : start + size])
        parser.close()
        parsed.append(ParsedText(parser.text, tuple(parser.calls), tuple(parser.errors), ""))
    return parsed


@pytest.mark.parametrize(
    "shape",
    [
        '<tool_call>{{"name": "get_weather", "arguments": {args}}}</tool_call>',
        '{{"name": "get_weather", "arguments": {args}}}',
        '[TOOL_CALLS][{{"name": "get_weather", "arguments": {args}}}]',
        "[TOOL_CALLS]get_weather[ARGS]{args}",
        "<function=get_weather>{args}</function>",
    ],
)
@pytest.mark.parametrize(("arguments", "phrase"), ARGUMENTS)
def test_a_text_call_with_a_repeated_key_is_refused(
    shape: str, arguments: str, phrase: str
) -> None:
    text = shape.format(args=arguments)
    for parsed in text_readings(text):
        assert parsed.calls == ()
        assert len(parsed.errors) == 1 and phrase in parsed.errors[0].message
        assert parsed.text == ""


def test_a_repeated_name_is_refused_too() -> None:
    parsed = parse_text('<tool_call>{"name": "a", "name": "b", "arguments": {}}</tool_call>')
    assert (
        parsed.calls == ()
        and 'the key "name" two values ("a", then "b")' in parsed.errors[0].message
    )


def native_chunks(arguments: str, pieces: int) -> list[dict[str, Any]]:
    size = max(1, len(arguments) // pieces)
    parts = [arguments[i : i + size] for i in range(0, len(arguments), size)]
    chunks = [
        {"choices": [{"index": 0, "delta": {"tool_calls": [call]}, "finish_reason": None}]}
        for call in [
            {"index": 0, "id": "c1", "function": {"name": "get_weather", "arguments": parts[0]}},
            *({"index": 0, "function": {"arguments": part}} for part in parts[1:]),
        ]
    ]
    return [*chunks, {"choices": [{"index": 0, "delta": {}, "finish_reason": "tool_calls"}]}]


@pytest.mark.parametrize(("arguments", "phrase"), ARGUMENTS)
@pytest.mark.parametrize("pieces", [1, 4])
def test_a_native_call_with_a_repeated_key_is_refused(
    arguments: str, phrase: str, pieces: int
) -> None:
    parser = NativeReplyParser("call_")
    for chunk in native_chunks(arguments, pieces):
        parser.feed(chunk)
    parser.close()
    reply = parser.reply()
    assert reply.calls == ()
    assert len(reply.errors) == 1 and phrase in reply.errors[0].message


def test_structured_output_with_a_repeated_key_is_refused() -> None:
    body = '{"name": "get_weather", "arguments": {"city": "Paris", "city": "Rome"}}'
    parser = StructuredReplyParser("call_")
    parser.feed({"choices": [{"index": 0, "message": {"content": body}, "finish_reason": "stop"}]})
    parser.close()
    reply = parser.reply()
    assert reply.calls == () and 'two values ("Paris", then "Rome")' in reply.errors[0].message


def test_what_the_model_is_told_names_the_key_and_asks_for_one() -> None:
    arguments = {"city": "Paris"}
    text = '<tool_call>{"name": "f", "arguments": {"city": "Paris", "city": "Rome"}}</tool_call>'
    message = parse_text(text).errors[0].message
    assert message.startswith("The call inside <tool_call> was not run: it gives the key")
    assert "write each key once" in message
    assert json.dumps(arguments) not in message  # no guessed call is offered back


@pytest.mark.parametrize(
    "content",
    [
        '{"name": "get_weather", "name": "get_time"}',
        '{"name": "get_time", "arguments": {}, "name": "get_weather"}',
    ],
)
def test_a_call_in_a_native_replys_content_with_a_repeated_key_is_not_run(content: str) -> None:
    """A native model that writes its call as JSON in its content is read as vLLM reads it;
    a name given twice there was taken as the last one and run, where the same call anywhere
    else is refused. It is no call now, and the model is told its reply was no answer."""
    from toolcall_cli.strategies.content_calls import read_content_calls
    from toolcall_cli.strategies.schema import NativeReplyParser

    parser = NativeReplyParser("call_")
    message = {"content": content}
    parser.feed({"choices": [{"index": 0, "message": message, "finish_reason": "stop"}]})
    parser.close()
    reply = read_content_calls(parser.reply(), "#1.", ["get_weather", "get_time"])
    assert reply.calls == () and not reply.calls_from_content
