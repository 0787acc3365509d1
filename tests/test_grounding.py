"""--grounding: figures in a call's arguments, or in an answer, that are in neither the question
nor any result. What counts as a figure and as its ground; the modes; what every view shows;
and how many runs of the offline model (which never invents a figure) the check flags."""

from __future__ import annotations

import io
import json
from pathlib import Path
from typing import Any

import pytest
from in_process import toolcall
from rich.console import Console
from test_issue24_replays import BUNDLED, native, play
from test_loop import of

from toolcall_cli.events import Event, FinalAnswer, GroundingChecked, RunFinished
from toolcall_cli.grounding import (
    AnswerCheck,
    ArgumentCheck,
    Grounds,
    argument_figures,
    chinese_number,
    figures_in,
    grounds_of,
)
from toolcall_cli.history import ENGINE_NOTE_PREFIX
from toolcall_cli.loop import Limits, ToolPolicy, run
from toolcall_cli.messages import Message, ToolCall, ToolResult, tool_message, user
from toolcall_cli.offline import OfflineModel
from toolcall_cli.render import make_renderer
from toolcall_cli.render.explain import Explaining
from toolcall_cli.strategies import get_strategy

CONVERT = BUNDLED.get("convert_units")
assert CONVERT is not None
SCHEMA = CONVERT.spec.parameters


def call(name: str = "convert_units", **arguments: Any) -> ToolCall:
    return ToolCall(id="c1", name=name, arguments=arguments)


def checked(question: str, *results: str, mode: str = "check") -> ArgumentCheck:
    history: list[Message] = [user(question)]
    for number, content in enumerate(results):
        history.append(
            tool_message(ToolResult(call_id=f"r{number}", name="get_weather", content=content))
        )
    check = ArgumentCheck(mode, ["convert_units", "get_weather"])  # type: ignore[arg-type]
    check.read(history, 0)
    return check


# --- what a figure is --------------------------------------------------------------------------


def test_figures_are_read_in_digits_and_spelled_out() -> None:
    assert figures_in("1,234.5 km, -3 °C and 41.84") == [1234.5, -3.0, 41.84]
    assert figures_in("round to two decimals") == [2.0]
    assert figures_in("二十六英里是多少公里") == [26.0]
    assert [chinese_number(t) for t in ("十五", "一百零五", "三万", "两千")] == [
        15,
        105,
        30000,
        2000,
    ]


def test_only_values_that_are_figures_are_checked() -> None:
    """An expression, a date or an offset is the model's working, not a figure carried over."""
    arguments = {
        "expression": "sqrt(2)*100",
        "value": 25,
        "n": "7",
        "when": "2025-01-02",
        "b": True,
    }
    assert list(argument_figures(arguments)) == [("value=25", "25"), ("n='7'", "7")]


def test_a_figure_rounded_as_written_is_the_results() -> None:
    grounds = Grounds([41.842944])
    assert grounds.holds("41.84") and grounds.holds("42") and not grounds.holds("41.9")


# --- arguments ---------------------------------------------------------------------------------


def test_a_figure_from_the_question_or_a_result_is_grounded() -> None:
    check = checked("How many km is 26 miles?", '{"high_c": 13}')
    assert (
        check.verdict(call(value=26, from_unit="mi", to_unit="km"), {"value": 26}, SCHEMA) is None
    )
    assert check.verdict(call(value=13), {"value": 13}, SCHEMA) is None


def test_the_schemas_example_is_no_ground_but_its_enum_and_default_are() -> None:
    """ "e.g. 25" in convert_units' description is where the invented 25 came from."""
    check = checked("北京明天天气怎么样？")
    verdict = check.verdict(call(value=25), {"value": 25}, SCHEMA)
    assert verdict is not None and verdict.refusal is not None
    schema = {"properties": {"n": {"type": "integer", "enum": [1, 5], "default": 3}}}
    for value in (1, 5, 3):
        assert check.verdict(call("pick", n=value), {"n": value}, schema) is None


def test_an_engine_note_and_an_error_are_no_ground() -> None:
    """An error quotes the call it refuses; toolcall's notes are not the question."""
    history = [
        user("北京明天天气怎么样？"),
        user(f"{ENGINE_NOTE_PREFIX} You called it with 25."),
        tool_message(ToolResult(call_id="x", name="convert_units", content="Error: bad 25")),
    ]
    assert grounds_of(history, 0).figures == []


def test_the_refusal_is_once_per_call_and_warn_only_shows_it() -> None:
    check = checked("北京明天天气怎么样？")
    first = check.verdict(call(value=25), {"value": 25}, SCHEMA)
    again = check.verdict(call(value=25), {"value": 25}, SCHEMA)
    assert first is not None and first.event.action == "refused"
    assert again is not None and again.refusal is None and again.event.action == "ran_on_repeat"
    assert again.note is not None and "`value=25`" in again.note
    warned = checked("北京明天天气怎么样？", mode="warn").verdict(
        call(value=25), {"value": 25}, SCHEMA
    )
    assert warned is not None and warned.refusal is None and warned.event.action == "warned"
    off = checked("北京明天天气怎么样？", mode="off")
    assert off.verdict(call(value=25), {"value": 25}, SCHEMA) is None


def test_with_dag_a_figure_from_the_awaited_result_is_grounded() -> None:
    """A call of the same reply that waits for another takes its figure from that result,
    which is not in the history yet: no offline --dag run is flagged."""
    events = list(
        run(
            "北京明天的最高气温换算成华氏度是多少？",
            model=OfflineModel(),
            strategy=get_strategy("regex", dag=True),
            registry=BUNDLED,
            history=[],
            limits=Limits(grounding="check"),
            policy=ToolPolicy(dag=True),
        )
    )
    filled = [e for e in events if e.kind == "placeholders_filled"]
    assert filled  # the run did fill a placeholder
    assert of(events, GroundingChecked) == []
    assert of(events, RunFinished)[0].stop_reason == "answered"


# --- answers -----------------------------------------------------------------------------------


def answer_verdict(text: str, question: str, results: list[str], tools: bool = True) -> Any:
    grounds = Grounds([], [("calculate", r) for r in results])
    grounds.figures = [f for r in results for f in figures_in(r)] + figures_in(question)
    return AnswerCheck("check").verdict(text, question, grounds, ["calculate"] if tools else [])


def test_an_answer_with_one_figure_of_a_result_is_grounded() -> None:
    assert answer_verdict("Tokyo is 11 °C, 5 degrees warmer than London.", "q", ["11"]) is None
    assert answer_verdict("It's sunny.", "q", ["11"]) is None  # no figure: nothing to check


def test_an_ungrounded_answer_names_its_own_figures_not_the_questions() -> None:
    """After a result, an answer with no figure of it is not grounded; what it is told names
    the figures that came from nowhere, not the question's it repeated, nor its arithmetic
    worked out right (2^10 is 1024; 1000 is no value of it)."""
    question = "What is 2^10 and the weather in Paris tomorrow?"
    verdict = answer_verdict("2^10 is 1000, and it will be 15 °C in Paris.", question, ["11"])
    assert verdict is not None
    checked, note = verdict
    assert checked.figures == ("1000", "15")
    assert note is not None and "1000" in note and "2, 10" not in note
    verdict = answer_verdict("2^10 is 1024, and it will be 15 °C in Paris.", question, ["11"])
    assert verdict is not None and verdict[0].figures == ("15",)
    # An answer that is only the question's figure after a result is still named as such.
    again = answer_verdict("2", "Is 126 divisible by 2?", ["126"])
    assert again is not None and again[0].figures == ("2",)


def test_quoted_figures_are_cited_not_stated() -> None:
    text = 'I need the expression (e.g. "12*5+3", `2^10`). Could you tell me?'
    assert answer_verdict(text, "What is France's density?", []) is None


def test_with_no_tools_offered_an_answer_without_results_is_not_checked() -> None:
    assert answer_verdict("It is 565.", "What is 23*19+7?", [], tools=False) is None


@pytest.mark.parametrize(
    ("question", "answer"),
    [
        ("2+2?", "4"),
        ("What is 12*5+3?", "12*5+3 = 63"),
        ("What is (2^10 - 16) / 8?", "It is 126."),
        ("What's 7 times 8?", "56"),
        ("What is 100 divided by 8?", "12.5"),
        ("What is 10/3?", "About 3.33."),
        ("What is 1,200 - 250?", "950"),
        ("三加五等于几？", "三加五等于8"),
        ("二十六乘以三是多少？", "78"),
        ("（3＋4）×2 等于多少？", "14"),
    ],
)
def test_an_answer_that_works_out_the_question_s_own_arithmetic_is_grounded(
    question: str, answer: str
) -> None:
    """Arithmetic the question writes (in symbols or words, English or Chinese), worked out
    right, is no figure from nowhere, with or without a tool's result."""
    assert answer_verdict(answer, question, []) is None
    assert answer_verdict(answer, question, ["Paris: 18 °C"]) is None


@pytest.mark.parametrize(
    ("question", "answer", "loose"),
    [
        ("2+2?", "5", ("5",)),  # worked out wrong
        ("What is 23*19+7?", "23*19+7 = 443", ("443",)),
        ("What is 2 to the power of 10?", "1024", ("1024",)),  # no operator it reads
        ("北京今天多少度？", "北京今天25度。", ("25",)),
        ("What's the weather in Paris on 2026-3-5?", "It is 2018 and 14 °C.", ("2018", "14")),
        ("Weather in 2 cities: Paris and Rome, 3 days", "Paris 6 °C, Rome 5 °C", ("6", "5")),
        ("上海和北京明天2个城市的气温相差多少？", "相差3度", ("3",)),
    ],
)
def test_a_figure_the_question_s_arithmetic_does_not_give_is_still_loose(
    question: str, answer: str, loose: tuple[str, ...]
) -> None:
    """Only arithmetic the question writes grounds a figure: a made-up temperature beside two
    of the question's figures, a date's dashes, or a sum worked out wrong are still flagged."""
    verdict = answer_verdict(answer, question, [])
    assert verdict is not None and verdict[0].figures == loose


# --- the views ---------------------------------------------------------------------------------


def events_of(mode: str) -> list[Event]:
    replies = [
        native("convert_units", value=25, from_unit="C", to_unit="F"),
        native("convert_units", "call_2", value=25, from_unit="C", to_unit="F"),
        "It is 80 °F.",
        "It is 80 °F.",
    ]
    # Unchecked, the repeat is only a repeat, and the first answer ends the run.
    events, _ = play("北京明天天气怎么样？", replies[: 4 if mode == "check" else 3], grounding=mode)
    return events


def rendered(mode: str, events: list[Event]) -> str:
    out = io.StringIO()
    target: Any = Console(file=out, width=200, color_system=None) if mode == "live" else out
    renderer = make_renderer(mode, target, auto_refresh=False)  # type: ignore[arg-type]
    for event in events:
        renderer.handle(event)
    renderer.close()
    return out.getvalue()


@pytest.mark.parametrize("view", ["live", "plain"])
def test_every_step_of_the_check_is_shown(view: str) -> None:
    shown = rendered(view, events_of("check"))
    for line in (
        "grounding: convert_units: value=25 in neither the question nor any result: not run; "
        "sent again unchanged, it runs",
        "grounding: convert_units: value=25 in neither the question nor any result: run, since "
        "it was sent again unchanged",
        "grounding: the answer's 80 in no tool result: the model is told, and asked once more",
        "grounding: the answer's 80 in no tool result: the second answer stands, marked",
        "answer (unchecked: 80 in no tool result)",
    ):
        assert line in shown, line


def test_json_lines_and_explain_carry_the_check() -> None:
    events = events_of("check")
    records = [json.loads(line) for line in rendered("json", events).splitlines()]
    checks = [r for r in records if r["kind"] == "grounding_checked"]
    assert [c["action"] for c in checks] == ["refused", "ran_on_repeat", "nudged", "stands"]
    assert checks[0]["figures"] == ["value=25"] and checks[0]["call"]["name"] == "convert_units"
    final = next(r for r in records if r["kind"] == "final_answer")
    assert final["ungrounded"] == ["80"]
    out = io.StringIO()
    explaining = Explaining(make_renderer("plain", out), lang="en")
    for event in events:
        explaining.handle(event)
    explaining.close()
    assert "so the call was not run" in out.getvalue()
    assert "the next answer stands, marked" in out.getvalue()


def test_off_shows_nothing_and_changes_nothing() -> None:
    events = events_of("off")
    assert of(events, GroundingChecked) == []
    assert [a.text for a in of(events, FinalAnswer)] == ["It is 80 °F."]


# --- false refusals on questions nobody tuned the check for ------------------------------------

QUESTIONS = json.loads(
    (Path(__file__).parents[1] / "bench" / "eval" / "questions.json").read_text("utf-8")
)["questions"]


def test_the_offline_model_is_never_flagged_on_benchs_questions() -> None:
    """The offline model takes every figure from the question or a result, so every flag on it
    would be a false one: none, on all of bench's questions."""
    flagged = []
    for question in QUESTIONS:
        events = list(
            run(
                question["question"],
                model=OfflineModel(),
                strategy=get_strategy("regex"),
                registry=BUNDLED,
                history=[],
                limits=Limits(grounding="check"),
            )
        )
        assert of(events, RunFinished)[0].stop_reason == "answered"
        flagged += [(question["id"], e.figures) for e in of(events, GroundingChecked)]
    assert len(QUESTIONS) >= 80 and flagged == []


# --- choosing it --------------------------------------------------------------------------------


def test_the_flag_and_the_config_file_choose_and_a_bad_value_is_one_line(tmp_path: Path) -> None:
    config = tmp_path / "config.toml"
    env = {"TOOLCALL_CONFIG": str(config)}
    ask = ("run", "--faults", "no_tool", "--no-trace", "What's 12*5+3?")
    config.write_text('[defaults]\ngrounding = "check"\n', "utf-8")
    done = toolcall(*ask, cwd=tmp_path, env=env)
    assert done.returncode == 0 and "the model is told, and asked once more" in done.stdout
    assert "call calculate" in done.stdout  # nudged, it called the tool
    done = toolcall(*ask, "--grounding", "off", cwd=tmp_path, env=env)
    assert done.returncode == 0 and "grounding" not in done.stdout
    config.write_text('[defaults]\ngrounding = "strict"\n', "utf-8")
    done = toolcall(*ask, cwd=tmp_path, env=env)
    assert done.returncode == 2 and done.stderr.count("\n") == 1
    assert "unknown grounding 'strict'" in done.stderr and "off, warn, check" in done.stderr


def test_config_show_says_the_grounding_and_where_it_came_from(tmp_path: Path) -> None:
    config = tmp_path / "config.toml"
    env = {"TOOLCALL_CONFIG": str(config)}
    done = toolcall("config", "show", cwd=tmp_path, env=env)
    assert done.returncode == 0 and "grounding   warn  [default]" in done.stdout
    config.write_text('[defaults]\ngrounding = "check"\n', "utf-8")
    done = toolcall("config", "show", cwd=tmp_path, env=env)
    assert done.returncode == 0 and "grounding   check  [config]" in done.stdout
    config.write_text("[defaults]\ngrounding = 1\n", "utf-8")
    done = toolcall("config", "show", cwd=tmp_path, env=env)
    assert done.returncode == 2 and done.stdout == "" and done.stderr.count("\n") == 1
