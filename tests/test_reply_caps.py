"""Runaway replies (issue 15): a cap on the calls one reply may run, and identical calls in one
reply run once. A real Qwen2.5-0.5B streamed replies of 68 and 119 calls, all of which ran, and
the next request overflowed its 4,096-token context."""

from __future__ import annotations

import json
import threading
from pathlib import Path
from typing import Any

import pytest
from in_process import toolcall
from test_loop import of, plugin_registry

from toolcall_cli.events import (
    Event,
    FinalAnswer,
    Notice,
    RunFinished,
    ToolCallParsed,
    ToolFinished,
)
from toolcall_cli.loop import Limits, run
from toolcall_cli.messages import Message
from toolcall_cli.models.scripted import ScriptedModel
from toolcall_cli.strategies import get_strategy
from toolcall_cli.tools.registry import ToolRegistry, tool

PLUGIN = '''
from toolcall_cli import tool

RUNS = {"n": 0}

@tool
def get_weather(city: str) -> str:
    """Get the weather for a city."""
    RUNS["n"] += 1
    return f"{city}: sunny, 21 C, humidity 40%, wind 3 m/s from the north-east."

@tool(cacheable=False)
def get_time(zone: str = "UTC") -> str:
    """The time now (not cacheable)."""
    RUNS["n"] += 1
    return f"12:{RUNS['n']:02d} {zone}"
'''

CITIES = [f"City{i:03d}" for i in range(119)]


def tagged(name: str, **arguments: Any) -> str:
    return f"<tool_call>{json.dumps({'name': name, 'arguments': arguments})}</tool_call>"


def native(calls: list[tuple[str, dict[str, Any]]]) -> dict[str, Any]:
    return {
        "role": "assistant",
        "content": None,
        "tool_calls": [
            {"id": f"c{i}", "type": "function", "function": {"name": n, "arguments": json.dumps(a)}}
            for i, (n, a) in enumerate(calls)
        ],
    }


def runaway(strategy: str) -> Any:
    if strategy == "schema":
        return native([("get_weather", {"city": c}) for c in CITIES])
    return "\n".join(tagged("get_weather", city=c) for c in CITIES)


def runs(registry: ToolRegistry) -> int:
    tool_ = registry.get("get_weather")
    assert tool_ is not None
    counts: dict[str, int] = tool_.func.__globals__["RUNS"]
    return counts["n"]


def play(
    replies: list[Any], registry: ToolRegistry, strategy: str, **limits: Any
) -> tuple[list[Event], ScriptedModel]:
    model = ScriptedModel(replies)
    history: list[Message] = []
    name, mode = ([*strategy.split("-"), "tags"])[:2]
    events = list(
        run(
            "weather everywhere",
            model=model,
            strategy=get_strategy(name, stream_mode=mode),
            registry=registry,
            history=history,
            limits=Limits(**limits),
        )
    )
    return events, model


@pytest.fixture
def registry(tmp_path: Path) -> ToolRegistry:
    return plugin_registry(tmp_path, PLUGIN)


@pytest.mark.parametrize("strategy", ["regex", "schema", "stream", "stream-native"])
def test_a_119_call_reply_runs_only_the_first_n_and_the_next_request_stays_small(
    registry: ToolRegistry, strategy: str
) -> None:
    reply = runaway("schema" if strategy == "stream-native" else strategy)
    events, model = play([reply, "Sunny in the first 8 cities."], registry, strategy)
    assert runs(registry) == 8
    assert len(of(events, ToolFinished)) == 8
    assert any("111 calls past the cap of 8" in n.message for n in of(events, Notice))
    assert [a.text for a in of(events, FinalAnswer)] == ["Sunny in the first 8 cities."]
    finished = of(events, RunFinished)[0]
    assert finished.stop_reason == "answered" and finished.tool_calls == 8
    second = json.dumps(model.requests[1]["messages"], ensure_ascii=False)
    first = json.dumps(model.requests[0]["messages"], ensure_ascii=False)
    # The 111 dropped calls are neither echoed back nor answered one by one: one short note.
    assert len(second) - len(first) < 3000, len(second) - len(first)
    assert second.count("were not run") == 1
    assert "City008" not in second and "City007" in second
    if strategy in ("schema", "stream-native"):
        sent = model.requests[1]["messages"]
        ids = [c["id"] for m in sent if m["role"] == "assistant" for c in m["tool_calls"]]
        answered = [m["tool_call_id"] for m in sent if m["role"] == "tool"]
        assert ids == answered == [f"c{i}" for i in range(8)]


def test_the_cap_is_a_limit_of_its_own(registry: ToolRegistry) -> None:
    events, _model = play([runaway("regex"), "ok"], registry, "regex", max_calls_per_reply=3)
    assert runs(registry) == 3
    assert any("116 calls past the cap of 3" in n.message for n in of(events, Notice))


def test_the_flag_caps_calls_per_reply_from_the_command_line(tmp_path: Path) -> None:
    script = tmp_path / "runaway.jsonl"
    reply = "".join(tagged("calculate", expression=f"1+{i}") for i in range(5))
    script.write_text("\n".join(json.dumps(r) for r in [reply, "done"]), encoding="utf-8")
    args = ["run", "sums", "--model", "scripted", "--script", str(script)]
    done = toolcall(*args, "--max-calls-per-reply", "2", "--json", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    events = [json.loads(line) for line in done.stdout.splitlines()]
    assert sum(e["kind"] == "tool_finished" for e in events) == 2
    assert any("3 calls past the cap of 2" in e.get("message", "") for e in events)
    usage = toolcall(*args, "--max-calls-per-reply", "0", cwd=tmp_path)
    assert usage.returncode == 2


@pytest.mark.parametrize("strategy", ["regex", "schema", "stream"])
@pytest.mark.parametrize("name", ["get_weather", "get_time"])
def test_identical_calls_in_one_reply_run_once(
    registry: ToolRegistry, strategy: str, name: str
) -> None:
    arguments = {"city": "Beijing"} if name == "get_weather" else {"zone": "UTC"}
    respaced = json.dumps(dict(reversed(list(arguments.items()))), indent=1)
    if strategy == "schema":
        reply: Any = native([(name, arguments)] * 2 + [(name, json.loads(respaced))])
    else:
        reply = tagged(name, **arguments) * 2 + tagged(name, **json.loads(respaced))
    events, _ = play([reply, "ok"], registry, strategy)
    assert runs(registry) == 1
    results = [e.result for e in of(events, ToolFinished)]
    assert len(results) == 3
    assert results[0].content.split("\n")[0] == results[1].content.split("\n")[0]
    assert [r.cached for r in results] == [False, True, True]
    assert "Same call as an earlier one in this reply" in results[2].content


def test_a_streamed_twin_that_arrives_while_the_first_runs_waits_for_it() -> None:
    gate = threading.Event()
    ran: list[str] = []

    @tool
    def slow_lookup(city: str) -> str:
        """Look something up, slowly."""
        ran.append(city)
        gate.wait(10)  # a twin that ran on its own would count twice below
        return f"{city}: found"

    registry = ToolRegistry.from_functions(slow_lookup)
    reply = tagged("slow_lookup", city="Beijing") * 2
    events: list[Event] = []
    for event in run(
        "q",
        model=ScriptedModel([reply, "ok"]),
        strategy=get_strategy("stream"),
        registry=registry,
        history=[],
    ):
        events.append(event)
        if isinstance(event, ToolCallParsed) and len(of(events, ToolCallParsed)) == 2:
            gate.set()  # the first is still running: the twin, added next, waits for it
    gate.set()
    assert ran == ["Beijing"]
    first, second = (e.result for e in of(events, ToolFinished))
    assert first.content == "Beijing: found" and second.cached
    assert second.content.startswith("Beijing: found")
