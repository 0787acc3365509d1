"""Replies Qwen2.5-0.5B wrote on llama-server (temperature 0, the bundled tools), replayed by
the scripted model: what the engine does with them now."""

from __future__ import annotations

import pytest
from test_issue24_replays import BUNDLED, native, play
from test_loop import of

from toolcall_cli.events import (
    AnswerWithoutTools,
    FinalAnswer,
    GroundingChecked,
    Notice,
    RunFinished,
    ToolFinished,
)
from toolcall_cli.limits import Limits
from toolcall_cli.loop import run
from toolcall_cli.messages import Message
from toolcall_cli.models.scripted import ScriptedModel
from toolcall_cli.render.base import answer_label
from toolcall_cli.strategies import get_strategy
from toolcall_cli.tools.registry import ToolRegistry, tool

MILES = "How many kilometres is 26.2 miles?"
CONVERTED = (
    '{"name": "convert_units", "arguments": {"value": 26.2, "from_unit": "miles", "to_unit": "km"}}'
)


@pytest.mark.parametrize(
    ("strategy", "first", "again"),
    [
        (
            "stream",
            '{"name": "calculate", "arguments": {"expression": "26.2*5", "result": 131.0}}',
            '{"name": "calculate", "arguments": {"expression": "26.2*5", "result": 131}}',
        ),
        (
            "regex",
            '{"name": "calculate", "arguments": {"expression": "26.2", "units": "miles", '
            '"result": 42.1648128}}',
            '{"name": "calculate", "arguments": {"expression": "26.2", "units": "miles", '
            '"result": 26.2}}',
        ),
    ],
)
def test_a_call_sent_again_with_only_an_argument_left_out_changed_is_a_repeat(
    strategy: str, first: str, again: str
) -> None:
    """The model wrote the result it had back into the call as an argument the tool does not
    take, its value changed (131.0, then 131): the call that runs is the same one, so it is a
    repeat, and the tools go; before, the changed extra made it a new call, run again."""
    replies = [CONVERTED, first, again, "26.2 miles is 42.16 km."]
    events, _ = play(MILES, replies, strategy=strategy)
    results = [f.result for f in of(events, ToolFinished)]
    assert [r.cached for r in results] == [False, False, True]
    (withdrawn,) = of(events, AnswerWithoutTools)
    assert withdrawn.repeated and "`calculate`" in withdrawn.message
    assert of(events, RunFinished)[0].iterations == 4


def test_a_chat_keeps_a_json_mode_answer_as_its_text_for_the_next_strategy() -> None:
    """A chat on llama-server began in JSON mode (the answer `{"answer": "10"}`), then
    `/strategy regex`: the next request showed the model its earlier answers in that wrapper,
    and it answered `{"answer": "26"}`, which regex took, wrapper and all, as the answer."""
    history: list[Message] = []
    weather = '{"name": "get_weather", "arguments": {"city": "北京", "day": "today"}}'
    first = ScriptedModel([weather, '{"answer": "10"}'])
    json_mode = get_strategy("schema", schema_mode="json")
    list(
        run("北京今天多少度？", model=first, strategy=json_mode, registry=BUNDLED, history=history)
    )
    second = ScriptedModel(["50 °F"])
    regex = get_strategy("regex")
    list(run("换成华氏度", model=second, strategy=regex, registry=BUNDLED, history=history))
    shown = [m["content"] for m in second.requests[0]["messages"] if m["role"] == "assistant"]
    assert shown[-1] == "10"


def test_calculates_advice_holds_no_example_a_model_can_run_for_a_number() -> None:
    """calculate("26.2 miles") was told "e.g. calculate(expression='(2 + 3) * 4')"; the model
    sent exactly that, got 20 and answered "20 kilometers" (JSON mode, twice in the bench's
    recordings too). The advice says what an expression may hold, with nothing runnable."""
    replies = [
        native("calculate", expression="26.2 miles"),
        native("calculate", "call_2", expression="(2 + 3) * 4"),
        "20 kilometers",
    ]
    events, _ = play(MILES, replies)
    advice = of(events, ToolFinished)[0].result.content
    assert "no words or units" in advice
    assert "(2 + 3) * 4" not in advice and "calculate(expression=" not in advice


def test_a_status_polled_until_it_changes_keeps_the_tools() -> None:
    """The same call asked again, whose tool runs each time and gives a new result, is
    progress: a job's status polled until it is done. (Counting it as none, tried once for a
    0.5B model that asked get_time five times, withdrew the tools after three polls.) A clock
    asked again and again is bounded by --max-iterations instead."""
    states = iter(["queued", "running 30%", "running 80%", "done: passed"])

    @tool(cacheable=False, permission="read")
    def build_status(job: str) -> str:
        """The status of a build job."""
        return next(states)

    replies = [native("build_status", f"call_{n}", job="42") for n in range(4)]
    model = ScriptedModel([*replies, "The build passed."])
    events = list(
        run(
            "Wait for build 42 and tell me how it ended.",
            model=model,
            strategy=get_strategy("schema"),
            registry=ToolRegistry.from_functions(build_status),
            history=[],
            limits=Limits(max_iterations=6),
        )
    )
    assert [f.result.content for f in of(events, ToolFinished)][-1] == "done: passed"
    assert of(events, AnswerWithoutTools) == []
    assert of(events, FinalAnswer)[0].text == "The build passed."


def test_rounds_summarised_because_the_tools_went_are_not_blamed_on_the_history_window() -> None:
    """After a repeat the view said "history window: 2 older tool round(s) sent as a short
    summary" under the default window of 5: the rounds went because the tools did."""
    replies = [CONVERTED, CONVERTED, "26.2 miles is 42.16 km."]
    events, _ = play(MILES, replies, strategy="stream")
    said = [n.message for n in of(events, Notice) if "sent as" in n.message]
    assert said == [
        "all 2 tool rounds so far sent as a summary of their results, with no tools to call"
    ]


@pytest.mark.parametrize(
    ("question", "expression"),
    [
        ("How many seconds are in a day?", "24*60*60"),
        ("乌兰巴托明天会下雪吗？气温多少？", "25 + 3"),
    ],
)
def test_an_expression_is_the_models_working_and_not_checked_for_figures(
    question: str, expression: str
) -> None:
    """Figures inside an expression are not checked: 24*60*60 for the seconds of a day is
    knowledge no question or result holds, and flagging it (tried once, for a 0.5B model's
    "25 + 3" in a weather question) warned on every such sum. What the model then answers
    from it is checked, as any answer is."""
    replies = [native("calculate", expression=expression), "?"]
    events, _ = play(question, replies, grounding="warn")
    assert [g for g in of(events, GroundingChecked) if g.what == "arguments"] == []


def test_a_city_not_in_the_weather_table_gets_no_other_city_to_copy() -> None:
    """呼和浩特 is not in the table; the error said "The form that works:
    get_weather(city='Paris', day='tomorrow')", Qwen2.5-0.5B (schema) asked for Paris and
    answered "呼和浩特明天天气晴" from Paris' weather, exit 0."""
    replies = [native("get_weather", city="呼和浩特", day="tomorrow"), "?"]
    events, _ = play("呼和浩特明天天气怎么样？", replies)
    error = of(events, ToolFinished)[0].result.content
    assert "not in the built-in table" in error and "Say so in the answer" in error
    assert "Paris" not in error and "get_weather(city=" not in error


@pytest.mark.parametrize(("mode", "action"), [("warn", "warned"), ("check", "stands")])
def test_an_answer_made_after_the_tools_went_is_still_checked(mode: str, action: str) -> None:
    """呼和浩特 is not in the weather table; the failed call sent again withdrew the tools, and
    Qwen2.5-0.5B (schema) answered "呼和浩特明天天气晴朗，温度约为22°C。", exit 0 and unmarked:
    with no tool offered any more, the answer's figures were not checked."""
    city = {"city": "呼和浩特", "day": "tomorrow"}
    invented = "呼和浩特明天天气晴朗，温度约为22°C。"
    replies = [native("get_weather", **city), native("get_weather", "call_2", **city), invented]
    events, _ = play("呼和浩特明天天气怎么样？", replies, grounding=mode)
    assert of(events, AnswerWithoutTools)
    checked = [(g.action, g.figures) for g in of(events, GroundingChecked) if g.what == "answer"]
    assert checked == [(action, ("22",))]
    (answer,) = of(events, FinalAnswer)
    assert answer.text == invented and answer.ungrounded == ("22",)


def test_a_call_sent_again_with_its_default_written_out_is_a_repeat() -> None:
    """get_weather(city="Paris") and get_weather(city="Paris", day="today") run alike (today is
    the default): the second is answered from the first, as the injection guard already read
    them as one call."""
    replies = [
        native("get_weather", city="Paris"),
        native("get_weather", "call_2", city="Paris", day="today"),
        "Paris: 11°C.",
    ]
    events, _ = play("What's the weather in Paris?", replies)
    assert [f.result.cached for f in of(events, ToolFinished)] == [False, True]


def test_a_best_effort_answer_is_checked_for_figures_from_nowhere() -> None:
    """The answer at the iteration limit is made without tools, from the results so far; a
    figure none of them holds is marked there too, as after any withdrawal."""
    replies = [native("get_weather", city="Paris"), "Paris is at 30°C today."]
    events, _ = play("What's the weather in Paris?", replies, max_iterations=1)
    checked = [(g.action, g.figures) for g in of(events, GroundingChecked) if g.what == "answer"]
    assert checked == [("warned", ("30",))]
    (answer,) = of(events, FinalAnswer)
    assert answer.best_effort and answer.ungrounded == ("30",)
    assert answer_label(answer) == (
        "answer (best effort: made without tools at the iteration limit; "
        "unchecked: 30 in no tool result)"
    )


def test_the_summary_notice_counts_rounds_in_words_and_leaves_the_withdrawal_to_its_panel() -> None:
    from toolcall_cli.requests import summary_notice

    assert summary_notice(1, False) == "history window: 1 older tool round sent as a short summary"
    assert summary_notice(3, False) == "history window: 3 older tool rounds sent as a short summary"
    withdrawn = summary_notice(1, True)
    assert withdrawn.startswith("the 1 tool round so far sent as a summary")
    assert "withdrawn" not in withdrawn  # the panel above it says so
