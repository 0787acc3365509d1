"""Traces: the v1 format written and read back, what a run cut short leaves, what is never
written (keys, URL credentials), where traces go by default and how they are pruned, and
`trace list` / `trace show`."""

from __future__ import annotations

import json
import os
import stat
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from fake_openai import Answer, FakeOpenAI, text_stream
from in_process import toolcall
from piped_chat import piped_chat

from toolcall_cli import loop
from toolcall_cli.events import Event, Notice
from toolcall_cli.loop import Limits, ToolPolicy, run
from toolcall_cli.offline import OfflineModel, make_faults
from toolcall_cli.strategies import get_strategy
from toolcall_cli.tools.loader import bundled_tools_dir, load_tools
from toolcall_cli.trace import (
    TraceError,
    TraceWriter,
    event_from_record,
    read_trace,
    runs,
    trace_header,
)
from toolcall_cli.trace.files import TRACE_NAME, find_trace, prune, trace_dir
from toolcall_cli.wire import ModelRequest

REGISTRY = load_tools([bundled_tools_dir()]).registry


def traces() -> list[Path]:
    """The traces in the test's own state dir (conftest points TOOLCALL_STATE_DIR at it)."""
    directory = trace_dir()
    return sorted(directory.glob("*.jsonl")) if directory.is_dir() else []


def only_trace() -> Path:
    [path] = traces()
    return path


def records_of(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]


# --- the format round trip ---------------------------------------------------------------------

# Runs that between them yield every kind of event a run normally has, in each wire format.
ROUND_TRIP_RUNS: list[tuple[str, str, dict[str, Any], tuple[str, ...], Limits]] = [
    ("北京明天最高气温是多少华氏度？", "stream", {"dag": True}, (), Limits()),
    ("北京和上海今天天气怎么样？", "regex", {}, ("broken_batch",), Limits()),
    ("北京今天适合穿短袖吗？", "stream", {"stream_mode": "native"}, (), Limits()),
    ("What's 12*5+3?", "schema", {}, ("wrong_param",), Limits(max_iterations=1)),
    ("What's 12*5+3?", "regex", {}, ("no_tool",), Limits(grounding="check")),
]


def recorded_run(
    tmp_path: Path,
    question: str,
    strategy: str,
    settings: dict[str, Any],
    faults: tuple[str, ...],
    limits: Limits,
) -> tuple[list[Event], Path]:
    model = OfflineModel(faults=make_faults(faults, rate=1.0))
    events = list(
        run(
            question,
            model=model,
            strategy=get_strategy(strategy, **settings),
            registry=REGISTRY,
            history=[],
            limits=limits,
            policy=ToolPolicy(dag=settings.get("dag", False)),
        )
    )
    path = tmp_path / f"{strategy}-{len(list(tmp_path.iterdir()))}.jsonl"
    writer = TraceWriter.open(path)
    writer.header(trace_header("run", {"strategy": strategy}, REGISTRY))
    for event in events:
        writer.write(event)
    writer.close()
    return events, path


def test_a_record_past_the_line_cap_is_written_cut_and_reads_back(tmp_path: Path) -> None:
    """A reply longer than a trace line holds (--max-reply-chars raised) is cut where it is
    longest, saying so, and the trace stays readable; what the run holds is not cut."""
    from toolcall_cli.events import ModelReplied, RunStarted

    cap = 4000
    long_reply = ModelReplied(iteration=1, raw="天" * 1500, text="ok", finish_reason="stop")
    path = tmp_path / "long.jsonl"
    writer = TraceWriter.open(path, line_cap=cap)
    writer.header(trace_header("run", {"strategy": "regex"}, REGISTRY))
    writer.write(RunStarted(question="hi", model="offline", strategy="regex", tools=()))
    writer.write(long_reply)
    writer.close()
    lines = path.read_bytes().splitlines()
    assert len(lines[-1]) <= cap < len("天" * 1500) * 3
    written = read_trace(path, max_line_bytes=cap).records[-1]
    assert (written["kind"], written["text"], written["finish_reason"]) == (
        "model_replied",
        "ok",
        "stop",
    )
    kept, _, note = written["raw"].partition("… [toolcall cut ")
    assert len(kept) > 1000 and kept == "天" * len(kept)  # the start, as it came
    assert note == f"{1500 - len(kept):,} characters here: a trace line holds at most 4,000 bytes]"
    assert long_reply.raw == "天" * 1500  # the event itself is whole


def test_texts_inside_the_messages_fed_back_are_cut_too(tmp_path: Path) -> None:
    from toolcall_cli.events import FedBack

    path = tmp_path / "fed.jsonl"
    writer = TraceWriter.open(path, line_cap=3000)
    writer.header(trace_header("run", {"strategy": "regex"}, REGISTRY))
    writer.write(FedBack(iteration=1, messages=({"role": "tool", "content": "x" * 5000},)))
    writer.close()
    fed = read_trace(path, max_line_bytes=3000).records[-1]["messages"][0]["content"]
    assert fed.startswith("x" * 2000) and fed.endswith("a trace line holds at most 3,000 bytes]")


def test_every_event_reads_back_as_it_was_written(tmp_path: Path) -> None:
    kinds: set[str] = set()
    for question, strategy, settings, faults, limits in ROUND_TRIP_RUNS:
        events, path = recorded_run(tmp_path, question, strategy, settings, faults, limits)
        trace = read_trace(path)
        assert trace.version == 1 and not trace.cut
        assert [event_from_record(record) for record in trace.records] == events
        assert all(isinstance(record["t"], float) for record in trace.records)
        kinds |= {record["kind"] for record in trace.records}
    assert kinds >= {
        "run_started", "iteration_started", "model_chunk", "model_replied", "text_delta",
        "call_forming", "tool_call_parsed", "parse_error", "tool_started", "tool_finished",
        "placeholders_filled", "tool_timeline", "fed_back", "notice", "final_answer",
        "limit_reached", "run_finished", "grounding_checked",
    }  # fmt: skip


def test_the_header_records_the_version_settings_tools_and_plugin_hashes(tmp_path: Path) -> None:
    _, path = recorded_run(tmp_path, "What's 2+2?", "regex", {}, (), Limits())
    header = read_trace(path).header
    assert header is not None
    assert (header["format"], header["version"], header["command"]) == ("toolcall-trace", 1, "run")
    assert header["settings"] == {"strategy": "regex"}
    calculate = next(tool for tool in header["tools"] if tool["name"] == "calculate")
    assert calculate["parameters"]["required"] == ["expression"]
    source = Path(calculate["source"])
    assert source.name == "calculator.py"
    assert header["plugins"][str(source)].startswith("sha256:")
    assert len(header["plugins"][str(source)]) == len("sha256:") + 64


def test_streamed_chunks_are_recorded_as_the_model_sent_them(tmp_path: Path) -> None:
    _, path = recorded_run(tmp_path, "What's 12*5+3?", "stream", {}, (), Limits())
    records = read_trace(path).records
    for iteration in (1, 2):
        chunks = [r for r in records if r["kind"] == "model_chunk" and r["iteration"] == iteration]
        replied = next(
            r for r in records if r["kind"] == "model_replied" and r["iteration"] == iteration
        )
        assert len(chunks) > 1
        text = "".join(chunk["delta"].get("content") or "" for chunk in chunks)
        assert text == replied["raw"]
        finishes = [chunk["finish_reason"] for chunk in chunks if chunk["finish_reason"]]
        assert finishes == [replied["finish_reason"]]


def test_a_non_streamed_reply_has_no_chunk_records(tmp_path: Path) -> None:
    _, path = recorded_run(tmp_path, "What's 12*5+3?", "regex", {}, (), Limits())
    kinds = [record["kind"] for record in read_trace(path).records]
    assert "model_replied" in kinds and "model_chunk" not in kinds


def test_a_last_line_cut_mid_write_is_dropped_and_said(tmp_path: Path) -> None:
    _, path = recorded_run(tmp_path, "What's 2+2?", "regex", {}, (), Limits())
    whole = read_trace(path)
    with path.open("a", encoding="utf-8") as stream:
        stream.write('{"kind": "notice", "level": "info", "mess')
    cut = read_trace(path)
    assert cut.cut and cut.records == whole.records


def test_line_separators_inside_a_record_do_not_split_it(tmp_path: Path) -> None:
    """The writer keeps non-ASCII text raw, so U+2028, U+2029 and U+0085 stand unescaped in a
    JSON string; only "\\n" ends a line."""
    question = "北京\u2028今天\u2029适合\u0085穿短袖吗？"
    path = tmp_path / "t.jsonl"
    writer = TraceWriter.open(path)
    writer.write(Notice(message=question))
    writer.close()
    assert "\u2028" in path.read_text(encoding="utf-8")
    trace = read_trace(path)
    assert [record["message"] for record in trace.records] == [question] and not trace.cut


STARTED = '{"kind": "run_started", "question": "q", "model": "m", "strategy": "regex", "tools": []}'
FINISHED = '{"kind": "run_finished", "stop_reason": "answered", "iterations": 1, "tool_calls": 0, '\
    '"elapsed": 0.1}'  # fmt: skip


def test_the_number_of_a_line_cut_mid_write_is_kept(tmp_path: Path) -> None:
    path = tmp_path / "t.jsonl"
    path.write_text(STARTED + '\n\n{"kind": "notice", "mess', "utf-8")
    trace = read_trace(path)
    assert trace.cut and trace.cut_line == 3 and len(trace.records) == 1


def test_a_line_nested_too_deeply_is_an_error_naming_it(tmp_path: Path) -> None:
    path = tmp_path / "t.jsonl"
    path.write_text(STARTED + "\n" + "[" * 100_000 + "\n", "utf-8")
    with pytest.raises(TraceError, match="line 2 is nested too deeply"):
        read_trace(path)


def test_a_broken_line_inside_a_trace_is_an_error_naming_it(tmp_path: Path) -> None:
    path = tmp_path / "t.jsonl"
    path.write_text(f"{STARTED}\nnot json\n{FINISHED}\n", "utf-8")
    with pytest.raises(TraceError, match="line 2 is not JSON"):
        read_trace(path)


def test_a_trace_from_before_the_header_reads_as_version_0(tmp_path: Path) -> None:
    path = tmp_path / "old.jsonl"
    path.write_text(f"{STARTED}\n{FINISHED}\n", "utf-8")
    trace = read_trace(path)
    assert trace.header is None and trace.version == 0 and len(trace.records) == 2


def test_a_newer_format_is_refused_by_name(tmp_path: Path) -> None:
    path = tmp_path / "new.jsonl"
    path.write_text('{"kind": "trace_header", "format": "toolcall-trace", "version": 9}\n', "utf-8")
    with pytest.raises(TraceError, match="version 9"):
        read_trace(path)


def test_a_chat_trace_splits_into_its_runs(tmp_path: Path) -> None:
    path = tmp_path / "chat.jsonl"
    started, finished = json.loads(STARTED), json.loads(FINISHED)
    lines = [
        {"kind": "trace_header", "format": "toolcall-trace", "version": 1},
        {**started, "question": "a"},
        finished,
        {"kind": "notice", "message": "refused"},
        {**finished, "stop_reason": "input_rejected"},
        {**started, "question": "b"},
        {**finished, "stop_reason": "interrupted"},
        {"kind": "interrupted", "reason": "ctrl-c"},
    ]
    path.write_text("".join(json.dumps(line) + "\n" for line in lines), "utf-8")
    split = runs(read_trace(path))
    assert [[r["kind"] for r in one] for one in split] == [
        ["run_started", "run_finished"],
        ["notice", "run_finished"],
        ["run_started", "run_finished", "interrupted"],
    ]


# --- every run is traced, in the state dir by default -----------------------------------------


def test_a_run_writes_a_trace_in_the_state_dir_by_default(tmp_path: Path) -> None:
    done = toolcall("run", "What's 12*5+3?", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    path = only_trace()
    assert TRACE_NAME.fullmatch(path.name)
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    assert stat.S_IMODE(path.parent.stat().st_mode) == 0o700
    assert done.stderr == f"toolcall: trace {path}\n"  # shown once (plain output: on stderr)
    trace = read_trace(path)
    assert trace.header is not None and trace.header["settings"]["model"] == "offline"
    assert trace.records[-1]["kind"] == "run_finished"


@pytest.mark.parametrize("flag", ["--quiet", "--json"])
def test_quiet_and_json_output_never_name_the_trace(tmp_path: Path, flag: str) -> None:
    done = toolcall("run", "What's 12*5+3?", flag, cwd=tmp_path)
    assert done.returncode == 0 and done.stderr == ""
    assert str(only_trace()) not in done.stdout


def test_no_trace_writes_none(tmp_path: Path) -> None:
    done = toolcall("run", "What's 2+2?", "--no-trace", cwd=tmp_path)
    assert done.returncode == 0 and done.stderr == ""
    assert traces() == []


def test_the_config_file_can_turn_traces_off_and_trace_still_asks_for_one(tmp_path: Path) -> None:
    config = tmp_path / "config.toml"
    config.write_text("[defaults]\ntrace = false\n", encoding="utf-8")
    env = {"TOOLCALL_CONFIG": str(config)}
    assert toolcall("run", "What's 2+2?", cwd=tmp_path, env=env).returncode == 0
    assert traces() == []
    asked = tmp_path / "asked.jsonl"
    assert (
        toolcall("run", "What's 2+2?", "--trace", str(asked), cwd=tmp_path, env=env).returncode == 0
    )
    assert read_trace(asked).records[-1]["stop_reason"] == "answered" and traces() == []


@pytest.mark.parametrize(
    ("line", "problem"),
    [("trace = 0", "trace must be true or false"), ("trace_keep = 0", "trace_keep must be")],
)
def test_bad_trace_settings_are_usage_errors(tmp_path: Path, line: str, problem: str) -> None:
    config = tmp_path / "config.toml"
    config.write_text(f"[defaults]\n{line}\n", encoding="utf-8")
    done = toolcall("run", "hi", cwd=tmp_path, env={"TOOLCALL_CONFIG": str(config)})
    assert done.returncode == 2 and problem in done.stderr and done.stderr.count("\n") == 1


def test_a_state_dir_that_cannot_be_made_costs_the_trace_not_the_run(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    blocker = tmp_path / "a-file"
    blocker.write_text("", encoding="utf-8")
    monkeypatch.setenv("TOOLCALL_STATE_DIR", str(blocker / "state"))
    done = toolcall("run", "What's 2+2?", "--quiet", cwd=tmp_path)
    assert done.returncode == 0 and done.stdout == "2+2 = 4\n"
    assert done.stderr.startswith("toolcall: warning: no trace written: cannot make ")
    assert done.stderr.count("\n") == 1


def test_the_command_line_loads_no_trace_machinery_until_a_command_needs_it() -> None:
    """`toolcall --help` stays fast: platformdirs, the trace package, the offline model, the
    server behind `toolcall serve` (and http.server) and the ejected programs are imported
    lazily, by the commands that need them."""
    import subprocess
    import sys

    lazy = (
        "toolcall_cli.trace",
        "toolcall_cli.offline",
        "toolcall_cli.serve",
        "toolcall_cli.eject",
    )
    probe = (
        "import sys; import toolcall_cli.cli; "
        "print(sorted(m for m in sys.modules if m in ('platformdirs', 'http.server', "
        f"'socketserver') or m.startswith({lazy!r})))"
    )
    done = subprocess.run(
        [sys.executable, "-c", probe], capture_output=True, text=True, check=True, timeout=60
    )
    assert done.stdout.strip() == "[]"


def test_trace_and_no_trace_together_are_a_usage_error(tmp_path: Path) -> None:
    done = toolcall("run", "hi", "--trace", str(tmp_path / "t"), "--no-trace", cwd=tmp_path)
    assert done.returncode == 2 and "cannot be used together" in done.stderr


def test_old_traces_are_pruned_past_trace_keep_and_other_files_are_left(tmp_path: Path) -> None:
    directory = trace_dir()
    directory.mkdir(parents=True)
    old = [directory / f"2020010{day}-000000-abcdef.jsonl" for day in range(1, 6)]
    for path in old:
        path.write_text("{}\n", encoding="utf-8")
    mine = directory / "notes.jsonl"
    mine.write_text("mine\n", encoding="utf-8")
    config = tmp_path / "config.toml"
    config.write_text("[defaults]\ntrace_keep = 3\n", encoding="utf-8")
    done = toolcall("run", "What's 2+2?", cwd=tmp_path, env={"TOOLCALL_CONFIG": str(config)})
    assert done.returncode == 0, done.stderr
    left = sorted(p.name for p in directory.iterdir())
    assert left[:2] == [old[3].name, old[4].name]  # the two newest old ones, and the new one
    assert len(left) == 4 and TRACE_NAME.fullmatch(left[2]) and left[3] == "notes.jsonl"


def test_prune_never_deletes_the_trace_being_written(tmp_path: Path) -> None:
    names = ["20200101-000000-aaaaaa.jsonl", "20200102-000000-bbbbbb.jsonl"]
    for name in names:
        (tmp_path / name).write_text("", encoding="utf-8")
    deleted = prune(tmp_path, keep=1, spare=tmp_path / names[0])
    assert deleted == [tmp_path / names[1]]


# --- a run cut short ---------------------------------------------------------------------------


class InterruptedOnSecondRequest:
    """The offline model, until the person presses Ctrl-C while the second request runs."""

    name = "offline"

    def __init__(self) -> None:
        self.inner = OfflineModel()
        self.requests = 0

    def stream(self, request: ModelRequest) -> Iterator[dict[str, Any]]:
        self.requests += 1
        if self.requests == 2:
            raise KeyboardInterrupt
        return self.inner.stream(request)


def test_ctrl_c_mid_run_leaves_a_valid_trace_ending_interrupted(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from toolcall_cli.app import _model_choice as model_choice

    monkeypatch.setattr(model_choice, "get_model", lambda choice: InterruptedOnSecondRequest())
    done = toolcall("run", "What's 12*5+3?", "--quiet", cwd=tmp_path)
    assert done.returncode == 130
    trace = read_trace(only_trace())
    assert not trace.cut
    kinds = [record["kind"] for record in trace.records]
    assert kinds[0] == "run_started" and kinds.count("iteration_started") == 2
    assert trace.records[-2]["kind"] == "run_finished"
    assert trace.records[-2]["stop_reason"] == "interrupted"
    assert trace.records[-1]["kind"] == "interrupted" and trace.records[-1]["reason"] == "ctrl-c"


def test_a_crash_mid_run_is_recorded_then_told_in_one_line(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    def broken_feed_back(*args: Any, **kwargs: Any) -> Iterator[Event]:
        raise RuntimeError("a bug in feeding back")
        yield  # a generator, as the real one is

    monkeypatch.setattr(loop.Run, "feed_back", broken_feed_back)
    done = toolcall("run", "What's 12*5+3?", "--quiet", cwd=tmp_path)
    assert done.returncode == 1
    assert done.stderr.count("\n") == 1 and "internal error: RuntimeError" in done.stderr
    trace = read_trace(only_trace())
    assert not trace.cut
    assert [r["kind"] for r in trace.records if r["kind"] == "tool_finished"] == ["tool_finished"]
    final, last = trace.records[-2:]
    assert final["kind"] == "run_finished" and final["stop_reason"] == "interrupted"
    assert final["iterations"] == 1 and final["tool_calls"] == 1
    assert last["kind"] == "interrupted" and last["reason"] == "crash"
    assert last["detail"] == "RuntimeError: a bug in feeding back"


# --- never a key or URL credentials ------------------------------------------------------------

API_KEY = "sk-key-SECRET-4567890"
PASSWORD = "pass-SECRET-2468"
USER = "user-SECRET-13579"
QUERY_KEY = "sk-query-SECRET-97531"


def test_no_key_or_url_credential_lands_in_a_trace(tmp_path: Path) -> None:
    with FakeOpenAI() as server:
        port = server.base_url.split(":")[2].split("/")[0]
        url = f"http://{USER}:{PASSWORD}@127.0.0.1:{port}/v1?api_key={QUERY_KEY}"
        server.answers += [
            Answer(sse=text_stream('<tool_call>{"name": "calculate", "arguments": '
                                   '{"expression": "2+2"}}</tool_call>')),
            # A server that echoes what it was sent: the trace masks it all the same.
            Answer(sse=text_stream(f"4 (sent with {API_KEY} to {url})")),
        ]  # fmt: skip
        done = toolcall(
            "run", "What's 2+2?", "--strategy", "stream", "--model", "m", "--base-url", url,
            "--api-key", API_KEY, "--quiet", cwd=tmp_path,
        )  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert len(server.requests) == 2
    text = only_trace().read_text(encoding="utf-8")
    for secret in (API_KEY, PASSWORD, USER, QUERY_KEY):
        assert secret not in text
    trace = read_trace(only_trace())
    assert trace.header is not None
    assert trace.header["settings"]["base_url"] == f"http://****@127.0.0.1:{port}/v1?api_key=****"
    answer = next(r for r in trace.records if r["kind"] == "final_answer")
    assert (
        answer["text"]
        == "4 (sent with **** to http://****:****@127.0.0.1:" + port + "/v1?api_key=****)"
    )
    assert any(r["kind"] == "model_chunk" for r in trace.records)


def test_a_failed_request_keeps_secrets_out_of_the_trace(tmp_path: Path) -> None:
    with FakeOpenAI() as server:
        server.answers.append(
            Answer(status=401, json_body={"error": {"message": f"bad key {API_KEY}"}})
        )
        done = toolcall(
            "run", "hi", "--model", "m", "--base-url", server.base_url, "--api-key", API_KEY,
            "--quiet", cwd=tmp_path,
        )  # fmt: skip
    assert done.returncode == 1
    text = only_trace().read_text(encoding="utf-8")
    assert API_KEY not in text and '"kind": "model_failed"' in text


# --- --system-prompt ---------------------------------------------------------------------------


def test_system_prompt_replaces_the_strategy_s_and_the_trace_records_it(tmp_path: Path) -> None:
    prompt = tmp_path / "prompt.txt"
    prompt.write_text("You are terse. Call tools with <tool_call>{...}</tool_call>.", "utf-8")
    done = toolcall("run", "What's 2+2?", "--system-prompt", str(prompt), "--json", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    requests = [
        json.loads(line)["request"]
        for line in done.stdout.splitlines()
        if json.loads(line)["kind"] == "iteration_started"
    ]
    for request in requests:
        assert request["messages"][0] == {"role": "system", "content": prompt.read_text("utf-8")}
    header = read_trace(only_trace()).header
    assert header is not None and header["settings"]["system_prompt"] == prompt.read_text("utf-8")


def test_system_prompt_is_added_where_the_strategy_sends_none(tmp_path: Path) -> None:
    prompt = tmp_path / "prompt.txt"
    prompt.write_text("Use the tools.", encoding="utf-8")
    done = toolcall(
        "prompt", "What's 2+2?", "--strategy", "schema", "--system-prompt", str(prompt),
        cwd=tmp_path,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    body = json.loads(done.stdout)
    assert body["messages"][:2] == [
        {"role": "system", "content": "Use the tools."},
        {"role": "user", "content": "What's 2+2?"},
    ]
    assert body["tools"]


def test_a_request_without_tools_keeps_the_strategy_s_own_prompt() -> None:
    from toolcall_cli.messages import user

    own = get_strategy("regex", system_prompt="mine")
    plain = get_strategy("regex")
    question = [user("hi")]
    assert own.build_request(question, [], "m").body == plain.build_request(question, [], "m").body
    assert (
        own.build_request(question, REGISTRY.specs(), "m").body["messages"][0]["content"] == "mine"
    )


@pytest.mark.parametrize("command", ["run", "chat", "prompt"])
def test_a_system_prompt_that_cannot_be_read_is_a_usage_error(tmp_path: Path, command: str) -> None:
    args = [command, "hi"] if command != "chat" else [command]
    done = toolcall(*args, "--system-prompt", str(tmp_path / "missing.txt"), cwd=tmp_path)
    assert done.returncode == 2 and done.stderr.count("\n") == 1
    assert "cannot read the system prompt" in done.stderr and "missing.txt" in done.stderr
    assert traces() == []


# --- trace list and trace show -----------------------------------------------------------------


def three_runs(tmp_path: Path) -> list[Path]:
    for question in ("What's 2+2?", "北京今天适合穿短袖吗？", "What's 12*5+3?"):
        assert toolcall("run", question, "--quiet", cwd=tmp_path).returncode == 0
    return traces()


def test_trace_list_is_newest_first(tmp_path: Path) -> None:
    oldest, middle, newest = three_runs(tmp_path)
    done = toolcall("trace", "list", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert [line.split()[0] for line in lines] == [newest.stem, middle.stem, oldest.stem]
    assert lines[0].endswith("What's 12*5+3?") and " answered " in lines[0]
    assert " offline regex " in " ".join(lines[0].split()) + " "


def test_trace_list_json(tmp_path: Path) -> None:
    *_, newest = three_runs(tmp_path)
    done = toolcall("trace", "list", "--json", cwd=tmp_path)
    rows = [json.loads(line) for line in done.stdout.splitlines()]  # one object a line
    assert [row["question"] for row in rows] == [
        "What's 12*5+3?",
        "北京今天适合穿短袖吗？",
        "What's 2+2?",
    ]
    first = rows[0]
    assert first["id"] == newest.stem and first["path"] == str(newest)
    assert (first["model"], first["strategy"], first["stop_reason"]) == (
        "offline",
        "regex",
        "answered",
    )
    assert first["iterations"] == 2 and first["tokens"] > 0
    final = read_trace(newest).records[-1]
    assert first["tokens"] == final["usage"]["total_tokens"]


STRATEGIES_AS_RUN = {
    "regex": ["--strategy", "regex"],
    "schema tools": ["--strategy", "schema"],
    "schema json": ["--strategy", "schema", "--schema-mode", "json"],
    "schema required": ["--strategy", "schema", "--schema-mode", "required"],
    "stream tags": ["--strategy", "stream"],
    "stream native": ["--strategy", "stream", "--stream-mode", "native"],
}


def test_trace_list_names_the_strategy_in_the_mode_each_run_used(tmp_path: Path) -> None:
    for flags in STRATEGIES_AS_RUN.values():
        assert toolcall("run", "What's 2+2?", "-q", *flags, cwd=tmp_path).returncode == 0
    newest_first = list(reversed(STRATEGIES_AS_RUN))
    piped = toolcall("trace", "list", cwd=tmp_path).stdout.splitlines()
    for line, label in zip(piped, newest_first, strict=True):
        assert f"  offline  {label}  2  answered  " in line
    rows = map(json.loads, toolcall("trace", "list", "--json", cwd=tmp_path).stdout.splitlines())
    assert [f"{row['strategy']} {row['mode']}".strip() for row in rows] == newest_first


def test_trace_list_takes_an_older_trace_s_mode_from_its_header(tmp_path: Path) -> None:
    """A trace from before run_started recorded the mode: the header's mode of the strategy's
    kind; none where the run's strategy is not the header's (chosen as the run began)."""
    from toolcall_cli.events import RunStarted

    directory = trace_dir()
    directory.mkdir(parents=True, exist_ok=True)
    settings = {"model": "m", "strategy": "schema", "schema_mode": "json", "stream_mode": "tags"}
    for name, strategy in (
        ("20260101-000000-aaaaaa", "schema"),
        ("20260101-000001-bbbbbb", "regex"),
    ):
        writer = TraceWriter.open(directory / f"{name}.jsonl")
        writer.header(trace_header("run", settings, REGISTRY))
        writer.write(RunStarted(question="hi", model="m", strategy=strategy, tools=()))
        writer.close()
        lines = (directory / f"{name}.jsonl").read_text(encoding="utf-8").splitlines()
        started = json.loads(lines[-1])
        del started["mode"]
        (directory / f"{name}.jsonl").write_text(
            "\n".join([*lines[:-1], json.dumps(started)]) + "\n"
        )
    done = toolcall("trace", "list", "--json", cwd=tmp_path)
    rows = {row["id"]: row["mode"] for row in map(json.loads, done.stdout.splitlines())}
    assert rows == {"20260101-000000-aaaaaa": "json", "20260101-000001-bbbbbb": ""}


def test_trace_list_tells_a_chat_left_unasked_from_a_run_cut_short(tmp_path: Path) -> None:
    """A chat quit before any question holds only its header: "no question", not "unfinished",
    which is for a question that started and never finished."""
    from toolcall_cli.events import RunStarted

    directory = trace_dir()
    directory.mkdir(parents=True, exist_ok=True)
    settings = {"model": "offline", "strategy": "regex"}
    for name, started in (("20260101-000000-aaaaaa", False), ("20260101-000001-bbbbbb", True)):
        writer = TraceWriter.open(directory / f"{name}.jsonl")
        writer.header(trace_header("chat", settings, REGISTRY))
        if started:
            writer.write(RunStarted(question="hi", model="offline", strategy="regex", tools=()))
        writer.close()
    done = toolcall("trace", "list", "--json", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    rows = {row["id"]: row["stop_reason"] for row in map(json.loads, done.stdout.splitlines())}
    assert rows == {"20260101-000000-aaaaaa": "no question", "20260101-000001-bbbbbb": "unfinished"}


def test_trace_list_with_no_traces_says_so(tmp_path: Path) -> None:
    done = toolcall("trace", "list", cwd=tmp_path)
    assert done.returncode == 0 and done.stdout.startswith("No traces yet in ")


def test_trace_show_draws_the_latest_run_again(tmp_path: Path) -> None:
    three_runs(tmp_path)
    shown = toolcall("trace", "show", "--plain", cwd=tmp_path)
    live = toolcall("run", "What's 12*5+3?", "--no-trace", cwd=tmp_path)
    assert shown.returncode == 0, shown.stderr
    # the same plain view as the run drew, after a title line; only the timings may differ
    title, *body = shown.stdout.splitlines()
    assert title.startswith("trace ") and " · run · toolcall " in title
    assert without_times(body) == without_times(live.stdout.splitlines())


def without_times(lines: list[str]) -> list[str]:
    import re

    return [re.sub(r"\d+\.\d\ds", "T", line) for line in lines]


def test_trace_show_finds_a_trace_by_minus_n_id_prefix_and_path(tmp_path: Path) -> None:
    oldest, middle, _ = three_runs(tmp_path)
    by_back = toolcall("trace", "show", "-2", "--plain", cwd=tmp_path).stdout
    by_id = toolcall("trace", "show", middle.stem[:-2], "--plain", cwd=tmp_path).stdout
    by_path = toolcall("trace", "show", str(middle), "--plain", cwd=tmp_path).stdout
    assert "短袖" in by_back and by_back == by_id == by_path
    assert "12*5+3" not in by_back
    assert find_trace("-3", trace_dir()) == oldest


def test_trace_show_json_gives_the_records(tmp_path: Path) -> None:
    *_, newest = three_runs(tmp_path)
    done = toolcall("trace", "show", "--json", cwd=tmp_path)
    assert [json.loads(line) for line in done.stdout.splitlines()] == records_of(newest)


def test_trace_show_in_the_live_layout(tmp_path: Path) -> None:
    three_runs(tmp_path)
    done = toolcall("trace", "show", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert "Iteration 1" in done.stdout and "╭─ answer" in done.stdout and "63" in done.stdout


@pytest.mark.parametrize("kind", ["svg", "html"])
def test_trace_show_exports_a_page(tmp_path: Path, kind: str) -> None:
    three_runs(tmp_path)
    page = tmp_path / f"run.{kind}"
    done = toolcall("trace", "show", "-1", f"--{kind}", str(page), cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert done.stderr == f"toolcall: wrote {page}\n"
    text = page.read_text(encoding="utf-8")
    assert ("<svg" if kind == "svg" else "<html") in text
    assert "answer" in text and "12*5+3" in text


def test_trace_show_of_a_run_cut_short_says_where_it_ended(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from toolcall_cli.app import _model_choice as model_choice

    monkeypatch.setattr(model_choice, "get_model", lambda choice: InterruptedOnSecondRequest())
    toolcall("run", "What's 12*5+3?", "--quiet", cwd=tmp_path)
    done = toolcall("trace", "show", "--plain", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert "the trace ends here: cut short (ctrl-c: interrupted by Ctrl-C)" in done.stdout
    assert "stopped: interrupted" in done.stdout


@pytest.mark.parametrize(
    ("which", "message"),
    [
        ("nope", "no trace 'nope'"),
        ("-9", "no trace -9"),
        ("2", "names 3 traces; give more of the id"),
    ],
)
def test_trace_show_of_a_bad_id_is_one_line_and_exit_2(
    tmp_path: Path, which: str, message: str
) -> None:
    three_runs(tmp_path)
    done = toolcall("trace", "show", which, cwd=tmp_path)
    assert done.returncode == 2 and done.stderr.count("\n") == 1 and message in done.stderr


def test_trace_show_of_a_file_that_is_no_trace_is_one_line_and_exit_2(tmp_path: Path) -> None:
    junk = tmp_path / "junk.jsonl"
    junk.write_bytes(b"\x89PNG\r\n")
    done = toolcall("trace", "show", str(junk), cwd=tmp_path)
    assert done.returncode == 2 and done.stderr.count("\n") == 1
    assert f"{junk} is not a toolcall trace: line 1" in done.stderr


def test_trace_show_with_no_traces_yet(tmp_path: Path) -> None:
    done = toolcall("trace", "show", cwd=tmp_path)
    assert done.returncode == 2 and "no traces yet in" in done.stderr


# --- chat: one trace per session, one run per question -----------------------------------------


def chat_keys(keys: str, tmp_path: Path, trace: TraceWriter) -> int:
    from prompt_toolkit.input import create_pipe_input

    from toolcall_cli.session import Session

    session = Session(model=InterruptOnFirst(), strategy=get_strategy("regex"), registry=REGISTRY)
    with create_pipe_input() as pipe:
        pipe.send_text(keys)
        return piped_chat(session, pipe, tmp_path, trace=trace).loop()


class InterruptOnFirst(InterruptedOnSecondRequest):
    def stream(self, request: ModelRequest) -> Iterator[dict[str, Any]]:
        self.requests += 1
        if self.requests == 1:
            raise KeyboardInterrupt
        return self.inner.stream(request)


def test_a_chat_records_each_question_as_a_run(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "chat.jsonl"
    writer = TraceWriter.open(path)
    keys = "What's 12*5+3?\rWhat's 2+2?\r北京今天适合穿短袖吗？\r\x04"
    assert chat_keys(keys, tmp_path, writer) == 0
    writer.close()
    assert "turn cancelled" in capsys.readouterr().out
    split = runs(read_trace(path))
    assert [one[0]["question"] for one in split] == [
        "What's 12*5+3?",
        "What's 2+2?",
        "北京今天适合穿短袖吗？",
    ]
    assert [one[-1]["stop_reason"] for one in split] == ["interrupted", "answered", "answered"]
    assert split[0][-1]["iterations"] == 1  # the cancelled turn ends as far as it got


def test_a_chat_cut_short_by_a_crash_ends_its_trace_interrupted(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from toolcall_cli import repl

    def crash(self: Any) -> int:
        raise RuntimeError("a bug in the chat")

    monkeypatch.setattr(repl.Repl, "loop", crash)
    path = tmp_path / "chat.jsonl"
    done = toolcall(
        "chat", "--trace", str(path), "--history-file", str(tmp_path / "h"), cwd=tmp_path
    )
    assert done.returncode == 1 and "internal error: RuntimeError" in done.stderr
    trace = read_trace(path)
    assert trace.header is not None and trace.header["command"] == "chat"
    assert trace.records == [
        {"kind": "interrupted", "reason": "crash", "detail": "RuntimeError: a bug in the chat",
         "t": trace.records[0]["t"]},
    ]  # fmt: skip


def test_a_chat_traces_by_default_and_says_where(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from toolcall_cli import repl

    monkeypatch.setattr(repl.Repl, "loop", lambda self: 0)
    done = toolcall("chat", "--history-file", str(tmp_path / "h"), cwd=tmp_path)
    assert done.returncode == 0
    assert done.stderr == f"toolcall: trace {only_trace()}\n"
    assert read_trace(only_trace()).header is not None


def test_trace_files_are_owner_only_even_with_an_open_umask(tmp_path: Path) -> None:
    previous = os.umask(0)
    try:
        done = toolcall("run", "What's 2+2?", "--quiet", cwd=tmp_path)
    finally:
        os.umask(previous)
    assert done.returncode == 0
    assert stat.S_IMODE(only_trace().stat().st_mode) == 0o600
    assert stat.S_IMODE(trace_dir().stat().st_mode) == 0o700


def test_config_show_says_whether_runs_are_traced_and_where(tmp_path: Path) -> None:
    config = tmp_path / "config.toml"
    config.write_text("[defaults]\ntrace_keep = 7\n", encoding="utf-8")
    done = toolcall("config", "show", cwd=tmp_path, env={"TOOLCALL_CONFIG": str(config)})
    assert done.stdout.splitlines()[-1] == f"traces: on, the newest 7 kept ({trace_dir()})"
    config.write_text("[defaults]\ntrace = false\n", encoding="utf-8")
    done = toolcall("config", "show", cwd=tmp_path, env={"TOOLCALL_CONFIG": str(config)})
    assert done.stdout.splitlines()[-1] == f"traces: off ({trace_dir()})"


def test_trace_show_says_what_the_user_answered_an_approval(tmp_path: Path) -> None:
    """At the run the prompt showed the answer; drawn again, the trace's approval_answered
    says it, where it was given. A decline nobody gave (no terminal) has its own notice."""
    from toolcall_cli.events import ApprovalAnswered, RunStarted

    path = tmp_path / "asked.jsonl"
    writer = TraceWriter.open(path)
    writer.header(trace_header("run", {"model": "m", "strategy": "regex"}, REGISTRY))
    writer.write(RunStarted(question="hi", model="m", strategy="regex", tools=()))
    writer.write(ApprovalAnswered(call_id="#1.0", name="rm", answer="yes", waited=2.5))
    writer.write(ApprovalAnswered(call_id="#1.1", name="rm", answer="declined", waited=0.0))
    writer.close()
    shown = toolcall("trace", "show", str(path), "--plain", cwd=tmp_path).stdout
    assert "info: approval of rm #1.0: answered yes after 2.50s" in shown
    assert "#1.1" not in shown


def test_a_trace_named_by_a_pipe_is_read_and_a_folder_is_said_to_be_one(tmp_path: Path) -> None:
    """`toolcall doctor <(ssh box cat run.jsonl)` or `... | toolcall doctor /dev/stdin`: a pipe
    is no regular file, and was looked up as an id ("no such file"); so was a folder."""
    import subprocess
    import sys

    trace = tmp_path / "run.jsonl"
    done = toolcall("run", "What is 2+3?", "-q", "--trace", str(trace), cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    for command in (["doctor"], ["trace", "show"]):
        read = subprocess.run(
            [sys.executable, "-m", "toolcall_cli", *command, "/dev/stdin"],
            input=trace.read_text(encoding="utf-8"), capture_output=True, text=True,
            cwd=tmp_path, timeout=60,
        )  # fmt: skip
        assert read.returncode == 0, read.stderr
        assert "What is 2+3?" in read.stdout
    folder = toolcall("doctor", str(tmp_path), cwd=tmp_path)
    assert folder.returncode == 2
    said = f"toolcall: error: {tmp_path} is a folder: name a trace file in it, or a trace's id"
    assert folder.stderr == said + "\n"


def test_a_device_named_as_a_trace_is_one_line_not_an_endless_read(tmp_path: Path) -> None:
    """Since a pipe is taken as a trace, so was any device: `toolcall trace show /dev/zero` (or
    doctor, replay) read its one endless line for ever, at full CPU, and never answered."""
    from toolcall_cli.trace import TraceError
    from toolcall_cli.trace.files import find_trace

    with pytest.raises(TraceError, match="/dev/zero is a device, not a trace file"):
        find_trace("/dev/zero", tmp_path)
    for command in (["doctor"], ["trace", "show"], ["replay"]):
        done = toolcall(*command, "/dev/zero", cwd=tmp_path)
        assert done.returncode == 2, (command, done.stderr)
        assert done.stderr == "toolcall: error: /dev/zero is a device, not a trace file\n"
