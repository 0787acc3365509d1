"""Feedback as data: what was wrong with a call is a Problem; one module says it in words, and
every producer's text changes with it. The trace keeps the problems, and the doctor reads them."""

from __future__ import annotations

import json
from dataclasses import fields
from pathlib import Path
from typing import Any

import pytest
from in_process import toolcall

from toolcall_cli import feedback, tool
from toolcall_cli.events import ToolFinished, event_record
from toolcall_cli.feedback import PROBLEM_KINDS, TEMPLATES, Problem, Wording
from toolcall_cli.limits import Limits
from toolcall_cli.messages import ToolCall, ToolResult
from toolcall_cli.rounds import Round, ToolPolicy
from toolcall_cli.tools.executor import prepare
from toolcall_cli.tools.registry import ToolRegistry
from toolcall_cli.trace.records import event_from_record


@tool
def get_weather(city: str, day: str = "today") -> str:
    """Weather for a city."""
    return f"{city}: sunny"


REGISTRY = ToolRegistry.from_functions(get_weather)
PLACES = {f.name for f in fields(Problem)} | {"where"}


def test_every_kind_has_a_template_and_templates_use_only_what_a_problem_holds() -> None:
    assert set(PROBLEM_KINDS) <= set(TEMPLATES)
    for kind in PROBLEM_KINDS:
        assert feedback.template_fields(TEMPLATES[kind]) <= PLACES, kind


def refused(call: ToolCall) -> ToolResult:
    prepared = prepare(call, REGISTRY)
    assert isinstance(prepared, ToolResult)
    return prepared


def test_a_refused_call_keeps_its_problems_as_data() -> None:
    result = refused(ToolCall("c1", "get_weather", {"ciity": "Paris", "day": [1]}))
    kinds = [(p.kind, p.argument, p.closest) for p in result.problems]
    assert kinds == [
        ("missing_argument", "city", ""),
        ("misnamed_argument", "ciity", "city"),
        ("wrong_type", "day", ""),
    ]
    assert result.content == feedback.error_text(*result.problems)
    assert "did you mean `city`?" in result.content  # the words are today's
    unknown = refused(ToolCall("c2", "get_wether", {}))
    [problem] = unknown.problems
    assert (problem.kind, problem.tool, problem.closest) == (
        "unknown_tool",
        "get_wether",
        "get_weather",
    )
    assert problem.allowed == ("get_weather",)


REWORDED = {
    **TEMPLATES,
    "unknown_tool": "there is no `{tool}` here.",
    "closest_tool": "Perhaps `{closest}`.",
    "withdrawn": "no more tools in this run.",
}


def test_one_wording_says_what_every_producer_refuses(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(feedback, "WORDING", Wording(REWORDED))
    unknown = refused(ToolCall("c1", "get_wether", {})).content
    assert unknown == "Error: there is no `get_wether` here. Perhaps `get_weather`. " + (
        "Available tools: get_weather."
    )
    round_ = Round(
        registry=REGISTRY, cache={}, policy=ToolPolicy(), limits=Limits(), withdrawn=True
    )
    list(round_.add(ToolCall("c2", "get_weather", {"city": "Paris"})))
    [result] = round_.results
    assert result.content == "Error: no more tools in this run."
    assert result.problems == (Problem("withdrawn", tool="get_weather"),)


def test_the_trace_keeps_the_problems() -> None:
    result = refused(ToolCall("c1", "get_weather", {"ciity": "Paris"}))
    event = ToolFinished(call=ToolCall("c1", "get_weather", {"ciity": "Paris"}), result=result)
    record = json.loads(json.dumps(event_record(event)))
    read = event_from_record(record)
    assert isinstance(read, ToolFinished) and read.result.problems == result.problems


def test_the_doctor_reads_the_closest_tool_from_the_problem(tmp_path: Path) -> None:
    trace = tmp_path / "run.jsonl"
    done = toolcall(
        "run", "--faults", "unknown_tool", "--trace", str(trace), "-q", "What's 12*5+3?",
        cwd=tmp_path,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    records = [json.loads(line) for line in trace.read_text(encoding="utf-8").splitlines()]

    def with_closest(record: dict[str, Any], closest: str) -> dict[str, Any]:
        result = record.get("result") or {}
        if record["kind"] != "tool_finished" or result.get("error_kind") != "unknown_tool":
            return record
        [problem] = result["problems"]
        result = {**result, "problems": [{**problem, "closest": closest}], "content": "Error: no"}
        return {**record, "result": result}

    # The sentence says nothing of the tool meant; the problem names another on purpose.
    changed = [with_closest(record, "get_time") for record in records]
    assert changed != records
    trace.write_text("".join(json.dumps(r) + "\n" for r in changed), encoding="utf-8")
    report = toolcall("doctor", str(trace), cwd=tmp_path)
    assert "(meant `get_time`?)" in report.stdout, report.stdout


# --- the notes asking for the answer --------------------------------------------------------------

Q = "北京和上海明天天气分别是多少？"
IN_WORDS = f"The question was: {Q}\nAnswer it in words,"


@pytest.mark.parametrize(
    ("situation", "values", "note"),
    [
        (
            "last_round",
            {},
            "[toolcall] That was the last round of tools this run allows. Do not call any tool "
            f"now. {IN_WORDS} with what you have; if something is missing, say what.",
        ),
        (
            "no_progress",
            {"n": 3},
            "[toolcall] The last 3 rounds of tool calls made no progress (they failed, or "
            "repeated earlier calls). Do not call any tool now. "
            f"{IN_WORDS} with what you have; if something is missing, say what.",
        ),
        (
            "answer_after_repeats",
            {"calls": "get_weather"},
            "[toolcall] You called get_weather again, and got the result you already had. Do not "
            f"call any tool now. {IN_WORDS} with the results above.",
        ),
        (
            "answer_after_failed_repeats",
            {"calls": "get_weather"},
            "[toolcall] You called get_weather again exactly as before, and it failed again the "
            f"same way. Do not call any tool now. {IN_WORDS} with what you have; if something "
            "is missing, say what.",
        ),
        (
            "not_an_answer",
            {"why": "it repeats the question"},
            "[toolcall] That was not an answer: it repeats the question. Do not call any tool "
            f"now. {IN_WORDS} with what you have; if something is missing, say what.",
        ),
    ],
)
def test_each_note_asking_for_the_answer_says_why_then_what_every_one_says(
    situation: str, values: dict[str, Any], note: str
) -> None:
    """Without tools: why, in the situation's own words; no tool now; the question again, last
    but for how to answer it."""
    assert feedback.answer_note(situation, Q, **values) == note


def test_while_tools_are_offered_a_non_answer_is_told_it_may_call_one() -> None:
    note = feedback.answer_note("not_an_answer", Q, tools=True, why="it is a tool's name")
    assert note == (
        f"[toolcall] That was not an answer: it is a tool's name. {IN_WORDS} or call a tool."
    )


def test_a_rewording_of_the_shared_words_changes_every_note_asking_for_the_answer(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The words every such note shares are said once: reworded there, each note says them so."""
    reworded = Wording({**TEMPLATES, "no_tool_now": "Tools are over."})
    monkeypatch.setattr(feedback, "WORDING", reworded)
    notes = [
        feedback.answer_note("last_round", Q),
        feedback.answer_note("no_progress", Q, n=2),
        feedback.answer_note("answer_after_repeats", Q, calls="calculate"),
        feedback.answer_note("answer_after_failed_repeats", Q, calls="calculate"),
        feedback.answer_note("not_an_answer", Q, why="it is empty"),
    ]
    assert all("Tools are over. The question was:" in note for note in notes), notes
    assert not any("Do not call" in note for note in notes)
