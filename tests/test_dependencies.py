"""--dag on the wire: how a call names itself and the calls it waits for, per strategy."""

from __future__ import annotations

import json
from typing import Any

from toolcall_cli.messages import ToolSpec, user
from toolcall_cli.strategies import get_strategy
from toolcall_cli.strategies.schema import NativeReplyParser
from toolcall_cli.strategies.text_parser import parse_text

SPEC = ToolSpec(
    "get_weather",
    "The weather in a city.",
    {
        "type": "object",
        "properties": {"city": {"type": "string"}},
        "required": ["city"],
        "additionalProperties": False,
    },
)


def test_the_text_protocol_reads_a_calls_id_and_what_it_waits_for() -> None:
    text = (
        '<tool_call>{"id": "w", "name": "get_weather", "arguments": {"city": "北京"}}</tool_call>'
        '<tool_call>{"id": "c", "name": "convert", "arguments": {"v": "{{w.high}}"},'
        ' "depends_on": ["w", "w", 7]}</tool_call>'
    )
    first, second = parse_text(text).calls
    assert (first.ref, first.depends_on) == ("w", ())
    assert (second.ref, second.depends_on) == ("c", ("w", "7"))
    assert second.arguments == {"v": "{{w.high}}"}  # placeholders are the loop's business


def native_call(arguments: dict[str, Any], *, dag: bool) -> Any:
    parser = NativeReplyParser("call_", dag=dag)
    entry = {"id": "x1", "function": {"name": "get_weather", "arguments": json.dumps(arguments)}}
    parser.feed({"choices": [{"message": {"tool_calls": [entry]}, "finish_reason": "tool_calls"}]})
    parser.close()
    (call,) = parser.reply().calls
    return call


def test_native_calls_take_the_reserved_arguments_out_only_with_dag() -> None:
    arguments = {"city": "北京", "_id": "w", "_depends_on": ["a"]}
    call = native_call(arguments, dag=True)
    assert (call.arguments, call.ref, call.depends_on) == ({"city": "北京"}, "w", ("a",))
    plain = native_call(arguments, dag=False)  # then they are ordinary (unexpected) arguments
    assert (plain.arguments, plain.ref, plain.depends_on) == (arguments, None, ())


def request(strategy: str, *, dag: bool, **modes: Any) -> dict[str, Any]:
    chosen = get_strategy(strategy, dag=dag, **modes)
    return chosen.build_request([user("hi")], [SPEC], "m").body


def test_only_dag_offers_the_model_dependencies() -> None:
    prompt = request("regex", dag=True)["messages"][0]["content"]
    assert '"depends_on": ["a"]' in prompt and "{{a.high}}" in prompt
    assert "depends_on" not in request("regex", dag=False)["messages"][0]["content"]
    native = request("schema", dag=True)["tools"][0]["function"]["parameters"]["properties"]
    assert set(native) == {"city", "_id", "_depends_on"}
    plain = request("schema", dag=False)["tools"][0]["function"]["parameters"]["properties"]
    assert set(plain) == {"city"}
    streamed = request("stream", dag=True, stream_mode="native")["tools"][0]["function"]
    assert "_depends_on" in streamed["parameters"]["properties"]
    json_mode = request("schema", dag=True, schema_mode="json")
    assert "_depends_on" not in json.dumps(json_mode)  # one call a request: nothing to order
