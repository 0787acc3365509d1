"""--step and --explain: the pauses before each model request and tool execution (go on, edit
the arguments, skip, stop), and the notes that name the layer acting, in both languages."""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import TypeVar

import pytest
from answering import answering
from in_process import toolcall

from toolcall_cli.events import (
    Event,
    FedBack,
    FinalAnswer,
    IterationStarted,
    LimitReached,
    Notice,
    RunFinished,
    RunStarted,
    ToolFinished,
)
from toolcall_cli.loop import STOPPED_AT_A_STEP, Limits, run
from toolcall_cli.messages import Message, ToolCall, ToolResult
from toolcall_cli.offline import OfflineModel
from toolcall_cli.render._jsonl import JsonLinesRenderer
from toolcall_cli.render._plain import PlainRenderer, QuietRenderer
from toolcall_cli.render.explain import Explain, Lang, language_of, note_for
from toolcall_cli.session import Session
from toolcall_cli.stepping import TOOL_CHOICES, TerminalStepper, ask_line
from toolcall_cli.strategies import get_strategy
from toolcall_cli.tools.loader import load_tools
from toolcall_cli.tools.registry import ToolRegistry

WEATHER = '''
from toolcall_cli import tool

ASKED: list[str] = []

@tool
def get_weather(city: str) -> str:
    """Get the weather (天气) for a city."""
    ASKED.append(city)
    return f"{city}: sunny, 20°C"
'''


@pytest.fixture
def registry(tmp_path: Path) -> ToolRegistry:
    folder = tmp_path / "plugin"
    folder.mkdir()
    (folder / "weather.py").write_text(WEATHER, encoding="utf-8")
    loaded = load_tools([folder])
    assert not loaded.problems
    return loaded.registry


def asked_cities(registry: ToolRegistry) -> list[str]:
    tool = registry.get("get_weather")
    assert tool is not None
    cities: list[str] = tool.func.__globals__["ASKED"]
    return cities


class Typist:
    """A user at the pauses who types these lines, in order (None: Ctrl-D)."""

    def __init__(self, *lines: str | None) -> None:
        self.lines = list(lines)
        self.prompts: list[tuple[str, str]] = []
        self.said: list[str] = []

    def ask(self, message: str, default: str) -> str | None:
        self.prompts.append((message, default))
        return self.lines.pop(0)

    def say(self, text: str) -> None:
        self.said.append(text)

    def stepper(self) -> TerminalStepper:
        return TerminalStepper(ask=self.ask, say=self.say)


E = TypeVar("E")

QUESTION = "What's the weather in Tokyo and in Berlin?"


def stepped(
    registry: ToolRegistry, typist: Typist, history: list[Message] | None = None
) -> list[Event]:
    events = run(
        QUESTION,
        model=OfflineModel(),
        strategy=get_strategy("regex"),
        registry=registry,
        history=[] if history is None else history,
        stepping=True,
    )
    return list(answering(events, stepper=typist.stepper()))


def of(events: list[Event], kind: type[E]) -> list[E]:
    return [e for e in events if isinstance(e, kind)]


def test_one_argument_edited_and_one_call_skipped(registry: ToolRegistry) -> None:
    # request 1: Enter; Tokyo: edit to Paris; Berlin: skip; request 2: Enter
    typist = Typist("", "e", '{"city": "Paris"}', "s", "")
    events = stepped(registry, typist)
    assert asked_cities(registry) == ["Paris"]  # Tokyo never ran, Berlin was skipped
    # the edit prompt was prefilled with the model's arguments
    assert ("arguments> ", json.dumps({"city": "Tokyo"})) in typist.prompts
    results = {e.call.arguments["city"]: e.result for e in of(events, ToolFinished)}
    assert results["Paris"].ok and results["Paris"].content == "Paris: sunny, 20°C"
    assert not results["Berlin"].ok and results["Berlin"].error_kind == "skipped_by_user"
    fed = json.dumps([e.messages for e in of(events, FedBack)], ensure_ascii=False)
    assert "skipped by the user" in fed  # the model reads it as the call's result
    assert "Paris" in of(events, FinalAnswer)[0].text
    assert of(events, RunFinished)[0].stop_reason == "answered"
    assert any("edited its arguments" in n.message for n in of(events, Notice))
    shown = "\n".join(typist.said)
    assert "step: model request 1" in shown and f"last message (user): {QUESTION}" in shown
    assert 'step: about to run get_weather {"city": "Berlin"}' in shown


class SlowTypist(Typist):
    """A user who thinks `seconds` at the pause before the second tool: meanwhile the first
    call has run (and finished) on its own thread."""

    def __init__(self, seconds: float, *lines: str | None) -> None:
        super().__init__(*lines)
        self.seconds = seconds
        self.tool_pauses = 0

    def ask(self, message: str, default: str) -> str | None:
        if any("about to run" in line for line in self.said[-2:]):
            self.tool_pauses += 1
            if self.tool_pauses == 2:
                time.sleep(self.seconds)  # a person thinking; the run waits for the answer
        return super().ask(message, default)


def test_time_at_a_prompt_counts_against_no_tool_and_not_the_run(registry: ToolRegistry) -> None:
    """As the learner did it: Enter for #1.0, then 13 s at #1.1's pause, with the default 10 s
    tool timeout and a 10 s limit on the whole run. #1.0 ended long before, and is ok; nothing
    says "timed out" to the model; the run is not out of time, and answers."""
    limits = Limits(run_timeout=10.0)
    assert limits.tool_timeout == 10.0
    typist = SlowTypist(13.0, "", "", "", "")
    running = run(
        QUESTION,
        model=OfflineModel(),
        strategy=get_strategy("regex"),
        registry=registry,
        history=[],
        limits=limits,
        stepping=True,
    )
    events = list(answering(running, stepper=typist.stepper()))
    assert typist.tool_pauses == 2
    results = {e.call.id: e.result for e in of(events, ToolFinished)}
    assert results["#1.0"].ok and results["#1.1"].ok, results
    # what each took is its own run, not the time the user spent at a prompt
    assert results["#1.0"].duration < 10.0 and results["#1.1"].duration < 10.0
    fed_back = json.dumps([e.result.content for e in of(events, ToolFinished)])
    assert "timed out" not in fed_back and "timeout" not in fed_back
    assert not of(events, LimitReached)
    finished = of(events, RunFinished)[0]
    assert finished.stop_reason == "answered" and finished.elapsed < 10.0


def test_an_invalid_edit_says_why_and_asks_again(registry: ToolRegistry) -> None:
    typist = Typist(
        "",
        "e",
        "{city: Paris",  # not JSON
        '["Paris"]',  # not an object
        '{"town": "Paris"}',  # not the tool's schema
        '{"city": "Paris"}',
        "",  # Berlin runs as the model wrote it
        "",
    )
    stepped(registry, typist)
    assert asked_cities(registry) == ["Paris", "Berlin"]
    problems = [line for line in typist.said if line.startswith("  not run:")]
    assert len(problems) == 3
    assert "not JSON" in problems[0]
    assert "JSON object" in problems[1]
    assert "city" in problems[2]  # the schema's own complaint, as the model would read it
    # each retry starts from what the user typed last, not from the model's arguments
    edits = [default for message, default in typist.prompts if message == "arguments> "]
    assert edits == [
        '{"city": "Tokyo"}',
        "{city: Paris",
        '["Paris"]',
        '{"town": "Paris"}',
    ]


def test_ctrl_d_in_the_editor_goes_back_to_the_choices(registry: ToolRegistry) -> None:
    typist = Typist("", "e", None, "x", "", "", "")
    events = stepped(registry, typist)
    assert asked_cities(registry) == ["Tokyo", "Berlin"]
    assert any("Please press Enter" in line for line in typist.said)  # "x" is no choice
    assert of(events, RunFinished)[0].stop_reason == "answered"


def test_ctrl_d_on_the_prefilled_arguments_line_goes_back_to_the_choices() -> None:
    """As a person types at the real prompt: `e`, then Ctrl-D on the line prefilled with the
    arguments (prompt-toolkit's own Ctrl-D ends only an empty line), then `s`."""
    from prompt_toolkit.input import create_pipe_input
    from prompt_toolkit.output import DummyOutput

    said: list[str] = []
    call = ToolCall(id="#1.0", name="get_weather", arguments={"city": "Tokyo"})
    with create_pipe_input() as pipe:

        def ask(message: str, default: str) -> str | None:
            return ask_line(message, default, pt_input=pipe, pt_output=DummyOutput())

        pipe.send_text("e\r\x04s\r")
        choice = TerminalStepper(ask=ask, say=said.append).before_tool(call)
    assert choice == "skip"
    assert said.count(TOOL_CHOICES) == 2  # shown again on the way back


@pytest.mark.parametrize(
    "refused",
    ["{city: Paris", '{"town": "Paris"}'],  # not JSON; JSON that does not fit the tool
    ids=["not JSON", "not the schema"],
)
def test_enter_on_the_refused_arguments_unchanged_goes_back_to_the_choices(
    registry: ToolRegistry, refused: str
) -> None:
    # request 1; Tokyo: edit, refused, Enter on it unchanged, then skip; Berlin; request 2
    typist = Typist("", "e", refused, refused, "s", "", "")
    events = stepped(registry, typist)
    assert asked_cities(registry) == ["Berlin"]
    assert "  unchanged: back to the choices" in typist.said
    assert typist.said.count(TOOL_CHOICES) == 3  # Tokyo's, again after the edit, Berlin's
    assert of(events, RunFinished)[0].stop_reason == "answered"


@pytest.mark.parametrize(
    ("question", "lang", "shown"),
    [
        (QUESTION, "zh", "单步：第 1 次模型请求"),
        ("东京和柏林的天气怎么样？", None, "单步：第 1 次模型请求"),  # the question's
        ("东京和柏林的天气怎么样？", "en", "step: model request 1"),
    ],
)
def test_the_pauses_speak_the_language_lang_chooses(
    registry: ToolRegistry, question: str, lang: Lang | None, shown: str
) -> None:
    typist = Typist("", "x", "", "", "")
    events = run(
        question,
        model=OfflineModel(),
        strategy=get_strategy("regex"),
        registry=registry,
        history=[],
        stepping=True,
    )
    stepper = TerminalStepper(ask=typist.ask, say=typist.say, lang=lang)
    list(answering(events, stepper=stepper))
    said = "\n".join(typist.said)
    assert shown in said
    if shown.startswith("单步"):
        assert "单步：即将运行 get_weather" in said and "请按 Enter" in said  # "x" is no choice
        assert "step:" not in said and "Please" not in said
    else:
        assert "单步" not in said


def test_q_before_the_model_is_asked_stops_the_run(registry: ToolRegistry) -> None:
    events = stepped(registry, Typist("q"))
    assert asked_cities(registry) == []
    assert of(events, IterationStarted) and not of(events, FinalAnswer)
    assert of(events, RunFinished)[0].stop_reason == "interrupted"
    assert any(n.message == STOPPED_AT_A_STEP for n in of(events, Notice))


def test_q_before_a_tool_stops_the_turn_and_the_chat_forgets_it(registry: ToolRegistry) -> None:
    session = Session(
        model=OfflineModel(),
        strategy=get_strategy("regex"),
        registry=registry,
        stepping=True,
    )
    events = list(answering(session.ask(QUESTION), stepper=Typist("", "q").stepper()))
    assert asked_cities(registry) == []
    assert of(events, RunFinished)[0].stop_reason == "interrupted"
    # calls without results would break the next turn's request
    assert session.history == []


@pytest.mark.parametrize("command", [["run", QUESTION], ["chat"]])
def test_step_with_piped_stdin_is_a_usage_error(tmp_path: Path, command: list[str]) -> None:
    done = toolcall(*command, "--step", "--no-trace", cwd=tmp_path, stdin="\n")
    assert done.returncode == 2
    assert done.stderr.strip().splitlines() == [
        "toolcall: error: --step pauses for your answers and needs an interactive terminal on stdin"
    ]
    assert "iteration" not in done.stdout.lower()  # nothing ran


# --- --explain -------------------------------------------------------------------------------


def finished(error_kind: str | None, *, cached: bool = False) -> ToolFinished:
    call = ToolCall(id="#1.0", name="get_weather", arguments={"city": "Paris"})
    result = ToolResult(
        call_id=call.id,
        name=call.name,
        content="..." if error_kind is None else "Error: ...",
        ok=error_kind is None,
        error_kind=error_kind,
        cached=cached,
    )
    return ToolFinished(call=call, result=result)


@pytest.mark.parametrize(
    ("event", "layer", "english", "chinese"),
    [
        (FinalAnswer(text="42"), "loop", "no calls in the reply: the loop ends", "循环结束"),
        (
            finished("invalid_arguments"),
            "execution",
            "validation failed: the error goes back to the model as a tool result, so it can "
            "fix its arguments",
            "参数校验失败",
        ),
        (finished(None), "execution", "the tool ran", "工具已执行"),
        (finished(None, cached=True), "execution", "earlier result is reused", "复用"),
        (finished("skipped_by_user"), "execution", "you skipped the call", "你跳过了"),
        (finished("some_new_kind"), "execution", "the call failed", "调用失败"),
        (
            LimitReached(limit="iterations", message="..."),
            "loop",
            "the iteration limit was reached",
            "轮数上限",
        ),
        (FinalAnswer(text="x", best_effort=True), "loop", "best-effort", "尽力而为"),
    ],
)
def test_each_note_names_its_layer_in_both_languages(
    event: Event, layer: str, english: str, chinese: str
) -> None:
    en, zh = note_for(event, "en"), note_for(event, "zh")
    assert en is not None and zh is not None
    assert en.layer == zh.layer == layer
    assert english in en.text and chinese in zh.text
    assert en.line().startswith(f"explain · {layer}: ")
    assert zh.line().startswith("explain · " + {"loop": "循环层", "execution": "执行层"}[layer])


def test_events_that_need_no_note_get_none() -> None:
    assert note_for(Notice(message="hello"), "en") is None


@pytest.mark.parametrize(
    ("question", "lang"),
    [("北京今天天气怎么样？", "zh"), ("What's 2+2?", "en"), ("Is 東京 warm today?", "zh")],
)
def test_notes_follow_the_questions_language(question: str, lang: str) -> None:
    assert language_of(question) == lang


def started(question: str) -> RunStarted:
    return RunStarted(question=question, model="m", strategy="regex", tools=())


def test_plain_view_shows_notes_in_the_questions_language_unless_told(tmp_path: Path) -> None:
    import io

    out = io.StringIO()
    renderer = Explain(True).wrap(PlainRenderer(out))
    renderer.handle(started("北京天气？"))
    renderer.handle(FinalAnswer(text="晴"))
    assert "循环层: 回复里没有调用：循环结束" in out.getvalue()

    out = io.StringIO()
    renderer = Explain(True, "en").wrap(PlainRenderer(out))
    renderer.handle(started("北京天气？"))
    renderer.handle(FinalAnswer(text="晴"))
    assert "loop: no calls in the reply: the loop ends" in out.getvalue()
    assert "循环" not in out.getvalue()


def test_json_gets_explain_records_and_quiet_gets_none() -> None:
    import io

    out = io.StringIO()
    renderer = Explain(True).wrap(JsonLinesRenderer(out))
    renderer.handle(started("What's 2+2?"))
    renderer.handle(FinalAnswer(text="4"))
    records = [json.loads(line) for line in out.getvalue().splitlines()]
    assert [r["kind"] for r in records] == ["run_started", "final_answer", "explain"]
    assert records[2] == {
        "kind": "explain",
        "about": "final_answer",
        "layer": "loop",
        "note": "no calls in the reply: the loop ends",
    }
    quiet = QuietRenderer(io.StringIO())
    assert Explain(True).wrap(quiet) is quiet
    plain = PlainRenderer(io.StringIO())
    assert Explain(False).wrap(plain) is plain


def test_explain_in_a_run_and_the_trace_left_unchanged(tmp_path: Path) -> None:
    trace = tmp_path / "run.jsonl"
    done = toolcall(
        "run", "--explain", "--json", "--trace", str(trace), "北京天气怎么样", cwd=tmp_path
    )
    assert done.returncode == 0, done.stderr
    kinds = [json.loads(line)["kind"] for line in done.stdout.splitlines()]
    assert "explain" in kinds
    notes = [json.loads(line) for line in done.stdout.splitlines() if '"explain"' in line]
    assert {n["layer"] for n in notes} == {"loop", "protocol", "execution"}
    assert notes[-1]["note"] == "回复里没有调用：循环结束"
    traced = trace.read_text(encoding="utf-8")
    assert '"explain"' not in traced and "final_answer" in traced
