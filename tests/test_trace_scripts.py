"""Traces as scripts: `--model scripted --script TRACE` plays back the replies a run recorded,
chunk by chunk where they were streamed, so a real model's session runs again offline with
the same events; a strategy whose wire format differs is refused; a script that runs out or is
left with replies unused is told in the view, the trace and the exit code."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from fake_openai import Answer, FakeOpenAI, completion, text_stream
from in_process import Finished, toolcall
from prompt_toolkit.input import create_pipe_input
from prompt_toolkit.output import DummyOutput

from toolcall_cli.models.scripted import RecordedReply, ScriptedModel
from toolcall_cli.repl import Repl
from toolcall_cli.session import Session
from toolcall_cli.strategies import get_strategy
from toolcall_cli.tools.loader import bundled_tools_dir, load_tools
from toolcall_cli.trace import TraceWriter, read_trace
from toolcall_cli.trace.files import trace_dir, trace_files
from toolcall_cli.wire import ModelError, ModelRequest

QUESTION = "What's 12*5+3?"
CALL = '<tool_call>{"name": "calculate", "arguments": {"expression": "12*5+3"}}</tool_call>'
ARGUMENTS = '{"expression": "12*5+3"}'
NATIVE_CALL = {
    "id": "call_abc",
    "type": "function",
    "function": {"name": "calculate", "arguments": ARGUMENTS},
}
CALLED = {"expression": "12*5+3"}
USAGE = {"prompt_tokens": 40, "completion_tokens": 7, "total_tokens": 47}


def chunk(delta: dict[str, Any], finish: str | None = None) -> str:
    return json.dumps(
        {
            "object": "chat.completion.chunk",
            "choices": [{"index": 0, "delta": delta, "finish_reason": finish}],
        }
    )


def native_call_stream() -> list[str]:
    """A tool call streamed as OpenAI does: its id and name first, the arguments in pieces,
    then the finish reason and a chunk of usage alone."""
    first = {"index": 0, "id": "call_abc", "type": "function",
             "function": {"name": "calculate", "arguments": ""}}  # fmt: skip
    pieces = ['{"expre', 'ssion": "12*', '5+3"}']
    return [
        chunk({"role": "assistant", "tool_calls": [first]}),
        *(chunk({"tool_calls": [{"index": 0, "function": {"arguments": p}}]}) for p in pieces),
        chunk({}, "tool_calls"),
        json.dumps({"object": "chat.completion.chunk", "choices": [], "usage": USAGE}),
        "[DONE]",
    ]


def thinking_stream(text: str) -> list[str]:
    """Reasoning apart from the content (`reasoning_content`), then the content."""
    return [
        chunk({"role": "assistant", "reasoning_content": "12*5 is 60, "}),
        chunk({"reasoning_content": "plus 3."}),
        *text_stream(text)[:-1],
    ]


def thinking(answer: dict[str, Any], reasoning: str) -> dict[str, Any]:
    """A whole completion with reasoning apart from its content."""
    answer["choices"][0]["message"]["reasoning_content"] = reasoning
    return answer


# (strategy flags, the server's two answers: a call, then the answer)
SERVED: dict[str, tuple[list[str], list[Answer]]] = {
    "regex": (
        ["-s", "regex"],
        [
            Answer(json_body=completion(f"Let me work it out.\n{CALL}", usage=USAGE)),
            Answer(json_body=thinking(completion("12*5+3 = 63"), "The tool said 63.")),
        ],
    ),
    "stream tags": (
        ["-s", "stream"],
        [Answer(sse=text_stream(f"Working.\n{CALL}", piece=4)), Answer(sse=thinking_stream("63"))],
    ),
    "schema tools": (
        ["-s", "schema", "--schema-mode", "tools"],
        [
            Answer(json_body=completion(None, [NATIVE_CALL], "tool_calls", usage=USAGE)),
            Answer(json_body=completion("It is 63.")),
        ],
    ),
    "schema json": (
        ["-s", "schema", "--schema-mode", "json"],
        [
            Answer(json_body=completion(json.dumps({"name": "calculate", "arguments": CALLED}))),
            Answer(json_body=completion(json.dumps({"answer": "63"}))),
        ],
    ),
    "stream native": (
        ["-s", "stream", "--stream-mode", "native"],
        [Answer(sse=native_call_stream()), Answer(sse=text_stream("The answer is 63.", piece=5))],
    ),
}

TIMINGS = ("t", "latency", "elapsed", "started", "ended", "duration")


def comparable(records: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Records without what differs between any two runs of the same replies: the times, and
    the model's name (the playback is the scripted model, which says so)."""

    def clean(value: Any) -> Any:
        if isinstance(value, dict):
            return {k: clean(v) for k, v in value.items() if k not in TIMINGS}
        if isinstance(value, list):
            return [clean(item) for item in value]
        return value

    cleaned = [clean(record) for record in records]
    for record in cleaned:
        if record["kind"] == "run_started":
            record["model"] = "(model)"
        if record["kind"] == "iteration_started":
            record["request"]["model"] = "(model)"
    return cleaned


def only(kinds: set[str], records: list[Any]) -> list[Any]:
    return [record for record in records if record["kind"] in kinds]


def all_but(kinds: set[str], records: list[Any]) -> list[Any]:
    return [record for record in records if record["kind"] not in kinds]


def record_against_the_server(
    tmp_path: Path, flags: list[str], answers: list[Answer], *more: str
) -> Path:
    trace = tmp_path / "recorded.jsonl"
    with FakeOpenAI() as server:
        server.answers += answers
        done = toolcall(
            "run", QUESTION, *flags, "--model", "qwen-test", "--base-url", server.base_url,
            "--trace", str(trace), "-q", *more, cwd=tmp_path,
        )  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert len(server.requests) == len(answers)
    return trace


def play(tmp_path: Path, trace: Path, *flags: str) -> tuple[Finished, Path]:
    played = tmp_path / f"played-{len(list(tmp_path.glob('played-*')))}.jsonl"
    done = toolcall(
        "run", QUESTION, "--model", "scripted", "--script", str(trace), *flags,
        "--trace", str(played), cwd=tmp_path,
    )  # fmt: skip
    return done, played


@pytest.mark.parametrize("label", list(SERVED))
def test_a_served_run_plays_back_offline_with_identical_events(tmp_path: Path, label: str) -> None:
    flags, answers = SERVED[label]
    recorded = record_against_the_server(tmp_path, flags, answers)
    done, played = play(tmp_path, recorded, *flags)
    assert done.returncode == 0, done.stderr
    original, again = read_trace(recorded).records, read_trace(played).records
    # Under stream, a tool runs while the reply is still streaming: whether its end is reported
    # before or after the reply's last chunks depends on the machine's timing, live or played
    # back. The chunks, the tools' ends and every other event must each be the same, in order.
    for kinds in ({"model_chunk"}, {"tool_finished"}):
        assert only(kinds, comparable(again)) == only(kinds, comparable(original))
    racing = {"model_chunk", "tool_finished"}
    assert all_but(racing, comparable(again)) == all_but(racing, comparable(original))
    kinds = {record["kind"] for record in original}
    assert {"tool_call_parsed", "tool_finished", "final_answer"} <= kinds
    if flags[1] == "stream":
        assert "model_chunk" in kinds  # played back chunk by chunk, as they were recorded
    reasoning = [r["reasoning"] for r in again if r["kind"] == "model_replied" and r["reasoning"]]
    if label in ("regex", "stream tags"):  # reasoning apart from the content comes back apart
        assert reasoning in (["The tool said 63."], ["12*5 is 60, plus 3."]), reasoning
    header = read_trace(played).header or {}
    assert header["settings"]["model"] == "scripted"
    assert header["settings"]["script"] == str(recorded)


def test_a_model_that_failed_fails_again_in_the_playback(tmp_path: Path) -> None:
    """A reply cut mid-stream and a refusal are the model's failures: they are played back
    where they happened, with the recorded message."""
    trace = tmp_path / "recorded.jsonl"
    cut = Answer(sse=text_stream(f"Working.\n{CALL}", piece=4), cut_after=120)
    with FakeOpenAI() as server:
        server.answers += [cut, Answer(status=400, json_body={"error": {"message": "no"}})]
        first = toolcall(
            "run", QUESTION, "-s", "stream", "--model", "m", "--base-url", server.base_url,
            "--trace", str(trace), "-q", cwd=tmp_path,
        )  # fmt: skip
    assert first.returncode == 1
    done, played = play(tmp_path, trace, "-s", "stream")
    assert done.returncode == 1
    original = comparable(read_trace(trace).records)
    assert comparable(read_trace(played).records) == original
    [failed] = [record for record in original if record["kind"] == "model_failed"]
    assert failed["error_kind"] in ("connection", "protocol")


def test_a_run_that_could_not_reach_its_model_plays_back_the_same_failure(
    tmp_path: Path, refusing_port: int
) -> None:
    trace = tmp_path / "recorded.jsonl"
    url = f"http://127.0.0.1:{refusing_port}/v1"
    assert toolcall(
        "run", QUESTION, "--model", "m", "--base-url", url, "--trace", str(trace), "-q",
        cwd=tmp_path,
    ).returncode == 1  # fmt: skip
    done, played = play(tmp_path, trace)
    assert done.returncode == 1
    assert comparable(read_trace(played).records) == comparable(read_trace(trace).records)
    assert "cannot connect" in done.stderr


def test_a_trace_written_before_the_header_plays_back_too(tmp_path: Path) -> None:
    """A v0 trace does not say the schema mode: a native reply's `raw` shows it is a message."""
    flags, answers = SERVED["schema tools"]
    recorded = record_against_the_server(tmp_path, flags, answers)
    lines = recorded.read_text(encoding="utf-8").splitlines()[1:]  # the header left out
    old = tmp_path / "old.jsonl"
    old.write_text("".join(line + "\n" for line in lines), encoding="utf-8")
    done, played = play(tmp_path, old, *flags)
    assert done.returncode == 0, done.stderr
    assert comparable(read_trace(played).records) == comparable(read_trace(recorded).records)


def test_an_offline_run_plays_back_under_the_live_view_s_pace(tmp_path: Path) -> None:
    recorded = tmp_path / "offline.jsonl"
    flags = ["-s", "stream", "--faults", "split_tags"]
    first = toolcall("run", QUESTION, *flags, "--trace", str(recorded), "-q", cwd=tmp_path)
    assert first.returncode == 0
    done, played = play(tmp_path, recorded, "-s", "stream", "--pace", "0.001")
    assert done.returncode == 0, done.stderr
    assert comparable(read_trace(played).records) == comparable(read_trace(recorded).records)


# --- a strategy that asks for another wire format ------------------------------------------


@pytest.mark.parametrize(
    ("recorded_with", "played_with", "says", "recorded_as"),
    [
        (["-s", "regex"], ["-s", "stream"], "tagged text, not streamed, and this strategy asks "
         "for tagged text, streamed", "--strategy regex"),
        (["-s", "regex"], ["-s", "schema"], "asks for native tool_calls, not streamed",
         "--strategy regex"),
        (["-s", "stream", "--stream-mode", "native"], ["-s", "schema"],
         "came as native tool_calls, streamed", "--strategy stream --stream-mode native"),
        (["-s", "schema", "--schema-mode", "json"], ["-s", "schema"],
         "came as JSON output, not streamed", "--strategy schema --schema-mode json"),
    ],
)  # fmt: skip
@pytest.mark.script_not_played
def test_a_strategy_of_another_wire_format_is_refused_in_one_line(
    tmp_path: Path, recorded_with: list[str], played_with: list[str], says: str, recorded_as: str
) -> None:
    recorded = tmp_path / "recorded.jsonl"
    first = toolcall("run", QUESTION, *recorded_with, "--trace", str(recorded), cwd=tmp_path)
    assert first.returncode == 0
    before = trace_files(trace_dir())
    done = toolcall("run", QUESTION, "--model", "scripted", "--script", str(recorded),
                    *played_with, cwd=tmp_path)  # fmt: skip
    assert done.returncode == 2 and done.stdout == ""
    assert done.stderr.count("\n") == 1 and done.stderr.startswith("toolcall: error: the trace ")
    assert says in done.stderr, done.stderr
    assert done.stderr.endswith(f"(recorded with {recorded_as})\n"), done.stderr
    assert trace_files(trace_dir()) == before  # nothing ran, nothing was traced


def test_schema_required_plays_a_schema_tools_recording(tmp_path: Path) -> None:
    """Both ask for native tool_calls, not streamed: the replies can be played; what the
    strategy makes of them is another matter (replay's diff shows it)."""
    recorded = tmp_path / "recorded.jsonl"
    toolcall("run", QUESTION, "-s", "schema", "--trace", str(recorded), "-q", cwd=tmp_path)
    done, _ = play(tmp_path, recorded, "-s", "schema", "--schema-mode", "required")
    assert done.returncode in (0, 3), done.stderr


def test_a_recorded_reply_refuses_a_request_that_streams_otherwise() -> None:
    reply = RecordedReply(chunks=(), streamed=True)
    model = ScriptedModel([reply])
    with pytest.raises(ModelError, match="recorded reply 1 was streamed, and request 1 is not"):
        list(model.stream(ModelRequest({"model": "m", "messages": []})))


@pytest.mark.parametrize(
    ("content", "says"),
    [
        ('{"kind": "trace_header", "format": "toolcall-trace", "version": 1}\n',
         "recorded no model reply to play"),
        ('{"kind": "run_started", "question": "q", "model": "m", "strategy": "regex", '
         '"tools": []}\nnot json\n', "line 2 is not JSON"),
    ],
)  # fmt: skip
def test_a_trace_that_cannot_be_played_is_a_usage_error(
    tmp_path: Path, content: str, says: str
) -> None:
    trace = tmp_path / "t.jsonl"
    trace.write_text(content, encoding="utf-8")
    done = toolcall("run", "hi", "--model", "scripted", "--script", str(trace), cwd=tmp_path)
    assert done.returncode == 2 and done.stdout == ""
    assert done.stderr.count("\n") == 1 and "bad script: " in done.stderr and says in done.stderr


# --- the script runs out, or ends with replies unused -----------------------------------------


def test_a_script_that_runs_out_is_told_in_the_view_the_trace_and_the_exit_code(
    tmp_path: Path,
) -> None:
    short = tmp_path / "short.jsonl"
    # Stopped after one request: a trace that holds one reply, for a run that needs two.
    first = toolcall(
        "run", QUESTION, "--max-iterations", "1", "--no-final-answer", "--trace", str(short),
        "-q", cwd=tmp_path,
    )  # fmt: skip
    assert first.returncode == 3
    done, played = play(tmp_path, short)
    assert done.returncode == 6
    told = "the script ran out: it holds 1 reply, and request 2 found none left"
    # Said once, where it happened: the failed request (and once on stderr, as any failure).
    assert done.stdout.count("ran out") == 1
    assert f"model failed (protocol): {told}\n" in done.stdout  # the view (plain text)
    assert done.stderr.count("ran out") == 1 and f"toolcall: error: {told}\n" in done.stderr
    records = read_trace(played).records
    kinds = [record["kind"] for record in records]
    assert kinds[-3:] == ["model_failed", "script_exhausted", "run_finished"]
    end = records[-2]
    assert (end["message"], end["replies"], end["requests"]) == (told, 1, 2)
    shown = toolcall("trace", "show", str(played), "--plain", cwd=tmp_path)
    assert shown.stdout.count("ran out") == 1 and f"model failed (protocol): {told}" in shown.stdout

    as_json = toolcall("run", QUESTION, "--model", "scripted", "--script", str(short),
                       "--json", "--no-trace", cwd=tmp_path)  # fmt: skip
    events = [json.loads(line) for line in as_json.stdout.splitlines()]
    assert as_json.returncode == 6
    said = [event for event in events if "ran out" in json.dumps(event)]
    assert said == [{"kind": "model_failed", "message": told, "error_kind": "protocol"}]


@pytest.mark.script_left_unused
def test_replies_left_unused_are_told_in_the_view_the_trace_and_the_exit_code(
    tmp_path: Path,
) -> None:
    recorded = tmp_path / "recorded.jsonl"
    assert toolcall("run", QUESTION, "--trace", str(recorded), "-q", cwd=tmp_path).returncode == 0
    done, played = play(tmp_path, recorded, "--max-iterations", "1", "--no-final-answer")
    assert done.returncode == 6
    told = "the script ended with 1 reply of 2 never asked for"
    assert f"warning: {told}" in done.stdout and f"toolcall: {told}\n" in done.stderr
    records = read_trace(played).records
    assert [r["kind"] for r in records[-3:]] == ["limit_reached", "script_unused", "run_finished"]
    assert (records[-2]["replies"], records[-2]["requests"]) == (2, 1)


@pytest.mark.script_left_unused
def test_a_script_of_replies_left_unused_is_told_too(tmp_path: Path) -> None:
    script = tmp_path / "script.jsonl"
    script.write_text("\n".join(json.dumps(r) for r in ["63", "spare", "spare"]), "utf-8")
    done = toolcall("run", QUESTION, "--model", "scripted", "--script", str(script), "-q",
                    cwd=tmp_path)  # fmt: skip
    assert done.returncode == 6 and done.stdout == "63\n"
    assert done.stderr == "toolcall: the script ended with 2 replies of 3 never asked for\n"
    [trace] = trace_files(trace_dir())
    assert read_trace(trace).records[-2]["kind"] == "script_unused"


def test_a_script_played_to_its_end_exits_as_the_run_does(tmp_path: Path) -> None:
    script = tmp_path / "script.jsonl"
    script.write_text(json.dumps("63"), "utf-8")
    done = toolcall("run", QUESTION, "--model", "scripted", "--script", str(script), "-q",
                    cwd=tmp_path)  # fmt: skip
    assert (done.returncode, done.stderr) == (0, "")
    [trace] = trace_files(trace_dir())
    assert not any(r["kind"].startswith("script_") for r in read_trace(trace).records)


@pytest.mark.script_not_played
def test_a_refused_question_keeps_its_usage_exit_code(tmp_path: Path) -> None:
    script = tmp_path / "script.jsonl"
    script.write_text(json.dumps("63"), "utf-8")
    done = toolcall(
        "run", "x" * 9000, "--model", "scripted", "--script", str(script), "-q", cwd=tmp_path
    )
    assert done.returncode == 2  # the question was refused: the script is not why
    assert "never asked for" in done.stderr


REGISTRY = load_tools([bundled_tools_dir()]).registry


def chat(keys: str, tmp_path: Path, model: ScriptedModel) -> tuple[Repl, list[dict[str, Any]]]:
    session = Session(model=model, strategy=get_strategy("regex"), registry=REGISTRY)
    path = tmp_path / "chat.jsonl"
    writer = TraceWriter.open(path)
    with create_pipe_input() as pipe:
        pipe.send_text(keys)
        repl = Repl(
            session,
            history_file=tmp_path / "history",
            use_model=lambda name: session.use_model(model),
            pt_input=pipe,
            pt_output=DummyOutput(),
            mode="plain",
            trace=writer,
        )
        assert repl.loop() == 0
    writer.close()
    return repl, read_trace(path).records


@pytest.mark.script_left_unused
def test_a_chat_tells_replies_left_unused_as_it_ends(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    repl, records = chat("What's 2+2?\r\x04", tmp_path, ScriptedModel(["4", "spare"]))
    assert repl.script_mismatch
    assert records[-1]["kind"] == "script_unused" and records[-2]["kind"] == "run_finished"
    assert "toolcall: the script ended with 1 reply of 2 never asked for" in capsys.readouterr().err


def test_a_chat_tells_the_script_running_out_in_the_turn(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    repl, records = chat("What's 2+2?\rAnd 3+3?\r\x04", tmp_path, ScriptedModel(["4"]))
    assert repl.script_mismatch
    kinds = [record["kind"] for record in records]
    assert kinds.count("script_exhausted") == 1
    assert kinds[-3:] == ["model_failed", "script_exhausted", "run_finished"]
    out = capsys.readouterr().out
    told = "the script ran out: it holds 1 reply, and request 2 found none left"
    assert out.count("ran out") == 1 and f"model failed (protocol): {told}" in out


def test_the_chat_command_exits_6_when_its_script_did_not_line_up(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from toolcall_cli import repl as repl_module

    def one_question(self: Repl) -> int:
        self.ask("What's 2+2?")
        self.ask("And 3+3?")
        return 0

    monkeypatch.setattr(repl_module.Repl, "loop", one_question)
    script = tmp_path / "script.jsonl"
    script.write_text(json.dumps("4"), "utf-8")
    done = toolcall("chat", "--model", "scripted", "--script", str(script),
                    "--history-file", str(tmp_path / "h"), cwd=tmp_path)  # fmt: skip
    assert done.returncode == 6
