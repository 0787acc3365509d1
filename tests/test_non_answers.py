"""A weak model's non-answers (issue 15): call-shaped JSON written as content is read as a call;
a bare tool name, a call id, an echo of toolcall's own note or of the question, or JSON that
could not be read is fed back, never accepted; and an id is never taken for a tool's name.

The replies are the kind a real Qwen2.5-0.5B gave on llama-server, played by the scripted model.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest
from test_loop import call, of, plugin_registry

from toolcall_cli.answer_check import Conversation, judge
from toolcall_cli.events import (
    AnswerWithoutTools,
    Event,
    FinalAnswer,
    Notice,
    RunFinished,
    ToolFinished,
    ToolStarted,
)
from toolcall_cli.loop import Limits, run
from toolcall_cli.messages import Message
from toolcall_cli.models.scripted import ScriptedModel
from toolcall_cli.strategies import get_strategy
from toolcall_cli.tools.registry import ToolRegistry

PLUGIN = '''
from toolcall_cli import tool

COUNT = {"n": 0}

@tool
def get_weather(city: str) -> str:
    """Get the weather for a city."""
    COUNT["n"] += 1
    return f"{city}: sunny, 21 C (lookup #{COUNT['n']})"
'''

QUESTION = "What is the weather in Beijing today?"
WEATHER_CALL = {"name": "get_weather", "arguments": {"city": "Beijing"}}


@pytest.fixture
def registry(tmp_path: Path) -> ToolRegistry:
    return plugin_registry(tmp_path, PLUGIN)


def play(
    replies: list[Any],
    registry: ToolRegistry,
    strategy: str = "schema",
    *,
    stream_mode: str = "tags",
    **limits: Any,
) -> tuple[list[Event], ScriptedModel, list[Message]]:
    model = ScriptedModel(replies)
    history: list[Message] = []
    events = list(
        run(
            QUESTION,
            model=model,
            strategy=get_strategy(strategy, stream_mode=stream_mode),
            registry=registry,
            history=history,
            limits=Limits(**limits),
        )
    )
    return events, model, history


def native_call(call_id: str, name: str, arguments: dict[str, Any]) -> dict[str, Any]:
    return {
        "role": "assistant",
        "content": None,
        "tool_calls": [
            {
                "id": call_id,
                "type": "function",
                "function": {"name": name, "arguments": json.dumps(arguments)},
            }
        ],
    }


CONTENT_CALLS = {
    "plain": json.dumps(WEATHER_CALL),
    "parameters": json.dumps({"name": "get_weather", "parameters": {"city": "Beijing"}}),
    "function": json.dumps({"function": WEATHER_CALL}),
    "type-function": json.dumps(
        {
            "type": "function",
            "function": {"name": "get_weather", "arguments": json.dumps({"city": "Beijing"})},
        }
    ),
    "list": json.dumps([WEATHER_CALL]),
    "fenced": "```json\n" + json.dumps(WEATHER_CALL, indent=2) + "\n```",
    "qwen-tags": f"<tool_call>\n{json.dumps(WEATHER_CALL)}\n</tool_call>",
}


@pytest.mark.parametrize("content", CONTENT_CALLS.values(), ids=CONTENT_CALLS.keys())
@pytest.mark.parametrize("mode", ["schema", "stream-native"])
def test_a_call_written_as_json_content_is_read_as_a_call(
    registry: ToolRegistry, content: str, mode: str
) -> None:
    strategy, stream_mode = ("stream", "native") if mode == "stream-native" else ("schema", "tags")
    replies = [content, "Beijing is sunny, 21 C."]
    events, model, _ = play(replies, registry, strategy, stream_mode=stream_mode)
    (finished,) = of(events, ToolFinished)
    assert finished.result.ok and finished.call.name == "get_weather"
    assert finished.call.arguments == {"city": "Beijing"}
    assert any("wrote its tool call as JSON text" in n.message for n in of(events, Notice))
    assert [a.text for a in of(events, FinalAnswer)] == ["Beijing is sunny, 21 C."]
    # The history stays valid for the API: the assistant message carries the call, with the
    # id the tool message answers.
    sent = model.requests[1]["messages"]
    assistant = next(m for m in sent if m["role"] == "assistant")
    (wire_call,) = assistant["tool_calls"]
    tool_message = next(m for m in sent if m["role"] == "tool")
    assert tool_message["tool_call_id"] == wire_call["id"] == finished.call.id
    assert wire_call["function"]["name"] == "get_weather"
    assert json.loads(wire_call["function"]["arguments"]) == {"city": "Beijing"}


def test_json_content_naming_a_known_tool_without_arguments_is_a_call(
    registry: ToolRegistry,
) -> None:
    events, _, _ = play(['  {"name": "get_weather"}  ', "Beijing is sunny."], registry)
    (finished,) = of(events, ToolFinished)
    assert finished.call.name == "get_weather" and finished.call.arguments == {}
    assert finished.result.error_kind == "invalid_arguments"  # told which argument it needs


def test_json_content_naming_an_unknown_tool_is_an_unknown_tool_not_an_answer(
    registry: ToolRegistry,
) -> None:
    content = json.dumps({"name": "get_forecast", "arguments": {"city": "Beijing"}})
    events, _model, _ = play([content, "Beijing is sunny."], registry)
    (finished,) = of(events, ToolFinished)
    assert finished.result.error_kind == "unknown_tool" and "get_weather" in finished.result.content
    assert [a.text for a in of(events, FinalAnswer)] == ["Beijing is sunny."]


def test_prose_and_plain_json_data_stay_answers(registry: ToolRegistry) -> None:
    for answer in ['{"city": "Beijing", "weather": "sunny"}', "It is {sunny} in Beijing."]:
        events, _, _ = play([answer], registry)
        assert [a.text for a in of(events, FinalAnswer)] == [answer]
        assert not of(events, ToolStarted)


NON_ANSWERS = {
    "tool-name": "get_weather",
    "tool-name-quoted": " `get_weather()` ",
    "engine-prefix": "[toolcall] Answer the question now.",
    "question-echo": "what is the weather in Beijing today",
    "broken-call-json": '{"name": "get_weather", "arguments": {"city": ',
    "whitespace": "  \n ",
}


NON_ANSWER_CASES = [
    pytest.param(strategy, text, id=f"{strategy}-{name}")
    for strategy in ("schema", "regex")
    for name, text in NON_ANSWERS.items()
    # The text protocol reads broken call JSON as a broken call (a parse error fed back).
    if not (strategy == "regex" and name == "broken-call-json")
]


@pytest.mark.parametrize(("strategy", "text"), NON_ANSWER_CASES)
def test_a_non_answer_is_fed_back_and_the_run_goes_on(
    registry: ToolRegistry, strategy: str, text: str
) -> None:
    events, model, _ = play([text, "Beijing is sunny."], registry, strategy)
    assert [a.text for a in of(events, FinalAnswer)] == ["Beijing is sunny."]
    notices = [n.message for n in of(events, Notice) if n.level == "warning"]
    assert any("not an answer" in n or "reply was empty" in n for n in notices), notices
    told = model.requests[1]["messages"][-1]
    assert told["role"] == "user" and told["content"].startswith("[toolcall]")
    assert "not an answer" in told["content"] or "empty" in told["content"]


def test_an_echo_of_toolcalls_note_is_not_an_answer(registry: ToolRegistry) -> None:
    weather = native_call("c1", "get_weather", {"city": "Beijing"})
    again = native_call("c2", "get_weather", {"city": "Beijing"})
    echo = (
        "You already called get_weather with these arguments in this run; this is the same "
        "result. Use it instead of calling again."
    )
    events, model, _ = play([weather, again, echo, "Sunny, 21 C."], registry)
    assert [a.text for a in of(events, FinalAnswer)] == ["Sunny, 21 C."]
    # Tools are gone by then: the note, then the question again, last.
    *_, told, asked = model.requests[3]["messages"]
    assert "repeats toolcall's note" in told["content"]
    assert asked["content"] == "What is the weather in Beijing today?"


def test_a_call_id_as_the_answer_is_not_an_answer(registry: ToolRegistry) -> None:
    weather = native_call("call_1_0", "get_weather", {"city": "Beijing"})
    events, model, _ = play([weather, "call_1_0", "Sunny."], registry)
    assert [a.text for a in of(events, FinalAnswer)] == ["Sunny."]
    assert "id of an earlier call" in model.requests[2]["messages"][-1]["content"]


def test_non_answers_count_as_rounds_without_progress_and_never_end_answered(
    registry: ToolRegistry,
) -> None:
    events, _, _ = play(["get_weather"] * 6, registry, max_iterations=5, max_failed_rounds=3)
    assert of(events, AnswerWithoutTools)
    assert not of(events, FinalAnswer)
    assert of(events, RunFinished)[0].stop_reason == "limit"


@pytest.mark.parametrize("last", ["get_weather", "", "[toolcall] That was the last round"])
def test_a_non_answer_at_the_last_request_is_no_answer(registry: ToolRegistry, last: str) -> None:
    weather = native_call("c1", "get_weather", {"city": "Beijing"})
    events, _, _ = play([weather, last], registry, max_iterations=1)
    assert not of(events, FinalAnswer)
    assert any("gave no answer" in n.message for n in of(events, Notice))
    assert of(events, RunFinished)[0].stop_reason == "limit"


def test_text_protocol_ids_cannot_pass_for_tool_names(registry: ToolRegistry) -> None:
    events, _, _ = play(
        [call("get_weather", city="Beijing") * 2, "ok"], registry, "regex", max_iterations=2
    )
    ids = [e.call.id for e in of(events, ToolFinished)]  # the twin is answered, not started
    assert len(ids) == 2
    for call_id in ids:
        assert re.fullmatch(r"[A-Za-z_][\w\-.]*", call_id) is None, call_id


@pytest.mark.parametrize("strategy", ["schema", "regex"])
def test_a_call_naming_an_earlier_call_id_is_told_it_is_an_id(
    registry: ToolRegistry, strategy: str
) -> None:
    if strategy == "schema":
        first: Any = native_call("call_1_0", "get_weather", {"city": "Beijing"})
        second: Any = native_call("call_2_0", "call_1_0", {})
    else:
        first = call("get_weather", city="Beijing")
        events, _, _ = play([first, "x"], registry, strategy)
        earlier_id = of(events, ToolStarted)[0].call.id
        second = call(earlier_id)
    events, _, _ = play([first, second, "Sunny."], registry, strategy)
    wrong = of(events, ToolFinished)[1].result
    assert not wrong.ok
    assert "is the id of an earlier call, not a tool" in wrong.content
    assert "get_weather" in wrong.content


@pytest.mark.parametrize(
    ("question", "reply", "answer"),
    [
        ("What is 123 * 47 + 19?", "123 * 47 + 19", False),  # Qwen2.5-0.5B did this
        ("请计算 3.5 乘以 18 再减去 7。", "3.5 乘以 18", False),
        ("What is 123 * 47 + 19?", "123 * 47 + 19 = 5800", True),  # a (wrong) result is new
        ("Which is bigger, 3 or 5?", "5", True),  # one number: may well be the answer
        ("Is it Paris or London?", "London", True),
    ],
)
def test_the_questions_own_numbers_are_no_result(question: str, reply: str, answer: bool) -> None:
    verdict = judge(reply, Conversation(question))
    assert (verdict is None) is answer
    if not answer:
        assert verdict is not None and "repeats the numbers of the question" in verdict.why


@pytest.mark.parametrize(
    "reply",
    [
        "...",
        "。",
        "\u200b",
        "```\n```",
        "</tool_call>",
        "{}",
        "[]",
        "null",
        '<tool_result id="#1.0" name="get_weather">sunny</tool_result>',
    ],
)
def test_a_reply_without_words_or_playing_the_engine_is_not_an_answer(reply: str) -> None:
    verdict = judge(reply, Conversation("What is the weather in Paris?"))
    assert verdict is not None


@pytest.mark.parametrize(
    ("question", "reply"),
    [("Is 7 prime?", "Is 7 prime? No."), ("北京明天下雨吗？", "北京明天下雨吗？不会")],
)
def test_the_question_with_a_short_answer_after_it_is_an_answer(question: str, reply: str) -> None:
    assert judge(reply, Conversation(question)) is None


@pytest.mark.parametrize("strategy", ["regex", "schema"])
def test_a_tools_error_repeated_as_the_answer_is_not_an_answer(
    registry: ToolRegistry, strategy: str
) -> None:
    """Qwen2.5-0.5B in JSON mode answered with the error text it had been fed, exit 0."""
    first: Any = native_call("c1", "get_weather", {"town": "Beijing"})
    if strategy == "regex":
        first = "<tool_call>" + json.dumps({"name": "get_weather", "arguments": {"town": "B"}})
        first += "</tool_call>"
    events, _, _ = play([first, "Beijing is sunny."], registry, strategy)
    (failed,) = [e.result for e in of(events, ToolFinished)]
    error = failed.content.splitlines()[0]
    assert error.startswith("Error:")
    events, model, _ = play([first, error, "Beijing is sunny."], registry, strategy)
    assert [a.text for a in of(events, FinalAnswer)] == ["Beijing is sunny."]
    assert "repeats a tool's error" in json.dumps(model.requests[2]["messages"][-1])


NOT_AN_ANSWER_NOTE = (
    "[toolcall] That was not an answer: it repeats toolcall's note instead of answering. "
    "Answer the question in words, or call a tool."
)


@pytest.mark.parametrize(
    "reply",
    [  # both came back from Qwen2.5-0.5B after such a note, and ended runs as answers
        "That was not an answer. It repeats the toolcall's note instead of answering.",
        "The last tool call was not an answer; it repeats the tool call's note instead of",
        "The last tool call was not an answer: it repeats the error note instead of answering. "
        "Please check the built-in table and provide the city name again.",
    ],
)
def test_a_note_said_back_in_other_words_is_not_an_answer(reply: str) -> None:
    notes = [
        NOT_AN_ANSWER_NOTE,
        "[toolcall] The last 3 rounds of tool calls made no progress (they failed, or repeated "
        "earlier calls). Do not call any tool now: answer the question with what you already "
        "have, and say plainly what could not be found out.",
    ]
    verdict = judge(reply, Conversation("巴西的首都是哪里？", notes=notes))
    assert verdict is not None and "note" in verdict.why


@pytest.mark.parametrize(
    "reply",
    [
        "I could not find out.",
        "The capital of Brazil is Brasília; the note said to answer in words.",
        "It was not sunny: the tool says rain in Tokyo tomorrow, high 20 °C.",
    ],
)
def test_an_answer_sharing_some_words_with_a_note_stays_an_answer(reply: str) -> None:
    assert judge(reply, Conversation("q?", notes=[NOT_AN_ANSWER_NOTE])) is None


def test_a_tools_error_said_back_in_other_words_is_not_an_answer() -> None:
    error = "Error: ValueError: unknown country 'MOSCOW'. Known: China, Japan, Brazil."
    reply = "Error: unknown country MOSCOW, known China Japan Brazil"
    verdict = judge(reply, Conversation("q?", errors=[error]))
    assert verdict is not None and "error" in verdict.why


@pytest.mark.parametrize(
    ("reply", "errors", "answer"),
    [  # the first came back from Qwen2.5-0.5B, and ended a run as if it answered
        (
            "Error: The 'country' parameter must be a string or list. You provided 'beijing'.",
            ["Error: unknown country 'beijing'. Known: China, Japan."],
            False,
        ),
        ("Error: the city was not found.", [], True),  # no tool failed: the model's own words
        ("Errors in Paris today: none, 11 °C.", ["Error: unknown city 'X'."], True),
    ],
)
def test_a_reply_written_as_a_tool_error_in_a_run_that_got_one_is_not_an_answer(
    reply: str, errors: list[str], answer: bool
) -> None:
    verdict = judge(reply, Conversation("q?", errors=errors))
    assert (verdict is None) is answer
