"""Issue 24's failure kinds, each replayed by the scripted model as Qwen2.5-0.5B wrote it on
llama-server with the bundled tools, and what the engine does about it now.

Echoes: a tool result, toolcall's summary of earlier rounds, toolcall's note or its error
handed back as the answer are fed back as no answer. Failed repeats end sooner. Figures from
nowhere, in a call's arguments or in an answer, are refused once or nudged once under
--grounding check. No run whose replies are no answer ends with exit code 0.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from fake_openai import Answer, FakeOpenAI
from in_process import toolcall
from test_loop import of
from test_non_answers import native_call

from toolcall_cli.events import (
    AnswerWithoutTools,
    Event,
    FinalAnswer,
    GroundingChecked,
    ModelReplied,
    Notice,
    RunFinished,
    ToolFinished,
)
from toolcall_cli.loop import Limits, run
from toolcall_cli.messages import Message
from toolcall_cli.models.scripted import Reply, ScriptedModel
from toolcall_cli.request_tools import Retrieval
from toolcall_cli.session import Session
from toolcall_cli.strategies import get_strategy
from toolcall_cli.strategies.schema import native_wire
from toolcall_cli.tools._outcome import result_text
from toolcall_cli.tools.loader import bundled_tools_dir, load_tools

BUNDLED = load_tools([bundled_tools_dir()]).registry


def bundled(name: str, **arguments: Any) -> str:
    """What a bundled tool gives for these arguments, as the model reads it."""
    tool = BUNDLED.get(name)
    assert tool is not None
    return result_text(tool.func(**arguments))


def native(name: str, call_id: str = "call_1", **arguments: Any) -> dict[str, Any]:
    """An assistant message with one native call, the arguments given as keywords."""
    return native_call(call_id, name, arguments)


def play(
    question: str, replies: list[Any], strategy: str = "schema", **limits: Any
) -> tuple[list[Event], list[Message]]:
    history: list[Message] = []
    events = list(
        run(
            question,
            model=ScriptedModel(replies),
            strategy=get_strategy(strategy),
            registry=BUNDLED,
            history=history,
            limits=Limits(**limits),
        )
    )
    return events, history


def told_not_an_answer(events: list[Event]) -> list[str]:
    return [n.message for n in of(events, Notice) if "was not an answer" in n.message]


# --- no echo for an answer ------------------------------------------------------------------


def test_a_weather_result_echoed_as_the_answer_is_fed_back() -> None:
    """Under schema, 5 runs ended 0 with a result's raw JSON as the answer."""
    raw = bundled("get_weather", city="Tokyo")
    replies = [native("get_weather", city="Tokyo"), raw, "Tokyo: 11 °C today."]
    events, _ = play("What is the weather in Tokyo today?", replies)
    (told,) = told_not_an_answer(events)
    assert "hands back a tool result" in told
    assert [a.text for a in of(events, FinalAnswer)] == ["Tokyo: 11 °C today."]


def test_a_result_echoed_with_the_summarys_count_is_fed_back() -> None:
    """One run's answer was a convert_units result with the summary's "(the same call 2
    times)" after it."""
    raw = bundled("convert_units", value=26, from_unit="mi", to_unit="km")
    echoed = f"{raw} (the same call 2 times)"
    replies = [native("convert_units", value=26, from_unit="mi", to_unit="km"), echoed, "41.84 km"]
    events, _ = play("How many km is 26 miles?", replies)
    assert len(told_not_an_answer(events)) == 1
    assert [a.text for a in of(events, FinalAnswer)] == ["41.84 km"]


def test_a_result_held_in_an_answer_without_its_note_is_fed_back() -> None:
    fields = json.loads(bundled("get_weather", city="London"))
    fields.pop("note")
    held = f"Here it is: {json.dumps(fields, ensure_ascii=False)}"
    replies = [native("get_weather", city="London"), held, "London is 6 °C."]
    events, _ = play("How warm is London?", replies)
    assert len(told_not_an_answer(events)) == 1


def test_a_figure_taken_from_a_result_is_an_answer() -> None:
    replies = [native("calculate", expression="123*47+19"), "5800"]
    events, _ = play("What is 123*47+19?", replies)
    assert told_not_an_answer(events) == []
    assert [a.text for a in of(events, FinalAnswer)] == ["5800"]


def test_an_engine_refusal_echoed_as_the_answer_is_fed_back() -> None:
    """ "Answer: 126 is a result you already have from this run; answer the question with it…"
    came back after calculate("126") was refused as a result handed back."""
    replies = [
        native("calculate", expression="(2^10-16)/8"),
        native("calculate", "call_2", expression="126"),
        "Answer: 126 is a result you already have from this run; answer the question with it",
        "126",
    ]
    events, _ = play("What is (2^10 - 16) / 8?", replies)
    (told,) = told_not_an_answer(events)
    assert "note" in told
    assert [a.text for a in of(events, FinalAnswer)] == ["126"]


def test_an_unknown_tool_error_held_in_the_answer_is_fed_back() -> None:
    """ "…, Error: unknown tool `sqrt(2)*100 rounded to 2 decimals`…" ended a run with 0."""
    replies = [
        native("sqrt(2)*100 rounded to 2 decimals"),
        "The answer is, Error: unknown tool `sqrt(2)*100 rounded to 2 decimals`. Available",
        "141.42",
    ]
    events, _ = play("What is sqrt(2)*100 rounded to 2 decimals?", replies)
    assert len(told_not_an_answer(events)) == 1
    assert [a.text for a in of(events, FinalAnswer)] == ["141.42"]


def test_talk_of_toolcalls_note_is_fed_back() -> None:
    """ "Based on the conversation, it appears that the toolcall has already returned the
    result you already had." ended a run with 0 after a repeat withdrew the tools."""
    replies = [
        native("calculate", expression="2**10"),
        native("calculate", "call_2", expression="2**10"),
        "Based on the conversation, it appears that the toolcall has already returned the "
        "result you already had.",
        "1024",
    ]
    events, _ = play("What is 2 to the 10th?", replies)
    (told,) = told_not_an_answer(events)
    assert "toolcall's note" in told
    assert [a.text for a in of(events, FinalAnswer)] == ["1024"]
    assert of(events, RunFinished)[0].stop_reason == "answered"
    assert of(events, ToolFinished)[1].result.cached


def test_a_result_copied_cut_short_from_the_summary_is_fed_back() -> None:
    """The summary of older rounds keeps a result's first 120 characters: copied from there,
    with its count, the JSON does not even parse."""
    raw = bundled("get_weather", city="Tokyo")
    echoed = f"{raw[:120]}… (the same call 2 times)"
    replies = [native("get_weather", city="Tokyo"), echoed, "Tokyo: 11 °C today."]
    events, _ = play("What is the weather in Tokyo today?", replies)
    assert len(told_not_an_answer(events)) == 1


def test_the_summarys_count_after_an_answer_is_fed_back() -> None:
    replies = [
        native("calculate", expression="12*5+3"),
        "12*5+3 = 63 (the same call 2 times)",
        "12*5+3 = 63",
    ]
    events, _ = play("What's 12*5+3?", replies)
    assert len(told_not_an_answer(events)) == 1


def test_once_tools_are_withdrawn_the_summary_says_no_count_to_copy() -> None:
    replies: list[str | dict[str, Any]] = [
        native("calculate", expression="12*5+3"),
        native("calculate", "call_2", expression="12*5+3"),
        "63",
    ]
    model = ScriptedModel(replies)
    events = list(
        run(
            "What's 12*5+3?",
            model=model,
            strategy=get_strategy("schema"),
            registry=BUNDLED,
            history=[],
        )
    )
    assert of(events, AnswerWithoutTools)
    # The last request: tools withdrawn, every round in the summary, each call once.
    summary = json.dumps(model.requests[-1]["messages"], ensure_ascii=False)
    assert "-> 63" in summary and "the same call" not in summary
    assert [a.text for a in of(events, FinalAnswer)] == ["63"]


def test_a_line_of_the_summary_handed_back_is_not_an_answer() -> None:
    from toolcall_cli.answer_check import Conversation, judge

    reply = '- calculate({"expression": "12*5+3"}) -> 63'
    verdict = judge(reply, Conversation("What's 12*5+3?"))
    assert verdict is not None and "summary" in verdict.why


# --- failed repeats end sooner ----------------------------------------------------------------


def test_a_failing_call_repeated_once_withdraws_the_tools() -> None:
    """ "could not parse 'sqrt(2)*100 rounded to 2 decimals'" came back three times, then the
    limit. Now the second identical failure withdraws the tools, as a repeat that succeeds
    does."""
    words = "sqrt(2)*100 rounded to 2 decimals"
    replies = [
        native("calculate", expression=words),
        native("calculate", "call_2", expression=words),
        "141.42",
    ]
    events, _ = play(f"What is {words}?", replies)
    results = [f.result for f in of(events, ToolFinished)]
    assert [r.ok for r in results] == [False, False]
    assert "round(sqrt(2)*100, 2)" in results[0].content  # the form that works
    (withdrawn,) = of(events, AnswerWithoutTools)
    assert withdrawn.repeated and "failed again the same way" in withdrawn.message
    assert [a.text for a in of(events, FinalAnswer)] == ["141.42"]
    assert of(events, RunFinished)[0].iterations == 3


def test_a_tool_that_runs_each_time_called_the_same_again_withdraws_the_tools() -> None:
    """get_time is run again each time (the time moves), so no result is reused; Qwen2.5-0.5B
    still asked it the same thing five times in a row, then the limit. The same call again is
    no progress, whichever tool it is."""
    call = {"timezone": "Europe/London"}
    replies = [
        native("get_time", **call),
        native("get_time", "call_2", **call),
        "Saturday",
    ]
    events, _ = play("What day of the week is it in London today?", replies)
    results = [f.result for f in of(events, ToolFinished)]
    assert [r.ok for r in results] == [True, True] and not any(r.cached for r in results)
    (withdrawn,) = of(events, AnswerWithoutTools)
    assert withdrawn.repeated and "`get_time`" in withdrawn.message
    assert of(events, RunFinished)[0].iterations == 3


def test_every_note_that_asks_for_the_answer_says_the_question_again() -> None:
    """Qwen2.5-0.5B, told after a repeat to "answer the question with the results above",
    handed back the result's JSON, then toolcall's note, then the note of the last round. With
    the question said again, and then what to do, it answered in words ("299 days"); with the
    question as the note's last words, it often copied the question back."""
    question = "How far is it from Paris to Berlin in miles, for 1054 km?"
    call: dict[str, Any] = {"value": 1054, "from_unit": "km", "to_unit": "mi"}
    result = bundled("convert_units", **call)
    replies: list[Reply] = [
        native("convert_units", **call),
        native("convert_units", "call_2", **call),
        result,  # the result handed back: no answer
        result,
        result,  # the last request, without tools
    ]
    model = ScriptedModel(replies)
    list(
        run(question, model=model, strategy=get_strategy("schema"), registry=BUNDLED,
            history=[], limits=Limits(max_iterations=4))
    )  # fmt: skip
    last_request = model.requests[-1]["messages"]
    asked = [m["content"] for m in last_request[2:] if m["role"] == "user"]
    notes = [text for text in asked if text != question]
    assert len(notes) == 4  # the withdrawal, two "not an answer", the last round
    # The question, then what to do with it, as the note's last line.
    assert all(f"The question was: {question}\nAnswer it in words" in n for n in notes), notes
    # ...and each note followed by the question on its own, the last thing the model reads.
    assert asked == [text for n in notes for text in (n, question)]


MILES = "Convert 26 miles to kilometers."


def twice_converted(*then: str) -> list[Any]:
    """The model converts MILES' 26 miles, calls the same again (its tools go), then says
    `then`."""
    call: dict[str, Any] = {"value": 26, "from_unit": "mi", "to_unit": "km"}
    return [native("convert_units", **call), native("convert_units", "call_2", **call), *then]


def test_the_question_comes_last_in_every_request_without_tools() -> None:
    """Qwen2.5-0.5B said a note back when the note was the last message of the request (on the
    tuning half's requests after a withdrawal): each request without tools ends with the
    user's question, after the note that says why."""
    question = MILES
    replies = twice_converted(MILES, "26 miles is 41.84 kilometres.")  # the question said back
    model = ScriptedModel(replies)
    history: list[Message] = []
    events = list(
        run(question, model=model, strategy=get_strategy("schema"), registry=BUNDLED,
            history=history, limits=Limits())
    )  # fmt: skip
    assert [a.text for a in of(events, FinalAnswer)] == ["26 miles is 41.84 kilometres."]
    withdrawn = of(events, AnswerWithoutTools)
    assert [w.asked_again for w in withdrawn] == [question]
    # Every request after the withdrawal: the note, then the question, last.
    third, fourth = (body["messages"] for body in model.requests[2:])
    assert [m["content"] for m in third[-2:]] == [withdrawn[0].message, question]
    assert fourth[-1]["content"] == question  # after the "not an answer" note too
    assert fourth[-2]["content"].startswith("[toolcall] That was not an answer")
    # The copies were the requests' business: the history keeps the question once.
    assert [m.content for m in history if m.role == "user"].count(question) == 1
    assert history[-1].content == "26 miles is 41.84 kilometres."


@pytest.mark.parametrize(
    ("said", "taken"),
    [
        ("The square root of 2025, plus 17 is 62.", True),  # the question's words, and 62
        ("What is the square root of 2025, plus 17? 62", True),
        ("The question was: What is the square root of 2025, plus 17?", False),  # the note's
        ("What is the square root of 2025, plus 17?", False),  # the question, nothing more
    ],
)
def test_an_answer_that_says_the_question_back_is_no_echo_of_the_note(
    said: str, taken: bool
) -> None:
    """The note after a repeat says the question again. Qwen2.5-0.5B then answered "The
    square root of 2025, plus 17 is 62.", which holds six of the note's words in a row: it was
    refused as an echo of the note, three times, and the run ended at the limit (held-out
    half, regex and stream, at 46b7754)."""
    question = "What is the square root of 2025, plus 17?"
    call = {"expression": "sqrt(2025) + 17"}
    replies = [native("calculate", **call), native("calculate", "call_2", **call), said]
    events, _ = play(question, replies if taken else [*replies, "62"])
    answers = [a.text for a in of(events, FinalAnswer)]
    assert answers == ([said] if taken else ["62"])


def test_the_same_tool_with_other_arguments_is_progress() -> None:
    replies = [
        native("get_time", timezone="Europe/London"),
        native("get_time", "call_2", timezone="Asia/Tokyo"),
        "done",
    ]
    events, _ = play("What time is it in London and in Tokyo?", replies)
    assert of(events, AnswerWithoutTools) == []


def test_a_failed_call_sent_changed_is_no_repeat() -> None:
    replies = [
        native("calculate", expression="sqrt(2)*100 rounded to 2 decimals"),
        native("calculate", "call_2", expression="round(sqrt(2)*100, 2)"),
        "141.42",
    ]
    events, _ = play("What is sqrt(2)*100 rounded to 2 decimals?", replies)
    assert of(events, AnswerWithoutTools) == []
    assert [f.result.content for f in of(events, ToolFinished)][1] == "141.42"


def test_a_call_whose_only_fault_is_an_extra_argument_runs_without_it() -> None:
    """calculate(expression="sqrt(2)*100", round="2") was refused for `round` three times."""
    replies = [native("calculate", expression="sqrt(2)*100", round="2"), "141.42"]
    events, history = play("What is sqrt(2)*100 rounded to 2 decimals?", replies)
    (finished,) = of(events, ToolFinished)
    assert finished.result.ok
    first_line, note = finished.result.content.split("\n", 1)
    assert first_line == "141.421356237"
    assert note.startswith("[toolcall] Ran without `round`: calculate does not take it")
    assert "`round` left out: calculate does not take it" in finished.result.coerced
    assert history[2].content == finished.result.content  # the model is told


def test_get_time_with_an_extra_offset_runs_with_the_timezone_it_was_given() -> None:
    replies = [native("get_time", timezone="UTC", timezone_offset="08:00"), "It is noon."]
    events, _ = play("What time is it in UTC?", replies)
    (finished,) = of(events, ToolFinished)
    assert finished.result.ok and '"timezone": "UTC"' in finished.result.content
    assert "Ran without `timezone_offset`" in finished.result.content


def test_a_call_with_an_extra_argument_and_another_fault_is_refused_for_both() -> None:
    replies = [native("convert_units", value="many", from_unit="mi", to_unit="km", x=1), "?"]
    events, _ = play("How far?", replies)
    (finished,) = of(events, ToolFinished)
    assert not finished.result.ok and "`x`" in finished.result.content


# --- figures from nowhere in arguments (--grounding check) ------------------------------------


def grounding(events: list[Event]) -> list[tuple[str, str, tuple[str, ...]]]:
    return [(g.what, g.action, g.figures) for g in of(events, GroundingChecked)]


def test_an_invented_first_figure_of_a_two_step_question_is_not_run() -> None:
    """convert_units(value=25, from_unit="°C", ...) for "北京明天天气怎么样？": no 25 anywhere.
    The model is told which value came from nowhere and that it needs get_weather first; with
    that tool's result, its next conversion runs."""
    weather = bundled("get_weather", city="北京", day="tomorrow")
    high = json.loads(weather)["high_c"]
    replies = [
        native("convert_units", value=25, from_unit="°C", to_unit="°F"),
        native("get_weather", "call_2", city="北京", day="tomorrow"),
        native("convert_units", "call_3", value=high, from_unit="°C", to_unit="°F"),
        f"北京明天最高 {high}°C（55.4°F）。",
    ]
    events, history = play("北京明天天气怎么样？", replies, grounding="check")
    results = [f.result for f in of(events, ToolFinished)]
    assert [r.ok for r in results] == [False, True, True]
    assert results[0].error_kind == "ungrounded"
    told = str(history[2].content)
    assert "`value=25`" in told and "came from nowhere" in told
    assert "needs that tool called first" in told and "get_weather" in told
    assert grounding(events) == [("arguments", "refused", ("value=25",))]
    assert [a.text for a in of(events, FinalAnswer)] == [f"北京明天最高 {high}°C（55.4°F）。"]


def test_a_conversion_no_one_asked_for_is_not_run() -> None:
    """convert_units(value=100, from_unit="miles", to_unit="feet") for "Is it warmer in Tokyo
    or London today?" (retrieval had offered convert_units)."""
    replies = [
        native("convert_units", value=100, from_unit="miles", to_unit="feet"),
        native("get_weather", "call_2", city="Tokyo"),
        native("get_weather", "call_3", city="London"),
        "Tokyo (11 °C) is warmer than London (6 °C).",
    ]
    events, _ = play("Is it warmer in Tokyo or London today?", replies, grounding="check")
    first = of(events, ToolFinished)[0].result
    assert not first.ok and "`value=100`" in first.content
    assert of(events, FinalAnswer)[0].ungrounded == ()


def test_a_zero_for_a_temperature_no_tool_gave_is_not_run() -> None:
    """convert_units(value=0, ...) for New York's temperature, before any weather call."""
    replies = [
        native("convert_units", value=0, from_unit="C", to_unit="F"),
        native("get_weather", "call_2", city="New York"),
        native("convert_units", "call_3", value=6, from_unit="C", to_unit="F"),
        "New York is 6 °C, 42.8 °F.",
    ]
    events, _ = play(
        "What is the temperature in New York in Fahrenheit?", replies, grounding="check"
    )
    assert grounding(events) == [("arguments", "refused", ("value=0",))]
    assert [f.result.ok for f in of(events, ToolFinished)] == [False, True, True]


def test_the_same_ungrounded_call_sent_again_runs_with_a_note() -> None:
    """A figure the model knows rightly (from its own knowledge) is refused once, never twice."""
    replies = [
        native("convert_units", value=26.2, from_unit="mi", to_unit="km"),
        native("convert_units", "call_2", value=26.2, from_unit="mi", to_unit="km"),
        "A marathon is 42.16 km.",
    ]
    events, _ = play("How long is a marathon in km?", replies, grounding="check")
    results = [f.result for f in of(events, ToolFinished)]
    assert [r.ok for r in results] == [False, True]
    assert "[toolcall] Run as sent again: `value=26.2`" in results[1].content
    assert [g[1] for g in grounding(events)] == ["refused", "ran_on_repeat"]
    assert of(events, AnswerWithoutTools) == []  # the refusal is no failure to repeat
    assert [a.text for a in of(events, FinalAnswer)] == ["A marathon is 42.16 km."]


def test_figures_from_the_question_and_the_results_are_grounded() -> None:
    """26 from the question, 41.84 (rounded) from a result: nothing is refused."""
    replies = [
        native("convert_units", value=26, from_unit="mi", to_unit="km"),
        native("calculate", "call_2", expression="41.84*2"),
        native("convert_units", "call_3", value=41.84, from_unit="km", to_unit="m"),
        "41,840 m",
    ]
    events, _ = play("How many km is 26 miles?", replies, grounding="check")
    assert grounding(events) == []
    assert all(f.result.ok for f in of(events, ToolFinished))


# --- answers from nowhere (--grounding check) --------------------------------------------------


def test_an_answer_that_is_no_result_is_nudged_once_to_the_results() -> None:
    """The tool returned 126, and the answer was "2"."""
    replies = [native("calculate", expression="(2^10-16)/8"), "2", "126"]
    events, history = play("What is (2^10 - 16) / 8?", replies, grounding="check")
    assert grounding(events) == [("answer", "nudged", ("2",))]
    nudge = str(history[4].content)
    assert nudge.startswith("[toolcall]") and "calculate gave 126" in nudge
    assert [a.text for a in of(events, FinalAnswer)] == ["126"]
    assert of(events, FinalAnswer)[0].ungrounded == ()


def test_the_second_answer_from_nowhere_stands_marked() -> None:
    """The tool returned 444; the model called calculate("444"), was told it had that result,
    and answered "241" (and, nudged, "241" again)."""
    replies = [
        native("calculate", expression="23*19+7"),
        native("calculate", "call_2", expression="444"),
        "241",
        "241",
    ]
    events, _ = play("What is 23*19+7?", replies, grounding="check")
    assert [g[1] for g in grounding(events)] == ["nudged", "stands"]
    (final,) = of(events, FinalAnswer)
    assert final.text == "241" and final.ungrounded == ("241",)
    assert of(events, RunFinished)[0].stop_reason == "answered"


@pytest.mark.parametrize("invented", ["23*19+7 = 443", "565"])
def test_a_figure_worked_out_without_a_tool_is_sent_to_the_tool(invented: str) -> None:
    """With no tool called, it answered "23*19+7 = 443" and "565"."""
    replies = [invented, native("calculate", expression="23*19+7"), "23*19+7 = 444"]
    events, history = play("What is 23*19+7?", replies, grounding="check")
    assert [g[:2] for g in grounding(events)] == [("answer", "nudged")]
    assert "call the tool that gives or computes" in str(history[2].content)
    assert [a.text for a in of(events, FinalAnswer)] == ["23*19+7 = 444"]


def test_under_warn_the_answer_stands_at_once_marked() -> None:
    """The default shows the check and changes nothing the run does."""
    replies = [native("calculate", expression="(2^10-16)/8"), "2"]
    events, _ = play("What is (2^10 - 16) / 8?", replies)
    assert grounding(events) == [("answer", "warned", ("2",))]
    assert [(a.text, a.ungrounded) for a in of(events, FinalAnswer)] == [("2", ("2",))]


# --- no toolcall run ends 0 with a non-answer ---------------------------------------------------


def script_file(tmp_path: Path, replies: list[Any]) -> Path:
    path = tmp_path / "script.jsonl"
    path.write_text("\n".join(json.dumps(r, ensure_ascii=False) for r in replies), "utf-8")
    return path


@pytest.mark.parametrize(
    "non_answers",
    [
        # a result echoed each time, then echoed again when tools are withdrawn (4 iterations
        # and the limit's one request without tools: 5 replies)
        [native("get_weather", city="Tokyo")] + [bundled("get_weather", city="Tokyo")] * 4,
        # toolcall's own note handed back
        [native("calculate", expression="2**10"), native("calculate", "c2", expression="2**10")]
        + [
            "Based on the conversation, it appears that the toolcall has already returned the "
            "result you already had."
        ]
        * 3,
        # a tool's name for the answer
        ["get_weather"] * 5,
    ],
    ids=["result-echoed", "note-echoed", "tool-name"],
)
def test_a_run_whose_replies_are_no_answer_never_exits_0(
    tmp_path: Path, non_answers: list[Any]
) -> None:
    script = script_file(tmp_path, non_answers)
    done = toolcall(
        "run", "--model", "scripted", "--script", str(script), "--strategy", "schema",
        "--max-iterations", "4", "--no-trace", "--json", "What is the weather in Tokyo?",
        cwd=tmp_path,
    )  # fmt: skip
    records = [json.loads(line) for line in done.stdout.splitlines()]
    answers = [r for r in records if r["kind"] == "final_answer"]
    assert done.returncode != 0, done.stdout[-2000:]
    assert all(a["best_effort"] for a in answers)  # only ever the limit's best effort
    assert records[-1]["stop_reason"] != "answered"


def test_the_same_run_with_an_answer_at_the_end_exits_0(tmp_path: Path) -> None:
    """The check above could pass if every scripted run failed; this one could not."""
    replies = [native("get_weather", city="Tokyo"), bundled("get_weather", city="Tokyo"),
               "Tokyo: 11 °C, sunny."]  # fmt: skip
    done = toolcall(
        "run", "--model", "scripted", "--script", str(script_file(tmp_path, replies)),
        "--strategy", "schema", "--no-trace", "--json", "What is the weather in Tokyo?",
        cwd=tmp_path,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert '"text": "Tokyo: 11 °C, sunny."' in done.stdout


# --- a reply that never ends, and a server's 500 after the retries --------------------------------


RAMBLING = json.dumps(
    {
        "object": "chat.completion.chunk",
        "choices": [{"index": 0, "delta": {"content": "Let me think again. "}}],
    }
)


@pytest.mark.parametrize(
    ("answers", "said"),
    [
        # A rambling streamed reply, hit by the time one request may take (120 s for the run
        # that was seen; here 0.5 s): it never finishes, so it is never taken for an answer.
        ([Answer(sse=[RAMBLING], trickle=0.002)], "--request-timeout"),
        # A server that fails, each retry alike. (A 500 that says the server could not read
        # its model's call is the model's fault and goes back to it: test_unreadable_reply.)
        (
            [
                Answer(
                    status=500,
                    json_body={"error": {"message": "CUDA error: out of memory"}},
                    headers={"Retry-After": "0"},
                )
            ]
            * 3,
            "HTTP 500",
        ),
    ],
    ids=["rambling-reply-timed-out", "server-error-500"],
)
def test_a_reply_the_server_never_finishes_ends_the_run_1_with_one_line(
    tmp_path: Path, answers: list[Answer], said: str
) -> None:
    with FakeOpenAI() as server:
        server.answers += answers
        done = toolcall(
            "run", "--model", "m", "--base-url", server.base_url, "--strategy", "stream",
            "--request-timeout", "0.5", "--no-trace", "--json", "What is the weather in Tokyo?",
            cwd=tmp_path,
        )  # fmt: skip
    records = [json.loads(line) for line in done.stdout.splitlines()]
    assert done.returncode == 1 and done.stderr.count("\n") == 1, done.stderr
    assert said in done.stderr
    assert not [r for r in records if r["kind"] == "final_answer"]
    assert records[-1]["kind"] == "run_finished" and records[-1]["stop_reason"] == "model_failed"


# --- retrieval that hides tools -------------------------------------------------------------------


def test_a_conversion_found_by_search_tools_with_a_figure_from_nowhere_is_not_run() -> None:
    """With 3 tools of 4 a request, the model called search_tools("temperature in Tokyo or
    London today"), was given convert_units, and converted 100 miles to feet. By default a
    list of 4 tools is now sent whole (tests/test_measured_default.py); an explicit --retrieve 3
    still hides one, and the call it led to is refused for its 100."""
    replies: list[str | dict[str, Any]] = [
        native("search_tools", query="temperature in Tokyo or London today"),
        native("convert_units", "call_2", value=100, from_unit="miles", to_unit="feet"),
        native("get_weather", "call_3", city="Tokyo"),
        native("get_weather", "call_4", city="London"),
        "Tokyo (11 °C) is warmer than London (6 °C).",
    ]
    model = ScriptedModel(replies)
    events = list(
        run(
            "Is it warmer in Tokyo or London today?",
            model=model,
            strategy=get_strategy("schema"),
            registry=BUNDLED,
            history=[],
            limits=Limits(grounding="check"),
            retrieval=Retrieval(k=3),
        )
    )
    offered = [[t["function"]["name"] for t in r["tools"]] for r in model.requests]
    assert "convert_units" not in offered[0] and "convert_units" in offered[1]
    assert grounding(events) == [("arguments", "refused", ("value=100",))]
    assert [f.result.ok for f in of(events, ToolFinished)] == [True, False, True, True]
    assert of(events, FinalAnswer)[0].text == "Tokyo (11 °C) is warmer than London (6 °C)."


# --- the history a server reads back ----------------------------------------------------------


def broken_native_call(arguments_text: str, call_id: str = "call_1") -> dict[str, Any]:
    """An assistant message whose one call carries `arguments_text` as the model wrote it."""
    function = {"name": "calculate", "arguments": arguments_text}
    call = {"id": call_id, "type": "function", "function": function}
    return {"role": "assistant", "content": None, "tool_calls": [call]}


@pytest.mark.parametrize(
    ("written", "finish"),
    [
        ('{"expression": "sqrt(2', "length"),  # cut off by max_tokens
        ('"expression": "2+2"', "tool_calls"),  # no braces: unreadable
        ("{'expression': '2+2'}", "tool_calls"),  # single quotes: repaired and run
    ],
)
def test_the_next_request_echoes_every_call_as_valid_json(written: str, finish: str) -> None:
    """llama-server parses the arguments of the calls the history echoes, and answered HTTP 500
    to a call Qwen2.5-0.5B had cut off at max_tokens, on every retry: the run ended there."""
    reply = {**broken_native_call(written), "finish_reason": finish}
    events, history = play("What is sqrt(2)*100?", [reply, "141.42"])
    assert of(events, RunFinished)[0].stop_reason == "answered"
    echoed = [
        c["function"]["arguments"] for m in native_wire(history) for c in m.get("tool_calls") or []
    ]
    assert len(echoed) == 1
    value = json.loads(echoed[0])  # a server reading it back can
    assert value == {"expression": "2+2"} if written.startswith("{'") else value == written


def test_the_view_still_shows_the_arguments_as_the_model_wrote_them() -> None:
    events, _ = play("What is 2+2?", [broken_native_call('"expression": "2+2"'), "4"])
    shown = json.loads(of(events, ModelReplied)[0].raw)
    assert shown["tool_calls"][0]["function"]["arguments"] == '"expression": "2+2"'


def test_the_view_shows_the_question_asked_again_after_the_note(tmp_path: Path) -> None:
    """A learner sees what the model was sent when its tools went: the note, then the question
    on its own (the plain view, as a pipe or a log gets it)."""
    question = MILES
    replies = twice_converted("26 miles is 41.84 kilometres.")
    done = toolcall(
        "run", "--model", "scripted", "--script", str(script_file(tmp_path, replies)),
        "--strategy", "schema", "--no-trace", question, cwd=tmp_path,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    withdrawn = next(i for i, line in enumerate(lines) if "tools withdrawn:" in line)
    following = next(i for i, line in enumerate(lines) if i > withdrawn and line.startswith("=="))
    assert f"then asked again: {question}" in lines[withdrawn:following], done.stdout


def test_a_chat_carries_a_question_asked_again_only_once_into_its_next_turn() -> None:
    """The question said again after a withdrawal is for that request: the next turn's request
    holds the first turn's question once, its note and its answer."""
    question = MILES
    replies = twice_converted("26 miles is 41.84 kilometres.", "You're welcome.")
    model = ScriptedModel(replies)
    session = Session(model=model, strategy=get_strategy("schema"), registry=BUNDLED)
    first = list(session.ask(question))
    assert len(of(first, AnswerWithoutTools)) == 1
    assert [m["content"] for m in model.requests[2]["messages"]].count(question) == 2
    list(session.ask("Thanks!"))
    carried = [m["content"] for m in model.requests[3]["messages"] if m["role"] == "user"]
    assert carried.count(question) == 1
    assert carried[-1] == "Thanks!"
    assert "26 miles is 41.84 kilometres." in [m["content"] for m in model.requests[3]["messages"]]
