"""Each tool's policy as the engine enforces it, through `run()` with scripted replies:
approval (yes / no / always / nobody to ask), rate limits on an injected clock, permission
levels, a tool's own concurrency; the last answer without tools at the iteration limit; and
the round's timeline."""

from __future__ import annotations

import dataclasses
import json
import threading
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pytest
from answering import Approve, answering
from in_process import toolcall

from toolcall_cli.events import (
    AnswerWithoutTools,
    ApprovalAsked,
    Event,
    FinalAnswer,
    Notice,
    RunFinished,
    ToolFinished,
    ToolTimeline,
)
from toolcall_cli.loop import Limits, run
from toolcall_cli.messages import ToolResult
from toolcall_cli.models.scripted import Reply, ScriptedModel
from toolcall_cli.rounds import Decision, ToolPolicy
from toolcall_cli.strategies import get_strategy
from toolcall_cli.tools.policy import RateLimits
from toolcall_cli.tools.registry import ToolRegistry, tool


class FakeClock:
    """Time that passes only when the test (or a tool) says so."""

    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now

    def advance(self, seconds: float) -> None:
        self.now += seconds


def call(name: str, **arguments: Any) -> str:
    return f"<tool_call>{json.dumps({'name': name, 'arguments': arguments})}</tool_call>"


def play(
    replies: Sequence[Reply],
    registry: ToolRegistry,
    *,
    policy: ToolPolicy | None = None,
    approve: Approve | None = None,
    strategy: str = "regex",
    clock: FakeClock | None = None,
    **limits: Any,
) -> tuple[list[Event], ScriptedModel]:
    model = ScriptedModel(replies)
    events = list(
        answering(
            run(
                "q",
                model=model,
                strategy=get_strategy(strategy),
                registry=registry,
                history=[],
                limits=Limits(**limits),
                policy=policy,
                clock=clock or FakeClock(),
            ),
            approve,
        )
    )
    return events, model


def finished(events: list[Event]) -> list[ToolResult]:
    """Every result, in the order the model made the calls (not the order they finished in)."""
    return sorted(
        (e.result for e in events if isinstance(e, ToolFinished)),
        key=lambda r: tuple(int(part) for part in r.call_id.removeprefix("#").split(".")),
    )


def stop_reason(events: list[Event]) -> str:
    (done,) = [e for e in events if isinstance(e, RunFinished)]
    return done.stop_reason


# --- approval -------------------------------------------------------------------------------------


class Approvals:
    """An approver that answers as told and remembers what it was asked."""

    def __init__(self, *decisions: Decision | bool) -> None:
        self.decisions = list(decisions)
        self.asked: list[str] = []

    def __call__(self, asked: ApprovalAsked) -> Decision | bool:
        call = asked.call
        self.asked.append(f"{call.name}:{call.arguments.get('path', '')}")
        return self.decisions.pop(0)


def dangerous_registry(ran: list[str]) -> ToolRegistry:
    @tool(dangerous=True, cacheable=False, permission="write")
    def delete(path: str) -> str:
        """Delete a file."""
        ran.append(f"delete:{path}")
        return f"deleted {path}"

    @tool(dangerous=True, cacheable=False, permission="write")
    def wipe(path: str) -> str:
        """Wipe a disk."""
        ran.append(f"wipe:{path}")
        return f"wiped {path}"

    return ToolRegistry.from_functions(delete, wipe)


@pytest.mark.parametrize("yes", ["yes", True])
def test_an_approved_dangerous_call_runs(yes: Decision | bool) -> None:
    ran: list[str] = []
    approve = Approvals(yes)
    events, _ = play(
        [call("delete", path="/tmp/a"), "done"], dangerous_registry(ran), approve=approve
    )
    assert ran == ["delete:/tmp/a"] and approve.asked == ["delete:/tmp/a"]
    assert finished(events)[0].content == "deleted /tmp/a"


@pytest.mark.parametrize("no", ["no", False])
def test_a_declined_dangerous_call_is_answered_and_never_runs(no: Decision | bool) -> None:
    ran: list[str] = []
    approve = Approvals(no)
    events, _ = play(
        [call("delete", path="/tmp/a"), "done"], dangerous_registry(ran), approve=approve
    )
    assert ran == [] and approve.asked == ["delete:/tmp/a"]
    (result,) = finished(events)
    assert result.error_kind == "declined"
    assert "the user declined to run `delete`" in result.content


def test_always_approves_that_tool_for_the_rest_of_the_session_and_no_other() -> None:
    ran: list[str] = []
    approve = Approvals("always", "no")
    policy = ToolPolicy()
    registry = dangerous_registry(ran)
    replies: list[Reply] = [
        call("delete", path="/1"),
        call("delete", path="/2") + call("wipe", path="/3"),
        "done",
    ]
    events, _ = play(replies, registry, approve=approve, policy=policy)
    assert ran == ["delete:/1", "delete:/2"]  # the second delete, in a later round, not asked
    assert approve.asked == ["delete:/1", "wipe:/3"]  # always for delete is not for wipe
    assert [r.ok for r in finished(events)] == [True, True, False]
    # the next run of the same session remembers it
    events, _ = play([call("delete", path="/4"), "done"], registry, approve=approve, policy=policy)
    assert ran[-1] == "delete:/4" and len(approve.asked) == 2


def test_nobody_to_ask_declines_and_says_so() -> None:
    ran: list[str] = []
    events, _ = play([call("delete", path="/tmp/a"), "done"], dangerous_registry(ran), approve=None)
    assert ran == []
    (result,) = finished(events)
    assert result.error_kind == "declined"


def test_an_approver_answering_nonsense_declines() -> None:
    """Only yes, always and True run a dangerous tool: anything else is a no."""
    ran: list[str] = []

    def confused(asked: ApprovalAsked) -> Any:
        return "y"

    events, _ = play(
        [call("delete", path="/tmp/a"), "done"], dangerous_registry(ran), approve=confused
    )
    assert ran == [] and finished(events)[0].error_kind == "declined"


# --- rate limits ----------------------------------------------------------------------------------


def test_a_rate_limit_refuses_the_call_over_it_and_allows_it_after_the_window() -> None:
    ran: list[int] = []

    @tool(rate_limit=2, cacheable=False)
    def search(n: int) -> str:
        """Search."""
        ran.append(n)
        return f"found {n}"

    registry = ToolRegistry.from_functions(search)
    clock = FakeClock()
    policy = ToolPolicy(rate_limits=RateLimits(clock))
    three = call("search", n=1) + call("search", n=2) + call("search", n=3)
    events, _ = play([three, "done"], registry, policy=policy, clock=clock)
    results = finished(events)
    assert ran == [1, 2]
    assert results[2].error_kind == "rate_limited"
    assert "may run 2 times a minute" in results[2].content
    assert "next call is allowed in 60 s" in results[2].content

    clock.advance(45)  # still inside the window: refused, with the wait that is left
    events, _ = play([call("search", n=4), "done"], registry, policy=policy, clock=clock)
    assert "allowed in 15 s" in finished(events)[0].content and ran == [1, 2]

    clock.advance(15.5)  # past 60 s since the first two: it runs again
    events, _ = play([call("search", n=5), "done"], registry, policy=policy, clock=clock)
    assert finished(events)[0].content == "found 5" and ran == [1, 2, 5]


def test_a_declined_or_refused_call_does_not_use_up_the_rate_limit() -> None:
    ran: list[str] = []

    @tool(rate_limit=1, dangerous=True, cacheable=False)
    def post(text: str) -> str:
        """Post."""
        ran.append(text)
        return "posted"

    registry = ToolRegistry.from_functions(post)
    policy = ToolPolicy(rate_limits=RateLimits(FakeClock()))
    approve = Approvals("no", "yes")
    events, _ = play(
        [call("post", text="a"), call("post", text="b"), "done"],
        registry,
        policy=policy,
        approve=approve,
    )
    assert ran == ["b"]
    assert [r.error_kind for r in finished(events)] == ["declined", None]


# --- permission -----------------------------------------------------------------------------------


def permission_registry(ran: list[str]) -> ToolRegistry:
    @tool(permission="admin")
    def reboot() -> str:
        """Reboot the machine."""
        ran.append("reboot")
        return "rebooting"

    @tool(permission="write")
    def save(text: str) -> str:
        """Save a note."""
        ran.append("save")
        return "saved"

    @tool(permission="read")
    def look() -> str:
        """Read something."""
        ran.append("look")
        return "looked"

    @tool
    def tidy() -> str:
        """Says nothing of its permission: taken to write."""
        ran.append("tidy")
        return "tidied"

    return ToolRegistry.from_functions(reboot, save, look, tidy)


@pytest.mark.parametrize(
    ("allow", "runs", "refused"),
    [
        ("write", ["save", "look", "tidy"], {"reboot": "needs admin permission"}),
        ("admin", ["reboot", "save", "look", "tidy"], {}),
        (
            "read",
            ["look"],
            {"reboot": "needs admin", "save": "needs write", "tidy": "needs write permission"},
        ),
    ],
)
def test_a_tool_above_the_sessions_permission_is_refused_and_never_runs(
    allow: Any, runs: list[str], refused: dict[str, str]
) -> None:
    ran: list[str] = []
    reply = call("reboot") + call("save", text="x") + call("look") + call("tidy")
    events, _ = play([reply, "done"], permission_registry(ran), policy=ToolPolicy(allow=allow))
    assert sorted(ran) == sorted(runs)
    by_name = {r.name: r for r in finished(events)}
    for name, why in refused.items():
        assert by_name[name].error_kind == "permission"
        assert (
            why in by_name[name].content
            and f"this session allows only {allow}" in by_name[name].content
        )
    assert all(by_name[name].ok for name in runs)


def test_a_permission_refusal_comes_before_approval() -> None:
    """A call the session may not make is never put to the user."""
    ran: list[str] = []

    @tool(permission="admin", dangerous=True)
    def format_disk() -> str:
        """Format the disk."""
        ran.append("format")
        return "formatted"

    approve = Approvals("yes")
    events, _ = play(
        [call("format_disk"), "done"], ToolRegistry.from_functions(format_disk), approve=approve
    )
    assert ran == [] and approve.asked == []
    assert finished(events)[0].error_kind == "permission"


# --- a tool's concurrency -------------------------------------------------------------------------


def test_a_tool_with_concurrency_1_never_runs_two_calls_at_once() -> None:
    """Each call waits a moment for a second one to join it: with no limit they would overlap
    (and `most` would be 3); with concurrency=1 each waits alone."""
    lock = threading.Lock()
    active = {"now": 0, "most": 0}
    overlap = threading.Event()

    @tool(concurrency=1, cacheable=False)
    def one(n: int) -> int:
        """One at a time."""
        with lock:
            active["now"] += 1
            active["most"] = max(active["most"], active["now"])
            if active["now"] > 1:
                overlap.set()
        overlap.wait(0.15)
        with lock:
            active["now"] -= 1
        return n

    meet = threading.Barrier(2, timeout=5)

    @tool(cacheable=False)
    def other(n: int) -> int:
        """No limit of its own: two of these run together, beside `one`."""
        meet.wait()
        return n

    reply = "".join(call("one", n=i) for i in range(3)) + call("other", n=1) + call("other", n=2)
    events, _ = play(
        [reply, "done"],
        ToolRegistry.from_functions(one, other),
        policy=ToolPolicy(max_parallel=4),
    )
    assert active["most"] == 1
    assert [r.ok for r in finished(events)] == [True] * 5


# --- the last answer at the iteration limit ----------------------------------------------------


def echo_registry(ran: list[str]) -> ToolRegistry:
    @tool(cacheable=False)
    def echo(text: str) -> str:
        """Echo."""
        ran.append(text)
        return text

    return ToolRegistry.from_functions(echo)


def looping(n: int, *, native: bool = False) -> list[Reply]:
    """A model that calls a tool every time it is asked (native calls, or the text protocol)."""
    if native:
        return [{"tool_calls": [{"name": "echo", "arguments": {"text": str(i)}}]} for i in range(n)]
    return [call("echo", text=str(i)) for i in range(n)]


def offers_tools(request: dict[str, Any]) -> bool:
    """Whether a request lets the model call a tool, in any strategy's form."""
    if request.get("tools"):
        return True
    if "response_format" in request:
        return len(request["response_format"]["json_schema"]["schema"]["anyOf"]) > 1
    system = request["messages"][0]
    return system["role"] == "system" and "<tool_call>" in system["content"]


@pytest.mark.parametrize(
    ("strategy", "modes"),
    [
        ("regex", {}),
        ("schema", {}),
        ("schema", {"schema_mode": "json"}),
        ("stream", {}),
        ("stream", {"stream_mode": "native"}),
    ],
)
def test_at_the_limit_one_request_without_tools_gives_a_best_effort_answer(
    strategy: str, modes: dict[str, str]
) -> None:
    ran: list[str] = []
    native = (strategy == "schema" and not modes) or modes.get("stream_mode") == "native"
    replies = [*looping(2, native=native), "my best guess"]
    if modes.get("schema_mode") == "json":  # one JSON object a reply: a call, or an answer
        replies = [json.dumps({"name": "echo", "arguments": {"text": str(i)}}) for i in range(2)]
        replies.append(json.dumps({"answer": "my best guess"}))
    model = ScriptedModel(replies)
    events = list(
        run(
            "q",
            model=model,
            strategy=get_strategy(
                strategy,
                schema_mode=modes.get("schema_mode", "tools"),
                stream_mode=modes.get("stream_mode", "tags"),
            ),
            registry=echo_registry(ran),
            history=[],
            limits=Limits(max_iterations=2),
        )
    )
    assert [offers_tools(r) for r in model.requests] == [True, True, False]
    # The note says why, and the question comes last, on its own: the thing to answer.
    *_, told, asked = model.requests[-1]["messages"]
    assert "last round of tools" in told["content"]
    assert asked == {"role": "user", "content": "q"}
    # The results go as a summary of data: no call of its own for the model to continue.
    last = json.dumps(model.requests[-1]["messages"], ensure_ascii=False)
    assert "[context summary] 2 earlier tool rounds" in last
    assert "<tool_call>" not in last and '"tool_calls"' not in last
    assert '"role": "tool"' not in last
    (answer,) = [e for e in events if isinstance(e, FinalAnswer)]
    assert (answer.text, answer.best_effort) == ("my best guess", True)
    assert stop_reason(events) == "limit"
    assert ran == ["0", "1"]


def test_calls_in_the_last_reply_are_shown_and_not_run() -> None:
    ran: list[str] = []
    model = ScriptedModel(
        [
            *looping(2),
            "<tool_call>"
            + json.dumps({"name": "echo", "arguments": {"text": "again"}})
            + "</tool_call>and my guess",
        ]
    )
    events = list(
        run(
            "q",
            model=model,
            strategy=get_strategy("regex"),
            registry=echo_registry(ran),
            history=[],
            limits=Limits(max_iterations=2),
        )
    )
    assert ran == ["0", "1"]
    assert any("none were run" in e.message for e in events if isinstance(e, Notice))
    (answer,) = [e for e in events if isinstance(e, FinalAnswer)]
    assert answer.best_effort and "and my guess" in answer.text
    assert stop_reason(events) == "limit"


def test_without_the_last_answer_the_limit_makes_no_further_request() -> None:
    ran: list[str] = []
    model = ScriptedModel(looping(2, native=True))
    events = list(
        run(
            "q",
            model=model,
            strategy=get_strategy("schema"),
            registry=echo_registry(ran),
            history=[],
            limits=Limits(max_iterations=2, last_answer=False),
        )
    )
    assert len(model.requests) == 2 and all(offers_tools(r) for r in model.requests)
    assert not [e for e in events if isinstance(e, FinalAnswer)]
    assert stop_reason(events) == "limit"


def write_script(path: Path, replies: list[Reply]) -> Path:
    path.write_text("\n".join(json.dumps(r, ensure_ascii=False) for r in replies), encoding="utf-8")
    return path


CALCULATE = '<tool_call>{"name": "calculate", "arguments": {"expression": "1+%d"}}</tool_call>'


def test_the_cli_exits_3_with_the_best_effort_answer(tmp_path: Path) -> None:
    script = write_script(tmp_path / "s.jsonl", [CALCULATE % 1, CALCULATE % 2, "about 3"])
    args = ["run", "q", "--model", "scripted", "--script", str(script), "--max-iterations", "2"]
    done = toolcall(*args, "--json", cwd=tmp_path)
    assert done.returncode == 3, done.stderr
    lines = [json.loads(line) for line in done.stdout.splitlines()]
    (answer,) = [line for line in lines if line["kind"] == "final_answer"]
    assert (answer["text"], answer["best_effort"]) == ("about 3", True)
    assert lines[-1]["kind"] == "run_finished" and lines[-1]["stop_reason"] == "limit"

    plain = toolcall(*args, cwd=tmp_path)
    assert plain.returncode == 3 and "about 3" in plain.stdout


def test_the_cli_without_a_final_answer_makes_no_last_request(tmp_path: Path) -> None:
    # two replies: a third request would fail the run for want of one
    script = write_script(tmp_path / "s.jsonl", [CALCULATE % 1, CALCULATE % 2])
    done = toolcall(
        "run",
        "q",
        "--model",
        "scripted",
        "--script",
        str(script),
        "--max-iterations",
        "2",
        "--no-final-answer",
        "--json",
        cwd=tmp_path,
    )
    assert done.returncode == 3, done.stderr
    kinds = [json.loads(line)["kind"] for line in done.stdout.splitlines()]
    assert "final_answer" not in kinds and "model_failed" not in kinds
    assert kinds.count("iteration_started") == 2


# --- the timeline ---------------------------------------------------------------------------------


def test_tool_finished_and_the_timeline_carry_offsets_and_what_waited_for_what() -> None:
    """Each tool moves the run's clock by how long it "takes": the offsets are exact."""
    clock = FakeClock()

    def fetch(key: str) -> dict[str, Any]:
        """Takes 2 s."""
        clock.advance(2)
        return {"value": 7}

    def double(value: int) -> int:
        """Takes 1 s."""
        clock.advance(1)
        return value * 2

    def chain(ref: str, name: str, depends_on: list[str] | None = None, **arguments: Any) -> str:
        body: dict[str, Any] = {"id": ref, "name": name, "arguments": arguments}
        if depends_on:
            body["depends_on"] = depends_on
        return f"<tool_call>{json.dumps(body)}</tool_call>"

    reply = chain("f", "fetch", key="k") + chain("d", "double", ["f"], value="{{f.value}}")
    model = ScriptedModel([reply, "14"])
    events = list(
        run(
            "q",
            model=model,
            strategy=get_strategy("regex", dag=True),
            registry=ToolRegistry.from_functions(fetch, double),
            history=[],
            policy=ToolPolicy(dag=True),
            clock=clock,
        )
    )
    done = {e.call.ref: e for e in events if isinstance(e, ToolFinished)}
    assert (done["f"].started, done["f"].ended) == (0.0, 2.0)
    assert (done["d"].started, done["d"].ended) == (2.0, 3.0)
    assert done["d"].result.content == "14"
    assert done["d"].call.depends_on == ("f",)
    (timeline,) = [e for e in events if isinstance(e, ToolTimeline)]
    entries = {e.ref: e for e in timeline.entries}
    assert entries["f"].waits_for == () and entries["d"].waits_for == (entries["f"].call_id,)
    assert [(e.started, e.ended, e.outcome) for e in timeline.entries] == [
        (0.0, 2.0, "ok"),
        (2.0, 3.0, "ok"),
    ]


def test_json_output_carries_offsets_and_depends_on(tmp_path: Path) -> None:
    weather = {"id": "w", "name": "get_weather", "arguments": {"city": "北京", "day": "tomorrow"}}
    convert = {
        "id": "c",
        "name": "convert_units",
        "arguments": {"value": "{{w.high_c}}", "from_unit": "C", "to_unit": "F"},
        "depends_on": ["w"],
    }
    reply = "".join(
        f"<tool_call>{json.dumps(c, ensure_ascii=False)}</tool_call>" for c in (weather, convert)
    )
    script = write_script(tmp_path / "s.jsonl", [reply, "55.4 °F"])
    done = toolcall(
        "run", "q", "--model", "scripted", "--script", str(script), "--dag", "--json", cwd=tmp_path
    )
    assert done.returncode == 0, done.stderr
    lines = [json.loads(line) for line in done.stdout.splitlines()]
    finished = {line["call"]["ref"]: line for line in lines if line["kind"] == "tool_finished"}
    for line in finished.values():
        assert isinstance(line["started"], float) and isinstance(line["ended"], float)
        assert 0 <= line["started"] <= line["ended"]
    assert finished["w"]["ended"] <= finished["c"]["started"]
    assert finished["c"]["call"]["depends_on"] == ["w"]
    assert finished["c"]["call"]["arguments"]["value"] == 13  # the placeholder, resolved
    assert finished["c"]["result"]["ok"], finished["c"]["result"]
    (timeline,) = [line for line in lines if line["kind"] == "tool_timeline"]
    waits = {entry["ref"]: entry["waits_for"] for entry in timeline["entries"]}
    assert waits == {"w": [], "c": [finished["w"]["call"]["id"]]}


def test_a_tool_handed_back_its_own_result_is_told_to_answer_with_it() -> None:
    """Qwen2.5-0.5B: calculate("123*47+19") gave 5800, then calculate("5800"), again and
    again. Another tool taking that result is a chain, and runs."""
    ran: list[str] = []

    @tool(permission="read")
    def calculate(expression: str) -> str:
        """Evaluate."""
        ran.append(expression)
        return "5800" if expression == "123*47+19" else expression

    @tool(permission="read")
    def spell(number: str) -> str:
        """Spell a number."""
        ran.append(f"spell {number}")
        return "five thousand eight hundred"

    registry = ToolRegistry.from_functions(calculate, spell)
    replies: list[str | dict[str, Any]] = [
        call("calculate", expression="123*47+19"),
        call("calculate", expression="5800") + call("spell", number="5800"),
        "5800",
    ]
    events, _ = play(replies, registry)
    assert ran == ["123*47+19", "spell 5800"]
    echoed = next(r for r in finished(events) if r.name == "calculate" and not r.ok)
    assert echoed.error_kind == "repeated"
    assert "`5800` is a result you already have" in echoed.content


def test_a_result_written_back_into_the_arguments_is_a_repeat() -> None:
    """Qwen2.5-0.5B: convert_units(26, miles, km) gave {"result": 41.84, ...}; its next call
    was convert_units(value=26, from_unit="mi", to_unit="km", result=41.84, text=...), three
    times, each failing on the extra arguments until the limit. It is the model handing back
    what it has: refused as a repeat, which withdraws the tools, so it answers."""
    ran: list[float] = []

    @tool(permission="read")
    def convert_units(value: float, from_unit: str, to_unit: str) -> dict[str, Any]:
        """Convert."""
        ran.append(value)
        return {"value": value, "from_unit": "mi", "to_unit": "km", "result": 41.84}

    registry = ToolRegistry.from_functions(convert_units)
    first = {"value": 26, "from_unit": "miles", "to_unit": "kilometers"}
    back = {"value": 26, "from_unit": "mi", "to_unit": "km", "result": 41.8400001, "text": "x"}
    replies: list[str | dict[str, Any]] = [
        call("convert_units", **first),
        call("convert_units", **back),
        "26 miles is 41.84 km.",
    ]
    events, _ = play(replies, registry)
    assert ran == [26]
    written_back = [r for r in finished(events) if not r.ok]
    assert [r.error_kind for r in written_back] == ["repeated"]
    assert "`result=41.8400001` is from the result convert_units already gave you" in (
        written_back[0].content
    )
    assert [e.text for e in events if isinstance(e, FinalAnswer)] == ["26 miles is 41.84 km."]
    assert any(isinstance(e, AnswerWithoutTools) and e.repeated for e in events)


def test_an_extra_argument_that_no_result_holds_is_left_out_and_the_call_runs() -> None:
    @tool(permission="read")
    def convert_units(value: float, from_unit: str, to_unit: str) -> dict[str, Any]:
        """Convert."""
        return {"result": 41.84}

    registry = ToolRegistry.from_functions(convert_units)
    first = {"value": 26, "from_unit": "mi", "to_unit": "km"}
    replies: list[str | dict[str, Any]] = [
        call("convert_units", **first),
        # Another value: the same call with only an extra added is a repeat
        # (test_realmodel_replays.py).
        call("convert_units", **{**first, "value": 42}, result=99),
        "26 miles is 41.84 km.",
    ]
    events, _ = play(replies, registry)
    second = finished(events)[1]
    assert second.ok and "Ran without `result`: convert_units does not take it" in second.content
    assert not any(isinstance(e, AnswerWithoutTools) for e in events)


def test_a_tool_that_takes_any_argument_may_be_given_a_results_field() -> None:
    @tool(permission="read")
    def lookup(key: str, status: str = "") -> dict[str, Any]:
        """Look up."""
        return {"key": key, "status": "open"}

    registry = ToolRegistry.from_functions(lookup)
    made = registry.get("lookup")
    assert made is not None
    # An open schema, as an MCP server may give: `status` is not named, and still taken.
    open_schema = {"type": "object", "properties": {"key": {"type": "string"}}}
    registry.replace(
        dataclasses.replace(made, spec=dataclasses.replace(made.spec, parameters=open_schema))
    )
    replies: list[str | dict[str, Any]] = [
        call("lookup", key="a"),
        call("lookup", key="b", status="open"),
        "done",
    ]
    events, _ = play(replies, registry)
    assert [r.error_kind for r in finished(events)] == [None, None]
