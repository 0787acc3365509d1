"""Approval of dangerous tools: yes, no, always for the rest of the session, --yes, and a run
that cannot ask (no terminal), which declines at once and says so."""

from __future__ import annotations

import json
import time
from pathlib import Path

import pytest
from answering import answering
from in_process import toolcall

from toolcall_cli.approval import Approval, decision, question, terminal_answers
from toolcall_cli.events import (
    ApprovalAnswered,
    ApprovalAsked,
    Event,
    LimitReached,
    ModelReplied,
    Notice,
    RunFinished,
    ToolFinished,
    ToolTimeline,
)
from toolcall_cli.loop import Limits, ToolPolicy, run
from toolcall_cli.messages import Message, ToolCall
from toolcall_cli.models.scripted import ScriptedModel
from toolcall_cli.strategies import get_strategy
from toolcall_cli.tools.loader import load_tools
from toolcall_cli.tools.registry import ToolRegistry

RM_PLUGIN = '''
from toolcall_cli import tool

REMOVED: list[str] = []

@tool(dangerous=True)
def rm(path: str) -> str:
    """Remove a file (pretend)."""
    REMOVED.append(path)
    return f"removed {path}"
'''


def rm_call(path: str) -> str:
    return f"<tool_call>{json.dumps({'name': 'rm', 'arguments': {'path': path}})}</tool_call>"


@pytest.fixture
def registry(tmp_path: Path) -> ToolRegistry:
    folder = tmp_path / "plugin"
    folder.mkdir()
    (folder / "rm.py").write_text(RM_PLUGIN, encoding="utf-8")
    loaded = load_tools([folder])
    assert not loaded.problems
    return loaded.registry


class Answers:
    """A user at the terminal who types these answers, in order."""

    def __init__(self, *answers: str) -> None:
        self.answers = list(answers)
        self.asked: list[str] = []

    def __call__(self, text: str) -> str:
        self.asked.append(text)
        return self.answers.pop(0)


def turn(
    registry: ToolRegistry, replies: list[str], approve: Approval | None, policy: ToolPolicy
) -> list[Event]:
    history: list[Message] = []
    events = run(
        "clean up",
        model=ScriptedModel(replies),
        strategy=get_strategy("regex"),
        registry=registry,
        history=history,
        policy=policy,
    )
    return list(answering(events, approve.decide if approve is not None else None))


def results(events: list[Event]) -> list[str]:
    return [e.result.content for e in events if isinstance(e, ToolFinished)]


@pytest.mark.parametrize(
    ("typed", "expected"),
    [
        ("y", "yes"),
        ("YES", "yes"),
        ("是", "yes"),
        ("n", "no"),
        ("", "no"),
        ("否", "no"),
        ("a", "always"),
        (" always ", "always"),
        ("总是", "always"),
        ("maybe", None),
    ],
)
def test_the_answers_a_user_may_type(typed: str, expected: str | None) -> None:
    assert decision(typed) == expected


def test_yes_runs_the_tool_and_no_declines_it(registry: ToolRegistry) -> None:
    user = Answers("y", "n")
    events = turn(
        registry, [rm_call("a.txt"), rm_call("b.txt"), "done"], Approval(user), ToolPolicy()
    )
    assert len(user.asked) == 2 and "rm" in user.asked[0] and "a.txt" in user.asked[0]
    first, second = results(events)
    assert first == "removed a.txt"
    assert second.startswith("Error:") and "declined" in second


def test_always_asks_once_for_the_rest_of_the_session(registry: ToolRegistry) -> None:
    user = Answers("a")
    policy = ToolPolicy()  # the session's: it outlives one turn
    approve = Approval(user)
    turn(registry, [rm_call("a.txt"), "done"], approve, policy)
    later = turn(registry, [rm_call("b.txt"), "done"], approve, policy)
    assert len(user.asked) == 1  # the second turn's call was not asked about
    assert results(later) == ["removed b.txt"]
    assert policy.always == {"rm"}


def test_an_answer_that_is_no_choice_is_asked_again_then_taken_as_no(
    registry: ToolRegistry,
) -> None:
    user = Answers("maybe", "perhaps", "later")
    events = turn(registry, [rm_call("a.txt"), "done"], Approval(user), ToolPolicy())
    assert len(user.asked) == 3 and "y (yes)" in user.asked[1]
    assert "declined" in results(events)[0]


def test_without_anyone_to_ask_the_call_is_declined_and_the_run_says_why(
    registry: ToolRegistry,
) -> None:
    events = turn(registry, [rm_call("a.txt"), "done"], None, ToolPolicy())
    (result,) = results(events)
    assert "not interactive" in result and "--yes" in result  # the model reads why
    notices = [e.message for e in events if isinstance(e, Notice)]
    assert any("rm not run" in n and "--yes" in n for n in notices)  # and so does the user
    assert next(e for e in events if isinstance(e, RunFinished)).stop_reason == "answered"


def test_yes_runs_a_dangerous_tool_unasked_and_without_a_terminal_nobody_answers(
    registry: ToolRegistry,
) -> None:
    events = turn(registry, [rm_call("a.txt"), "done"], None, ToolPolicy(yes=True))
    assert results(events) == ["removed a.txt"]
    assert not any(isinstance(e, ApprovalAsked) for e in events)  # --yes: never asked
    assert terminal_answers() is None  # pytest's stdin is not a terminal


def test_the_question_shows_a_huge_or_hostile_argument_safely() -> None:
    call = ToolCall(id="c1", name="rm", arguments={"path": "\x1b[2J" + "x" * 5000})
    text = question(call)
    assert "\x1b" not in text and "\\u001b" in text
    assert len(text) < 600 and "chars)" in text


def test_a_run_without_a_terminal_declines_at_once_and_says_so(tmp_path: Path) -> None:
    tools = tmp_path / "tools.d"
    tools.mkdir()
    (tools / "rm.py").write_text(RM_PLUGIN, encoding="utf-8")
    script = tmp_path / "script.jsonl"
    script.write_text(json.dumps(rm_call("a.txt")) + "\n" + json.dumps("ok") + "\n", "utf-8")
    done = toolcall("run", "go", "--model", "scripted", "--script", str(script), cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    shown = done.stdout + done.stderr
    assert "rm not run" in shown and "--yes" in shown
    assert "removed a.txt" not in shown
    approved = toolcall(
        "run", "go", "--yes", "--model", "scripted", "--script", str(script), cwd=tmp_path
    )
    assert approved.returncode == 0 and "removed a.txt" in approved.stdout


def test_the_tool_listing_shows_each_tools_policy(tmp_path: Path) -> None:
    tools = tmp_path / "tools.d"
    tools.mkdir()
    (tools / "admin.py").write_text(
        "from toolcall_cli import tool\n\n"
        '@tool(dangerous=True, permission="admin", rate_limit=6, concurrency=1, isolate=True,'
        " timeout=2)\n"
        "def drop_table(name: str) -> str:\n"
        '    """Drop a table."""\n'
        "    return name\n",
        encoding="utf-8",
    )
    listed = toolcall("tools", cwd=tmp_path)
    assert listed.returncode == 0, listed.stderr
    line = next(x for x in listed.stdout.splitlines() if x.startswith("drop_table"))
    for words in ("admin", "timeout 2s", "asks first", "6/min", "1 at a time", "own process"):
        assert words in line
    weather = next(x for x in listed.stdout.splitlines() if x.startswith("get_weather"))
    assert "[read]" in weather


NOTE_PLUGIN = '''
from toolcall_cli import tool

@tool
def note(text: str) -> str:
    """Write a note (pretend)."""
    return f"noted {text}"
'''


def test_time_at_the_approval_prompt_counts_against_no_tool_and_not_the_run(
    tmp_path: Path,
) -> None:
    """One reply, two calls: `note` starts at once, `rm` asks first. The user thinks 2 s at
    the prompt, with a 1 s tool timeout and a 1 s limit on the whole run: `note` ended long
    before and is ok, `rm` runs once allowed, and the run is not out of time."""
    folder = tmp_path / "tools"
    folder.mkdir()
    (folder / "note.py").write_text(NOTE_PLUGIN, encoding="utf-8")
    (folder / "rm.py").write_text(RM_PLUGIN, encoding="utf-8")
    registry = load_tools([folder]).registry
    calls = '<tool_call>{"name": "note", "arguments": {"text": "x"}}</tool_call>' + rm_call("a")

    def slow_yes(text: str) -> str:
        time.sleep(2.0)  # a person reading the question; the run waits for the answer
        return "y"

    events = run(
        "note it, then clean up",
        model=ScriptedModel([calls, "done"]),
        strategy=get_strategy("regex"),
        registry=registry,
        history=[],
        policy=ToolPolicy(),
        limits=Limits(tool_timeout=1.0, run_timeout=1.0),
    )
    seen = list(answering(events, Approval(slow_yes).decide))
    assert results(seen) == ["noted x", "removed a"]
    assert not any(isinstance(e, LimitReached) for e in seen)
    finished = next(e for e in seen if isinstance(e, RunFinished))
    assert finished.stop_reason == "answered" and finished.elapsed < 1.0


class StillClock:
    """A clock that moves only when the user is asked: whatever it measures besides is zero."""

    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


@pytest.mark.parametrize("strategy", ["regex", "stream"])
def test_the_user_s_time_at_an_approval_is_no_reply_s_latency_and_no_call_s_time(
    registry: ToolRegistry, strategy: str
) -> None:
    """The user thinks 30 (clock) seconds before saying yes. A streamed reply is still being
    read when its call asks: that wait was in its latency. It is the person's, kept apart:
    the timeline says how long the call waited for approval, and nothing else counts it."""
    clock = StillClock()

    def thinking_yes(asked: ApprovalAsked) -> str:
        clock.now += 30.0
        return "yes"

    events = run(
        "clean up",
        model=ScriptedModel([rm_call("a"), "done"]),
        strategy=get_strategy(strategy),
        registry=registry,
        history=[],
        policy=ToolPolicy(),
        clock=clock,
    )
    seen = list(answering(events, thinking_yes))
    assert results(seen) == ["removed a"]
    assert [e.latency for e in seen if isinstance(e, ModelReplied)] == [0.0, 0.0]
    finished = next(e for e in seen if isinstance(e, ToolFinished))
    assert finished.started == finished.ended
    (entry,) = next(e for e in seen if isinstance(e, ToolTimeline)).entries
    assert entry.approval_wait == 30.0
    assert next(e for e in seen if isinstance(e, RunFinished)).elapsed == 0.0


def test_the_timeline_draws_the_wait_for_approval_apart_from_the_run() -> None:
    from toolcall_cli.events import TimelineEntry
    from toolcall_cli.render.base import timeline_lines

    def entry(call_id: str, started: float, ended: float, wait: float) -> TimelineEntry:
        return TimelineEntry(
            call_id=call_id, name="rm", ref=None, waits_for=(), started=started, ended=ended,
            ok=True, outcome="ok", approval_wait=wait,
        )  # fmt: skip

    asked, alone = timeline_lines([entry("#1.0", 3.0, 4.0, 2.0), entry("#1.1", 0.0, 1.0, 0.0)])
    assert asked.endswith("3.00-4.00s ok (after 2.00s waiting for approval)")
    assert "░" * 8 + "█" * 8 in asked and "·" * 8 in asked  # of 32 cells, 4 s: 8 a second
    assert "░" not in alone and alone.endswith("0.00-1.00s ok")


@pytest.mark.parametrize(
    ("typed", "answer"), [("y", "yes"), ("n", "no"), ("a", "always"), (None, "declined")]
)
def test_the_answer_to_an_approval_is_an_event_after_the_question(
    registry: ToolRegistry, typed: str | None, answer: str
) -> None:
    """A program reading --json sees the question pending (approval_asked) until it is
    answered (approval_answered, saying how); nobody to ask is a decline at once."""
    approve = Approval(Answers(typed)) if typed is not None else None
    seen = turn(registry, [rm_call("a"), "done"], approve, ToolPolicy())
    kinds = [e.kind for e in seen]
    asked = kinds.index("approval_asked")
    assert kinds[asked + 1] == "approval_answered"
    (said,) = [e for e in seen if isinstance(e, ApprovalAnswered)]
    assert (said.call_id, said.name, said.answer) == ("#1.0", "rm", answer)
    assert kinds.index("tool_finished") > asked + 1


@pytest.mark.parametrize(("typed", "runs"), [("y", True), ("a", True), ("n", False), (None, False)])
def test_a_dangerous_call_is_started_only_once_approved(
    registry: ToolRegistry, typed: str | None, runs: bool
) -> None:
    """tool_started means the call was handed to its tool: after the question is answered
    yes, and never for a call declined (it gets its tool_finished alone)."""
    approve = Approval(Answers(typed)) if typed is not None else None
    kinds = [e.kind for e in turn(registry, [rm_call("a"), "done"], approve, ToolPolicy())]
    if runs:
        assert kinds.index("approval_answered") < kinds.index("tool_started")
        assert kinds.index("tool_started") < kinds.index("tool_finished")
    else:
        assert "tool_started" not in kinds and "tool_finished" in kinds


def test_json_output_says_when_an_approval_question_is_pending_and_how_it_ended(
    tmp_path: Path,
) -> None:
    folder = tmp_path / "tools"
    folder.mkdir()
    (folder / "rm.py").write_text(RM_PLUGIN, encoding="utf-8")
    script = tmp_path / "script.json"
    script.write_text(json.dumps([rm_call("a"), "done"]), encoding="utf-8")
    done = toolcall(
        "run", "clean up", "--json", "--no-trace", "--tools", str(folder),
        "--model", "scripted", "--script", str(script), cwd=tmp_path,
    )  # fmt: skip
    records = [json.loads(line) for line in done.stdout.splitlines()]
    kinds = [record["kind"] for record in records]
    answered = records[kinds.index("approval_asked") + 1]
    assert answered["kind"] == "approval_answered" and answered["answer"] == "declined"
