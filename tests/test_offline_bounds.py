"""The offline model's work grows with the length of what it reads, never with its square: long
conversations, many calls in one turn, tools with many enum values. Each request is answered in
a thread and must be done well within a deadline (as the quadratic code took minutes, the
deadline tells a hang apart from a slow machine). And the hand-written readers that replaced
quadratic regexes read exactly what those regexes read."""

from __future__ import annotations

import json
import re
import threading
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from toolcall_cli.offline import OfflineModel
from toolcall_cli.offline._request import between, fenced_objects, parameter_line, tagged_results
from toolcall_cli.offline._wrong_calls import in_one_line
from toolcall_cli.wire import ModelRequest

DEADLINE = 20.0
"""Seconds a request may take here: far beyond what it needs, far below what it took."""
WEATHER: Any = {
    "type": "function",
    "function": {
        "name": "get_weather",
        "description": "Get the weather for a city",
        "parameters": {
            "type": "object",
            "properties": {"city": {"type": "string"}},
            "required": ["city"],
        },
    },
}


def answered_in_time(body: dict[str, Any]) -> list[dict[str, Any]]:
    """The model's chunks for `body`, failing the test if they take past DEADLINE."""
    done: list[list[dict[str, Any]]] = []
    failed: list[BaseException] = []

    def answer() -> None:
        try:
            done.append(list(OfflineModel().stream(ModelRequest(body))))
        except BaseException as error:  # reported below, in the test's own thread
            failed.append(error)

    worker = threading.Thread(target=answer, daemon=True)
    worker.start()
    worker.join(DEADLINE)
    assert not worker.is_alive(), f"no answer within {DEADLINE:g}s"
    assert not failed, failed
    return done[0]


def call(call_id: str, arguments: dict[str, Any]) -> dict[str, Any]:
    function = {"name": "get_weather", "arguments": json.dumps(arguments)}
    return {"id": call_id, "type": "function", "function": function}


def test_a_conversation_of_ten_thousand_turns() -> None:
    messages: list[dict[str, Any]] = [{"role": "user", "content": "Weather in Paris in °F?"}]
    for turn in range(10_000):
        result = {"city": f"P{turn}", "temp_c": 11, "condition": "Sunny"}
        messages.append(
            {"role": "assistant", "content": None, "tool_calls": [call(f"c{turn}", {})]}
        )
        messages.append({"role": "tool", "tool_call_id": f"c{turn}", "content": json.dumps(result)})
    chunks = answered_in_time({"model": "m", "messages": messages, "tools": [WEATHER]})
    assert chunks[0]["choices"][0]["message"]["content"]


def test_ten_thousand_calls_in_one_turn() -> None:
    calls = [call(f"c{i}", {"city": f"P{i}"}) for i in range(10_000)]
    error = "Error: unexpected argument 'town', did you mean 'city'?"
    messages: list[dict[str, Any]] = [
        {"role": "user", "content": "Weather in Paris?"},
        {"role": "assistant", "content": None, "tool_calls": calls},
        *({"role": "tool", "tool_call_id": c["id"], "content": error} for c in calls),
    ]
    answered_in_time({"model": "m", "messages": messages, "tools": [WEATHER]})


TOOLS_SECTION = "# Tools\n## get_weather\nGet the weather for a city\nParameters:\n"
ASKED: Any = {"role": "user", "content": "Weather in Paris?"}
IN_FAHRENHEIT: Any = {"role": "user", "content": "Weather in Paris in °F?"}
CONVERTER: Any = {
    "type": "function",
    "function": {
        "name": "convert_units",
        "description": "Convert a value between units",
        "parameters": {
            "type": "object",
            "properties": {
                "value": {"type": "number"},
                "from_unit": {"type": "string"},
                "to_unit": {"type": "string"},
            },
        },
    },
}
CALLED: Any = {"role": "assistant", "content": None, "tool_calls": [call("c1", {"city": "P"})]}


def answered(content: str) -> Any:
    return {"role": "tool", "tool_call_id": "c1", "content": content}


@pytest.mark.parametrize(
    "messages",
    [
        pytest.param([{"role": "user", "content": "1" * 60_000}], id="digits"),
        pytest.param([{"role": "user", "content": "北京" * 20_000}], id="place-names"),
        pytest.param([{"role": "user", "content": "5 km " * 15_000}], id="units"),
        pytest.param(
            [
                {
                    "role": "system",
                    "content": TOOLS_SECTION + "- city: string" + " (required, default x" * 20_000,
                },
                ASKED,
            ],
            id="parameter-line",
        ),
        pytest.param(
            [ASKED, {"role": "assistant", "content": "<tool_call>" + "1{" * 10_000}],
            id="broken-json",
        ),
        pytest.param(
            [ASKED, {"role": "assistant", "content": "```json\n{" * 20_000}],
            id="open-fences",
        ),
        pytest.param(
            [
                ASKED,
                {"role": "assistant", "content": "<tool_call>{}</tool_call>"},
                {"role": "user", "content": '<tool_result id="x" name="y">' * 20_000},
            ],
            id="open-results",
        ),
        pytest.param([IN_FAHRENHEIT, CALLED, answered("1" * 200_000)], id="result-digits"),
        pytest.param(
            [ASKED, CALLED, answered("Error: 'x' " + "is not one of [" * 20_000)],
            id="open-error",
        ),
    ],
)
def test_a_long_hostile_message_is_read_in_time(messages: list[dict[str, Any]]) -> None:
    """Text that made the model's work grow with the square of its length, each where the model
    reads it."""
    answered_in_time({"model": "m", "messages": messages, "tools": [WEATHER, CONVERTER]})


def test_many_tools_with_many_enum_values_and_a_long_question() -> None:
    properties: dict[str, Any] = {"city": {"type": "string"}}
    for p in range(16):
        values = [f"opt{p}x{i}" for i in range(16)]
        properties[f"unit{p}"] = {"type": "string", "description": "the unit", "enum": values}
    tools = [
        {
            "type": "function",
            "function": {
                "name": f"weather_{t}",
                "description": "Get the weather for a city",
                "parameters": {"type": "object", "properties": properties},
            },
        }
        for t in range(128)
    ]
    question = "What is the weather in Paris? " * 3000
    answered_in_time(
        {"model": "m", "messages": [{"role": "user", "content": question}], "tools": tools}
    )


# --- the readers that replaced quadratic regexes read what the regexes read -----------------------


def pieces(*parts: str) -> st.SearchStrategy[str]:
    """Text made of the pieces that matter to a reader, in any order."""
    return st.lists(st.sampled_from(parts), max_size=14).map("".join)


_PARAM_RE = re.compile(
    r"^- (?P<name>[^:\s]+): (?P<type>.*?) \((?P<need>required|optional)"
    r"(?:, default (?P<default>.*?))?\)(?: — (?P<description>.*))?$"
)


@settings(max_examples=400)
@given(pieces("- ", "a", ":", " ", ": ", " (required", " (optional", ", default ", ")", " — ", "("))
def test_a_parameter_line_is_read_as_the_regex_reads_it(line: str) -> None:
    match, read = _PARAM_RE.match(line), parameter_line(line)
    fields = ("name", "type", "need", "default", "description")
    assert (None if match is None else tuple(match[f] for f in fields)) == (
        None if read is None else tuple(getattr(read, f) for f in fields)
    )


@settings(max_examples=400)
@given(pieces('<tool_result id="', '" name="', '">', "</tool_result>", "\n", "a", '"', ">"))
def test_tagged_results_are_read_as_the_regex_reads_them(text: str) -> None:
    pattern = r'<tool_result id="(.*?)" name="(.*?)">\n?(.*?)\n?</tool_result>'
    assert tagged_results(text) == re.findall(pattern, text, re.S)


@settings(max_examples=400)
@given(pieces("```", "json", "\n", " ", "{", "}", "a", "`"))
def test_fenced_objects_are_read_as_the_regex_reads_them(text: str) -> None:
    assert fenced_objects(text) == re.findall(r"```(?:json)?\s*\n(\{.*?\})\s*\n```", text, re.S)


@settings(max_examples=200)
@given(pieces("<t>", "</t>", "a", "<", "t>", "\n"))
def test_text_between_tags_is_read_as_the_regex_reads_it(text: str) -> None:
    assert between(text, "<t>", "</t>") == re.findall("<t>(.*?)</t>", text, re.S)


@settings(max_examples=200)
@given(pieces("unexpected argument ", "Did You Mean", "did you mean", "\n", "x", "unexpected"))
def test_words_in_one_line_are_found_as_the_regex_finds_them(text: str) -> None:
    old = re.compile(r"unexpected argument .*did you mean", re.I)
    assert bool(in_one_line("unexpected argument ", "did you mean").search(text)) == bool(
        old.search(text)
    )
