"""The offline model chains two tools: the weather, then the conversion of the field the question
means (the high, the low, the temperature now). Without --dag in two rounds, reading the field
from the result; with --dag in one reply, a placeholder into the first call's result, when the
request offers dependencies (the prompt's dependency example, the reserved schema arguments) and
the tool's description names the field its result holds."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest
from in_process import toolcall

from toolcall_cli.messages import ToolSpec
from toolcall_cli.offline import OfflineModel
from toolcall_cli.strategies._dependencies import with_reserved
from toolcall_cli.strategies.text_prompt import system_prompt
from toolcall_cli.wire import ModelRequest

# (question, city as asked, day, the result field the question means, Chinese?)
CHAINED = [
    ("北京明天的最高气温换算成华氏度是多少？", "北京", "tomorrow", "high_c", True),
    ("Convert tomorrow's high in Beijing to Fahrenheit", "Beijing", "tomorrow", "high_c", False),
    ("上海今天的最低气温是多少华氏度", "上海", "today", "low_c", True),
    ("What is the low in Paris today in Fahrenheit?", "Paris", "today", "low_c", False),
]
STRATEGIES = [
    ["--strategy", "regex"],
    ["--strategy", "schema"],
    ["--strategy", "stream"],
    ["--strategy", "stream", "--stream-mode", "native"],
]


def run_events(tmp_path: Path, question: str, *flags: str) -> list[dict[str, Any]]:
    done = toolcall("run", "--json", *flags, question, cwd=tmp_path)
    assert done.returncode == 0, done.stdout + done.stderr
    return [json.loads(line) for line in done.stdout.splitlines() if line.strip()]


def by_iteration(events: list[dict[str, Any]], kind: str) -> list[list[dict[str, Any]]]:
    """The events of one kind, grouped by the iteration they happened in."""
    groups: list[list[dict[str, Any]]] = []
    for event in events:
        if event["kind"] == "iteration_started":
            groups.append([])
        elif event["kind"] == kind:
            groups[-1].append(event)
    return groups


def final_answer(events: list[dict[str, Any]]) -> str:
    [answer] = [e["text"] for e in events if e["kind"] == "final_answer"]
    assert isinstance(answer, str)
    return answer


def labelled(answer: str, field: str, zh: bool) -> bool:
    """The answer says which temperature it converted."""
    high = field.startswith("high")
    if zh:
        return ("最高气温" if high else "最低气温") in answer
    return re.search(r"\bhigh\b" if high else r"\blow\b", answer) is not None


@pytest.mark.parametrize(("question", "city", "day", "field", "zh"), CHAINED)
def test_without_dag_the_field_the_question_means_is_converted_in_a_second_round(
    tmp_path: Path, question: str, city: str, day: str, field: str, zh: bool
) -> None:
    events = run_events(tmp_path, question)
    rounds = by_iteration(events, "tool_finished")
    assert len(rounds) == 3 and rounds[2] == []  # two rounds of tools, then the answer
    [weather] = rounds[0]
    assert weather["call"]["name"] == "get_weather"
    assert weather["call"]["arguments"] == {"city": city, "day": day}
    report = json.loads(weather["result"]["content"])
    assert report[field] != report["temp_c"], "the example must tell the fields apart"
    [conversion] = rounds[1]
    assert conversion["call"]["name"] == "convert_units"
    assert conversion["call"]["arguments"]["value"] == report[field]
    converted = json.loads(conversion["result"]["content"])
    answer = final_answer(events)
    assert converted["text"] in answer and converted["to_unit"] == "°F"
    assert labelled(answer, field, zh)
    assert lang_matches(answer, zh)


def lang_matches(answer: str, zh: bool) -> bool:
    return (re.search(r"[\u4e00-\u9fff]", answer) is not None) == zh


@pytest.mark.parametrize("strategy", STRATEGIES, ids=lambda s: "-".join(s[1::2]))
@pytest.mark.parametrize(("question", "city", "day", "field", "zh"), CHAINED)
def test_with_dag_both_calls_go_in_one_reply_with_a_placeholder(
    tmp_path: Path, strategy: list[str], question: str, city: str, day: str, field: str, zh: bool
) -> None:
    events = run_events(tmp_path, question, "--dag", *strategy)
    rounds = by_iteration(events, "tool_finished")
    assert len(rounds) == 2 and rounds[1] == []  # one round of tools, then the answer
    weather, conversion = sorted(rounds[0], key=lambda e: e["started"])
    assert weather["call"]["name"] == "get_weather"
    assert weather["call"]["arguments"] == {"city": city, "day": day}
    ref = weather["call"]["ref"]
    assert ref and conversion["call"]["depends_on"] == [ref]
    # The model wrote a placeholder into the field; the engine put the value in.
    [replied, _] = [e["raw"] for e in events if e["kind"] == "model_replied"]
    assert "{{" + f"{ref}.{field}" + "}}" in replied
    report = json.loads(weather["result"]["content"])
    assert conversion["call"]["arguments"]["value"] == report[field] != report["temp_c"]
    assert conversion["started"] >= weather["ended"]
    [timeline] = [e for e in events if e["kind"] == "tool_timeline"]
    waits = {entry["name"]: entry["waits_for"] for entry in timeline["entries"]}
    assert waits == {"get_weather": [], "convert_units": [weather["call"]["id"]]}
    converted = json.loads(conversion["result"]["content"])
    answer = final_answer(events)
    assert converted["text"] in answer and labelled(answer, field, zh) and lang_matches(answer, zh)


def test_the_readme_dag_question_shows_the_resolved_placeholder_on_the_timeline(
    tmp_path: Path,
) -> None:
    done = toolcall("run", "--dag", "北京明天的最高气温换算成华氏度是多少？", cwd=tmp_path)
    assert done.returncode == 0, done.stdout + done.stderr
    out = done.stdout
    first = out.split("== iteration 2 ==")[0]
    assert first.count("<tool_call>") == 2 and "{{weather.high_c}}" in first
    assert "call convert_units" in first
    filled = next(line for line in first.splitlines() if line.startswith("filled "))
    assert filled.startswith('filled convert_units {"value": 13,')  # a number, resolved
    assert filled.endswith("from {{weather.high_c}}")
    timeline = first.split("timeline:")[1]
    assert "units ← weather" in timeline  # the conversion waited for the weather
    answer = out.split("answer:")[-1]
    assert "55.4 °F" in answer and "北京明天的最高气温" in answer
    assert "最高" not in out.split("answer:")[0].split("call get_weather")[1].split("\n")[0]


# --- what the request offers ----------------------------------------------------------------

WEATHER = ToolSpec(
    "get_weather",
    "Get the weather for a city, today or tomorrow. Returns JSON with city, condition, "
    "temp_c, high_c and low_c.",
    {
        "type": "object",
        "properties": {
            "city": {"type": "string", "description": "City name, e.g. 北京"},
            "day": {"type": "string", "enum": ["today", "tomorrow"], "default": "today"},
        },
        "required": ["city"],
    },
)
CONVERT = ToolSpec(
    "convert_units",
    "Convert a value between units (单位换算) of length, mass or temperature.",
    {
        "type": "object",
        "properties": {
            "value": {"type": "number", "description": "The number to convert, e.g. 25."},
            "from_unit": {"type": "string", "description": 'The unit of the value, e.g. "°C".'},
            "to_unit": {"type": "string", "description": 'The unit to convert to, e.g. "°F".'},
        },
        "required": ["value", "from_unit", "to_unit"],
    },
)
QUESTION = "北京明天的最高气温换算成华氏度是多少？"


def reply(body: dict[str, Any]) -> dict[str, Any]:
    [completion] = list(OfflineModel().stream(ModelRequest(body)))
    message = completion["choices"][0]["message"]
    assert isinstance(message, dict)
    return message


def text_request(prompt: str) -> dict[str, Any]:
    return {
        "model": "offline",
        "messages": [{"role": "system", "content": prompt}, {"role": "user", "content": QUESTION}],
    }


def tagged(content: str) -> list[dict[str, Any]]:
    return [json.loads(c) for c in re.findall(r"<tool_call>(.*?)</tool_call>", content, re.S)]


def test_only_the_prompts_dependency_example_lets_the_model_chain() -> None:
    prompt = system_prompt([WEATHER, CONVERT], dag=True)
    calls = tagged(reply(text_request(prompt))["content"])
    assert [c["name"] for c in calls] == ["get_weather", "convert_units"]
    assert calls[1]["arguments"]["value"] == "{{" + calls[0]["id"] + ".high_c}}"
    assert calls[1]["depends_on"] == [calls[0]["id"]]
    # Without the section (or with an example in another syntax) there is nothing to chain
    # with: one call, the rest next round.
    other = prompt.replace('"depends_on"', '"after"')
    for without in (system_prompt([WEATHER, CONVERT]), other):
        plain = tagged(reply(text_request(without))["content"])
        assert plain == [{"name": "get_weather", "arguments": {"city": "北京", "day": "tomorrow"}}]


def native_request(tools: list[ToolSpec]) -> dict[str, Any]:
    return {
        "model": "offline",
        "messages": [{"role": "user", "content": QUESTION}],
        "tools": [t.to_openai() for t in tools],
        "tool_choice": "auto",
    }


def native_calls(message: dict[str, Any]) -> list[tuple[str, dict[str, Any]]]:
    return [
        (c["function"]["name"], json.loads(c["function"]["arguments"]))
        for c in message["tool_calls"]
    ]


def test_native_calls_chain_through_the_reserved_arguments_of_the_schemas() -> None:
    calls = native_calls(reply(native_request([with_reserved(WEATHER), with_reserved(CONVERT)])))
    assert [name for name, _ in calls] == ["get_weather", "convert_units"]
    (_, weather), (_, conversion) = calls
    ref = weather.pop("_id")
    assert weather == {"city": "北京", "day": "tomorrow"}
    assert conversion["value"] == "{{" + ref + ".high_c}}" and conversion["_depends_on"] == [ref]
    # Plain schemas offer no dependencies: one call now, the conversion next round.
    assert native_calls(reply(native_request([WEATHER, CONVERT]))) == [
        ("get_weather", {"city": "北京", "day": "tomorrow"})
    ]


def test_the_field_is_learned_from_the_tools_description() -> None:
    prompt = system_prompt([WEATHER, CONVERT], dag=True)
    other = prompt.replace("high_c and low_c", "max_temp_c and min_temp_c")
    calls = tagged(reply(text_request(other))["content"])
    assert calls[1]["arguments"]["value"] == "{{" + calls[0]["id"] + ".max_temp_c}}"
    # A tool that does not say what it returns cannot be chained blind: two rounds then.
    silent = prompt.replace(" Returns JSON with city, condition, temp_c, high_c and low_c.", "")
    assert "high_c" not in silent
    calls = tagged(reply(text_request(silent))["content"])
    assert calls == [{"name": "get_weather", "arguments": {"city": "北京", "day": "tomorrow"}}]


def test_a_failed_first_call_is_said_once_and_its_dependant_is_not_retried(
    tmp_path: Path,
) -> None:
    events = run_events(tmp_path, "亚特兰蒂斯明天的最高气温换算成华氏度是多少", "--dag")
    rounds = by_iteration(events, "tool_finished")
    assert len(rounds) == 2 and rounds[1] == []
    weather, conversion = rounds[0]
    assert not weather["result"]["ok"] and conversion["result"]["error_kind"] == "skipped"
    assert "skipped" in conversion["result"]["content"]
    answer = final_answer(events).splitlines()
    assert len(answer) == 2 and answer[0].count("unknown city") == 1
    assert answer[1] == "convert_units 没有运行：它依赖的调用（weather）失败了。"


def test_a_corrected_first_call_is_converted_next_and_the_skip_is_not_reported(
    tmp_path: Path,
) -> None:
    events = run_events(tmp_path, "Convert tomorrow's high in Pariss to Fahrenheit", "--dag")
    rounds = by_iteration(events, "tool_finished")
    assert [[e["call"]["name"] for e in r] for r in rounds] == [
        ["get_weather", "convert_units"],
        ["get_weather"],
        ["convert_units"],
        [],
    ]
    report = json.loads(rounds[1][0]["result"]["content"])
    assert rounds[2][0]["call"]["arguments"]["value"] == report["high_c"]
    answer = final_answer(events)
    assert "skipped" not in answer and "did not run" not in answer and "Pariss" not in answer
    assert json.loads(rounds[2][0]["result"]["content"])["text"] in answer


@pytest.mark.parametrize("strategy", ["regex", "schema"])
@pytest.mark.parametrize("fault", ["repeat_call", "code_fence", "broken_batch", "truncated"])
def test_a_chained_reply_recovers_from_the_faults_it_is_asked_to_make(
    tmp_path: Path, fault: str, strategy: str
) -> None:
    """A repeated call stands alone (its placeholder put in), a fenced or cut-off conversion
    is read back as what it is, and none of them ends as a failure in the answer."""
    flags = ("--dag", "--strategy", strategy, "--faults", fault)
    events = run_events(tmp_path, "北京明天的最高气温换算成华氏度是多少？", *flags)
    conversions = [
        e for e in events if e["kind"] == "tool_finished" and e["call"]["name"] == "convert_units"
    ]
    assert any(e["result"]["ok"] for e in conversions)
    answer = final_answer(events)
    assert "北京明天的最高气温：13 °C = 55.4 °F" in answer.splitlines()
    assert "失败" not in answer and "返回" not in answer
