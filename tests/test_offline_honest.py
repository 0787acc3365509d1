"""The offline model answers the question it was asked or says it cannot: asked the weather in a
city its bundled weather tool does not know, it calls the tool for that city and reports the
tool's error, in every strategy and in the question's language; it never answers about a city
the error suggests instead (Oslo is not Moscow)."""

from __future__ import annotations

import re
from typing import Any

import pytest

import toolcall_cli as toolcall
from toolcall_cli.events import FinalAnswer, ToolFinished

MODES = [
    {"strategy": "regex"},
    {"strategy": "schema", "schema_mode": "tools"},
    {"strategy": "schema", "schema_mode": "json"},
    {"strategy": "schema", "schema_mode": "required"},
    {"strategy": "stream"},
]
QUESTIONS = [
    ("What's the weather in Oslo?", "Oslo", "failed"),
    ("奥斯陆天气怎么样？", "奥斯陆", "失败"),
    ("奥斯陆明天天气如何？", "奥斯陆", "失败"),
]


@pytest.mark.parametrize("mode", MODES, ids=lambda m: " ".join(m.values()))
@pytest.mark.parametrize(("question", "city", "failed"), QUESTIONS)
def test_a_city_with_no_data_is_reported_not_swapped(
    mode: dict[str, Any], question: str, city: str, failed: str
) -> None:
    events = list(toolcall.ask(question, **mode))
    calls = [e.call for e in events if isinstance(e, ToolFinished)]
    assert calls, "the weather tool was never called"
    assert {c.name for c in calls} == {"get_weather"}
    assert {c.arguments.get("city") for c in calls} == {city}
    answer = next(e.text for e in events if isinstance(e, FinalAnswer))
    assert city in answer and failed in answer, answer
    assert not re.search(r"\d\s*°|℃", answer), answer  # no temperature it never read
    assert not any(other in answer.split(failed, 1)[0] for other in ("Moscow", "莫斯科")), answer
