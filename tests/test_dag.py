"""--dag through `run()`: calls of one reply that wait for each other and use each other's
results, as a model writes them (text protocol ids + depends_on, native `_id`/`_depends_on`).

Order and concurrency are shown with events and barriers, never with sleeps: two calls that
must run at the same time meet at a threading.Barrier whose timeout fails the test (it does
not hang it) when they are run one after the other."""

from __future__ import annotations

import json
import threading
from typing import Any

import pytest

from toolcall_cli.events import (
    Event,
    FinalAnswer,
    GroundingChecked,
    ToolFinished,
    ToolTimeline,
)
from toolcall_cli.limits import GroundingMode
from toolcall_cli.loop import Limits, run
from toolcall_cli.messages import Message, ToolResult
from toolcall_cli.models.scripted import Reply, ScriptedModel
from toolcall_cli.rounds import ToolPolicy
from toolcall_cli.strategies import get_strategy
from toolcall_cli.tools.registry import Tool, ToolRegistry

MEET = 5.0
"""Seconds two calls that must run together wait for each other: far more than they need,
and a bound (the test fails at it), not a timing assertion."""

QUIET = 0.2
"""Seconds a call that must run alone waits to see whether anything else starts meanwhile."""


def text_call(
    name: str, ref: str | None = None, depends_on: list[str] | None = None, **arguments: Any
) -> str:
    """One call as a model writes it in the text protocol with --dag."""
    body: dict[str, Any] = {"name": name, "arguments": arguments}
    if ref is not None:
        body["id"] = ref
    if depends_on is not None:
        body["depends_on"] = depends_on
    return f"<tool_call>{json.dumps(body, ensure_ascii=False)}</tool_call>"


def native_call(
    name: str, ref: str, depends_on: list[str] | None = None, **arguments: Any
) -> dict[str, Any]:
    """One call as native calling carries it with --dag: the reserved `_id`/`_depends_on`."""
    reserved: dict[str, Any] = {"_id": ref}
    if depends_on is not None:
        reserved["_depends_on"] = depends_on
    return {"name": name, "arguments": {**arguments, **reserved}}


def play(
    replies: list[Reply],
    registry: ToolRegistry,
    *,
    strategy: str = "regex",
    dag: bool = True,
    grounding: GroundingMode = "warn",
) -> list[Event]:
    model = ScriptedModel(replies)
    history: list[Message] = []
    return list(
        run(
            "q",
            model=model,
            strategy=get_strategy(strategy, dag=dag),
            registry=registry,
            history=history,
            limits=Limits(max_iterations=3, grounding=grounding),
            policy=ToolPolicy(dag=dag),
        )
    )


def results(events: list[Event]) -> dict[str, ToolResult]:
    """Each call's result by the model's id for it (its name when it has none)."""
    return {(e.call.ref or e.call.name): e.result for e in events if isinstance(e, ToolFinished)}


def answer(events: list[Event]) -> str:
    (final,) = [e for e in events if isinstance(e, FinalAnswer)]
    return final.text


class Log:
    """What the tools did, in the order they did it, from any thread."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self.entries: list[tuple[str, str]] = []

    def add(self, what: str, label: str) -> None:
        with self._lock:
            self.entries.append((what, label))

    def at(self, what: str, label: str) -> int:
        return self.entries.index((what, label))


def diamond_registry(log: Log) -> ToolRegistry:
    """`step`: b and c meet at a barrier, so they must run at the same time. a watches for a
    moment whether b or c starts while it runs, and b and c whether d does: an engine that
    ignored the order would be caught at it, not only lucky."""
    meet = threading.Barrier(2, timeout=MEET)
    started = {label: threading.Event() for label in "abcd"}

    def step(label: str) -> str:
        """One step of the diamond."""
        log.add("start", label)
        started[label].set()
        if label == "a":
            started["b"].wait(QUIET)
        if label in ("b", "c"):
            meet.wait()  # BrokenBarrierError (a failed call) when b and c do not overlap
            started["d"].wait(QUIET)
        log.add("end", label)
        return f"{label} done"

    return ToolRegistry.from_functions(step)


def assert_diamond_order(log: Log) -> None:
    assert log.at("end", "a") < log.at("start", "b")
    assert log.at("end", "a") < log.at("start", "c")
    # b and c overlap: each started before the other ended (they met at the barrier)
    assert log.at("start", "b") < log.at("end", "c")
    assert log.at("start", "c") < log.at("end", "b")
    assert log.at("start", "d") > max(log.at("end", "b"), log.at("end", "c"))


def assert_diamond_results(events: list[Event]) -> None:
    done = results(events)
    assert {ref: r.content for ref, r in done.items()} == {
        label: f"{label} done" for label in "abcd"
    }
    (timeline,) = [e for e in events if isinstance(e, ToolTimeline)]
    waits = {e.ref: e.waits_for for e in timeline.entries}
    ids = {e.ref: e.call_id for e in timeline.entries}
    assert waits["b"] == waits["c"] == (ids["a"],)
    assert waits["d"] == (ids["b"], ids["c"])
    assert answer(events) == "all done"


def test_a_diamond_in_the_text_protocol_runs_in_order_and_in_parallel() -> None:
    log = Log()
    reply = (
        text_call("step", "a", label="a")
        + text_call("step", "b", ["a"], label="b")
        + text_call("step", "c", ["a"], label="c")
        + text_call("step", "d", ["b", "c"], label="d")
    )
    events = play([reply, "all done"], diamond_registry(log))
    assert_diamond_order(log)
    assert_diamond_results(events)


@pytest.mark.parametrize("strategy", ["schema", "stream"])
def test_a_diamond_in_native_calls_runs_in_order_and_in_parallel(strategy: str) -> None:
    log = Log()
    reply: dict[str, Any] = {
        "tool_calls": [
            native_call("step", "a", label="a"),
            native_call("step", "b", ["a"], label="b"),
            native_call("step", "c", ["a"], label="c"),
            native_call("step", "d", ["b", "c"], label="d"),
        ]
    }
    registry = diamond_registry(log)
    if strategy == "stream":
        model = ScriptedModel([reply, "all done"])
        events = list(
            run(
                "q",
                model=model,
                strategy=get_strategy("stream", stream_mode="native", dag=True),
                registry=registry,
                history=[],
                policy=ToolPolicy(dag=True),
            )
        )
    else:
        events = play([reply, "all done"], registry, strategy="schema")
    assert_diamond_order(log)
    assert_diamond_results(events)


class Counted:
    """Tools that count their calls: what a batch that must not run may not touch."""

    def __init__(self) -> None:
        self.calls: dict[str, int] = {}
        self._lock = threading.Lock()

    def count(self, name: str) -> None:
        with self._lock:
            self.calls[name] = self.calls.get(name, 0) + 1

    def registry(self) -> ToolRegistry:
        def fetch(key: str) -> dict[str, Any]:
            """Fetch a record."""
            self.count("fetch")
            return {"key": key, "n": 1}

        def use(value: str) -> str:
            """Use a value."""
            self.count("use")
            return f"used {value}"

        return ToolRegistry.from_functions(fetch, use)


BAD_GRAPHS = {
    "cycle": (
        text_call("fetch", "a", ["b"], key="1")
        + text_call("use", "b", ["a"], value="x")
        + text_call("fetch", "free", key="2"),
        ["wait for each other in a circle", "`a` → `b` → `a`"],
    ),
    "unknown id": (
        text_call("fetch", "a", key="1") + text_call("use", "b", ["zz"], value="x"),
        ["waits for `zz`", "no call of this reply has that id"],
    ),
    "unknown id in a placeholder": (
        text_call("fetch", "a", key="1") + text_call("use", "b", value="{{q.key}}"),
        ["waits for `q`"],
    ),
    "self-reference": (
        text_call("use", "a", ["a"], value="x") + text_call("fetch", "f", key="1"),
        ["(id `a`) waits for itself"],
    ),
    "self-reference by placeholder": (
        text_call("use", "a", value="{{a}}") + text_call("fetch", "f", key="1"),
        ["(id `a`) waits for itself"],
    ),
    "duplicate id": (
        text_call("fetch", "a", key="1")
        + text_call("fetch", "a", key="2")
        + text_call("use", "b", ["a"], value="x"),
        ["two calls have the id `a`"],
    ),
    "duplicate id, nothing waits": (
        text_call("fetch", "a", key="1") + text_call("fetch", "a", key="2"),
        ["two calls have the id `a`"],
    ),
    "malformed placeholder: empty field": (
        text_call("fetch", "w", key="1") + text_call("use", "u", value="{{w.}}"),
        ["`{{w.}}`", "is not a path step"],
    ),
    "malformed placeholder: bad index": (
        text_call("fetch", "w", key="1") + text_call("use", "u", value="{{w[x]}}"),
        ["`{{w[x]}}`", "is not a path step"],
    ),
    "malformed placeholder: no id": (
        text_call("fetch", "w", key="1") + text_call("use", "u", value="{{ }}"),
        ["is not a placeholder"],
    ),
}


@pytest.mark.parametrize("strategy", ["regex", "schema"])
@pytest.mark.parametrize("case", list(BAD_GRAPHS))
def test_a_bad_graph_runs_none_of_its_batch_and_says_why(case: str, strategy: str) -> None:
    """The whole reply is known before anything runs (not streamed), so nothing of it runs: an
    independent call in a broken batch would otherwise run on a plan the model has to redo."""
    reply_text, needles = BAD_GRAPHS[case]
    counted = Counted()
    reply: Reply = reply_text
    if strategy == "schema":
        reply = {"tool_calls": [as_native(c) for c in text_calls(reply_text)]}
    events = play([reply, "sorry"], counted.registry(), strategy=strategy)
    finished = [e.result for e in events if isinstance(e, ToolFinished)]
    assert len(finished) == len(text_calls(reply_text))  # every call answered, once
    for result in finished:
        assert not result.ok and result.error_kind == "dependency_error", result
        for needle in needles:
            assert needle in result.content
    assert counted.calls == {}
    assert answer(events) == "sorry"


def text_calls(reply: str) -> list[dict[str, Any]]:
    parts = reply.split("<tool_call>")[1:]
    return [json.loads(part.removesuffix("</tool_call>")) for part in parts]


def as_native(call: dict[str, Any]) -> dict[str, Any]:
    reserved: dict[str, Any] = {}
    if "id" in call:
        reserved["_id"] = call["id"]
    if "depends_on" in call:
        reserved["_depends_on"] = call["depends_on"]
    return {"name": call["name"], "arguments": {**call["arguments"], **reserved}}


def test_a_streamed_reply_starts_independent_calls_and_not_the_dependants_of_a_bad_graph() -> None:
    """Documented: a streamed reply starts calls without dependencies as they arrive, before
    the reply (and so its graph) is complete; the calls that wait are checked at its end."""
    counted = Counted()
    reply = text_call("fetch", "a", key="1") + text_call("use", "b", ["zz"], value="x")
    model = ScriptedModel([reply, "sorry"])
    events = list(
        run(
            "q",
            model=model,
            strategy=get_strategy("stream", dag=True),
            registry=counted.registry(),
            history=[],
            policy=ToolPolicy(dag=True),
        )
    )
    done = results(events)
    assert done["a"].ok
    assert done["b"].error_kind == "dependency_error" and "`zz`" in done["b"].content
    assert counted.calls == {"fetch": 1}


WEATHER = {"city": "北京", "high_c": 31, "low_c": 22, "forecast": [{"x": 5, "sky": "sunny"}]}


def placeholder_registry(seen: dict[str, Any]) -> ToolRegistry:
    def get_weather(city: str) -> dict[str, Any]:
        """The weather."""
        return {**WEATHER, "city": city}

    def show(value: int | str) -> str:
        """Show a value and its type (an int, or text: a placeholder must keep the type)."""
        seen.setdefault("show", []).append(value)
        return f"{type(value).__name__}:{value}"

    def to_fahrenheit(celsius: int) -> float:
        """Convert (its schema wants an integer, which `{{w.high_c}}` as text is not)."""
        return celsius * 9 / 5 + 32

    def keys(data: dict[str, Any]) -> str:
        """The keys of an object."""
        return ",".join(sorted(data))

    return ToolRegistry.from_functions(get_weather, show, to_fahrenheit, keys)


def test_placeholders_take_values_from_a_json_result_before_validation() -> None:
    seen: dict[str, Any] = {}
    reply = (
        text_call("get_weather", "w", city="北京")
        + text_call("show", "number", value="{{w.high_c}}")
        + text_call("show", "path", value="{{ w.forecast[0].x }}")
        + text_call("show", "text", value="high {{w.high_c}} in {{w.city}}: {{w.forecast[0]}}")
        + text_call("to_fahrenheit", "f", celsius="{{w.high_c}}")
        + text_call("keys", "whole", data="{{w}}")
    )
    events = play([reply, "ok"], placeholder_registry(seen))
    done = results(events)
    assert done["number"].content == "int:31"
    assert done["path"].content == "int:5"
    assert done["text"].content == 'str:high 31 in 北京: {"x": 5, "sky": "sunny"}'
    assert done["f"].ok and json.loads(done["f"].content) == pytest.approx(87.8)
    assert done["whole"].content == "city,forecast,high_c,low_c"
    assert sorted(map(str, seen["show"])) == sorted(
        ["31", "5", 'high 31 in 北京: {"x": 5, "sky": "sunny"}']
    )


def test_a_placeholder_into_a_reused_result_takes_its_data_not_the_note_after_it() -> None:
    """A call the model repeats (in the same reply, or from an earlier one) is answered with
    the first result plus a note to the model; a placeholder into it wants the data alone."""
    twin_reply = (
        text_call("get_weather", "w1", city="北京")
        + text_call("get_weather", "w2", city="北京")
        + text_call("to_fahrenheit", "f", celsius="{{w2.high_c}}")
    )
    done = results(play([twin_reply, "ok"], placeholder_registry({})))
    assert done["f"].ok and json.loads(done["f"].content) == pytest.approx(87.8)
    again = text_call("get_weather", "w2", city="北京") + text_call(
        "to_fahrenheit", "f", celsius="{{w2.high_c}}"
    )
    later = play(
        [text_call("get_weather", "w1", city="北京"), again, "ok"], placeholder_registry({})
    )
    assert results(later)["w2"].cached
    assert results(later)["f"].ok and json.loads(results(later)["f"].content) == pytest.approx(87.8)


def test_a_placeholder_takes_the_whole_result_not_the_cut_the_model_reads_nor_its_notes() -> None:
    """A result longer than --max-result-chars is cut for the model, and a note follows it; a
    call that waits for it wants the tool's own result: its last record, its full text."""

    def records() -> list[dict[str, int]]:
        """Many records."""
        return [{"id": n} for n in range(500)]

    def size(text: str) -> int:
        """How long a text is."""
        return len(text)

    registry = placeholder_registry({})
    for func in (records, size):
        registry.add(Tool.from_function(func))
    reply = (
        text_call("records", "r")
        + text_call("show", "last", value="{{r[499].id}}")
        + text_call("size", "all", text="all: {{r}}")
        + text_call("get_weather", "w", city="北京", unit="C")  # `unit` left out, with a note
        + text_call("to_fahrenheit", "f", celsius="{{w.high_c}}")
    )
    done = results(play([reply, "ok"], registry))
    assert "result cut" in done["r"].content  # what the model reads
    assert done["last"].content == "int:499"
    assert done["all"].content == str(len("all: " + json.dumps([{"id": n} for n in range(500)])))
    assert "Ran without `unit`" in done["w"].content
    assert done["f"].ok and json.loads(done["f"].content) == pytest.approx(87.8)


@pytest.mark.parametrize("grounding", ["warn", "check"])
def test_a_figure_a_placeholder_takes_from_past_the_cut_is_grounded(
    grounding: GroundingMode,
) -> None:
    """The figure came from the tool's whole result, so it is no figure from nowhere, though
    the model's cut of the result does not hold it (it was refused under check)."""

    def records() -> list[dict[str, int]]:
        """Many records."""
        return [{"id": 10000 + n} for n in range(500)]

    registry = placeholder_registry({})
    registry.add(Tool.from_function(records))
    reply = text_call("records", "r") + text_call("show", "last", value="{{r[499].id}}")
    events = play([reply, "ok"], registry, grounding=grounding)
    assert results(events)["last"].content == "int:10499"
    assert [e for e in events if isinstance(e, GroundingChecked)] == []


def test_waiting_for_a_call_past_the_cap_says_so_not_that_no_call_has_its_id() -> None:
    reply = (
        text_call("show", "a", value="{{c.high_c}}")
        + text_call("show", "b", value="1")
        + text_call("get_weather", "c", city="北京")  # the third: past a cap of 2
    )
    model = ScriptedModel([reply, "ok"])
    events = run(
        "q",
        model=model,
        strategy=get_strategy("regex", dag=True),
        registry=placeholder_registry({}),
        history=[],
        limits=Limits(max_iterations=3, max_calls_per_reply=2),
        policy=ToolPolicy(dag=True),
    )
    told = results(list(events))["a"].content
    assert "waits for `c`, which came after the most calls one reply may run" in told
    assert "no call of this reply has that id" not in told


def test_a_placeholder_path_not_in_the_result_fails_only_that_call_and_its_dependants() -> None:
    seen: dict[str, Any] = {}
    reply = (
        text_call("get_weather", "w", city="北京")
        + text_call("show", "bad", value="{{w.high}}")
        + text_call("show", "deep", value="{{w.forecast[3].x}}")
        + text_call("show", "after", ["bad"], value="x")
        + text_call("show", "good", value="{{w.low_c}}")
    )
    events = play([reply, "ok"], placeholder_registry(seen))
    done = results(events)
    assert done["bad"].error_kind == "dependency_error"
    assert "`{{w.high}}`: the result of `w` has no field `high`" in done["bad"].content
    assert "`city`, `high_c`, `low_c`, `forecast`" in done["bad"].content
    assert "has no item [3] (it is a list of 1)" in done["deep"].content
    assert done["after"].error_kind == "skipped"
    assert "depends on `bad` (show), which failed" in done["after"].content
    assert done["good"].content == "int:22"
    assert seen["show"] == [22]  # only `good` ran


def test_a_failed_dependency_skips_its_dependants_and_independent_calls_still_run() -> None:
    ran: list[str] = []

    def get_weather(city: str) -> dict[str, Any]:
        """Always fails."""
        raise ConnectionError("the weather service is down")

    def use(value: str) -> str:
        """Use a value."""
        ran.append(value)
        return f"used {value}"

    reply = (
        text_call("get_weather", "w", city="北京")
        + text_call("use", "c", value="{{w.high_c}}")
        + text_call("use", "e", ["c"], value="later")
        + text_call("use", "x", value="independent")
    )
    events = play([reply, "ok"], ToolRegistry.from_functions(get_weather, use))
    done = results(events)
    assert done["w"].error_kind == "tool_error"
    assert done["c"].error_kind == "skipped"
    assert "skipped: it depends on `w` (get_weather), which failed" in done["c"].content
    assert "the weather service is down" in done["c"].content
    assert done["e"].error_kind == "skipped" and "`c` (use)" in done["e"].content
    assert done["x"].content == "used independent"
    assert ran == ["independent"]
    assert answer(events) == "ok"


def test_a_refused_dependency_skips_its_dependants() -> None:
    """Refused (here: an unknown tool, and arguments that do not fit) counts as failed too."""
    ran: list[str] = []

    def use(value: str) -> str:
        """Use a value."""
        ran.append(value)
        return value

    reply = (
        text_call("nope", "n")
        + text_call("use", "bad", value={"not": "text"})
        + text_call("use", "a", ["n"], value="a")
        + text_call("use", "b", value="{{bad}}")
    )
    events = play([reply, "ok"], ToolRegistry.from_functions(use))
    done = results(events)
    assert "`n` (nope)" in done["a"].content and done["a"].error_kind == "skipped"
    assert "`bad` (use)" in done["b"].content and done["b"].error_kind == "skipped"
    assert ran == []


def test_without_dag_ids_depends_on_and_placeholders_are_ignored() -> None:
    """The calls stay independent: they run at the same time (they meet at a barrier), and a
    placeholder is plain text."""
    meet = threading.Barrier(2, timeout=MEET)
    got: list[str] = []

    def step(label: str) -> str:
        """One step."""
        meet.wait()
        got.append(label)
        return label

    reply = text_call("step", "a", label="a") + text_call("step", "b", ["a"], label="{{a}}")
    events = play([reply, "ok"], ToolRegistry.from_functions(step), dag=False)
    done = [e.result for e in events if isinstance(e, ToolFinished)]
    assert [r.ok for r in done] == [True, True]
    assert sorted(got) == ["a", "{{a}}"]
    (timeline,) = [e for e in events if isinstance(e, ToolTimeline)]
    assert [e.waits_for for e in timeline.entries] == [(), ()]


def test_a_dag_strategy_without_the_dag_policy_still_ignores_dependencies() -> None:
    """What the engine honours is the session's --dag (the policy), not what the model wrote."""
    meet = threading.Barrier(2, timeout=MEET)

    def step(label: str) -> str:
        """One step."""
        meet.wait()
        return label

    reply = text_call("step", "a", label="a") + text_call("step", "b", ["a"], label="b")
    model = ScriptedModel([reply, "ok"])
    events = list(
        run(
            "q",
            model=model,
            strategy=get_strategy("regex", dag=True),
            registry=ToolRegistry.from_functions(step),
            history=[],
            policy=ToolPolicy(dag=False),
        )
    )
    assert sorted(e.result.content for e in events if isinstance(e, ToolFinished)) == ["a", "b"]
