"""The real-model bench's grader (bench/realmodel_eval.py), which needs no server: expected
answers come from the tools, numbers are read from Chinese and English answers, and non-answers
are told apart from wrong answers."""

from __future__ import annotations

import importlib.util
import json
import sys
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parent.parent


def _load_eval() -> ModuleType:
    spec = importlib.util.spec_from_file_location(
        "realmodel_eval", ROOT / "bench/realmodel_eval.py"
    )
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


bench = _load_eval()
TOOLS: dict[str, Any] = bench.load_tool_functions([bench.bundled_tools_dir(), bench.BENCH_TOOLS])
QUESTIONS: list[dict[str, Any]] = json.loads(
    (ROOT / "bench/eval/questions.json").read_text(encoding="utf-8")
)["questions"]


def _question(qid: str) -> dict[str, Any]:
    return next(q for q in QUESTIONS if q["id"] == qid)


def test_the_question_set_is_large_bilingual_and_uses_the_bench_tools() -> None:
    assert len(QUESTIONS) >= 30
    languages = [q["lang"] for q in QUESTIONS]
    assert abs(languages.count("zh") - languages.count("en")) <= 4
    used = {step["tool"] for q in QUESTIONS for step in q["truth"]}
    assert {"convert_currency", "country_facts", "days_between"} <= used
    assert sum(1 for q in QUESTIONS if len(q["truth"]) > 1) >= 5


def test_every_expected_answer_is_computed_from_the_tools() -> None:
    for question in QUESTIONS:
        expected = bench.expected_answer(question, TOOLS)
        assert expected.numbers or expected.texts, question["id"]


def test_a_two_step_answer_chains_the_tools_results() -> None:
    weather = TOOLS["get_weather"]("Beijing", "tomorrow")
    want = TOOLS["convert_units"](weather["high_c"], "°C", "°F")["result"]
    assert bench.expected_answer(_question("2-beijing-high-f"), TOOLS).numbers == (want,)


@pytest.mark.parametrize(
    ("text", "value"),
    [
        ("明天最高气温是 -13°C，最低零下19度", -19.0),
        ("The population is 124,500,000.", 124_500_000.0),
        ("日本人口约1.245亿", 124_500_000.0),
        ("about 1.245 billion", 1_245_000_000.0),
        ("结果是 26.46 磅", 26.46),
    ],
)
def test_numbers_are_read_from_chinese_and_english_answers(text: str, value: float) -> None:
    assert any(found == pytest.approx(value) for found in bench.numbers_in(text))


def test_call_ids_are_not_read_as_numbers() -> None:
    assert bench.numbers_in("call_1_0") == []


def test_grading_needs_every_expected_number_within_tolerance() -> None:
    question = _question("w-harbin-highlow")
    expected = bench.expected_answer(question, TOOLS)
    high, low = (int(n) for n in expected.numbers)
    assert bench.is_correct(f"哈尔滨今天最高 {high}°C，最低 {low}°C。", expected)
    assert not bench.is_correct(f"哈尔滨今天最高 {high}°C。", expected)
    assert not bench.is_correct(f"最高 {high + 2}°C，最低 {low}°C", expected)


def test_a_city_answer_matches_in_either_language() -> None:
    expected = bench.expected_answer(_question("k-zh-brazil-capital"), TOOLS)
    assert bench.is_correct("巴西的首都是巴西利亚。", expected)
    assert bench.is_correct("The capital is Brasilia.", expected)
    assert not bench.is_correct("巴西的首都是里约热内卢。", expected)


@pytest.mark.parametrize(
    ("answer", "kind"),
    [
        ("", "empty"),
        ("  \n", "empty"),
        ('{"name": "get_weather", "arguments": {"city": "Paris"}}', "call-shaped"),
        ('```json\n{"name": "calculate", "parameters": {"expression": "1+1"}}\n```', "call-shaped"),
        ('<tool_call>{"name": "calculate"}</tool_call>', "call-shaped"),
        ('{"name": "result", "id": "2", "value": 49}', "call-shaped"),
        (
            "```json\nCalling tools:\n[{'id': 'Jg27', 'type': 'function', 'function': "
            "{'name': 'calculate', 'arguments': {'expression': '3.5 * 18 - 7'}}}]",
            "call-shaped",
        ),
        ("get_weather", "bare tool name"),
        ("call_1_0", "bare tool name"),
        ("[toolcall] The last 3 rounds of tool calls made no progress", "echoed engine note"),
        ("I already called get_weather with these arguments.", "echoed engine note"),
        (
            "That was not an answer. It repeats the toolcall's note instead of answering.",
            "echoed engine note",
        ),
        ("Error: The country 'MOSCOW' is not known in this dataset.", "echoed tool error"),
        ("It is 17°C in Paris tomorrow.", None),
        ('{"city": "Paris", "high_c": 17}', None),
    ],
)
def test_non_answers_are_told_apart(answer: str, kind: str | None) -> None:
    assert bench.non_answer_kind(answer, TOOLS) == kind


def test_a_run_that_ends_0_with_a_non_answer_is_flagged_and_not_counted() -> None:
    expected = bench.expected_answer(_question("c-mul-add"), TOOLS)
    record: dict[str, Any] = {"exit": 0, "answer": '{"name": "calculate", "arguments": {}}'}
    bench.classify(record, expected, TOOLS)
    assert (record["outcome"], record["ended_0_non_answer"]) == ("no answer", True)


def test_a_right_answer_with_a_non_zero_exit_is_no_answer() -> None:
    expected = bench.expected_answer(_question("c-mul-add"), TOOLS)
    record: dict[str, Any] = {"exit": 3, "answer": "5800", "best_effort": True}
    bench.classify(record, expected, TOOLS)
    assert record["outcome"] == "no answer"
    assert record["best_effort_correct"] is True
    assert record["ended_0_non_answer"] is False


def test_without_a_server_the_bench_skips_and_says_why(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.delenv("TOOLCALL_BENCH_BASE_URL", raising=False)
    assert bench.main([]) == 0
    out = capsys.readouterr().out
    assert out.count("\n") == 1 and "skipped" in out and "--base-url" in out
