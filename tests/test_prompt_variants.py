"""Prompt styles (--prompt-style full|compact|examples): what `toolcall prompt` shows for each,
and that the offline model, which learns the call format and the tools from the prompt text,
answers the README's questions with every one of them."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from in_process import toolcall

from toolcall_cli.strategies.text_prompt import LIVE_DATA_RULE

STYLES = ("full", "compact", "examples")
TOOLS = ("calculate", "get_time", "convert_units", "get_weather")


def first_request(tmp_path: Path, *flags: str) -> dict[str, Any]:
    done = toolcall("prompt", "北京今天天气怎么样？", *flags, cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    body: dict[str, Any] = json.loads(done.stdout)
    return body


def system_text(body: dict[str, Any]) -> str:
    return "\n".join(m["content"] for m in body["messages"] if m["role"] == "system")


@pytest.mark.parametrize("strategy", ["regex", "stream"])
def test_each_style_of_the_text_protocol_names_every_tool_and_the_call_format(
    tmp_path: Path, strategy: str
) -> None:
    prompts = {
        s: system_text(first_request(tmp_path, "-s", strategy, "--prompt-style", s)) for s in STYLES
    }
    for style, prompt in prompts.items():
        assert all(f"## {name}" in prompt for name in TOOLS), style
        assert '<tool_call>{"name": "calculate", "arguments": {"expression": ' in prompt, style
    assert LIVE_DATA_RULE not in prompts["full"]  # the default prompt is as it was
    assert LIVE_DATA_RULE in prompts["compact"] and LIVE_DATA_RULE in prompts["examples"]
    assert len(prompts["compact"]) < 0.7 * len(prompts["full"])
    assert (
        "# Worked example" in prompts["examples"] and "# Worked example" not in prompts["compact"]
    )
    # The worked example shows a call, its result and the answer drawn from it.
    example = prompts["examples"].split("# Worked example", 1)[1]
    assert example.index("<tool_call>") < example.index("<tool_result") < example.index("costs 3.5")


def test_compact_keeps_only_each_tools_summary_line(tmp_path: Path) -> None:
    compact = system_text(first_request(tmp_path, "--prompt-style", "compact"))
    full = system_text(first_request(tmp_path))
    detail = "Covers about 50 major cities"  # the second paragraph of get_weather's docstring
    assert detail in full and detail not in compact
    assert "Get the weather (天气) for a city" in compact


@pytest.mark.parametrize(
    "mode",
    [
        ("-s", "schema"),
        ("-s", "schema", "--schema-mode", "required"),
        ("-s", "stream", "--stream-mode", "native"),
    ],
)
def test_native_modes_get_a_short_hint_with_the_live_data_rule_unless_full(
    tmp_path: Path, mode: tuple[str, ...]
) -> None:
    assert system_text(first_request(tmp_path, *mode)) == ""
    hint = system_text(first_request(tmp_path, *mode, "--prompt-style", "compact"))
    assert LIVE_DATA_RULE in hint and len(hint) < 400


def test_json_mode_adds_the_live_data_rule_unless_full(tmp_path: Path) -> None:
    json_mode = ("-s", "schema", "--schema-mode", "json")
    assert LIVE_DATA_RULE not in system_text(first_request(tmp_path, *json_mode))
    assert LIVE_DATA_RULE in system_text(
        first_request(tmp_path, *json_mode, "--prompt-style", "examples")
    )


def test_an_unknown_style_is_a_usage_error(tmp_path: Path) -> None:
    done = toolcall("run", "hi", "--prompt-style", "tiny", cwd=tmp_path)
    assert done.returncode == 2 and done.stderr.startswith("toolcall: error: ")


QUESTIONS = {
    "北京今天适合穿短袖吗？": "不太适合穿短袖",
    "北京和上海明天天气分别是多少？": "上海明天：阵雨，13°C",
    "What's 12*5+3?": "12*5+3 = 63",
    "What's the weather in Paris?": "Paris today: Partly cloudy, 11°C",
}


@pytest.mark.parametrize("style", STYLES)
@pytest.mark.parametrize("strategy", ["regex", "stream"])
@pytest.mark.parametrize("question", list(QUESTIONS))
def test_the_offline_model_answers_with_every_style(
    tmp_path: Path, style: str, strategy: str, question: str
) -> None:
    done = toolcall("run", question, "-q", "-s", strategy, "--prompt-style", style, cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert QUESTIONS[question] in done.stdout
