"""The battery of kata prompt: the user's `system_prompt(tools)` put before each bundled question,
answered by two models - toolcall's offline model and a prompt follower (_follower) - and each
reply read by toolcall's own text-protocol parser. A case passes when every call the model
means to make comes back parseable and whole; its verdict says how many did."""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Sequence
from functools import cache
from pathlib import Path
from typing import Any

from toolcall_cli.kata._battery import Battery, Case, Solution, Verdict, shown
from toolcall_cli.kata._follower import Intended, PromptFollower, ReplyModel
from toolcall_cli.kata._offline import bundled_tools, first_message
from toolcall_cli.kata._samples import SAMPLES
from toolcall_cli.kata._toolbox import TOOL_NAMES
from toolcall_cli.offline import OfflineModel
from toolcall_cli.strategies.text_parser import parse_text
from toolcall_cli.strategies.text_prompt import system_prompt
from toolcall_cli.tools.schema import spec_from_function
from toolcall_cli.wording import plural

BUNDLED_PLANS: dict[str, tuple[Intended, ...]] = {
    "What's the weather in Paris?": (Intended("get_weather", {"city": "Paris"}),),
    "What is 17 * 23?": (Intended("calculate", {"expression": "17 * 23"}),),
    "Convert 5 km to miles": (
        Intended("convert_units", {"value": 5, "from_unit": "km", "to_unit": "mi"}),
    ),
    "What's the weather in Paris and in Tokyo?": (
        Intended("get_weather", {"city": "Paris"}),
        Intended("get_weather", {"city": "Tokyo"}),
    ),
    "北京和上海今天天气怎么样？": (
        Intended("get_weather", {"city": "北京"}),
        Intended("get_weather", {"city": "上海"}),
    ),
    "What's the weather in Tokyo tomorrow?": (
        Intended("get_weather", {"city": "Tokyo", "day": "tomorrow"}, listed=("day",)),
    ),
    "How far is 10 miles in km?": (
        Intended("convert_units", {"value": 10, "from_unit": "mi", "to_unit": "km"}),
    ),
    "Hello! Who are you?": (),
}
"""The bundled questions, each with the calls it asks for."""

SAMPLE_TOOLS = ("search_flights", "set_alarm", "average", "current_time", "convert_units")
SAMPLE_PLANS: dict[str, tuple[Intended, ...]] = {
    "Find a business-class flight from OSL to NRT.": (
        Intended(
            "search_flights",
            {"origin": "OSL", "destination": "NRT", "cabin": "business"},
            listed=("cabin",),
        ),
    ),
    "Wake me at 6:30 every day.": (
        Intended("set_alarm", {"hour": 6, "minute": 30, "repeat": True}),
    ),
    "Average 3, 5 and 10.": (Intended("average", {"values": [3, 5, 10]}),),
    "What time is it?": (Intended("current_time", {}),),
    "How many metres is 3 miles?": (
        Intended(
            "convert_units",
            {"value": 3, "from_unit": "mi", "to_unit": "m"},
            listed=("from_unit", "to_unit"),
        ),
    ),
}
"""Questions on tools the prompt was not written for (the request kata's sample functions)."""
PLANS = {**BUNDLED_PLANS, **SAMPLE_PLANS}


@cache
def bundled_entries() -> list[dict[str, Any]]:
    return [tool.spec.to_openai() for tool in bundled_tools(*TOOL_NAMES)]


@cache
def sample_entries() -> list[dict[str, Any]]:
    return [spec_from_function(SAMPLES[name]).to_openai() for name in SAMPLE_TOOLS]


def offline_reply(prompt: str, question: str) -> str:
    """`ReplyModel`: toolcall's offline model, the prompt as its system message, no `tools`."""
    body = {
        "model": "offline",
        "messages": [
            {"role": "system", "content": prompt},
            {"role": "user", "content": question},
        ],
    }
    content = first_message(OfflineModel(seed=0), body).get("content")
    return content if isinstance(content, str) else ""


@cache
def offline_intends(question: str) -> tuple[Intended, ...]:
    """The calls the offline model makes for `question` under toolcall's own prompt: what it
    means to do, whatever prompt it is then given."""
    specs = [tool.spec for tool in bundled_tools(*TOOL_NAMES)]
    reply = offline_reply(system_prompt(specs), question)
    return tuple(Intended(c.name, dict(c.arguments)) for c in parse_text(reply).calls)


def key(name: str, arguments: Any) -> str:
    return json.dumps([name, arguments], ensure_ascii=False, sort_keys=True)


def judge(intended: Sequence[Intended], reply: str) -> Verdict:
    """Every intended call parsed back whole, and nothing else."""
    parsed = parse_text(reply)
    wanted = Counter(key(c.name, c.arguments) for c in intended)
    found = Counter(key(c.name, c.arguments) for c in parsed.calls)
    whole = sum((wanted & found).values())
    expected = f"{len(intended)} call{'s' * (len(intended) != 1)} parsed back whole: " + (
        ", ".join(f"{c.name}({shown(c.arguments)})" for c in intended) or "none"
    )
    if found == wanted and not parsed.errors:
        return Verdict(True, expected, f"{whole} of {len(intended)} parseable")
    errors = f", {plural(len(parsed.errors), 'parse error')}" if parsed.errors else ""
    return Verdict(
        False,
        expected,
        f"{whole} of {len(intended)} came back parseable{errors}; the reply: {shown(reply)}",
    )


def asked(category: str, question: str, follower: bool, samples: bool = False) -> Case:
    """One question put to one model (the offline one, or the follower), under the user's
    prompt for the bundled tools or the sample ones."""

    def check(solution: Solution) -> Verdict:
        prompt = solution.call("system_prompt", sample_entries() if samples else bundled_entries())
        if not isinstance(prompt, str) or not prompt.strip():
            return Verdict(False, "the prompt, as a str", shown(prompt))
        model: ReplyModel = PromptFollower(PLANS) if follower else offline_reply
        intended = PLANS[question] if follower else offline_intends(question)
        return judge(intended, model(prompt, question))

    return Case(category, "built-in", question, check)


def battery(conformance: Path | None) -> Battery:
    cases = [
        *(asked("offline model", q, follower=False) for q in BUNDLED_PLANS),
        *(asked("prompt follower", q, follower=True) for q in BUNDLED_PLANS),
        *(asked("other tools (follower)", q, follower=True, samples=True) for q in SAMPLE_PLANS),
    ]
    return Battery(
        tuple(cases),
        "none used: a prompt is judged by what models write after reading it",
        "offline faults: none (the offline model is asked as it is: the prompt is the variable)",
    )
