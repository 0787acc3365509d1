"""`toolcall replay TRACE`: the recorded questions asked again with what is configured now (the
recording's settings where no flag says otherwise), the diff per iteration, and the exit code:
0 when the replay matches, 5 when it differs. Against the offline model, the scripted model
(the trace's own replies) and a real HTTP server on 127.0.0.1."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from fake_openai import Answer, FakeOpenAI, completion
from in_process import Finished, toolcall
from prompt_toolkit.input import create_pipe_input
from prompt_toolkit.output import DummyOutput

from toolcall_cli.offline import OfflineModel
from toolcall_cli.repl import Repl
from toolcall_cli.session import Session
from toolcall_cli.strategies import get_strategy
from toolcall_cli.tools.loader import bundled_tools_dir, load_tools
from toolcall_cli.trace import TraceWriter, read_trace, runs, trace_header
from toolcall_cli.trace.files import trace_dir, trace_files
from toolcall_cli.wire import ModelRequest

TWO_CITIES = "北京和上海今天天气怎么样？"
WEATHER = "北京今天适合穿短袖吗？"
SUM = "What's 12*5+3?"


def record(tmp_path: Path, question: str, *flags: str, name: str = "recorded.jsonl") -> Path:
    trace = tmp_path / name
    done = toolcall("run", question, "--trace", str(trace), "-q", *flags, cwd=tmp_path)
    assert done.returncode in (0, 2, 3), done.stderr  # 2: a question refused as too long
    return trace


def replay(tmp_path: Path, *args: str) -> Finished:
    return toolcall("replay", *args, cwd=tmp_path)


def replay_json(tmp_path: Path, *args: str) -> tuple[int, dict[str, Any]]:
    done = replay(tmp_path, *args, "--json")
    assert done.returncode in (0, 5), done.stderr
    data: dict[str, Any] = json.loads(done.stdout)
    assert done.returncode == (0 if data["same"] else 5)
    return done.returncode, data


def items(data: dict[str, Any], question: int = 1) -> list[dict[str, Any]]:
    found: list[dict[str, Any]] = data["questions"][question - 1]["items"]
    return found


def differing(data: dict[str, Any], question: int = 1) -> list[tuple[int | None, str]]:
    """What differs, tokens (shown, never compared) aside."""
    found = items(data, question)
    return [(i["iteration"], i["what"]) for i in found if i["compared"] and not i["same"]]


# --- against the offline model -----------------------------------------------------------------


def test_a_bare_replay_reproduces_the_run(tmp_path: Path) -> None:
    recorded = record(tmp_path, TWO_CITIES)
    done = replay(tmp_path, str(recorded))
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert lines[0] == f"toolcall replay  {recorded}  (1 question)"
    assert lines[1] == "  recorded  offline · regex"
    assert lines[2].startswith("  replayed  offline · regex · trace ")
    assert '    = calls         get_weather {"city": "北京", "day": "today"}' in lines
    assert "  = stop          answered" in lines and "  = iterations    2" in lines
    assert lines[-1] == "= the replay matches the recording (tokens aside)"
    code, data = replay_json(tmp_path, str(recorded))
    assert code == 0 and data["differences"] == 0
    assert [i["what"] for i in items(data)] == [
        "calls", "results", "calls", "iterations", "stop", "tokens", "answer",
    ]  # fmt: skip
    calls = items(data)[0]
    assert (
        calls["recorded"]
        == calls["replayed"]
        == [
            'get_weather {"city": "北京", "day": "today"}',
            'get_weather {"city": "上海", "day": "today"}',
        ]
    )


def test_the_replay_writes_its_own_trace(tmp_path: Path) -> None:
    recorded = record(tmp_path, SUM)
    _, data = replay_json(tmp_path, str(recorded))
    [written] = trace_files(trace_dir() / "replay")
    assert data["replay_trace"] == str(written) and data["recording"] == str(recorded)
    trace = read_trace(written)
    assert trace.header is not None
    assert (trace.header["command"], trace.header["replay_of"]) == ("replay", str(recorded))
    assert [r["question"] for r in trace.records if r["kind"] == "run_started"] == [SUM]
    assert toolcall("trace", "list", "--json", cwd=tmp_path).returncode == 0
    replay(tmp_path, str(recorded), "--no-trace")
    assert trace_files(trace_dir() / "replay") == [written]


def test_a_changed_system_prompt_shows_in_the_diff_and_exits_5(tmp_path: Path) -> None:
    recorded = record(tmp_path, WEATHER)
    prompt = tmp_path / "prompt.txt"
    prompt.write_text("Answer in one short sentence.", encoding="utf-8")
    code, data = replay_json(tmp_path, str(recorded), "--system-prompt", str(prompt))
    assert code == 5
    # The offline model reads the prompt it is sent: without the call format it calls nothing.
    calls = items(data)[0]
    assert calls["recorded"] == ['get_weather {"city": "北京", "day": "today"}']
    assert calls["replayed"] == []
    assert (1, "calls") in differing(data) and (None, "iterations") in differing(data)
    header = read_trace(Path(data["replay_trace"])).header or {}
    assert header["settings"]["system_prompt"] == "Answer in one short sentence."

    shown = replay(tmp_path, str(recorded), "--system-prompt", str(prompt))
    assert shown.returncode == 5
    text = shown.stdout.splitlines()
    at = text.index("    ≠ calls")
    assert text[at + 1 : at + 3] == [
        '        - get_weather {"city": "北京", "day": "today"}',
        "        + (none)",
    ]
    assert text[-1].startswith("≠ the replay differs from the recording in ")
    assert "iteration 1 calls" in text[-1]


def test_another_strategy_shows_in_the_diff(tmp_path: Path) -> None:
    recorded = record(tmp_path, TWO_CITIES)
    code, data = replay_json(tmp_path, str(recorded), "-s", "schema", "--schema-mode", "json")
    assert code == 5
    assert data["recorded"] == {"model": "offline", "strategy": "regex"}
    assert data["replayed"] == {"model": "offline", "strategy": "schema json"}
    # JSON output holds one call a reply: the second city takes an iteration of its own.
    first, second = items(data)[0], next(i for i in items(data) if i["iteration"] == 2)
    assert len(first["recorded"]) == 2 and len(first["replayed"]) == 1
    assert second["replayed"] == ['get_weather {"city": "上海", "day": "today"}']
    iterations = next(i for i in items(data) if i["what"] == "iterations")
    assert (iterations["recorded"], iterations["replayed"]) == (["2"], ["3"])
    answer = next(i for i in items(data) if i["what"] == "answer")
    assert answer["same"]


def test_tokens_are_shown_and_never_a_difference(tmp_path: Path) -> None:
    recorded = record(tmp_path, TWO_CITIES)
    code, data = replay_json(tmp_path, str(recorded), "-s", "schema")  # a smaller request
    assert code == 0
    tokens = next(i for i in items(data) if i["what"] == "tokens")
    assert tokens["compared"] is False and tokens["recorded"] != tokens["replayed"]
    shown = replay(tmp_path, str(recorded), "-s", "schema").stdout
    assert (
        f"  · tokens        {tokens['recorded'][0]} → {tokens['replayed'][0]}  (not compared)"
        in (shown.splitlines())
    )


def test_the_recording_s_settings_stand_where_no_flag_is_given(tmp_path: Path) -> None:
    flags = ("-s", "schema", "--faults", "wrong_param", "--seed", "1", "--max-iterations", "4")
    recorded = record(tmp_path, WEATHER, *flags)
    code, data = replay_json(tmp_path, str(recorded))
    assert code == 0  # the same faults with the same seed: the same mistakes, in the same order
    settings = (read_trace(Path(data["replay_trace"])).header or {})["settings"]
    assert settings["strategy"] == "schema" and settings["faults"] == ["wrong_param"]
    assert settings["seed"] == 1 and settings["limits"]["max_iterations"] == 4
    errors = [i for i in items(data) if i["what"] == "results" and i["iteration"] == 1]
    assert "error (invalid_arguments)" in errors[0]["recorded"][0]

    code, data = replay_json(tmp_path, str(recorded), "--faults", "")  # a flag wins
    assert code == 5
    results = next(i for i in items(data) if i["what"] == "results")
    assert "error (invalid_arguments)" in results["recorded"][0]
    assert " ok: " in results["replayed"][0]


def test_the_recorded_retrieval_budget_stands_where_no_flag_is_given(tmp_path: Path) -> None:
    recorded = record(tmp_path, "What's the weather in Tokyo?", "-s", "schema", "--retrieve", "3")
    code, data = replay_json(tmp_path, str(recorded))
    assert code == 0
    replayed = read_trace(Path(data["replay_trace"]))
    assert (replayed.header or {})["settings"]["retrieval"]["retrieve"] == 3
    chosen = [r for r in replayed.records if r.get("kind") == "tools_chosen"]
    assert chosen and all(len(r["sent"]) == 3 for r in chosen)


def test_every_turn_of_a_chat_is_asked_again_in_one_session(tmp_path: Path) -> None:
    registry = load_tools([bundled_tools_dir()]).registry
    path = tmp_path / "chat.jsonl"
    writer = TraceWriter.open(path)
    writer.header(trace_header("chat", {"model": "offline", "strategy": "regex"}, registry))
    session = Session(model=OfflineModel(), strategy=get_strategy("regex"), registry=registry)
    with create_pipe_input() as pipe:
        pipe.send_text(f"{SUM}\r{TWO_CITIES}\r\x04")
        repl = Repl(
            session,
            history_file=tmp_path / "history",
            use_model=lambda name: session.use_model(OfflineModel()),
            pt_input=pipe,
            pt_output=DummyOutput(),
            mode="plain",
            trace=writer,
        )
        assert repl.loop() == 0
    writer.close()
    code, data = replay_json(tmp_path, str(path))
    assert code == 0
    assert [q["question"] for q in data["questions"]] == [SUM, TWO_CITIES]
    replayed = runs(read_trace(Path(data["replay_trace"])))
    assert [run[0]["question"] for run in replayed] == [SUM, TWO_CITIES]
    # One session: the second question's first request carries the first turn.
    request = next(r for r in replayed[1] if r["kind"] == "iteration_started")["request"]
    assert next(m["content"] for m in request["messages"] if m["role"] == "user") == SUM
    shown = replay(tmp_path, str(path))
    assert "Question 1  What's 12*5+3?" in shown.stdout and "Question 2  " in shown.stdout


def test_runs_appended_to_one_trace_file_are_asked_again_each_alone(tmp_path: Path) -> None:
    # `--trace FILE` given to two runs: the replay asked the second as the first's next turn.
    record(tmp_path, SUM)
    path = record(tmp_path, TWO_CITIES)
    code, data = replay_json(tmp_path, str(path))
    assert code == 0 and data["remarks"] == []
    replayed = runs(read_trace(Path(data["replay_trace"])))
    request = next(r for r in replayed[1] if r["kind"] == "iteration_started")["request"]
    assert [m["content"] for m in request["messages"] if m["role"] == "user"] == [TWO_CITIES]
    record(tmp_path, SUM, "--faults", "no_tool")  # a third, with other settings: said
    code, data = replay_json(tmp_path, str(path))
    assert data["remarks"] == [
        "the trace holds runs recorded with other settings than its first: all were replayed "
        "with the first's (and the flags given)"
    ]


def test_a_trace_without_a_header_is_replayed_from_what_its_runs_say(tmp_path: Path) -> None:
    recorded = record(tmp_path, SUM, "-s", "stream")
    lines = recorded.read_text(encoding="utf-8").splitlines()[1:]
    old = tmp_path / "old.jsonl"
    old.write_text("".join(line + "\n" for line in lines), encoding="utf-8")
    code, data = replay_json(tmp_path, str(old))
    assert code == 0 and data["replayed"]["strategy"] == "stream tags"


# --- against the scripted model: the trace's own replies ----------------------------------------


def test_the_scripted_model_plays_the_trace_s_own_replies(tmp_path: Path) -> None:
    recorded = record(tmp_path, TWO_CITIES, "--faults", "broken_batch")
    code, data = replay_json(tmp_path, str(recorded), "--model", "scripted")
    assert code == 0 and data["replayed"]["model"] == "scripted"
    assert (1, "parse errors") not in differing(data)
    settings = (read_trace(Path(data["replay_trace"])).header or {})["settings"]
    assert settings["script"] == str(recorded) and settings["faults"] == []
    # A recording made with the scripted model replays with it, and its replies, by default.
    again, _ = replay_json(tmp_path, data["replay_trace"])
    assert again == 0


@pytest.mark.script_left_unused
def test_the_script_left_unused_is_a_difference(tmp_path: Path) -> None:
    recorded = record(tmp_path, WEATHER, "--faults", "wrong_param", "--seed", "0")
    done = replay(tmp_path, str(recorded), "--model", "scripted", "--max-iterations", "1",
                  "--no-final-answer")  # fmt: skip
    assert done.returncode == 5
    assert "≠ the script ended with 3 replies of 4 never asked for" in done.stdout
    # Iterations 2 to 4 never happened (their calls, and results where there were any), and
    # the count, the stop reason and the answer differ.
    assert "differs from the recording in 9 places: " in done.stdout.splitlines()[-1]
    assert "  iteration 4  (only the recording got this far)" in done.stdout.splitlines()
    assert "        + (not reached)" in done.stdout.splitlines()
    _, data = replay_json(tmp_path, str(recorded), "--model", "scripted", "--max-iterations",
                          "1", "--no-final-answer", "--no-trace")  # fmt: skip
    assert data["notes"] == ["the script ended with 3 replies of 4 never asked for"]
    assert data["differences"] == 9
    calls = [i for i in items(data) if i["what"] == "calls"]
    assert [i["reached"]["replayed"] for i in calls] == [True, False, False, False]
    [written] = trace_files(trace_dir() / "replay")
    assert read_trace(written).records[-2]["kind"] == "script_unused"


@pytest.mark.script_not_played
def test_a_strategy_the_trace_cannot_answer_is_a_usage_error(tmp_path: Path) -> None:
    recorded = record(tmp_path, SUM)
    done = replay(tmp_path, str(recorded), "--model", "scripted", "-s", "stream")
    assert done.returncode == 2 and done.stdout == "" and done.stderr.count("\n") == 1
    assert "its replies came as tagged text, not streamed" in done.stderr
    assert trace_files(trace_dir() / "replay") == []


# --- against a real model over HTTP ------------------------------------------------------------

CALL = '<tool_call>{"name": "calculate", "arguments": {"expression": "12*5+3"}}</tool_call>'


def test_a_served_run_replayed_against_its_server(tmp_path: Path) -> None:
    usage = {"prompt_tokens": 50, "completion_tokens": 9, "total_tokens": 59}
    with FakeOpenAI() as server:
        recorded = tmp_path / "recorded.jsonl"
        server.answers += [
            Answer(json_body=completion(CALL, usage=usage)),
            Answer(json_body=completion("63", usage=usage)),
        ]
        first = toolcall(
            "run", SUM, "--model", "qwen-test", "--base-url", server.base_url,
            "--trace", str(recorded), "-q", cwd=tmp_path,
        )  # fmt: skip
        assert first.returncode == 0, first.stderr
        more = {**usage, "total_tokens": 61}
        server.answers += [  # the model after an upgrade: the same calls, another answer
            Answer(json_body=completion(CALL, usage=more)),
            Answer(json_body=completion("It is 63.", usage=more)),
        ]
        # The endpoint is the user's to give: a trace never chooses where a replay is sent.
        code, data = replay_json(tmp_path, str(recorded), "--base-url", server.base_url)
        assert len(server.requests) == 4 and server.requests[2]["model"] == "qwen-test"
    assert code == 5 and differing(data) == [(None, "answer")]
    assert data["replayed"]["model"] == "qwen-test"
    answer = next(i for i in items(data) if i["what"] == "answer")
    assert (answer["recorded"], answer["replayed"]) == (["63"], ["It is 63."])
    tokens = next(i for i in items(data) if i["what"] == "tokens")
    assert (tokens["recorded"], tokens["replayed"]) == (["118"], ["122"])


def test_another_model_at_the_recorded_endpoint_or_another_endpoint(tmp_path: Path) -> None:
    def answers() -> list[Answer]:
        return [Answer(json_body=completion(CALL)), Answer(json_body=completion("63"))]

    with FakeOpenAI() as first, FakeOpenAI() as second:
        recorded = tmp_path / "recorded.jsonl"
        first.answers += answers()
        toolcall(
            "run", SUM, "--model", "qwen-test", "--base-url", first.base_url,
            "--trace", str(recorded), "-q", cwd=tmp_path,
        )  # fmt: skip
        first.answers += answers()  # --model: the endpoint given, another model
        code, _ = replay_json(
            tmp_path, str(recorded), "--model", "qwen-next", "--base-url", first.base_url,
            "--no-trace",
        )  # fmt: skip
        assert code == 0 and [r["model"] for r in first.requests[2:]] == ["qwen-next"] * 2
        second.answers += answers()  # --base-url: that endpoint, none of the recorded one's
        code, data = replay_json(tmp_path, str(recorded), "--base-url", second.base_url)
        assert code == 0 and len(first.requests) == 4
        assert [r["model"] for r in second.requests] == ["qwen-test"] * 2
    settings = (read_trace(Path(data["replay_trace"])).header or {})["settings"]
    assert settings["base_url"] == second.base_url and settings["profile"] is None


# --- what the recording cannot give, and a replay cut short -------------------------------------


def test_a_trace_with_no_question_to_ask_again(tmp_path: Path) -> None:
    refused = record(tmp_path, "x" * 9000, name="refused.jsonl")
    done = replay(tmp_path, str(refused))
    assert done.returncode == 2 and "records no question to ask again" in done.stderr


@pytest.mark.parametrize("which", ["nope", "-3", "--bogus"])
def test_a_trace_that_cannot_be_found_is_a_usage_error(tmp_path: Path, which: str) -> None:
    record(tmp_path, SUM)
    done = replay(tmp_path, which)
    assert done.returncode == 2 and done.stdout == "" and done.stderr.count("\n") == 1


def test_a_changed_tool_file_is_noted(tmp_path: Path) -> None:
    tools = tmp_path / "mytools"
    tools.mkdir()
    tool = tools / "greet.py"
    tool.write_text(
        "from toolcall_cli import tool\n\n\n@tool\ndef greet(name: str) -> str:\n"
        '    """Greet someone by name."""\n    return f"hello {name}"\n',
        encoding="utf-8",
    )
    recorded = record(tmp_path, SUM, "--tools", str(tools))
    tool.write_text(tool.read_text(encoding="utf-8") + "\n# changed\n", encoding="utf-8")
    code, data = replay_json(tmp_path, str(recorded), "--tools", str(tools))
    assert code == 0
    assert data["remarks"] == ["tool files changed since the recording: greet.py"]
    code, data = replay_json(tmp_path, str(recorded))
    assert data["remarks"] == ["the tools differ from the recording's (gone: greet)"]


class InterruptedOnSecondRequest:
    name = "offline"

    def __init__(self) -> None:
        self.inner = OfflineModel()
        self.requests = 0

    def stream(self, request: ModelRequest) -> Iterator[dict[str, Any]]:
        self.requests += 1
        if self.requests == 2:
            raise KeyboardInterrupt
        return self.inner.stream(request)


def test_ctrl_c_ends_the_replay_and_its_trace(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from toolcall_cli.app import _model_choice as model_choice

    recorded = record(tmp_path, SUM)
    monkeypatch.setattr(model_choice, "get_model", lambda choice: InterruptedOnSecondRequest())
    done = replay(tmp_path, str(recorded))
    assert done.returncode == 130 and done.stdout == ""
    assert done.stderr.endswith("toolcall: interrupted\n")
    [written] = trace_files(trace_dir() / "replay")
    last = read_trace(written).records[-2:]
    assert [r["kind"] for r in last] == ["run_finished", "interrupted"]
