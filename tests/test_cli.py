"""The `toolcall` command as a user runs it: its output and its exit code.

Most commands run through `main()` in the test process (tests/in_process.py); a real process
where that is the point: the installed entry point end to end, Ctrl-C, and a hung tool that
must not keep the process alive."""

from __future__ import annotations

import contextlib
import json
import os
import re
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from fake_openai import Answer, FakeOpenAI, completion
from in_process import toolcall
from terminal_signals import as_from_a_terminal

STOCK_PLUGIN = '''
from toolcall_cli import tool

PRICES = {"AAPL": 189.5, "TSLA": 242.1, "600519": 1688.0}

@tool
def lookup_stock(symbol: str) -> dict:
    """Look up the latest price of a stock by its ticker symbol.

    Args:
        symbol: The ticker symbol, e.g. AAPL.
    """
    if symbol.upper() not in PRICES:
        raise ValueError(f"unknown symbol {symbol!r}; known: {', '.join(PRICES)}")
    return {"symbol": symbol.upper(), "price": PRICES[symbol.upper()], "currency": "USD"}
'''


def real_toolcall(*args: str, cwd: Path, timeout: float = 60) -> subprocess.CompletedProcess[str]:
    """`python -m toolcall_cli ARGS` in its own process; a hang fails the test at `timeout`."""
    return subprocess.run(
        [sys.executable, "-m", "toolcall_cli", *args],
        capture_output=True,
        text=True,
        cwd=cwd,
        env={**os.environ, "PYTHONIOENCODING": "utf-8"},
        timeout=timeout,
    )


def test_the_readme_question_is_answered(tmp_path: Path) -> None:
    done = real_toolcall("run", "北京今天适合穿短袖吗？", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    out = done.stdout
    assert "\x1b" not in out  # a pipe gets plain text
    assert "model output:" in out and "<tool_call>" in out  # the raw output, verbatim
    assert "call get_weather" in out and '"city"' in out  # the parsed call
    assert "tool get_weather #1.0 ok" in out  # its execution and result, tied to the call
    assert "answer:" in out and "短袖" in out.split("answer:")[-1]
    # stderr says only where the trace went (plain text shows it there, once)
    [line] = done.stderr.splitlines()
    assert line.startswith("toolcall: trace ") and line.endswith(".jsonl")
    assert Path(line.removeprefix("toolcall: trace ")).is_file()


def test_arithmetic_is_computed_by_the_tool(tmp_path: Path) -> None:
    done = toolcall("run", "What's 12*5+3?", "--quiet", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "12*5+3 = 63"


def test_two_cities_two_calls_in_one_turn(tmp_path: Path) -> None:
    done = toolcall("run", "北京和上海明天天气分别是多少？", "--json", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    events = [json.loads(line) for line in done.stdout.splitlines()]
    calls = [e["call"] for e in events if e["kind"] == "tool_call_parsed"]
    assert [(c["name"], c["arguments"]) for c in calls] == [
        ("get_weather", {"city": "北京", "day": "tomorrow"}),
        ("get_weather", {"city": "上海", "day": "tomorrow"}),
    ]
    first_replies = [e for e in events if e["kind"] == "model_replied"]
    assert first_replies[0]["raw"].count("<tool_call>") == 2
    answer = next(e for e in events if e["kind"] == "final_answer")["text"]
    assert "北京" in answer and "上海" in answer


def test_a_dropped_in_plugin_is_listed_and_used(tmp_path: Path) -> None:
    (tmp_path / "tools.d").mkdir()
    (tmp_path / "tools.d" / "stocks.py").write_text(STOCK_PLUGIN, encoding="utf-8")
    listed = toolcall("tools", cwd=tmp_path)
    assert (
        listed.returncode == 0 and "lookup_stock" in listed.stdout and "stocks.py" in listed.stdout
    )
    done = toolcall("run", "What's the price of AAPL stock?", "--json", cwd=tmp_path)
    events = [json.loads(line) for line in done.stdout.splitlines()]
    calls = [e["call"] for e in events if e["kind"] == "tool_call_parsed"]
    assert (
        calls and calls[0]["name"] == "lookup_stock" and calls[0]["arguments"] == {"symbol": "AAPL"}
    )
    answer = next(e for e in events if e["kind"] == "final_answer")["text"]
    assert "189.5" in answer


def test_tool_schema_command(tmp_path: Path) -> None:
    done = toolcall("tools", "get_weather", cwd=tmp_path)
    schema = json.loads(done.stdout)
    assert schema["name"] == "get_weather"
    assert schema["parameters"]["required"] == ["city"]
    assert schema["parameters"]["properties"]["day"]["enum"] == ["today", "tomorrow"]
    missing = toolcall("tools", "nope", cwd=tmp_path)
    assert (
        missing.returncode == 2
        and missing.stderr.count("\n") == 1
        and "get_weather" in missing.stderr
    )


def test_broken_plugin_is_one_warning_and_the_rest_still_loads(tmp_path: Path) -> None:
    (tmp_path / "tools.d").mkdir()
    (tmp_path / "tools.d" / "broken.py").write_text(
        "import nonexistent_module_xyz\n", encoding="utf-8"
    )
    done = toolcall("tools", cwd=tmp_path)
    assert done.returncode == 0
    assert (
        done.stderr.count("\n") == 1
        and "broken.py" in done.stderr
        and "Traceback" not in done.stderr
    )
    assert "get_weather" in done.stdout


def test_prompt_prints_the_exact_request(tmp_path: Path) -> None:
    done = toolcall("prompt", "你好", cwd=tmp_path)
    body = json.loads(done.stdout)
    assert body["messages"][1] == {"role": "user", "content": "你好"}
    system = body["messages"][0]["content"]
    assert "## get_weather" in system and "- city: string (required)" in system
    assert '<tool_call>{"name": "<tool name>", "arguments"' in system
    schema_body = json.loads(
        toolcall("prompt", "你好", "--strategy", "schema", cwd=tmp_path).stdout
    )
    assert {t["function"]["name"] for t in schema_body["tools"]} >= {"get_weather", "calculate"}


@pytest.mark.parametrize(
    ("args", "needle"),
    [
        (["run", "hi", "--bogus"], "No such option"),
        (["run", "hi", "--strategy", "magic"], "magic"),
        (["run", "hi", "--max-iterations", "0"], "max-iterations"),
        (["run", "hi", "--model", "gpt-x"], "needs an endpoint"),
        (["run", "hi", "--profile", "nowhere"], "unknown profile"),
        (["run", ""], "empty"),
        (["run", "hi", "--quiet", "--json"], "cannot be used together"),
    ],
)
def test_usage_errors_are_one_line_and_exit_2(tmp_path: Path, args: list[str], needle: str) -> None:
    done = toolcall(*args, cwd=tmp_path)
    assert done.returncode == 2
    assert done.stderr.count("\n") == 1 and needle in done.stderr and "Traceback" not in done.stderr


def test_iteration_limit_exits_3(tmp_path: Path) -> None:
    script = tmp_path / "loop.jsonl"
    reply = '<tool_call>{"name": "calculate", "arguments": {"expression": "1+%d"}}</tool_call>'
    # Two replies for two iterations, and no last request at the limit: a third request would
    # find the script run out (exit 6).
    script.write_text("\n".join(json.dumps(reply % i) for i in range(2)), encoding="utf-8")
    done = toolcall(
        "run",
        "loop",
        "--model",
        "scripted",
        "--script",
        str(script),
        "--max-iterations",
        "2",
        "--no-final-answer",
        cwd=tmp_path,
    )
    assert done.returncode == 3
    assert "limit reached" in done.stdout


def test_at_the_limit_a_best_effort_answer_is_shown_marked_and_exit_is_still_3(
    tmp_path: Path,
) -> None:
    script = tmp_path / "loop.jsonl"
    reply = '<tool_call>{"name": "calculate", "arguments": {"expression": "1+%d"}}</tool_call>'
    replies = [reply % i for i in range(2)] + ["Probably 42, from what I have."]
    script.write_text("\n".join(json.dumps(r) for r in replies), encoding="utf-8")
    args = ["run", "loop", "--model", "scripted", "--script", str(script), "--max-iterations", "2"]
    done = toolcall(*args, cwd=tmp_path)
    assert done.returncode == 3
    shown = done.stdout.split("limit reached")[1]
    # 42 is in no result (1 and 2 were): the best-effort answer is checked as any other.
    label = "answer (best effort: made without tools at the iteration limit; unchecked: 42 in no"
    assert label in shown
    assert "Probably 42" in shown
    quiet = toolcall(*args, "--quiet", cwd=tmp_path)
    assert quiet.returncode == 3 and quiet.stdout.strip() == "Probably 42, from what I have."
    # stderr said "without a final answer", then an answer came: it says what that answer is.
    assert "toolcall: the answer is best effort: made without tools" in quiet.stderr
    events = [json.loads(x) for x in toolcall(*args, "--json", cwd=tmp_path).stdout.splitlines()]
    final = next(e for e in events if e["kind"] == "final_answer")
    assert final["best_effort"] is True
    script.write_text("\n".join(json.dumps(r) for r in replies[:2]), encoding="utf-8")
    without = toolcall(*args, "--no-final-answer", cwd=tmp_path)  # no third request is made
    assert without.returncode == 3 and "best effort" not in without.stdout


def test_bad_config_is_a_usage_error(tmp_path: Path) -> None:
    config = tmp_path / "config.toml"
    config.write_text("[defaults\nmodel = 1", encoding="utf-8")
    done = toolcall("run", "hi", cwd=tmp_path, env={"TOOLCALL_CONFIG": str(config)})
    assert done.returncode == 2 and "not valid TOML" in done.stderr and done.stderr.count("\n") == 1


def test_unreachable_endpoint_exits_1_with_one_line(tmp_path: Path, refusing_port: int) -> None:
    port = refusing_port
    trace = tmp_path / "trace.jsonl"
    done = toolcall(
        "run",
        "hi",
        "--model",
        "m",
        "--base-url",
        f"http://127.0.0.1:{port}/v1",
        "--api-key",
        "sk-SECRET-123456789",
        "--trace",
        str(trace),
        "--quiet",
        cwd=tmp_path,
    )
    assert done.returncode == 1
    assert done.stderr.count("\n") == 1 and "cannot connect" in done.stderr
    kinds = [json.loads(line)["kind"] for line in trace.read_text(encoding="utf-8").splitlines()]
    assert kinds[:2] == ["trace_header", "run_started"]
    assert "model_failed" in kinds and kinds[-1] == "run_finished"
    for text in (done.stdout, done.stderr, trace.read_text(encoding="utf-8")):
        assert "SECRET" not in text


def test_two_iterations_against_a_real_http_server(tmp_path: Path) -> None:
    call = {
        "id": "call_a",
        "type": "function",
        "function": {"name": "calculate", "arguments": '{"expression": "12*5+3"}'},
    }
    with FakeOpenAI() as server:
        server.answers += [
            Answer(json_body=completion(None, [call], "tool_calls")),
            Answer(json_body=completion("12*5+3 = 63")),
        ]
        done = toolcall(
            "run",
            "What's 12*5+3?",
            "--strategy",
            "schema",
            "--model",
            "fake",
            "--base-url",
            server.base_url,
            "--api-key",
            "sk-abc-SECRET-xyz",
            cwd=tmp_path,
        )
        second = server.requests[1]["messages"]
    assert done.returncode == 0, done.stderr
    assert "answer: 12*5+3 = 63" in done.stdout
    assert second[-1] == {"role": "tool", "tool_call_id": "call_a", "content": "63"}
    assert "SECRET" not in done.stdout + done.stderr


def test_config_show_masks_the_key(tmp_path: Path) -> None:
    done = toolcall(
        "config",
        "show",
        "--profile",
        "deepseek",
        cwd=tmp_path,
        env={"DEEPSEEK_API_KEY": "sk-verysecretkey-9876"},
    )
    assert done.returncode == 0
    assert "verysecret" not in done.stdout and "****9876" in done.stdout
    assert "deepseek-chat" in done.stdout and "env DEEPSEEK_API_KEY" in done.stdout


@pytest.mark.parametrize("profile", ["openrouter", "vllm", "lmstudio"])
def test_config_show_shows_a_profile_without_a_default_model(tmp_path: Path, profile: str) -> None:
    # `config show` is where a user looks: the unset model is shown (with what to pass), the
    # rest of the profile's settings with it, while a run still refuses without --model.
    done = toolcall("config", "show", "--profile", profile, cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    model_line = next(line for line in done.stdout.splitlines() if line.startswith("model "))
    assert "not set" in model_line and "--model NAME" in model_line
    assert f"[profile {profile}]" in done.stdout  # its base_url and strategy are shown
    run = toolcall("run", "--profile", profile, "hi", cwd=tmp_path)
    assert run.returncode == 2 and "no default model" in run.stderr


@contextlib.contextmanager
def ended(process: subprocess.Popen[Any]) -> Iterator[None]:
    """A process a test signals is gone when the test is, also when a check failed first: one
    left running, its pipes open, fails a later test on its ResourceWarning."""
    with process:
        try:
            yield
        finally:
            if process.poll() is None:
                process.kill()


@pytest.mark.parametrize(
    ("stop", "code", "said", "reason"),
    [
        ("SIGINT", 130, "interrupted", "ctrl-c"),
        ("SIGTERM", 143, "terminated", "sigterm"),
        ("SIGHUP", 129, "terminated", "sighup"),  # the terminal window closed
    ],
)
def test_ctrl_c_sigterm_or_sighup_during_a_request_exits_so_and_keeps_the_trace(
    tmp_path: Path, stop: str, code: int, said: str, reason: str
) -> None:
    import signal

    trace = tmp_path / "trace.jsonl"
    with FakeOpenAI() as server:
        server.answers.append(Answer(json_body=completion("late"), delay=30))
        process = subprocess.Popen(
            [
                sys.executable,
                "-m",
                "toolcall_cli",
                "run",
                "hi",
                "--model",
                "m",
                "--base-url",
                server.base_url,
                "--trace",
                str(trace),
            ],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            cwd=tmp_path,
            # As a terminal starts it: a suite started in the background (`pytest &`) passes
            # SIGINT (and, under nohup, SIGHUP) on ignored.
            preexec_fn=as_from_a_terminal,
        )
        with ended(process):
            assert server.wait_received(1)  # the request is in flight
            process.send_signal(getattr(signal, stop))
            _out, err = process.communicate(timeout=20)
    assert process.returncode == code
    assert err.strip().splitlines() == [f"toolcall: {said}"]
    records = [json.loads(line) for line in trace.read_text(encoding="utf-8").splitlines()]
    assert [r["kind"] for r in records[:3]] == ["trace_header", "run_started", "iteration_started"]
    assert records[-2]["kind"] == "run_finished" and records[-2]["stop_reason"] == "interrupted"
    assert records[-1]["kind"] == "interrupted" and records[-1]["reason"] == reason


@pytest.mark.parametrize("when", ["mid turn", "at the prompt"])
def test_a_chat_whose_terminal_closed_ends_its_trace_as_hung_up(tmp_path: Path, when: str) -> None:
    """The terminal window closed: the live view's writes fail (EIO), then SIGHUP comes. The
    trace said `crash: OSError: [Errno 5] Input/output error` (exit 1), as if toolcall had a
    bug. At the prompt, "toolcall: terminated" written to the dead terminal raised EIO (a hung
    up terminal also answers isatty() with no, so it was not silenced): exit 1."""
    import pty
    import select
    import signal

    trace = tmp_path / "chat.jsonl"
    leader, follower = pty.openpty()
    process = subprocess.Popen(
        [sys.executable, "-m", "toolcall_cli", "chat", "-s", "stream", "--pace", "0.3",
         "--trace", str(trace)],
        stdin=follower, stdout=follower, stderr=follower, cwd=tmp_path,
        env={**os.environ, "COLUMNS": "120", "LINES": "40", "TERM": "xterm"},
    )  # fmt: skip
    os.close(follower)
    shown = bytearray()

    def read_until(done: Callable[[], bool]) -> None:
        ends = time.monotonic() + 20
        while not done():
            assert time.monotonic() < ends and process.poll() is None, bytes(shown)
            if select.select([leader], [], [], 0.1)[0]:
                shown.extend(os.read(leader, 65536))  # read, or the program blocks writing

    def kinds() -> list[str]:
        lines = trace.read_text(encoding="utf-8").splitlines() if trace.exists() else []
        return [json.loads(line)["kind"] for line in lines if line.endswith("}")]

    with ended(process):
        read_until(lambda: b"you>" in shown)
        if when == "mid turn":
            os.write(leader, "北京和上海明天天气分别是多少？\r".encode())
            read_until(lambda: "text_delta" in kinds())
        os.close(leader)  # the window is gone
        process.send_signal(signal.SIGHUP)
        assert process.wait(timeout=20) == 129
    last = json.loads(trace.read_text(encoding="utf-8").splitlines()[-1])
    assert last["kind"] == "interrupted" and last["reason"] == "sighup", last


def test_a_run_whose_sighup_is_ignored_outlives_its_terminal(tmp_path: Path) -> None:
    """`nohup toolcall serve &` ignores SIGHUP, and toolcall must not take that back: the
    server has to outlive the terminal it was started from."""
    import signal

    trace = tmp_path / "trace.jsonl"
    process = subprocess.Popen(
        [sys.executable, "-m", "toolcall_cli", "run", "--pace", "0.5", "-s", "stream",
         "北京和上海明天天气分别是多少？", "--trace", str(trace)],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=tmp_path,
        preexec_fn=lambda: signal.signal(signal.SIGHUP, signal.SIG_IGN),
    )  # fmt: skip
    with ended(process):
        # Into the slowly streamed reply, past start-up (where toolcall sets its handlers): a
        # fixed sleep sent it during start-up on a loaded machine, and the test passed unheard.
        deadline = time.monotonic() + 60
        while '"text_delta"' not in (trace.read_text(encoding="utf-8") if trace.exists() else ""):
            assert time.monotonic() < deadline and process.poll() is None, "no reply streamed"
            time.sleep(0.05)
        process.send_signal(signal.SIGHUP)
        out, err = process.communicate(timeout=60)
    assert process.returncode == 0, err
    assert "北京" in out and "terminated" not in err


def test_sigterm_while_a_tool_runs_ends_the_run_where_ctrl_c_would_go_on(tmp_path: Path) -> None:
    """Ctrl-C during tools cancels them and the model goes on; SIGTERM ends the process then
    and there (a hung tool does not hold it), and the trace says so."""
    import signal

    tools = tmp_path / "slow"
    tools.mkdir()
    (tools / "slow.py").write_text(
        "import time\nfrom toolcall_cli import tool\n\n\n@tool\n"
        "def lookup_stock(symbol: str) -> str:\n"
        '    """Look up the stock price of a company by its ticker symbol."""\n'
        "    time.sleep(60)\n    return symbol\n",
        encoding="utf-8",
    )
    trace = tmp_path / "trace.jsonl"
    process = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "toolcall_cli",
            "run",
            "What is the stock price of AAPL?",
            *("--tools", str(tools), "--trace", str(trace)),
        ],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        cwd=tmp_path,
    )
    with ended(process):
        deadline = time.monotonic() + 30
        while '"tool_started"' not in (trace.read_text(encoding="utf-8") if trace.exists() else ""):
            assert time.monotonic() < deadline and process.poll() is None, "the tool never started"
            time.sleep(0.05)
        process.send_signal(signal.SIGTERM)
        _out, err = process.communicate(timeout=20)
    assert process.returncode == 143, err
    assert err.strip().splitlines()[-1] == "toolcall: terminated"
    records = [json.loads(line) for line in trace.read_text(encoding="utf-8").splitlines()]
    assert records[-1] == {**records[-1], "kind": "interrupted", "reason": "sigterm"}
    assert not any(r["kind"] == "tool_finished" for r in records)  # not cancelled and gone on


def test_faults_are_listed_one_per_line_by_name(tmp_path: Path) -> None:
    from toolcall_cli.offline import FAULT_KINDS

    done = toolcall("faults", cwd=tmp_path)
    assert done.returncode == 0
    lines = done.stdout.splitlines()
    assert [line.split()[0] for line in lines] == list(FAULT_KINDS)


def test_fault_run_recovers_live_in_the_view(tmp_path: Path) -> None:
    # The misbehaving page's first --faults example, the first a reader tries: a question whose
    # seeded faults do not repeat the same call (one that does withdraws the tools after its
    # second identical failure, issue 24), so the page shows a recovery.
    page = (Path(__file__).parent.parent / "docs" / "misbehaving.md").read_text(encoding="utf-8")
    example = re.search(r'toolcall run --faults single_quotes,wrong_param "([^"]+)"', page)
    assert example is not None
    done = toolcall("run", "--faults", "single_quotes,wrong_param", example[1], cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    out = done.stdout
    assert "json-repair fixed the JSON" in out  # what was wrong
    assert "did you mean `city`?" in out  # what was fed back
    # What the model did next: the faults are seeded by the request, so it may take it a try or
    # two; its last call is the right one.
    calls = [line for line in out.splitlines() if line.startswith("call get_weather")]
    assert 2 <= len(calls) <= 3 and f'"city": "{example[1][:2]}"' in calls[-1]
    assert all('"city"' not in call for call in calls[:-1])
    assert "短袖" in out.split("answer:")[-1]


@pytest.mark.parametrize(
    ("args", "needle"),
    [
        (["--faults", "gremlins"], "gremlins"),
        (
            ["--faults", "no_tool", "--model", "scripted", "--script", "x.jsonl"],
            "offline model only",
        ),
        (["--fault-rate", "2"], "fault-rate"),
    ],
)
def test_bad_fault_options_are_usage_errors(tmp_path: Path, args: list[str], needle: str) -> None:
    done = toolcall("run", "hi", *args, cwd=tmp_path)
    assert done.returncode == 2 and needle in done.stderr and done.stderr.count("\n") == 1


def test_a_tool_that_sleeps_forever_is_stopped_and_the_run_exits_promptly(tmp_path: Path) -> None:
    """A real process: the tool's thread never ends, and must not keep the process alive."""
    (tmp_path / "tools.d").mkdir()
    (tmp_path / "tools.d" / "slow.py").write_text(
        "import time\nfrom toolcall_cli import tool\n\n@tool(timeout=0.2)\n"
        "def get_weather(city: str) -> str:\n"
        '    """Get the weather (天气) for a city (this one hangs)."""\n'
        "    while True:\n        time.sleep(1)\n",
        encoding="utf-8",
    )
    # A process kept alive by the thread fails at the timeout.
    done = real_toolcall(
        "run", "北京今天天气怎么样？", "--no-default-tools", cwd=tmp_path, timeout=30
    )
    assert "tool get_weather #1.0 error timeout" in done.stdout
    assert "timed out after 0.2 s" in done.stdout
    # The model is told, tries once more, and then says honestly that the call failed.
    assert len(re.findall(r"tool get_weather #\d\.\d error timeout", done.stdout)) == 2
    assert "调用失败" in done.stdout.split("answer:")[-1]
    assert done.returncode == 0, done.stderr


def test_an_answer_without_any_tool_call_is_flagged(tmp_path: Path) -> None:
    done = toolcall("run", "--faults", "no_tool", "北京今天适合穿短袖吗？", cwd=tmp_path)
    assert done.returncode == 0
    assert "0 tool calls" in done.stdout and "answered without calling any tool" in done.stdout


def test_base_url_without_a_model_name_is_a_usage_error(tmp_path: Path) -> None:
    done = toolcall("run", "hi", "--base-url", "http://127.0.0.1:9/v1", cwd=tmp_path)
    assert done.returncode == 2 and "--model NAME" in done.stderr


def test_plugin_output_at_import_does_not_pollute_json_lines(tmp_path: Path) -> None:
    (tmp_path / "tools.d").mkdir()
    (tmp_path / "tools.d" / "noisy.py").write_text(
        "print('HELLO FROM IMPORT')\nfrom toolcall_cli import tool\n\n@tool\nclass NotAFunction:\n"
        '    """A class."""\n',
        encoding="utf-8",
    )
    done = toolcall("run", "What's 2+2?", "--json", cwd=tmp_path)
    assert done.returncode == 0
    events = [json.loads(line) for line in done.stdout.splitlines()]  # every line is JSON
    assert events[-1]["kind"] == "run_finished" and events[-1]["stop_reason"] == "answered"
    assert "HELLO FROM IMPORT" in done.stderr
    assert "NotAFunction" in done.stderr and "functions, not a class" in done.stderr


@pytest.mark.parametrize(
    ("config", "needle"),
    [
        ('[defaults]\nread_timeout = "5"\n', "unknown setting"),
        ("profiles = 5\n", "profiles must be"),
        ('[defaults]\nstrategy = "bogus"\n', "unknown strategy"),
        ('[profiles.x]\nbase_url = "http://h/v1"\napi_key = "sk-1"\n', "unknown keys"),
    ],
)
def test_config_mistakes_are_usage_errors(tmp_path: Path, config: str, needle: str) -> None:
    path = tmp_path / "c.toml"
    path.write_text(config, encoding="utf-8")
    done = toolcall("config", "show", cwd=tmp_path, env={"TOOLCALL_CONFIG": str(path)})
    assert done.returncode == 2 and needle in done.stderr and done.stderr.count("\n") == 1


def test_a_rate_limit_retry_is_shown_and_then_answered(tmp_path: Path) -> None:
    with FakeOpenAI() as server:
        server.answers += [
            Answer(status=429, headers={"Retry-After": "0"}, json_body={"error": {"message": "x"}}),
            Answer(json_body=completion("hello")),
        ]
        done = toolcall("run", "hi", "--model", "m", "--base-url", server.base_url, cwd=tmp_path)
    assert done.returncode == 0
    assert "HTTP 429 (rate limited): retry 1 of 2 in 0 s" in done.stdout
    assert "answer: hello" in done.stdout


def test_a_question_over_the_limit_is_one_line_and_exit_2(tmp_path: Path) -> None:
    done = toolcall("run", "x" * 9000, cwd=tmp_path)
    assert done.returncode == 2
    assert (
        done.stderr.strip()
        == "toolcall: error: the question is 9,000 characters; the limit is 8,000"
    )


def test_a_question_over_the_limit_is_refused_before_it_is_echoed(tmp_path: Path) -> None:
    question = "天气" * 5000  # 10,000 characters, over the 8,000 limit
    done = toolcall("run", question, cwd=tmp_path)
    assert done.returncode == 2
    assert "the limit is 8,000" in done.stderr
    assert question[:100] not in done.stdout + done.stderr


def test_a_megabyte_tool_name_is_cut_on_screen_saying_how_much(tmp_path: Path) -> None:
    name = "x" * 1_500_000  # under the 2,000,000-character reply cap
    script = tmp_path / "script.jsonl"
    call = f'<tool_call>{{"name": "{name}", "arguments": {{}}}}</tool_call>'
    script.write_text(json.dumps(call) + "\n" + json.dumps("done") + "\n", encoding="utf-8")
    done = toolcall("run", "go", "--model", "scripted", "--script", str(script), cwd=tmp_path)
    assert done.returncode == 0, done.stderr[-2000:]
    assert len(done.stdout) < 100_000  # the name alone is 1.5 MB
    assert "(1,500,000 chars in full)" in done.stdout  # the call's name, cut
    assert "chars in full)" in done.stdout.split("model output:")[1]  # the raw reply, cut
    assert "unknown tool" in done.stdout


def test_chat_on_a_real_pipe_answers_the_questions_and_says_nothing_else(tmp_path: Path) -> None:
    """`printf ... | toolcall chat`: stdin is a pipe, not a terminal. No warning that it is
    not one, no hint of keys nobody presses; each question echoed, answered, and its run's
    last line names why it stopped."""
    history = str(tmp_path / "h")
    done = subprocess.run(
        [sys.executable, "-m", "toolcall_cli", "chat", "--no-trace", "--history-file", history],
        input="What's 12*5+3?\nWhat's the weather in Tokyo?\n",
        capture_output=True,
        text=True,
        cwd=tmp_path,
        env={**os.environ, "PYTHONIOENCODING": "utf-8"},
        timeout=60,
    )
    assert done.returncode == 0, done.stderr
    assert done.stderr == ""
    assert "Ctrl-D" not in done.stdout and "/help" not in done.stdout
    turns = done.stdout.split("you> ")
    assert turns[0] == ""  # nothing before the first question
    assert len(turns) == 3
    assert "answer: 12*5+3 = 63" in turns[1] and "Tokyo" in turns[2].split("answer:")[-1]
    for turn in turns[1:]:
        assert turn.rstrip().splitlines()[-1].endswith("stopped: answered"), turn
