"""Renderers fed synthetic runs built from the real event classes; assertions on the output."""

from __future__ import annotations

import io
import json
import re

from hypothesis import given, settings
from hypothesis import strategies as st
from rich.console import Console

from toolcall_cli.events import (
    AnswerWithoutTools,
    ApprovalAsked,
    CallForming,
    Event,
    FedBack,
    FinalAnswer,
    IterationStarted,
    LimitReached,
    ModelFailed,
    ModelReplied,
    Notice,
    ParseError,
    ReasoningDelta,
    RunFinished,
    RunStarted,
    TextDelta,
    TimelineEntry,
    ToolCallParsed,
    ToolFinished,
    ToolStarted,
    ToolTimeline,
)
from toolcall_cli.messages import ToolCall, ToolResult
from toolcall_cli.render import RenderMode, make_renderer
from toolcall_cli.render.base import Renderer

LONG_RESULT = "x" * 1234
RAW_WITH_MARKUP = (
    '[bold]x[/bold] 我查一下。<tool_call>{"name": "get_weather", "arguments": {"city": "北京"}}'
    "</tool_call>[/tool_call]"
)

WEATHER = ToolCall(
    id="call_1_0", name="get_weather", arguments={"city": "北京"}, raw='{"city": "北京"}'
)
REPAIRED = ToolCall(
    id="call_1_1",
    name="calc",
    arguments={"expr": "1+2"},
    raw="{expr: '1+2'",
    repaired=True,
)
SLOW = ToolCall(id="call_1_2", name="slow_tool", arguments={})
BIG = ToolCall(id="call_2_0", name="read_file", arguments={"path": "a.txt"})


def batch_run() -> list[Event]:
    """A two-iteration regex-strategy run: repaired call, parse error, timeout, long result."""
    return [
        RunStarted(
            question="北京天气怎么样？",
            model="offline",
            strategy="regex",
            tools=("get_weather", "calc", "slow_tool", "read_file"),
        ),
        IterationStarted(iteration=1, request={"model": "offline", "messages": [{}, {}]}),
        ModelReplied(
            iteration=1,
            raw=RAW_WITH_MARKUP,
            text="[bold]x[/bold] 我查一下。",
            reasoning="用户想知道天气。",
            finish_reason="stop",
            latency=0.41,
            usage={"prompt_tokens": 120, "completion_tokens": 45},
        ),
        ToolCallParsed(call=WEATHER),
        ToolCallParsed(call=REPAIRED),
        ParseError(message="invalid JSON in call", raw='{"name": "calc", "arg', call_id="call_1_3"),
        ToolStarted(call=WEATHER),
        ToolStarted(call=REPAIRED),
        ToolStarted(call=SLOW),
        ToolFinished(
            call=WEATHER,
            result=ToolResult(
                call_id="call_1_0",
                name="get_weather",
                content='{"temp": 3, "天气": "晴"}',
                duration=0.01,
            ),
        ),
        ToolFinished(
            call=REPAIRED,
            result=ToolResult(call_id="call_1_1", name="calc", content="3", duration=0.002),
        ),
        ToolFinished(
            call=SLOW,
            result=ToolResult(
                call_id="call_1_2",
                name="slow_tool",
                content="Error: slow_tool timed out after 5s",
                ok=False,
                error_kind="timeout",
                duration=5.0,
            ),
        ),
        Notice(level="warning", message="slow_tool timed out"),
        FedBack(
            iteration=1,
            messages=(
                {
                    "role": "tool",
                    "tool_call_id": "call_1_0",
                    "name": "get_weather",
                    "content": '{"temp": 3}',
                },
                {"role": "tool", "tool_call_id": "call_1_3", "content": "Error: invalid JSON"},
            ),
        ),
        IterationStarted(iteration=2, request={"messages": [{}, {}, {}, {}]}),
        ModelReplied(
            iteration=2,
            raw="<tool_call>…</tool_call>",
            text="",
            latency=0.38,
            usage={"prompt_tokens": 200, "completion_tokens": 10},
        ),
        ToolCallParsed(call=BIG),
        ToolStarted(call=BIG),
        ToolFinished(
            call=BIG,
            result=ToolResult(
                call_id="call_2_0", name="read_file", content=LONG_RESULT, duration=0.03
            ),
        ),
        FedBack(iteration=2, messages=({"role": "tool", "content": LONG_RESULT},)),
        IterationStarted(iteration=3, request={"messages": []}),
        ModelReplied(iteration=3, raw="北京今天晴，3°C。", text="北京今天晴，3°C。", latency=0.2),
        FinalAnswer(text="北京今天晴，3°C。"),
        RunFinished(
            stop_reason="answered",
            iterations=3,
            tool_calls=4,
            elapsed=1.25,
            usage={"prompt_tokens": 320, "completion_tokens": 55},
        ),
    ]


STREAMED = ToolCall(id="call_1_0", name="get_weather", arguments={"city": "上海"})


def streamed_run() -> list[Event]:
    """A stream-strategy iteration: text, a forming call, its tool running while text arrives."""
    return [
        RunStarted(question="上海呢？", model="offline", strategy="stream", tools=("get_weather",)),
        IterationStarted(iteration=1, request={"messages": [{}], "stream": True}),
        ReasoningDelta(text="先查天气"),
        TextDelta(text="好的，"),
        TextDelta(text="我来查。"),
        CallForming(index=0, name="get_weather", arguments_text='{"ci'),
        CallForming(index=0, name="get_weather", arguments_text='{"city": "上'),
        ToolCallParsed(call=STREAMED),
        ToolStarted(call=STREAMED),
        TextDelta(text="稍等。"),
        ToolFinished(
            call=STREAMED,
            result=ToolResult(
                call_id="call_1_0", name="get_weather", content="多云", duration=0.02
            ),
        ),
        ModelReplied(
            iteration=1,
            raw='好的，我来查。<tool_call>{"name": "get_weather"}</tool_call>稍等。',
            text="好的，我来查。稍等。",
            reasoning="先查天气",
            finish_reason="stop",
            latency=0.5,
        ),
        FedBack(iteration=1, messages=({"role": "tool", "content": "多云"},)),
        IterationStarted(iteration=2, request={"messages": [{}], "stream": True}),
        TextDelta(text="上海多云。"),
        ModelReplied(iteration=2, raw="上海多云。", text="上海多云。", latency=0.1),
        FinalAnswer(text="上海多云。"),
        RunFinished(stop_reason="answered", iterations=2, tool_calls=1, elapsed=0.7),
    ]


def render(mode: RenderMode, events: list[Event], *, terminal: bool = False) -> str:
    out = io.StringIO()
    console = Console(
        file=out,
        width=100,
        force_terminal=terminal,
        color_system="truecolor" if terminal else None,
    )
    renderer: Renderer = make_renderer(
        mode,
        console if mode == "live" else out,
        auto_refresh=False,
    )
    for event in events:
        renderer.handle(event)
    renderer.close()
    return out.getvalue()


ANSI = re.compile(r"\x1b\[[0-9;?]*[A-Za-z]")


def plain_text(output: str) -> str:
    return ANSI.sub("", output)


# --- live -----------------------------------------------------------------------------------


def test_live_shows_model_markup_literally() -> None:
    for terminal in (True, False):
        out = plain_text(render("live", batch_run(), terminal=terminal))
        assert "[bold]x[/bold] 我查一下。<tool_call>" in out
        assert "</tool_call>[/tool_call]" in out


def test_live_header_iterations_calls_and_results() -> None:
    out = render("live", batch_run())
    assert "offline" in out and "regex" in out and "get_weather, calc" in out
    for n in (1, 2, 3):
        assert f"Iteration {n}" in out
    assert '→ call get_weather {"city": "北京"}' in out
    assert "json-repair fixed the JSON" in out and "{expr: '1+2'" in out
    assert "✓ get_weather" in out and '{"temp": 3, "天气": "晴"}' in out
    assert "用户想知道天气。" in out


def test_live_errors_show_kind_and_what_was_fed_back() -> None:
    out = render("live", batch_run())
    assert "✗ parse error invalid JSON in call" in out
    assert "fed back to the model as an error result for call_1_3" in out
    assert "✗ slow_tool call_1_2 timeout" in out
    assert "fed back: Error: slow_tool timed out after 5s" in out
    assert "tool get_weather [call_1_0]:" in out


def test_live_cuts_long_results_with_full_length() -> None:
    out = render("live", batch_run())
    assert "x" * 300 not in out.replace("\n", "").replace("│", "")
    assert "… (1,234 chars in full)" in out


def test_live_answer_and_footer() -> None:
    out = render("live", batch_run())
    assert "北京今天晴，3°C。" in out
    footer = " ".join(" ".join(out.splitlines()[-2:]).split())  # it may wrap at 100 columns
    assert "3 iterations" in footer and "4 tool calls" in footer and "1.25s" in footer
    assert "320 prompt / 55 completion tokens" in footer
    assert "latency 0.41s, 0.38s, 0.20s" in footer


def test_live_streamed_iteration_prints_output_then_steps_in_order() -> None:
    out = plain_text(render("live", streamed_run(), terminal=True))
    assert "forming get_weather" in out  # shown in the live region while the call arrived
    assert "running get_weather" in out
    # The scrollback (what stays above) reads: raw output, call, result.
    raw = out.rindex("好的，我来查。<tool_call>")
    assert raw < out.rindex('→ call get_weather {"city": "上海"}') < out.rindex("✓ get_weather")
    assert "上海多云。" in out


def test_live_view_leaves_cursor_visible_after_close() -> None:
    out = render("live", streamed_run()[:8], terminal=True)  # stops mid-stream, like Ctrl-C
    assert out.rindex("\x1b[?25h") > out.rindex("\x1b[?25l")  # shown again after its last hiding
    assert "model output so far (incomplete)" in out
    assert "… get_weather was still running" not in out  # it had not started yet


def test_live_suspends_for_a_prompt_and_resumes() -> None:
    out = io.StringIO()
    console = Console(file=out, width=100, force_terminal=True)
    renderer = make_renderer("live", console, auto_refresh=False)
    events = streamed_run()
    for event in events[:8]:  # mid-stream, as when the loop asks before a dangerous tool
        renderer.handle(event)
    with renderer.suspended():
        out.write("Run dangerous tool? [y/N]")
        at_prompt = out.getvalue()
    for event in events[8:]:
        renderer.handle(event)
    renderer.close()
    # The prompt had the terminal to itself: live region stopped, cursor shown.
    assert at_prompt.rindex("\x1b[?25h") > at_prompt.rindex("\x1b[?25l")
    rest = plain_text(out.getvalue()[len(at_prompt) :])
    assert "running get_weather" in rest  # the live region came back
    assert "✓ get_weather" in rest and "上海多云。" in rest


def test_live_interrupted_tool_is_reported() -> None:
    out = render("live", streamed_run()[:9])
    assert "get_weather was still running" in out


def ctrl_c_at_the_question(answered_first: bool) -> str:
    """The live view of a run stopped by Ctrl-C while its tool waited for approval (or, after
    the answer, while it ran)."""
    out = io.StringIO()
    renderer = make_renderer("live", Console(file=out, width=100), auto_refresh=False)
    for event in [*streamed_run()[:9], ApprovalAsked(call=STREAMED, reason="dangerous")]:
        renderer.handle(event)
    try:
        with renderer.suspended():
            if not answered_first:
                raise KeyboardInterrupt
    except KeyboardInterrupt:
        pass
    renderer.close()
    return out.getvalue()


def test_live_call_stopped_at_its_approval_question_did_not_run() -> None:
    out = ctrl_c_at_the_question(answered_first=False)
    assert "… get_weather did not run: stopped while it waited for your answer" in out
    assert "still running" not in out
    assert "get_weather was still running" in ctrl_c_at_the_question(answered_first=True)


def test_live_timeline_of_native_calls_keeps_how_each_ended_at_100_columns() -> None:
    # OpenAI's call ids are 29 characters: the bar used to push "invalid_arguments" off the line.
    ids = ("call_f7e7ec6ecfad5af3f44ae303", "call_bfa324b94e91d3eab20343ac")
    entries = tuple(
        TimelineEntry(
            call_id=i,
            name="get_weather",
            ref=None,
            waits_for=(),
            started=0.08,
            ended=0.08,
            ok=outcome == "ok",
            outcome=outcome,
        )
        for i, outcome in zip(ids, ("invalid_arguments", "ok"), strict=True)
    )
    out = plain_text(render("live", [ToolTimeline(entries=entries)], terminal=True))
    lines = [line for line in out.splitlines() if "call_" in line]
    assert lines[0].endswith("0.08-0.08s invalid_arguments") and lines[1].endswith("0.08s ok")
    assert max(map(len, lines)) <= 100


def test_live_withdrawn_tools_are_named_first_in_a_narrow_terminal() -> None:
    # At 60 columns the title was cut to "the model sent a failed call again unchanged: tools wit".
    withdrawn = AnswerWithoutTools(
        failed_rounds=2, message="Do not call any tool now.", repeated=True, failed_again=True
    )
    out = io.StringIO()
    renderer = make_renderer("live", Console(file=out, width=60), auto_refresh=False)
    renderer.handle(withdrawn)
    renderer.close()
    assert "─ tools withdrawn: the model sent a failed call" in out.getvalue()


def test_a_call_without_its_closing_tag_is_shown_read_leniently() -> None:
    # `toolcall doctor` named it ("no closing </tool_call>"); the views showed nothing.
    unclosed = ToolCall(
        id="#1.0", name="calc", arguments={"expr": "1+2"}, raw='<tool_call>{"name": "calc"'
    )
    for mode in ("live", "plain"):
        out = plain_text(
            render(mode, [ToolCallParsed(call=unclosed), ToolCallParsed(call=WEATHER)])
        )
        assert out.count("read leniently: no closing </tool_call>") == 1, (mode, out)


def test_a_call_outside_its_tags_is_shown_read_leniently_where_tags_were_asked_for() -> None:
    """A ```json block (or bare JSON) read as a call under the text protocol: the doctor named
    it, the views did not. A native call's raw text is never tagged: no note there."""
    fenced = ToolCall(id="#1.0", name="calc", arguments={"expr": "1+2"}, raw='{"name": "calc"}')
    shown = {}
    for strategy, mode in (
        ("regex", ""),
        ("stream", "tags"),
        ("stream", "native"),
        ("schema", "tools"),
    ):
        start = RunStarted(question="q", model="m", strategy=strategy, mode=mode, tools=("calc",))
        views: tuple[RenderMode, ...] = ("live", "plain")
        for view in views:
            out = plain_text(render(view, [start, ToolCallParsed(call=fenced)]))
            shown[strategy, mode, view] = out.count("read leniently: not in <tool_call> tags")
    assert shown == {
        (strategy, mode, view): int(mode != "native" and strategy != "schema")
        for strategy, mode, view in shown
    }


def test_live_limit_and_model_failure() -> None:
    start = RunStarted(question="q", model="m", strategy="regex", tools=())
    limited = render("live", [start, LimitReached(limit="iterations", message="stopped after 5")])
    assert "limit reached: iterations" in limited and "stopped after 5" in limited
    failed = render(
        "live",
        [
            start,
            IterationStarted(iteration=1, request={}),
            TextDelta(text="partial 回答"),
            ModelFailed(message="connection refused [red]", error_kind="connection"),
        ],
    )
    assert "model failed: connection" in failed and "connection refused [red]" in failed
    assert failed.index("partial 回答") < failed.index("connection refused")


def test_live_escapes_terminal_control_codes_from_the_model() -> None:
    events: list[Event] = [
        IterationStarted(iteration=1, request={}),
        ModelReplied(iteration=1, raw="evil\x1b[2Jtext", text=""),
        FinalAnswer(text="bye\x07"),
    ]
    out = render("live", events, terminal=False)
    assert "\x1b" not in out and "\x07" not in out
    assert "evil\\x1b[2Jtext" in out and "bye\\x07" in out


# --- plain ----------------------------------------------------------------------------------


def test_plain_has_no_control_codes_and_the_same_steps() -> None:
    out = render("plain", batch_run() + streamed_run())
    assert "\x1b" not in out
    lines = out.splitlines()
    assert "== iteration 1 ==" in lines
    assert "model output:" in lines
    assert "    " + RAW_WITH_MARKUP in lines
    assert 'call get_weather {"city": "北京"}  call_1_0' in lines
    assert any(line.startswith("    (json-repair fixed the JSON") for line in lines)
    assert 'tool get_weather call_1_0 ok 0.01s -> {"temp": 3, "天气": "晴"}' in lines
    assert (
        "tool slow_tool call_1_2 error timeout 5.00s -> Error: slow_tool timed out after 5s"
        in lines
    )
    assert "error parse_error call_1_3: invalid JSON in call" in lines
    assert "fed back:" in lines
    assert "answer: 北京今天晴，3°C。" in lines
    assert "warning: slow_tool timed out" in lines


def test_plain_cuts_long_results_and_writes_the_footer() -> None:
    out = render("plain", batch_run())
    assert "x" * 301 not in out
    assert "    … (1,234 chars in full)" in out.splitlines()
    assert out.splitlines()[-1] == (
        "-- 3 iterations, 4 tool calls (1 failed), 1.25s, 320 prompt / 55 completion tokens, "
        "latency 0.41s, 0.38s, 0.20s, stopped: answered"
    )


def test_the_footer_says_when_every_call_failed_and_the_answer_stands_on_no_result() -> None:
    # Qwen2.5-0.5B asked to send an email called send_email (no such tool), then answered
    # "Email sent.": the footer said "1 tool call ... stopped: answered", as for a clean run.
    email = ToolCall(id="#1.0", name="send_email", arguments={"to": "a@example.com"})
    refused = ToolResult(
        call_id="#1.0",
        name="send_email",
        content="Error: unknown tool `send_email`.",
        ok=False,
        error_kind="unknown_tool",
    )
    events: list[Event] = [
        RunStarted(question="Email a@example.com", model="m", strategy="regex", tools=("calc",)),
        IterationStarted(iteration=1, request={"messages": [{}, {}]}),
        ModelReplied(iteration=1, raw="…", text=""),
        ToolCallParsed(call=email),
        ToolStarted(call=email),
        ToolFinished(call=email, result=refused),
        IterationStarted(iteration=2, request={"messages": [{}, {}, {}, {}]}),
        ModelReplied(iteration=2, raw="Email sent.", text="Email sent."),
        FinalAnswer(text="Email sent."),
        RunFinished(stop_reason="answered", iterations=2, tool_calls=1, elapsed=0.5),
    ]
    modes: tuple[RenderMode, ...] = ("plain", "live")
    for mode in modes:
        footer = " ".join(render(mode, events).split())
        assert "1 tool call (all failed)" in footer, mode
        assert footer.endswith("stopped: answered without any tool result"), mode


def test_plain_skips_deltas_but_shows_the_whole_reply() -> None:
    out = render("plain", streamed_run())
    assert "forming" not in out
    assert '    好的，我来查。<tool_call>{"name": "get_weather"}</tool_call>稍等。' in out


def test_plain_footer_names_a_stop_that_is_not_an_answer() -> None:
    events: list[Event] = [
        ModelFailed(message="401 unauthorized", error_kind="auth"),
        RunFinished(stop_reason="model_failed", iterations=1, tool_calls=0, elapsed=0.1),
    ]
    lines = render("plain", events).splitlines()
    assert lines == [
        "model failed (auth): 401 unauthorized",
        "-- 1 iteration, 0 tool calls, 0.10s, stopped: model_failed",
    ]


# --- json lines and quiet -------------------------------------------------------------------


def test_jsonl_one_parseable_object_per_event_kind_first() -> None:
    events = batch_run()
    lines = render("json", events).splitlines()
    assert len(lines) == len(events)
    objects = [json.loads(line) for line in lines]
    assert [o["kind"] for o in objects] == [e.kind for e in events]
    assert all(next(iter(o)) == "kind" for o in objects)
    assert objects[0]["tools"] == ["get_weather", "calc", "slow_tool", "read_file"]
    assert "北京天气怎么样？" in lines[0]  # ensure_ascii=False
    parsed = objects[3]["call"]
    assert parsed["arguments"] == {"city": "北京"} and parsed["repaired"] is False


def test_jsonl_survives_arguments_json_cannot_hold() -> None:
    call = ToolCall(id="c", name="t", arguments={"s": {1, 2}})
    (line,) = render("json", [ToolCallParsed(call=call)]).splitlines()
    assert json.loads(line)["call"]["arguments"]["s"] == "{1, 2}"


def test_quiet_prints_only_the_answer() -> None:
    assert render("quiet", batch_run()) == "北京今天晴，3°C。\n"
    limited: list[Event] = [
        LimitReached(limit="iterations", message="stopped"),
        RunFinished(stop_reason="limit", iterations=5, tool_calls=5, elapsed=1.0),
    ]
    assert render("quiet", limited) == ""


# --- nothing from a model breaks a renderer -------------------------------------------------

untrusted = st.text(
    alphabet=st.sampled_from(list("[]/\\{}\"'<>\n\t\x1b\x00\r 北京ab=:")) | st.characters(),
    max_size=60,
)


@settings(max_examples=60, deadline=None)
@given(raw=untrusted, name=untrusted, args=untrusted, content=untrusted, index=st.integers(-3, 3))
def test_no_renderer_fails_on_untrusted_text(
    raw: str, name: str, args: str, content: str, index: int
) -> None:
    call = ToolCall(id=name, name=name, arguments=args, raw=raw, repaired=True)
    events: list[Event] = [
        RunStarted(question=raw, model=name, strategy=name, tools=(name,)),
        IterationStarted(iteration=1, request={"messages": raw}),
        TextDelta(text=raw),
        CallForming(index=index, name=None, arguments_text=args),
        ToolCallParsed(call=call),
        ToolStarted(call=call),
        ParseError(message=content, raw=raw, call_id=name, truncated=True),
        ModelReplied(
            iteration=1,
            raw=raw,
            text=raw,
            reasoning=content,
            finish_reason=name,
            usage={"total_tokens": 3},
        ),
        ToolFinished(
            call=call,
            result=ToolResult(
                call_id=name, name=name, content=content, ok=False, full_length=10_000
            ),
        ),
        FedBack(iteration=1, messages=({"role": raw, "content": [content, {"text": args}]},)),
        FinalAnswer(text=content),
        RunFinished(stop_reason="interrupted", iterations=1, tool_calls=1, elapsed=0.0),
    ]
    render("live", events, terminal=True)  # must not raise
    modes: tuple[RenderMode, ...] = ("live", "plain", "json", "quiet")
    for mode in modes:
        # Without a terminal nothing adds colour, so any escape would be the model's.
        assert "\x1b" not in render(mode, events, terminal=False)


def test_partial_arguments_are_shown_as_the_json_they_are_becoming() -> None:
    from toolcall_cli.render.base import partial_arguments

    assert partial_arguments('{"city": "北') == '{"city": "北"}'
    assert partial_arguments('{"a": [1, 2') == '{"a": [1, 2]}'
    assert partial_arguments("{'a': 1") == "{'a': 1"  # not JSON: shown as it is
    assert partial_arguments("  ") == ""


def test_plain_show_request_prints_the_body() -> None:
    import io

    from toolcall_cli.events import IterationStarted
    from toolcall_cli.render import make_renderer

    out = io.StringIO()
    renderer = make_renderer("plain", out, show_request=True)
    renderer.handle(
        IterationStarted(iteration=1, request={"model": "m", "messages": [], "tools": []})
    )
    assert '"model": "m"' in out.getvalue() and "\x1b" not in out.getvalue()


# --- what a tool printed --------------------------------------------------------------------

PRINTED = "line 1\n\x1b[31m[red]line 2[/red]\n" + "".join(f"more {i}\n" for i in range(20))
# As shown: the escape spelt out (\x1b, 3 more characters), the last newline dropped.
PRINTED_SHOWN_LENGTH = len(PRINTED) + 3 - 1


def printed_run(*, cached: bool = False) -> list[Event]:
    result = ToolResult(
        call_id="call_1_0", name="get_weather", content="晴", output=PRINTED, cached=cached
    )
    return [IterationStarted(iteration=1, request={}), ToolFinished(call=WEATHER, result=result)]


def test_plain_shows_what_the_tool_printed_under_its_result_cut() -> None:
    lines = render("plain", printed_run()).splitlines()
    at = lines.index("tool get_weather call_1_0 ok 0.00s -> 晴")
    assert lines[at + 1 : at + 4] == [
        "    printed by the tool:",
        "      line 1",
        "      \\x1b[31m[red]line 2[/red]",
    ]
    assert "      more 3" in lines and "      more 4" not in lines  # six lines at most
    assert f"      … ({PRINTED_SHOWN_LENGTH:,} chars in full)" in lines


def test_live_shows_what_the_tool_printed_literally_and_cut() -> None:
    out = plain_text(render("live", printed_run(), terminal=True))
    assert "printed by the tool:" in out
    assert "\\x1b[31m[red]line 2[/red]" in out
    assert "more 3" in out and "more 4" not in out
    assert f"({PRINTED_SHOWN_LENGTH:,} chars in full)" in out


def test_a_reused_result_shows_no_printed_output() -> None:
    for mode in ("plain", "live"):
        out = render(mode, printed_run(cached=True))
        assert "printed by the tool" not in out and "line 1" not in out


def test_jsonl_carries_what_the_tool_printed() -> None:
    line = render("json", printed_run()).splitlines()[-1]
    assert json.loads(line)["result"]["output"] == PRINTED


# --- each result tied to its call, every stop named -------------------------------------------


def two_long_results() -> list[Event]:
    """Two calls of one tool whose results are long: a text protocol feeds both back in one
    user message of result blocks."""
    long = json.dumps({"city": "Tokyo", "note": "n" * 400})
    blocks = "\n".join(
        f'<tool_result id="#1.{i}" name="get_weather">\n{long}\n</tool_result>' for i in (0, 1)
    )
    calls = [
        ToolCall(id=f"#1.{i}", name="get_weather", arguments={"city": "Tokyo"}) for i in (0, 1)
    ]
    return [
        IterationStarted(iteration=1, request={}),
        ModelReplied(iteration=1, raw="two calls", text=""),
        *(ToolCallParsed(call=call) for call in calls),
        *(
            ToolFinished(
                call=call, result=ToolResult(call_id=call.id, name=call.name, content=long)
            )
            for call in calls
        ),
        FedBack(iteration=1, messages=({"role": "user", "content": blocks},)),
    ]


def test_every_result_and_every_fed_back_block_shows_its_call_id() -> None:
    for mode in ("live", "plain"):
        out = render(mode, two_long_results())
        for call_id in ("#1.0", "#1.1"):
            result_line = (
                f"✓ get_weather {call_id}" if mode == "live" else f"tool get_weather {call_id} ok"
            )
            assert result_line in out, (mode, out)
            fed = out.split("fed back")[-1]
            # each block on its own line, its text cut there: the second id is not lost
            line = next(ln for ln in fed.splitlines() if f'<tool_result id="{call_id}"' in ln)
            assert line.rstrip().endswith("…"), (mode, line)


def test_an_answered_run_names_its_stop_reason_on_its_last_line() -> None:
    events: list[Event] = [
        FinalAnswer(text="63"),
        RunFinished(stop_reason="answered", iterations=2, tool_calls=1, elapsed=0.5),
    ]
    for mode in ("live", "plain", "json"):
        last = render(mode, events).rstrip().splitlines()[-1]
        assert "answered" in last and "stop" in last, (mode, last)


def test_a_reply_cut_inside_a_call_says_so_once_and_then_why() -> None:
    """The parser's message says the reply ended inside the call; the view adds the cause,
    not the same news again."""
    message = "The reply ended inside a tool call (the JSON is incomplete), so it was not run."
    raw = '<tool_call>{"name": "x",'
    error = ParseError(message=message, raw=raw, call_id="#1.0", truncated=True)
    modes: tuple[RenderMode, ...] = ("plain", "live")
    for mode in modes:
        shown = plain_text(render(mode, [error]))
        assert shown.lower().count("ended inside") == 1, mode
        assert "cut short by max_tokens, or by a stream that broke off" in shown, mode


def test_plain_text_leaves_no_spaces_at_the_ends_of_lines() -> None:
    """A blank line of the model's output, indented under its label, was four spaces."""
    reply = ModelReplied(
        iteration=1, raw="Sure.\n\nHang on.", text="Sure.\n\nHang on.", finish_reason="stop"
    )
    lines = render("plain", [reply]).split("\n")
    assert "    Hang on." in lines and [line for line in lines if line != line.rstrip()] == []
