"""The battery of kata loop: `agent_loop(chat, tools, question, max_iterations)` run against
the offline model (as it is, and with each fault that native tool calls can show), against
tools that raise or hang, and against real servers' recorded tool-call replies. Every run is
judged whole: the requests it sent, the result it sent back for each call, when it stopped and
what it returned."""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import json_repair

from toolcall_cli.kata._battery import Battery, Case, Solution, Source, Verdict, canonical, shown
from toolcall_cli.kata._conformance import streamed_calls
from toolcall_cli.kata._offline import (
    FAULT_CATEGORY,
    OfflineChat,
    ScriptedChat,
    bundled_tools,
    kinds_for,
    question_for,
)
from toolcall_cli.kata._toolbox import BUNDLED, TOOL_NAMES, Toolbox, ToolboxSpec, make_toolbox

TOOL_TIMEOUT = 0.3


@dataclass(frozen=True)
class Outcome:
    """What must come back for one call: its result, or an error naming `mentions`."""

    error: bool
    value: Any = None
    mentions: tuple[str, ...] = ()
    either: bool = False
    """Arguments that only a repair can read: an error is right, and so is the result."""

    def accepts(self, content: Any) -> bool:
        if not isinstance(content, str):
            return False
        if content.lstrip().lower().startswith("error"):
            return (self.error or self.either) and all(m in content for m in self.mentions)
        if self.error:
            return False
        if isinstance(self.value, str):
            return content == self.value
        try:
            return canonical(json.loads(content)) == canonical(self.value)
        except ValueError:
            return False

    def describe(self) -> str:
        if self.either:
            return f'"error: ..." or the repaired call\'s result {shown(self.value)}'
        if self.error:
            named = f", naming {', '.join(map(repr, self.mentions))}" if self.mentions else ""
            return f'"error: ..."{named}'
        return f"the result {shown(self.value)}"


def outcome(box: Toolbox, call: dict[str, Any]) -> Outcome:
    """What one call of the run should give, as the checker knows it."""
    function = call.get("function") or {}
    name = function.get("name")
    if name not in box.functions:
        return Outcome(error=True, mentions=tuple(box.functions))
    raw = function.get("arguments") or "{}"
    try:
        arguments, repaired = json.loads(raw), False
    except ValueError:
        arguments, repaired = json_repair.loads(raw), True
    if not isinstance(arguments, dict):
        return Outcome(error=True)
    if name in box.hanging:
        return Outcome(error=True)
    if name in box.raising:
        return Outcome(error=True, mentions=(box.raising[name],))
    try:
        value = box.functions[name](**arguments)
    except Exception:
        return Outcome(error=True)
    return Outcome(error=False, value=value, either=repaired)


@dataclass(frozen=True)
class Run:
    """One run of the user's loop: the question, the model, the tools, the limits."""

    category: str
    source: Source
    name: str
    question: str
    chat: Callable[[], OfflineChat]
    toolbox: ToolboxSpec = BUNDLED
    max_iterations: int = 6
    tool_timeout: float | None = None

    def case(self) -> Case:
        box = make_toolbox(self.toolbox)  # what each call should give, known here

        def check(solution: Solution) -> Verdict:
            chat = self.chat()
            options = {} if self.tool_timeout is None else {"tool_timeout": self.tool_timeout}
            returned = solution.agent_loop(
                chat, self.toolbox, self.question, self.max_iterations, options
            )
            return judge(chat, box, returned, self.max_iterations)

        return Case(self.category, self.source, self.name, check)


def judge(chat: OfflineChat, box: Toolbox, returned: Any, max_iterations: int) -> Verdict:
    """The first thing the run got wrong, or a pass."""
    return (
        refused(chat)
        or too_many(chat, max_iterations)
        or lost_history(chat)
        or wrong_result(chat, box)
        or wrong_return(chat, returned, max_iterations)
        or Verdict(True)
    )


def refused(chat: OfflineChat) -> Verdict | None:
    if not chat.refusals:
        return None
    n = len(chat.requests)
    return Verdict(False, "requests a server accepts", f"request {n} refused: {chat.refusals[0]}")


def too_many(chat: OfflineChat, max_iterations: int) -> Verdict | None:
    if len(chat.requests) <= max_iterations:
        return None
    return Verdict(
        False,
        f"at most {max_iterations} requests (max_iterations)",
        f"{len(chat.requests)} requests",
    )


def as_sent(message: dict[str, Any]) -> dict[str, Any]:
    """A message as the model reads it: an assistant message by its text and call ids."""
    if message.get("role") == "assistant":
        ids = [c.get("id") for c in message.get("tool_calls") or [] if isinstance(c, dict)]
        return {"role": "assistant", "content": message.get("content") or "", "calls": ids}
    return {k: message.get(k) for k in ("role", "content", "tool_call_id")}


def lost_history(chat: OfflineChat) -> Verdict | None:
    for n in range(1, len(chat.requests)):
        before = [as_sent(m) for m in [*chat.requests[n - 1], chat.replies[n - 1]]]
        now = [as_sent(m) for m in chat.requests[n][: len(before)]]
        if canonical(now) != canonical(before):
            return Verdict(
                False,
                f"request {n + 1} starts with request {n} and its reply: {shown(before)}",
                shown(now),
            )
    return None


def wrong_result(chat: OfflineChat, box: Toolbox) -> Verdict | None:
    """Each call's tool message against what the call should give."""
    for n, reply in enumerate(chat.replies[: len(chat.requests) - 1]):
        sent = chat.requests[n + 1][len(chat.requests[n]) + 1 :]
        results = {m.get("tool_call_id"): m.get("content") for m in sent if m.get("role") == "tool"}
        for call in reply.get("tool_calls") or []:
            expected = outcome(box, call)
            content = results.get(call.get("id"))
            if not expected.accepts(content):
                function = call.get("function") or {}
                what = f"{function.get('name')}({function.get('arguments')})"
                return Verdict(
                    False, f"for {what} in reply {n + 1}: {expected.describe()}", shown(content)
                )
    return None


def wrong_return(chat: OfflineChat, returned: Any, max_iterations: int) -> Verdict | None:
    last = chat.replies[-1] if chat.replies else None
    if last is not None and not last.get("tool_calls"):
        wanted: Any = last.get("content") or ""
        why = "the text of the reply without calls"
    elif len(chat.requests) == max_iterations:
        wanted, why = None, f"None, since all {max_iterations} replies allowed asked for tools"
    else:  # no return value is right: the loop stopped early
        why = "another request, since the last reply asked for tools" if last else "a request"
        return Verdict(False, why, f"returned {shown(returned)}")
    if canonical(returned) == canonical(wanted):
        return None
    return Verdict(False, f"{why}: {shown(wanted)}", shown(returned))


# --- the runs --------------------------------------------------------------------------------


def offline(*faults: str) -> Callable[[], OfflineChat]:
    specs = [t.spec for t in bundled_tools(*TOOL_NAMES)]
    return lambda: OfflineChat(specs, faults)


def built_in(category: str, name: str, question: str, *faults: str, **options: Any) -> Run:
    """A run written here, against the offline model with `faults` switched on."""
    return Run(category, "built-in", name, question, offline(*faults), **options)


PARIS = "What's the weather in Paris?"

BUILT_IN: tuple[Run, ...] = (
    built_in("single call", "one city's weather", PARIS),
    built_in("several calls", "two cities at once", "What's the weather in Paris and in Tokyo?"),
    built_in("several calls", "two cities, asked in Chinese", "北京和上海今天天气怎么样？"),
    built_in("several calls", "two different tools", "What is 17 * 23, and the weather in London?"),
    built_in("no call", "a question that needs no tool", "Hello! Who are you?"),
    built_in("loop", "max_iterations=1 stops after one reply", PARIS, max_iterations=1),
    built_in(
        "loop",
        "max_iterations=2 and a model that repeats its call",
        PARIS,
        "repeat_call",
        max_iterations=2,
    ),
    built_in(
        "exception",
        "a tool that raises",
        PARIS,
        toolbox=("failing", "the weather service is down for maintenance"),
    ),
    built_in(
        "timeout",
        f"a tool that hangs (tool_timeout={TOOL_TIMEOUT})",
        PARIS,
        toolbox=("hanging",),
        tool_timeout=TOOL_TIMEOUT,
    ),
)

LOOP_CATEGORY = {**FAULT_CATEGORY, "repeat_call": "loop"}
"""A repeated call is the loop's to stop: it is filed with the other limits."""


def fault_runs() -> tuple[list[Run], str]:
    kinds, others = kinds_for("native")
    runs = [
        Run(LOOP_CATEGORY.get(k, k), "offline faults", k, question_for(k), offline(k))
        for k in kinds
    ]
    coverage = f"offline fault kinds: {', '.join(kinds)}"
    if others:
        coverage += (
            f" (not {', '.join(others)}: text-protocol faults, which katas parse and stream meet)"
        )
    return runs, coverage


def recorded_runs(folder: Path | None) -> tuple[list[Run], str]:
    """Each recorded tool-call reply of a real server, then an answer: the loop must send one
    result per call id, as the server wrote the ids."""
    streams, note = streamed_calls(folder)
    return [recorded_run(record) for record in streams], note


def recorded_run(record: dict[str, Any]) -> Run:
    expected: Sequence[dict[str, Any]] = record["expected_calls"]
    calls = [
        {
            "id": str(c.get("id") or f"call_{n}"),
            "type": "function",
            "function": {"name": c["name"], "arguments": json.dumps(c.get("arguments") or {})},
        }
        for n, c in enumerate(expected)
    ]
    script: list[dict[str, Any]] = [
        {"role": "assistant", "content": record.get("expected_content"), "tool_calls": calls},
        {"role": "assistant", "content": "Done: the results are in."},
    ]
    names = sorted({c["name"] for c in expected})
    category = "several calls" if len(calls) > 1 else "single call"
    question = f"Please use {', '.join(names)}."
    return Run(
        category,
        "real outputs",
        str(record["id"]),
        question,
        lambda: ScriptedChat([], script=script),
        ("echo", *names),
    )


def battery(conformance: Path | None) -> Battery:
    faults, coverage = fault_runs()
    real, note = recorded_runs(conformance)
    return Battery(tuple(run.case() for run in (*BUILT_IN, *faults, *real)), note, coverage)
