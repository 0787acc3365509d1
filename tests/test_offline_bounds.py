"""The offline model's work grows with the length of what it reads, never with its square: long
conversations, many calls in one turn, tools with many enum values. Each request is answered in
a thread and must be done well within a deadline (as the quadratic code took minutes, the
deadline tells a hang apart from a slow machine)."""

from __future__ import annotations

import json
import threading
from typing import Any

import pytest

from toolcall_cli.offline import OfflineModel
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
