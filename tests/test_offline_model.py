"""The offline model through its public `stream()`: request bodies as the strategies build them,
replies checked in each wire format, over whole multi-turn flows."""

from __future__ import annotations

import ast
import json
import re
import socket
from pathlib import Path
from typing import Any

import pytest

import toolcall_cli.offline
from toolcall_cli.messages import ToolSpec
from toolcall_cli.offline import OfflineModel, make_faults
from toolcall_cli.strategies.text_prompt import system_prompt, tool_result_block
from toolcall_cli.wire import ModelRequest

WEATHER = ToolSpec(
    "get_weather",
    "Get the weather (天气) for a city: condition and temperature, today or tomorrow.",
    {
        "type": "object",
        "properties": {
            "city": {"type": "string", "description": "City name in Chinese or English, e.g. 北京"},
            "day": {
                "type": "string",
                "enum": ["today", "tomorrow"],
                "default": "today",
                "description": 'Which day: "today" (今天) or "tomorrow" (明天).',
            },
        },
        "required": ["city"],
        "additionalProperties": False,
    },
)
CALCULATE = ToolSpec(
    "calculate",
    "Evaluate a math expression (计算, 算术) safely: use it for any arithmetic.",
    {
        "type": "object",
        "properties": {"expression": {"type": "string", "description": 'e.g. "12*5+3"'}},
        "required": ["expression"],
    },
)
TIME = ToolSpec(
    "get_time",
    "Get the current date and time (时间, 现在几点) in a time zone.",
    {
        "type": "object",
        "properties": {
            "timezone": {"type": "string", "description": "An IANA time zone (Asia/Shanghai)"}
        },
        "required": ["timezone"],
    },
)
CONVERT = ToolSpec(
    "convert_units",
    "Convert a value between units (单位换算) of length, mass (weight) or temperature.",
    {
        "type": "object",
        "properties": {
            "value": {"type": "number", "description": "The number to convert, e.g. 25."},
            "from_unit": {
                "type": "string",
                "description": 'The unit of the value, e.g. "°C", "km".',
            },
            "to_unit": {
                "type": "string",
                "description": 'The unit to convert to, e.g. "°F", "mi".',
            },
        },
        "required": ["value", "from_unit", "to_unit"],
    },
)
STOCK = ToolSpec(
    "lookup_stock",
    "Look up the latest price of a stock by its ticker symbol.",
    {
        "type": "object",
        "properties": {"symbol": {"type": "string", "description": "The ticker, e.g. MSFT"}},
        "required": ["symbol"],
    },
)
TOOLS = [WEATHER, CALCULATE, TIME, CONVERT, STOCK]

CALL_RE = re.compile(r"<tool_call>(.*?)</tool_call>", re.S)


def weather_result(city: str, day: str = "today", temp: int = 18, high: int = 21, low: int = 12,
                   condition: str = "晴", condition_en: str = "Sunny") -> str:  # fmt: skip
    return json.dumps(
        {"city": city, "day": day, "condition": condition, "condition_en": condition_en,
         "temp_c": temp, "high_c": high, "low_c": low, "humidity": 40, "wind": "N 10 km/h"},
        ensure_ascii=False,
    )  # fmt: skip


# --- request bodies, built the way the strategies build them ----------------------------------


def text_body(question: str, *history: dict[str, Any], stream: bool = False) -> dict[str, Any]:
    body: dict[str, Any] = {
        "model": "offline",
        "messages": [
            {"role": "system", "content": system_prompt(TOOLS)},
            {"role": "user", "content": question},
            *history,
        ],
    }
    if stream:
        body["stream"] = True
        body["stream_options"] = {"include_usage": True}
    return body


def text_turn(reply: str, *results: tuple[str, str]) -> list[dict[str, Any]]:
    """The assistant's raw reply, then its results as one user message of result blocks."""
    blocks = [
        tool_result_block(f"c{i}", name, content) for i, (name, content) in enumerate(results)
    ]
    return [{"role": "assistant", "content": reply}, {"role": "user", "content": "\n".join(blocks)}]


def native_body(question: str, *history: dict[str, Any], stream: bool = False) -> dict[str, Any]:
    body: dict[str, Any] = {
        "model": "offline",
        "messages": [{"role": "user", "content": question}, *history],
        "tools": [t.to_openai() for t in TOOLS],
        "tool_choice": "auto",
    }
    if stream:
        body["stream"] = True
    return body


def json_body(question: str, *history: dict[str, Any], stream: bool = False) -> dict[str, Any]:
    answer = {
        "type": "object",
        "properties": {"answer": {"type": "string"}},
        "required": ["answer"],
    }
    calls = [
        {
            "type": "object",
            "properties": {"name": {"const": t.name}, "arguments": t.parameters},
            "required": ["name", "arguments"],
        }
        for t in TOOLS
    ]
    schema = {"anyOf": [answer, *calls]}
    body: dict[str, Any] = {
        "model": "offline",
        "messages": [
            {"role": "system", "content": "Reply with exactly one JSON object."},
            {"role": "user", "content": question},
            *history,
        ],
        "response_format": {
            "type": "json_schema",
            "json_schema": {"name": "tool_use", "schema": schema},
        },
    }
    if stream:
        body["stream"] = True
    return body


def message(body: dict[str, Any], seed: int = 0) -> dict[str, Any]:
    [completion] = list(OfflineModel(seed).stream(ModelRequest(body)))
    assert completion["object"] == "chat.completion"
    choice = completion["choices"][0]
    return {**choice["message"], "finish_reason": choice["finish_reason"]}


def text_reply(body: dict[str, Any]) -> str:
    content = message(body)["content"]
    assert isinstance(content, str)
    return content


def text_calls(reply: str) -> list[tuple[str, dict[str, Any]]]:
    return [(c["name"], c["arguments"]) for c in map(json.loads, CALL_RE.findall(reply))]


# --- first turns: choosing tools and filling arguments ----------------------------------------


def test_clothing_question_calls_weather_for_the_city_today() -> None:
    reply = text_reply(text_body("北京今天适合穿短袖吗？"))
    assert text_calls(reply) == [("get_weather", {"city": "北京", "day": "today"})]
    assert reply.index("<tool_call>") > 0, "a short lead-in sentence comes first"


@pytest.mark.parametrize(
    ("question", "city", "day"),
    [("北京今天多少度", "北京", "today"), ("拉萨明天多少度？", "拉萨", "tomorrow")],
)
def test_how_many_degrees_is_a_weather_question(question: str, city: str, day: str) -> None:
    """多少度 ("how many degrees") asks for the temperature: the weather tool, not "no tool
    fits"; a temperature to convert still goes to the converter."""
    assert text_calls(text_reply(text_body(question))) == [
        ("get_weather", {"city": city, "day": day})
    ]
    (call,) = text_calls(text_reply(text_body("100华氏度是多少度？")))
    assert call[0] == "convert_units"


def test_arithmetic_question_calls_calculate_with_the_expression() -> None:
    assert text_calls(text_reply(text_body("What's 12*5+3?"))) == [
        ("calculate", {"expression": "12*5+3"})
    ]


def test_chinese_arithmetic_is_written_as_an_expression() -> None:
    assert text_calls(text_reply(text_body("12乘以5加3等于多少？"))) == [
        ("calculate", {"expression": "12*5+3"})
    ]


def test_two_cities_give_two_calls_in_one_turn() -> None:
    reply = text_reply(text_body("北京和上海明天天气分别是多少？"))
    assert text_calls(reply) == [
        ("get_weather", {"city": "北京", "day": "tomorrow"}),
        ("get_weather", {"city": "上海", "day": "tomorrow"}),
    ]


@pytest.mark.parametrize(
    "question", ["What's the price of AAPL?", "苹果公司股票 AAPL 现在多少钱？"]
)
def test_a_tool_it_has_never_seen_is_picked_from_its_description(question: str) -> None:
    assert text_calls(text_reply(text_body(question))) == [("lookup_stock", {"symbol": "AAPL"})]


def test_unknown_city_names_are_still_passed_on() -> None:
    assert text_calls(text_reply(text_body("拉萨明天天气怎么样？"))) == [
        ("get_weather", {"city": "拉萨", "day": "tomorrow"})
    ]


def test_a_timezone_parameter_gets_the_iana_zone_of_a_known_city() -> None:
    assert text_calls(text_reply(text_body("东京现在几点？"))) == [
        ("get_time", {"timezone": "Asia/Tokyo"})
    ]


def test_greeting_is_answered_directly_in_chinese_listing_the_tools() -> None:
    reply = text_reply(text_body("你好"))
    assert "<tool_call>" not in reply
    assert reply.startswith("你好")
    assert all(t.name in reply for t in TOOLS)


def test_what_is_tool_use_gets_an_explanation_without_calls() -> None:
    reply = text_reply(text_body("what is tool use?"))
    assert "<tool_call>" not in reply
    assert "function calling" in reply.lower()


def test_unrelated_question_gets_a_polite_fallback() -> None:
    reply = text_reply(text_body("Tell me a joke about cats"))
    assert "<tool_call>" not in reply
    assert "get_weather" in reply and "rather not guess" in reply


# --- later turns: answering from results ------------------------------------------------------


def test_clothing_answer_is_derived_from_the_result_temperatures() -> None:
    first = text_reply(text_body("北京今天适合穿短袖吗？"))
    warm = text_reply(text_body("北京今天适合穿短袖吗？", *text_turn(first, ("get_weather",
                      weather_result("北京", temp=27, high=31, low=22)))))  # fmt: skip
    cold = text_reply(text_body("北京今天适合穿短袖吗？", *text_turn(first, ("get_weather",
                      weather_result("北京", temp=8, high=12, low=3)))))  # fmt: skip
    assert "<tool_call>" not in warm
    assert "晴" in warm and "27°C" in warm and "适合穿短袖" in warm and "不太适合" not in warm
    assert "不太适合" in cold and "12°C" in cold


def test_calculation_answer_quotes_the_expression_and_the_result() -> None:
    first = text_reply(text_body("What's 12*5+3?"))
    answer = text_reply(text_body("What's 12*5+3?", *text_turn(first, ("calculate", "63"))))
    assert answer == "12*5+3 = 63"


def test_two_city_answer_covers_both_results() -> None:
    question = "北京和上海明天天气分别是多少？"
    first = text_reply(text_body(question))
    results = (
        ("get_weather", weather_result("北京", "tomorrow", 24, 27, 19, "多云", "Cloudy")),
        ("get_weather", weather_result("上海", "tomorrow", 26, 29, 23, "小雨", "Light rain")),
    )
    answer = text_reply(text_body(question, *text_turn(first, *results)))
    assert answer.splitlines() == [
        "北京明天：多云，24°C（19~27°C）。",
        "上海明天：小雨，26°C（23~29°C）。",
    ]


def test_fahrenheit_question_converts_the_weather_result_in_a_second_turn() -> None:
    question = "What's the temperature in Paris in Fahrenheit?"
    first = text_reply(text_body(question))
    assert text_calls(first) == [("get_weather", {"city": "Paris"})]
    history = text_turn(first, ("get_weather", weather_result("Paris", temp=18)))
    second = text_reply(text_body(question, *history))
    [(name, arguments)] = text_calls(second)
    assert name == "convert_units"
    assert arguments["value"] == 18
    assert arguments["from_unit"].lower() in ("celsius", "°c")
    assert arguments["to_unit"].lower() in ("fahrenheit", "°f")
    conversion = {"value": 18, "from_unit": "°C", "to_unit": "°F", "result": 64.4,
                  "text": "18 °C = 64.4 °F"}  # fmt: skip
    history += text_turn(second, ("convert_units", json.dumps(conversion)))
    answer = text_reply(text_body(question, *history))
    assert "<tool_call>" not in answer
    assert "Paris" in answer and "18 °C = 64.4 °F" in answer


def test_a_report_in_both_units_is_answered_in_the_unit_the_question_asks() -> None:
    """A result that gives °F beside °C needs no conversion: the answer takes the unit asked,
    and °C when none is."""
    report = {"city": "Paris", "day": "today", "condition": "Rain", "temp_c": 11, "temp_f": 51.8}
    said = {}
    for question in ("What's the temperature in Paris in Fahrenheit?", "Weather in Paris?"):
        first = text_reply(text_body(question))
        history = text_turn(first, ("get_weather", json.dumps(report)))
        said[question] = text_reply(text_body(question, *history))
    assert said["What's the temperature in Paris in Fahrenheit?"] == "Paris today: Rain, 51.8°F."
    assert said["Weather in Paris?"] == "Paris today: Rain, 11°C."


# --- results read generically: the model knows no tool's field names ----------------------------


def test_a_weather_report_is_read_from_whatever_its_fields_are_called() -> None:
    question = "北京今天适合穿短袖吗？"
    first = text_reply(text_body(question))
    report = {"location": "Beijing", "location_zh": "北京", "date": "today", "summary": "Sunny",
              "summary_zh": "晴", "now_c": 27, "max_c": 31, "min_c": 22}  # fmt: skip
    answer = text_reply(text_body(question, *text_turn(first, ("get_weather", json.dumps(report)))))
    assert answer == "北京今天：晴，27°C（22~31°C）。最高 31°C，适合穿短袖。"


def test_a_time_is_read_from_whatever_its_fields_are_called() -> None:
    question = "东京现在几点？"
    first = text_reply(text_body(question))
    now = {"tz": "Asia/Tokyo", "current_time": "2025-01-02 11:04", "offset": "+09:00"}
    answer = text_reply(text_body(question, *text_turn(first, ("get_time", json.dumps(now)))))
    assert answer == "get_time：tz Asia/Tokyo，current time 2025-01-02 11:04，offset +09:00。"


# --- errors: read them, fix the call, or say honestly what failed ------------------------------


def test_did_you_mean_hint_fixes_the_city() -> None:
    question = "What's the weather in Pari?"
    first = text_reply(text_body(question))
    assert text_calls(first) == [("get_weather", {"city": "Pari"})]
    error = (
        "Error: ValueError: unknown city 'Pari'. Use a city from the table. Did you mean 'Paris'?"
    )
    retry = text_reply(text_body(question, *text_turn(first, ("get_weather", error))))
    assert text_calls(retry) == [("get_weather", {"city": "Paris"})]


def test_an_unfixable_error_is_reported_not_retried() -> None:
    question = "What's the weather in Atlantis?"
    first = text_reply(text_body(question))
    error = "Error: ValueError: unknown city 'Atlantis'."
    answer = text_reply(text_body(question, *text_turn(first, ("get_weather", error))))
    assert "<tool_call>" not in answer
    assert answer.startswith("Sorry, get_weather failed") and "Atlantis" in answer


def test_missing_and_unexpected_arguments_are_fixed_from_the_question() -> None:
    question = "北京今天适合穿短袖吗？"
    broken = '<tool_call>{"name": "get_weather", "arguments": {"cty": "北京"}}</tool_call>'
    error = (
        "Error: invalid arguments for `get_weather`:\n"
        "- missing required argument `city` (string): add it\n"
        "- unexpected argument `cty`: remove it (did you mean `city`?); allowed arguments: "
        "`city`, `day`\nFix these and call `get_weather` again."
    )
    retry = text_reply(text_body(question, *text_turn(broken, ("get_weather", error))))
    assert text_calls(retry) == [("get_weather", {"city": "北京"})]
    assert "出错" in retry


def test_a_missing_argument_is_filled_from_the_question() -> None:
    question = "东京现在几点？"
    broken = '<tool_call>{"name": "get_time", "arguments": {}}</tool_call>'
    error = "Error: invalid arguments for `get_time`:\n- missing required argument `timezone`"
    retry = text_reply(text_body(question, *text_turn(broken, ("get_time", error))))
    assert text_calls(retry) == [("get_time", {"timezone": "Asia/Tokyo"})]


def test_a_question_lacking_every_required_value_is_asked_back_not_called_empty() -> None:
    english = text_reply(text_body("What's the weather?"))
    chinese = text_reply(text_body("天气怎么样？"))
    assert "<tool_call>" not in english and "<tool_call>" not in chinese
    assert "get_weather" in english and "need the city" in english
    assert "还需要你告诉我" in chinese and "city" in chinese


def test_a_missing_argument_error_the_question_cannot_fix_ends_in_a_question_back() -> None:
    question = "What's the weather?"
    empty = '<tool_call>{"name": "get_weather", "arguments": {}}</tool_call>'
    error = "Error: invalid arguments for `get_weather`:\n- missing required argument `city`"
    answer = text_reply(text_body(question, *text_turn(empty, ("get_weather", error))))
    assert "<tool_call>" not in answer and "Tell me the city" in answer


def test_an_unknown_tool_name_is_corrected_from_the_available_list() -> None:
    question = "What's 12*5+3?"
    broken = '<tool_call>{"name": "calculator", "arguments": {"expression": "12*5+3"}}</tool_call>'
    error = "Error: unknown tool `calculator`. Available tools: calculate, get_time, get_weather."
    retry = text_reply(text_body(question, *text_turn(broken, ("calculator", error))))
    assert text_calls(retry) == [("calculate", {"expression": "12*5+3"})]


def test_a_value_outside_the_enum_is_replaced_by_an_allowed_one() -> None:
    question = "What's the weather in Paris tomorrow?"
    payload = {"name": "get_weather", "arguments": {"city": "Paris", "day": "tmrw"}}
    broken = f"<tool_call>{json.dumps(payload)}</tool_call>"
    error = (
        "Error: invalid arguments for `get_weather`:\n"
        '- `day` must be one of "today", "tomorrow"; got "tmrw"'
    )
    retry = text_reply(text_body(question, *text_turn(broken, ("get_weather", error))))
    assert text_calls(retry) == [("get_weather", {"city": "Paris", "day": "tomorrow"})]


def test_a_timed_out_call_is_retried_once_then_reported() -> None:
    question = "What's 12*5+3?"
    first = text_reply(text_body(question))
    timeout = "Error: `calculate` timed out after 10 s."
    history = text_turn(first, ("calculate", timeout))
    retry = text_reply(text_body(question, *history))
    assert text_calls(retry) == text_calls(first)
    history += text_turn(retry, ("calculate", timeout))
    answer = text_reply(text_body(question, *history))
    assert "<tool_call>" not in answer and "timed out" in answer


# --- native function calling ------------------------------------------------------------------


def test_native_reply_carries_tool_calls_with_json_string_arguments() -> None:
    reply = message(native_body("北京和上海明天天气分别是多少？"))
    assert reply["finish_reason"] == "tool_calls"
    assert reply["content"] is None
    calls = reply["tool_calls"]
    assert [c["type"] for c in calls] == ["function", "function"]
    assert [json.loads(c["function"]["arguments"]) for c in calls] == [
        {"city": "北京", "day": "tomorrow"},
        {"city": "上海", "day": "tomorrow"},
    ]
    ids = [c["id"] for c in calls]
    assert len(set(ids)) == 2 and all(i.startswith("call_") for i in ids)


def test_native_flow_reads_tool_messages_and_answers_with_stop() -> None:
    question = "What's 12*5+3?"
    reply = message(native_body(question))
    [call] = reply["tool_calls"]
    assistant = {"role": "assistant", "content": None, "tool_calls": reply["tool_calls"]}
    tool = {"role": "tool", "tool_call_id": call["id"], "content": "63"}
    final = message(native_body(question, assistant, tool))
    assert final["finish_reason"] == "stop"
    assert final["content"] == "12*5+3 = 63"
    assert "tool_calls" not in final


def test_native_call_ids_differ_between_turns_of_one_conversation() -> None:
    question = "What's the temperature in Paris in Fahrenheit?"
    first = message(native_body(question))
    [call] = first["tool_calls"]
    history = [
        {"role": "assistant", "content": None, "tool_calls": first["tool_calls"]},
        {"role": "tool", "tool_call_id": call["id"], "content": weather_result("Paris")},
    ]
    second = message(native_body(question, *history))
    [follow_up] = second["tool_calls"]
    assert follow_up["function"]["name"] == "convert_units"
    assert follow_up["id"] != call["id"]


# --- JSON mode (structured output) ------------------------------------------------------------


def test_json_mode_makes_one_call_per_reply_then_answers() -> None:
    question = "北京和上海明天天气分别是多少？"
    first = message(json_body(question))
    assert first["finish_reason"] == "stop"
    assert json.loads(first["content"]) == {
        "name": "get_weather",
        "arguments": {"city": "北京", "day": "tomorrow"},
    }
    history = text_turn(first["content"], ("get_weather", weather_result("北京", "tomorrow")))
    second = json.loads(message(json_body(question, *history))["content"])
    assert second == {"name": "get_weather", "arguments": {"city": "上海", "day": "tomorrow"}}
    history += text_turn(json.dumps(second, ensure_ascii=False),
                         ("get_weather", weather_result("上海", "tomorrow", temp=25)))  # fmt: skip
    final = json.loads(message(json_body(question, *history))["content"])
    assert set(final) == {"answer"}
    assert "北京明天" in final["answer"] and "上海明天" in final["answer"]


def test_json_mode_answers_directly_as_an_answer_object() -> None:
    assert set(json.loads(message(json_body("你好"))["content"])) == {"answer"}


# --- streaming --------------------------------------------------------------------------------


def stream_chunks(body: dict[str, Any], seed: int = 0) -> list[dict[str, Any]]:
    chunks = list(OfflineModel(seed).stream(ModelRequest(body)))
    assert all(c["object"] == "chat.completion.chunk" for c in chunks)
    return chunks


def joined_content(chunks: list[dict[str, Any]]) -> str:
    return "".join(c["choices"][0]["delta"].get("content") or "" for c in chunks if c["choices"])


@pytest.mark.parametrize("question", ["北京和上海明天天气分别是多少？", "What's 12*5+3?", "你好"])
def test_text_stream_reassembles_to_the_non_streaming_content(question: str) -> None:
    whole = text_reply(text_body(question))
    chunks = stream_chunks(text_body(question, stream=True))
    assert joined_content(chunks) == whole
    pieces = [c["choices"][0]["delta"]["content"] for c in chunks[1:-2]]
    assert pieces and all(1 <= len(p) <= 12 for p in pieces)
    assert len(pieces) > 3, "the reply is split into many pieces"
    assert chunks[-2]["choices"][0]["finish_reason"] == "stop"
    assert chunks[-1]["choices"] == [] and chunks[-1]["usage"]["total_tokens"] > 0


def test_native_stream_deltas_are_keyed_by_index_and_rebuild_the_calls() -> None:
    question = "北京和上海明天天气分别是多少？"
    whole = message(native_body(question))["tool_calls"]
    chunks = stream_chunks(native_body(question, stream=True))
    rebuilt: dict[int, dict[str, str]] = {}
    for chunk in chunks:
        for delta in chunk["choices"][0]["delta"].get("tool_calls") or []:
            entry = rebuilt.setdefault(delta["index"], {"id": "", "name": "", "arguments": ""})
            entry["id"] += delta.get("id") or ""
            entry["name"] += delta.get("function", {}).get("name") or ""
            entry["arguments"] += delta.get("function", {}).get("arguments") or ""
    assert [rebuilt[i] for i in sorted(rebuilt)] == [
        {"id": c["id"], "name": c["function"]["name"], "arguments": c["function"]["arguments"]}
        for c in whole
    ]
    assert chunks[-1]["choices"][0]["finish_reason"] == "tool_calls"
    assert all("usage" not in c for c in chunks), "no usage chunk unless include_usage is set"


def test_json_mode_stream_reassembles_to_the_json_object() -> None:
    question = "What's 12*5+3?"
    assert (
        joined_content(stream_chunks(json_body(question, stream=True)))
        == message(json_body(question))["content"]
    )


# --- wire details and determinism -------------------------------------------------------------


def test_non_streaming_completion_has_usage_and_the_request_model() -> None:
    [completion] = list(OfflineModel().stream(ModelRequest(text_body("你好"))))
    usage = completion["usage"]
    assert usage["total_tokens"] == usage["prompt_tokens"] + usage["completion_tokens"] > 0
    assert completion["model"] == "offline" and completion["id"].startswith("chatcmpl-")


def test_same_request_and_seed_give_the_same_bytes() -> None:
    body = text_body("北京和上海明天天气分别是多少？", stream=True)
    first = json.dumps(stream_chunks(body), ensure_ascii=False)
    assert json.dumps(stream_chunks(body), ensure_ascii=False) == first
    assert json.dumps(stream_chunks(body, seed=1), ensure_ascii=False) != first


ENGINE = ("strategies", "loop", "history", "tools", "cli", "render", "session", "repl")


def imported_modules(path: Path, package: str) -> list[str]:
    """Every module a file imports, relative imports resolved, `from a import b` as `a.b` too."""
    found: list[str] = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            found += [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = package.rsplit(".", node.level - 1)[0] if node.level else ""
            module = ".".join(p for p in (base, node.module or "") if p)
            found += [module, *(f"{module}.{alias.name}" for alias in node.names)]
    return found


def test_the_offline_package_imports_nothing_from_the_engine() -> None:
    """A model like any other: it knows only the request body, so it imports no strategy, loop,
    history or tools code (nor anything above them)."""
    package = Path(toolcall_cli.offline.__file__).parent
    imports = {
        path.name: imported_modules(path, "toolcall_cli.offline") for path in package.glob("*.py")
    }
    assert "toolcall_cli.wire.completions" in imports["_model.py"], "the walk sees imports"
    engine = [
        (name, module)
        for name, modules in imports.items()
        for module in modules
        if module.split(".")[:2] in (["toolcall_cli", part] for part in ENGINE)
    ]
    assert engine == []


def test_the_model_answers_with_no_network_at_all(monkeypatch: pytest.MonkeyPatch) -> None:
    """Offline means it: with every socket refused, a question is still planned, its tool's
    result read, and the question answered."""

    def no_network(*args: Any, **kwargs: Any) -> Any:
        raise AssertionError("the offline model reached for the network")

    for name in ("socket", "create_connection", "getaddrinfo"):
        monkeypatch.setattr(socket, name, no_network)
    question = "北京今天适合穿短袖吗？"
    first = text_reply(text_body(question))
    assert text_calls(first) == [("get_weather", {"city": "北京", "day": "today"})]
    result = weather_result("北京", temp=28, high=31, low=22)
    answer = text_reply(text_body(question, *text_turn(first, ("get_weather", result))))
    assert "28°C" in answer and "短袖" in answer


# --- the call format comes from the prompt ------------------------------------------------------


def test_calls_are_written_in_the_tags_the_system_prompt_shows() -> None:
    """A model writes calls the way its prompt's example does: another tag, another reply."""
    prompt = system_prompt(TOOLS).replace("tool_call>", "call>")
    assert "<call>{" in prompt and "tool_call" not in prompt

    def body(*history: dict[str, Any]) -> dict[str, Any]:
        question = {"role": "user", "content": "What's 12*5+3?"}
        return {"messages": [{"role": "system", "content": prompt}, question, *history]}

    reply = text_reply(body())
    assert "tool_call" not in reply
    calls = [json.loads(c) for c in re.findall(r"<call>(.*?)</call>", reply, re.S)]
    assert calls == [{"name": "calculate", "arguments": {"expression": "12*5+3"}}]
    # Its own earlier call is read back in that format too: the result answers the question.
    assert text_reply(body(*text_turn(reply, ("calculate", "63")))) == "12*5+3 = 63"
    unclosed = OfflineModel(faults=make_faults(["missing_close_tag"])).stream(ModelRequest(body()))
    content = next(unclosed)["choices"][0]["message"]["content"]
    assert "<call>" in content and not content.rstrip().endswith("</call>")


def test_tools_listed_as_json_in_tools_tags_are_read_as_qwens_template_writes_them() -> None:
    """Qwen's and Hermes' own chat templates list the tools as JSON in <tools>, after naming
    the empty tags; a prompt in that layout gets calls as one in toolcall's own does."""
    listed = "\n".join(json.dumps({"type": "function", "function": t.to_openai()["function"]})
                       for t in TOOLS)  # fmt: skip
    prompt = (
        "# Tools\n\nYou are provided with function signatures within <tools></tools> XML tags:\n"
        f"<tools>\n{listed}\n</tools>\n\nFor each function call, return a json object within "
        '<tool_call></tool_call> XML tags:\n<tool_call>\n{"name": <function-name>, '
        '"arguments": <args-json-object>}\n</tool_call>'
    )
    body = {"messages": [{"role": "system", "content": prompt},
                         {"role": "user", "content": "What's 12*5+3?"}]}  # fmt: skip
    assert text_calls(text_reply(body)) == [("calculate", {"expression": "12*5+3"})]


# --- the place where faults plug in -----------------------------------------------------------


def test_a_fault_can_change_how_the_reply_is_written() -> None:
    body = text_body("北京今天适合穿短袖吗？")
    faulty = OfflineModel(faults=make_faults(["missing_close_tag"]))
    [completion] = list(faulty.stream(ModelRequest(body)))
    content = completion["choices"][0]["message"]["content"]
    assert "<tool_call>" in content and "</tool_call>" not in content
    assert "</tool_call>" in text_reply(body), "the same request without the fault closes it"


def test_a_fault_can_change_what_the_model_decides() -> None:
    body = native_body("北京今天适合穿短袖吗？")
    faulty = OfflineModel(faults=make_faults(["wrong_param"]))
    [completion] = list(faulty.stream(ModelRequest(body)))
    [call] = completion["choices"][0]["message"]["tool_calls"]
    arguments = json.loads(call["function"]["arguments"])
    assert "city" not in arguments and list(arguments.values()) == ["北京", "today"]


def test_a_repaired_call_in_the_history_counts_as_made() -> None:
    question = "北京今天适合穿短袖吗？"
    single_quoted = "<tool_call>{'name': 'get_weather', 'arguments': {'city': '北京'}}</tool_call>"
    history = text_turn(single_quoted, ("get_weather", weather_result("北京", high=30)))
    answer = text_reply(text_body(question, *history))
    assert "<tool_call>" not in answer and "适合穿短袖" in answer


def test_compacted_earlier_rounds_count_as_calls_made_not_as_the_question() -> None:
    question = "北京和上海明天天气分别是多少？"
    first = text_reply(text_body(question))
    summary = (
        "[context summary] 1 earlier tool round, compacted:\n"
        '- get_weather({"city": "北京", "day": "tomorrow"}) -> {"city": "北京", "temp_c": 24}'
    )
    history = [
        {"role": "user", "content": summary},
        *text_turn(first.split("\n")[-1], ("get_weather", weather_result("上海", "tomorrow"))),
    ]
    answer = text_reply(text_body(question, *history))
    assert "<tool_call>" not in answer and "上海明天" in answer


# --- user-reported problems: arithmetic read faithfully -----------------------------------------


@pytest.mark.parametrize(
    ("question", "expression"),
    [
        ("sqrt(16)+1", "sqrt(16)+1"),
        ("What's 1,234 + 5,678?", "1234+5678"),
        ("What's 7 times 8?", "7*8"),
        ("What's 15% of 80?", "15/100*80"),
        ("What is 17 % 5?", "17%5"),
        ("What is 2 to the power of 10?", "2**10"),
        ("算一下 12 × 3 ÷ 4", "12*3/4"),
        ("sin(pi/6) + 2^3 = ?", "sin(pi/6)+2**3"),
        ("What is the square root of 2025, plus 17?", "sqrt(2025)+17"),
        ("2025的平方根加17是多少？", "sqrt(2025)+17"),
        ("根号16乘以3等于几？", "sqrt(16)*3"),
        ("What is 3 squared plus 4 squared?", "3**2+4**2"),
        ("5的平方减去3的平方是多少？", "5**2-3**2"),
    ],
)
def test_arithmetic_keeps_functions_separators_and_operator_words(
    question: str, expression: str
) -> None:
    assert text_calls(text_reply(text_body(question))) == [
        ("calculate", {"expression": expression})
    ]


def test_a_function_only_the_tools_description_names_is_kept() -> None:
    calculator = ToolSpec(
        "calculate",
        "Evaluate a math expression; also supports gcd and lcm.",
        CALCULATE.parameters,
    )
    body = tool_body("What is gcd(12, 18) + 1?", [calculator])
    assert text_calls(text_reply(body)) == [("calculate", {"expression": "gcd(12,18)+1"})]


def test_percent_of_is_answered_with_the_computed_value() -> None:
    question = "What's 15% of 80?"
    first = text_reply(text_body(question))
    answer = text_reply(text_body(question, *text_turn(first, ("calculate", "12"))))
    assert answer == "15/100*80 = 12"


# --- user-reported problems: no empty calls, no wrong extra calls -------------------------------


def test_a_math_request_without_an_expression_asks_for_one() -> None:
    reply = text_reply(text_body("帮我算一下"))
    assert "<tool_call>" not in reply
    assert "calculate" in reply and "expression" in reply and "还需要" in reply


def test_times_between_numbers_is_multiplication_not_the_clock() -> None:
    names = [name for name, _ in text_calls(text_reply(text_body("What's 7 times 8?")))]
    assert names == ["calculate"]


def test_a_unit_word_is_never_a_place_and_the_weather_is_converted() -> None:
    question = "东京现在气温多少开尔文？"
    first = text_reply(text_body(question))
    assert text_calls(first) == [("get_weather", {"city": "东京", "day": "today"})]
    history = text_turn(first, ("get_weather", weather_result("东京", temp=11)))
    [(name, arguments)] = text_calls(text_reply(text_body(question, *history)))
    assert name == "convert_units"
    assert arguments["value"] == 11 and arguments["to_unit"].lower() in ("kelvin", "k")


ECHO = ToolSpec(
    "echo",
    "Echo the text back, optionally slowly.",
    {
        "type": "object",
        "properties": {"text": {"type": "string", "description": "The text to echo"}},
        "required": ["text"],
    },
)


@pytest.mark.parametrize("tools", [TOOLS, [*TOOLS, ECHO]])
def test_a_sentence_initial_verb_is_not_a_place(tools: list[ToolSpec]) -> None:
    question = "Echo the text 'hello' slowly, and what's the weather in Beijing?"
    calls = text_calls(text_reply(tool_body(question, tools)))
    assert [a for n, a in calls if n == "get_weather"] == [{"city": "Beijing"}]
    assert [a for n, a in calls if n == "echo"] == ([{"text": "hello"}] if ECHO in tools else [])


# --- user-reported problems: tools never seen before ---------------------------------------------

CURRENCY = ToolSpec(
    "convert_currency",
    "Convert an amount of money from one currency to another.",
    {
        "type": "object",
        "properties": {
            "amount": {"type": "number", "description": "How much money"},
            "from_currency": {"type": "string", "description": "ISO code, e.g. USD"},
            "to_currency": {"type": "string", "description": "ISO code, e.g. USD"},
        },
        "required": ["amount", "from_currency", "to_currency"],
    },
)
PRICED_STOCK = ToolSpec(
    "lookup_stock",
    "Look up the latest price of a stock by its ticker symbol.",
    {
        "type": "object",
        "properties": {
            "symbol": {"type": "string", "description": "The ticker, e.g. MSFT"},
            "currency": {"enum": ["USD", "CNY"], "default": "USD"},
        },
        "required": ["symbol"],
    },
)


def tool_body(question: str, tools: list[ToolSpec], *history: dict[str, Any]) -> dict[str, Any]:
    return {
        "model": "offline",
        "messages": [
            {"role": "system", "content": system_prompt(tools)},
            {"role": "user", "content": question},
            *history,
        ],
    }


@pytest.mark.parametrize(
    ("question", "source", "target"),
    [
        ("Convert 100 USD to EUR", "USD", "EUR"),
        ("100美元等于多少人民币？", "USD", "CNY"),
        ("How much is 100 euros in yen?", "EUR", "JPY"),
    ],
)
def test_currency_parameters_are_filled_as_iso_codes(
    question: str, source: str, target: str
) -> None:
    calls = text_calls(text_reply(tool_body(question, [*TOOLS, CURRENCY])))
    assert calls == [
        ("convert_currency", {"amount": 100, "from_currency": source, "to_currency": target})
    ]


def test_an_enum_of_currency_codes_is_matched_through_currency_names() -> None:
    calls = text_calls(text_reply(tool_body("特斯拉 TSLA 的股价是多少人民币？", [PRICED_STOCK])))
    assert calls == [("lookup_stock", {"symbol": "TSLA", "currency": "CNY"})]


# --- user-reported problems: follow-up questions in a chat ---------------------------------------


def chat_turn(
    question: str, answer_result: str, tool: str, *, native: bool = False
) -> list[dict[str, Any]]:
    """One earlier question of a chat, answered by the model with one call and its result."""
    body = native_body(question) if native else text_body(question)
    reply = message(body)
    if native:
        [call] = reply["tool_calls"]
        assistant = {"role": "assistant", "content": None, "tool_calls": reply["tool_calls"]}
        result = {"role": "tool", "tool_call_id": call["id"], "content": answer_result}
        answer = message(native_body(question, assistant, result))["content"]
        return [
            {"role": "user", "content": question},
            assistant,
            result,
            {"role": "assistant", "content": answer},
        ]
    history = text_turn(reply["content"], (tool, answer_result))
    text_answer = text_reply(text_body(question, *history))
    return [
        {"role": "user", "content": question},
        *history,
        {"role": "assistant", "content": text_answer},
    ]


def follow_up_body(
    earlier: list[dict[str, Any]], question: str, *, native: bool = False
) -> dict[str, Any]:
    body = native_body(question) if native else text_body(question)
    body["messages"][-1:-1] = earlier
    return body


def test_thanks_after_a_chat_is_not_taken_as_a_follow_up() -> None:
    earlier = chat_turn("北京明天天气怎么样？", weather_result("北京", "tomorrow"), "get_weather")
    reply = text_reply(follow_up_body(earlier, "谢谢"))
    assert "<tool_call>" not in reply and "不客气" in reply


# --- user-reported problems: answers read like sentences ----------------------------------------


@pytest.mark.parametrize(
    ("question", "expected"),
    [
        ("What's the price of AAPL?", "lookup_stock: symbol AAPL, price 154.32, currency USD."),
        (
            "苹果公司股票 AAPL 现在多少钱？",
            "lookup_stock：symbol AAPL，price 154.32，currency USD。",
        ),
    ],
)
def test_an_unseen_tools_result_is_stated_with_rounded_numbers(
    question: str, expected: str
) -> None:
    first = text_reply(text_body(question))
    result = json.dumps({"symbol": "AAPL", "price": 154.3235835, "currency": "USD"})
    answer = text_reply(text_body(question, *text_turn(first, ("lookup_stock", result))))
    assert answer == expected


def test_long_decimals_in_a_conversion_are_rounded() -> None:
    question = "100 F in celsius"
    first = text_reply(text_body(question))
    conversion = {"value": 100, "from_unit": "°F", "to_unit": "°C", "result": 37.77777778,
                  "text": "100 °F = 37.77777778 °C"}  # fmt: skip
    answer = text_reply(
        text_body(question, *text_turn(first, ("convert_units", json.dumps(conversion))))
    )
    assert answer == "100 °F = 37.78 °C"


def test_a_quoted_error_in_chinese_ends_cleanly_and_keeps_its_lines() -> None:
    question = "拉萨明天天气怎么样？"
    first = text_reply(text_body(question))
    error = "Error: ValueError: unknown city '拉萨'. Use a city from the built-in table."
    answer = text_reply(text_body(question, *text_turn(first, ("get_weather", error))))
    assert answer.endswith("table。") and ".。" not in answer
    broken = '<tool_call>{"name": "get_weather", "arguments": {"city": 1}}</tool_call>'
    multi = (
        "Error: invalid arguments for `get_weather`:\n- `city` must be a name from the table\n"
        "- `day` must be today or tomorrow"
    )
    lines = text_reply(text_body(question, *text_turn(broken, ("get_weather", multi)))).splitlines()
    assert lines[0].startswith("抱歉，get_weather 调用失败") and len(lines) >= 3
    assert any("`city` must be a name from the table" in line for line in lines[1:])


def test_a_currency_conversion_result_reads_as_an_equation() -> None:
    question = "100美元等于多少人民币？"
    first = text_reply(tool_body(question, [*TOOLS, CURRENCY]))
    result = json.dumps({"amount": 100, "from": "USD", "to": "CNY", "result": 712.3456789})
    answer = text_reply(
        tool_body(question, [*TOOLS, CURRENCY], *text_turn(first, ("convert_currency", result)))
    )
    assert answer == "100 USD = 712.35 CNY"


def test_the_source_unit_is_the_one_the_number_is_in() -> None:
    """'How many pounds is 70 kg?': the number is in kg, whatever order the units come in."""
    from toolcall_cli.messages import user
    from toolcall_cli.offline import OfflineModel
    from toolcall_cli.strategies import get_strategy
    from toolcall_cli.tools.loader import bundled_tools_dir, load_tools
    from toolcall_cli.wire import ModelRequest

    specs = load_tools([bundled_tools_dir()]).registry.specs()
    for question in ("How many pounds is 70 kg?", "Convert 70 kg to pounds", "70公斤是多少磅？"):
        body = get_strategy("schema").build_request([user(question)], specs, "offline").body
        [reply] = OfflineModel().stream(ModelRequest(body))
        [call] = reply["choices"][0]["message"]["tool_calls"]
        arguments = json.loads(call["function"]["arguments"])
        assert call["function"]["name"] == "convert_units", question
        assert (arguments["value"], arguments["from_unit"], arguments["to_unit"]) == (
            70,
            "kg",
            "lb",
        ), question


# --- user-reported problems: currencies without a tool ------------------------------------------


def bundled_message(question: str) -> dict[str, Any]:
    """The first reply to a question with the bundled tools, as `toolcall run` asks it."""
    from toolcall_cli.messages import user
    from toolcall_cli.strategies import get_strategy
    from toolcall_cli.tools.loader import bundled_tools_dir, load_tools

    specs = load_tools([bundled_tools_dir()]).registry.specs()
    body = get_strategy("schema").build_request([user(question)], specs, "offline").body
    [reply] = OfflineModel().stream(ModelRequest(body))
    return dict(reply["choices"][0]["message"])


def bundled_calculation(expression: str) -> Any:
    from toolcall_cli.tools.loader import bundled_tools_dir, load_tools

    calculate = load_tools([bundled_tools_dir()]).registry.get("calculate")
    assert calculate is not None
    return calculate.func(expression=expression)


@pytest.mark.parametrize(
    ("question", "words"),
    [
        ("Convert 100 USD to EUR", "None of my tools converts currencies"),
        ("100美元等于多少人民币？", "我的工具都不能换算货币"),
        ("What's the dollar to yen exchange rate?", "None of my tools converts currencies"),
    ],
)
def test_a_currency_question_without_a_currency_tool_is_answered_not_called(
    question: str, words: str
) -> None:
    reply = bundled_message(question)
    assert not reply.get("tool_calls"), reply
    assert reply["content"].startswith(words)
    assert "- convert_units:" in reply["content"] and "- calculate:" in reply["content"]


def test_currency_names_inside_arithmetic_still_calculate() -> None:
    [call] = bundled_message("I won 100 dollars twice, so what is 100*2?")["tool_calls"]
    assert call["function"]["name"] == "calculate"


def test_tools_blocks_are_read_once_from_start_to_end() -> None:
    """A prompt of 100,000 unclosed <tools> tags (a 700 KB system prompt, under serve's body
    limit) was read in quadratic time by a regular expression: minutes. Now at once."""
    from toolcall_cli.models._conversation import listed_tools, tools_blocks

    assert listed_tools("<tools>" * 100_000) == []
    blocks = 'a <tools></tools> b <tools>{"name": "x"}</tools> <tools>'
    assert list(tools_blocks(blocks)) == ["", '{"name": "x"}']


@pytest.mark.parametrize(
    ("raw", "arguments", "written"),
    [
        ('{"city": "Paris"}', {"city": "Paris"}, None),
        ('{"city": "Paris"', {"city": "Paris"}, '{"city": "Paris"'),  # repaired: kept as written
        (json.dumps('{"city": "Paris'), {}, '{"city": "Paris'),  # a history's JSON string of it
        ("[1, 2]", {}, "[1, 2]"),
    ],
)
def test_a_native_calls_arguments_text_is_read_once(
    monkeypatch: pytest.MonkeyPatch, raw: str, arguments: dict[str, Any], written: str | None
) -> None:
    # The arguments were read strictly, and then again to find the text the model wrote.
    from toolcall_cli.models import _conversation

    read: list[str] = []
    strict = _conversation.read_json

    def counted(text: str, otherwise: Any = None) -> Any:
        read.append(text)
        return strict(text, otherwise)

    monkeypatch.setattr(_conversation, "read_json", counted)
    call = _conversation.native_call({"name": "get_weather", "arguments": raw}, dag=False)
    assert (call.arguments, call.written) == (arguments, written)
    assert read == [raw]


# --- what the request binds the reply to: tool_choice, parallel_tool_calls, max_tokens ----------


def called(reply: dict[str, Any]) -> list[tuple[str, dict[str, Any]]]:
    calls = reply.get("tool_calls") or []
    return [(c["function"]["name"], json.loads(c["function"]["arguments"])) for c in calls]


def test_a_required_call_comes_after_the_results_too_as_openai_repeats_it() -> None:
    """With the result in hand the model answers; `required` binds it to call again (a client
    sends "auto" once it has what it needs), and a named tool is that tool's call."""
    first = message(native_body("北京天气怎么样？"))
    result = {"role": "tool", "tool_call_id": first["tool_calls"][0]["id"], "content": "{}"}
    done = {k: v for k, v in first.items() if k != "finish_reason"}
    after = native_body("北京天气怎么样？", done, result)
    assert called(message(after)) == []
    again = message({**after, "tool_choice": "required"})
    assert (again["finish_reason"], called(again)) == (
        "tool_calls",
        [("get_weather", {"city": "北京"})],
    )
    named = {"type": "function", "function": {"name": "get_time"}}
    timed = message({**after, "tool_choice": named})
    assert called(timed) == [("get_time", {"timezone": "Asia/Shanghai"})]


def test_with_faults_the_bounds_still_hold() -> None:
    """A fault changes what the model writes, never what the request binds it to: one call with
    parallel_tool_calls false though the fault makes a batch; no call with tool_choice none."""
    body = native_body("北京和上海明天的天气？")
    faulty = OfflineModel(faults=make_faults(["broken_batch,extra_arg"]))

    def reply(**bounds: Any) -> dict[str, Any]:
        [completion] = list(faulty.stream(ModelRequest({**body, **bounds})))
        return dict(completion["choices"][0]["message"])

    assert len(reply()["tool_calls"]) == 2
    assert len(reply(parallel_tool_calls=False)["tool_calls"]) == 1
    assert "tool_calls" not in reply(tool_choice="none")


def test_max_tokens_stops_the_reply_where_a_server_would() -> None:
    whole = message(native_body("hello"))["content"]
    cut = message({**native_body("hello"), "max_tokens": 3})
    assert (cut["finish_reason"], cut["content"]) == ("length", whole[:12])
    small = message({**native_body("hello"), "max_completion_tokens": 2, "max_tokens": 50})
    assert small["content"] == whole[:8]
    assert message({**native_body("hello"), "max_tokens": 4096})["content"] == whole
