"""MCP tool servers: a real one nobody here wrote (mcp-server-time), and tests/mcp_servers'
fixture server, whose tools each take one path (a clash, a destructive tool, a read-only one,
an error result, a hang, a crash)."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import threading
import time
import tracemalloc
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from in_process import Finished, toolcall
from piped_chat import piped_chat
from prompt_toolkit.input import create_pipe_input

from toolcall_cli.config import ConfigError, load_config
from toolcall_cli.loop import Limits
from toolcall_cli.models.scripted import ScriptedModel
from toolcall_cli.session import Session
from toolcall_cli.strategies import get_strategy
from toolcall_cli.tools.mcp_servers import MIN_MESSAGE_BYTES, McpServers, start_servers
from toolcall_cli.tools.mcp_spec import (
    ServerSpec,
    policy_from_annotations,
    server_from_flag,
)
from toolcall_cli.tools.registry import ToolRegistry
from toolcall_cli.tools.schema import TOOL_NAME

FIXTURE = Path(__file__).parent / "mcp_servers" / "fixture_server.py"
SERVER = f"{sys.executable} {FIXTURE}"


@pytest.fixture(autouse=True)
def venv_commands_on_path(monkeypatch: pytest.MonkeyPatch) -> None:
    """`mcp-server-time` is a command of the test extra, in the interpreter's own bin dir."""
    bin_dir = str(Path(sys.executable).parent)
    monkeypatch.setenv("PATH", f"{bin_dir}{os.pathsep}{os.environ.get('PATH', '')}")


def events(stdout: str) -> list[dict[str, Any]]:
    return [json.loads(line) for line in stdout.splitlines()]


def calls_of(stream: list[dict[str, Any]]) -> list[tuple[str, Any]]:
    return [
        (e["call"]["name"], e["call"]["arguments"])
        for e in stream
        if e["kind"] == "tool_call_parsed"
    ]


def finished(stream: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [e["result"] for e in stream if e["kind"] == "tool_finished"]


def script(tmp_path: Path, *replies: str) -> Path:
    path = tmp_path / "script.json"
    path.write_text(json.dumps(list(replies)), encoding="utf-8")
    return path


def call(tool: str, /, **arguments: Any) -> str:
    return f"<tool_call>{json.dumps({'name': tool, 'arguments': arguments})}</tool_call>"


def run_played(tmp_path: Path, question: str, played: Path, *flags: str) -> Finished:
    """`toolcall run QUESTION --json` with the fixture server, the scripted model playing
    `played`."""
    args = ("--model", "scripted", "--script", str(played), "--mcp", SERVER, *flags, "--json")
    return toolcall("run", question, *args, cwd=tmp_path)


def fixture_processes() -> list[str]:
    """Fixture servers still running (of any test: the caller looks for its own marker)."""
    found = subprocess.run(["ps", "-eo", "args"], capture_output=True, text=True, check=True)
    return [line for line in found.stdout.splitlines() if str(FIXTURE) in line]


# --- the real server ---------------------------------------------------------------------------


def test_the_time_server_is_called_and_its_answer_given(tmp_path: Path) -> None:
    done = toolcall(
        "run", "What time is it in Tokyo?", "--mcp", "mcp-server-time", "--json", cwd=tmp_path
    )
    assert done.returncode == 0, done.stderr
    stream = events(done.stdout)
    assert ("get_current_time", {"timezone": "Asia/Tokyo"}) in calls_of(stream)
    result = next(r for r in finished(stream) if r["name"] == "get_current_time")
    assert result["ok"] and json.loads(result["content"])["timezone"] == "Asia/Tokyo"
    answer = next(e for e in stream if e["kind"] == "final_answer")["text"]
    assert "Asia/Tokyo" in answer and json.loads(result["content"])["datetime"] in answer
    assert done.stderr == ""  # the server's own logging stays off the terminal


def test_tools_lists_the_servers_tools_with_the_server_as_source(tmp_path: Path) -> None:
    done = toolcall("tools", "--mcp", "mcp-server-time", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    line = next(x for x in done.stdout.splitlines() if x.startswith("get_current_time("))
    assert line.endswith("mcp:time") and "[read]" in line
    schema = toolcall("tools", "convert_time", "--mcp", "mcp-server-time", cwd=tmp_path)
    assert json.loads(schema.stdout)["parameters"]["required"] == [
        "source_timezone",
        "time",
        "target_timezone",
    ]


def test_the_trace_header_records_the_servers_with_env_masked(tmp_path: Path) -> None:
    config = tmp_path / "config.toml"
    config.write_text(
        '[mcp.servers.clock]\ncommand = "mcp-server-time"\n'
        'env = { TZ_TOKEN = "sk-secret-123456" }\n',
        encoding="utf-8",
    )
    trace = tmp_path / "t.jsonl"
    done = toolcall(
        "run",
        "What time is it in Tokyo?",
        "--quiet",
        "--trace",
        str(trace),
        cwd=tmp_path,
        env={"TOOLCALL_CONFIG": str(config)},
    )
    assert done.returncode == 0, done.stderr
    header = json.loads(trace.read_text(encoding="utf-8").splitlines()[0])
    text = json.dumps(header)
    assert "sk-secret-123456" not in text
    servers = next(v for k, v in _walk(header) if k == "mcp_servers")
    assert servers == [
        {"name": "clock", "command": "mcp-server-time", "args": [], "env": {"TZ_TOKEN": "****3456"}}
    ]


def _walk(value: Any) -> Iterator[tuple[str, Any]]:
    if isinstance(value, dict):
        for key, inner in value.items():
            yield key, inner
            yield from _walk(inner)


# --- the fixture server ------------------------------------------------------------------------


def test_names_that_clash_take_the_server_prefix(tmp_path: Path) -> None:
    done = toolcall("tools", "--mcp", SERVER, cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    names = {line.split("(")[0]: line for line in done.stdout.splitlines()}
    assert names["calculate"].endswith("calculator.py")  # the bundled plugin keeps its name
    assert names["fixture__calculate"].endswith("mcp:fixture")
    assert "[read]" in names["read_note"] and "asks first" in names["delete_note"]
    assert "asks first" not in names["read_note"] and "never reused" not in names["read_note"]
    alone = toolcall("tools", "--no-default-tools", "--mcp", SERVER, cwd=tmp_path)
    assert "calculate(expression)" in alone.stdout and "fixture__" not in alone.stdout


def test_two_servers_offering_one_name_both_take_their_prefix() -> None:
    registry = ToolRegistry()
    servers, problems = start_servers(
        [
            ServerSpec("a", sys.executable, (str(FIXTURE),)),
            ServerSpec("b", sys.executable, (str(FIXTURE),)),
        ],
        registry,
        call_timeout=10,
        start_timeout=30,
    )
    try:
        assert problems == []
        assert "a__read_note" in registry and "b__read_note" in registry
        assert "read_note" not in registry
        found = registry.get("b__read_note")
        assert found is not None and found.source == "mcp:b"
        assert found.func(title="plans") == "visit Kyoto in April"
    finally:
        assert servers is not None
        servers.close()


def test_results_errors_and_validation_go_through_the_usual_executor(tmp_path: Path) -> None:
    played = script(
        tmp_path,
        call("read_note", title="groceries")
        + call("stock_price", symbol="AAPL")
        + call("weather_data", city="Paris")
        + call("read_note", name="plans"),
        "Done.",
    )
    done = run_played(tmp_path, "notes", played)
    assert done.returncode == 0, done.stderr
    results = {r["call_id"]: r for r in finished(events(done.stdout))}
    read, price, weather, wrong = (results[f"#1.{n}"] for n in range(4))
    assert read["ok"] and read["content"] == "eggs, rice, green tea"
    assert not price["ok"] and "the exchange is closed; no price for AAPL" in price["content"]
    assert json.loads(weather["content"]) == {"city": "Paris", "temperature_c": 21, "sky": "clear"}
    # Checked against the server's inputSchema before anything is sent to it.
    assert wrong["error_kind"] == "invalid_arguments" and "title" in wrong["content"]


def test_a_destructive_tool_asks_first_and_is_declined_when_nobody_can_answer(
    tmp_path: Path,
) -> None:
    played = script(tmp_path, call("delete_note", title="plans"), "I could not delete it.")
    done = run_played(tmp_path, "delete", played)
    (result,) = finished(events(done.stdout))
    assert result["error_kind"] == "declined"
    played = script(tmp_path, call("delete_note", title="plans"), "Deleted.")
    done = run_played(tmp_path, "delete", played, "--yes")
    (result,) = finished(events(done.stdout))
    assert result["ok"] and result["content"] == "deleted plans"


def test_allow_read_keeps_only_read_only_mcp_tools(tmp_path: Path) -> None:
    played = script(
        tmp_path, call("read_note", title="plans") + call("weather_data", city="Oslo"), "Kyoto."
    )
    done = run_played(tmp_path, "plans", played, "--allow", "read")
    results = {r["call_id"]: r for r in finished(events(done.stdout))}
    assert results["#1.0"]["ok"] and results["#1.1"]["error_kind"] == "permission"


def test_a_server_that_dies_mid_run_is_one_line_and_the_run_goes_on(tmp_path: Path) -> None:
    played = script(
        tmp_path,
        call("restart_service"),
        call("read_note", title="plans"),
        "The service is down.",
    )
    done = run_played(tmp_path, "restart", played, "--no-default-tools")
    assert done.returncode == 0, done.stderr
    stream = events(done.stdout)
    notices = [e["message"] for e in stream if e["kind"] == "notice" and "MCP" in e["message"]]
    assert len(notices) == 1
    assert "stopped" in notices[0] and "fixture: restarting, goodbye" in notices[0]
    crashed, later = finished(stream)
    assert not crashed["ok"] and "withdrawn" in crashed["content"]
    assert later["error_kind"] == "unknown_tool"
    requests = [e["request"] for e in stream if e["kind"] == "iteration_started"]
    assert "read_note" in json.dumps(requests[0]) and "read_note" not in json.dumps(requests[1])
    assert next(e for e in stream if e["kind"] == "final_answer")["text"] == "The service is down."


def test_a_call_that_hangs_withdraws_the_server_at_the_tool_timeout(tmp_path: Path) -> None:
    played = script(tmp_path, call("slow_count", to=3), "Too slow.")
    started = time.monotonic()
    done = run_played(tmp_path, "count", played, "--tool-timeout", "2")
    assert done.returncode == 0, done.stderr
    stream = events(done.stdout)
    (result,) = finished(stream)
    assert not result["ok"] and "tool timeout (2 s)" in result["content"]
    notices = [e["message"] for e in stream if e["kind"] == "notice" and "MCP" in e["message"]]
    assert len(notices) == 1 and "withdrawn" in notices[0]
    assert time.monotonic() - started < 20  # the hung server is stopped, not waited for


def test_servers_that_cannot_start_are_one_warning_each_and_the_rest_work(
    tmp_path: Path,
) -> None:
    done = toolcall(
        "tools",
        "--no-default-tools",
        "--mcp",
        f"{SERVER} --fail-at-start",
        "--mcp",
        "no-such-command-for-toolcall",
        "--mcp",
        "mcp-server-time",
        cwd=tmp_path,
    )
    assert done.returncode == 0
    warnings = done.stderr.splitlines()
    assert len(warnings) == 2, done.stderr
    failed, missing = warnings
    assert "did not start" in failed and "cannot open the notes database" in failed
    assert "no such command: no-such-command-for-toolcall" in missing
    assert "Traceback" not in done.stderr
    assert "get_current_time" in done.stdout and "read_note" not in done.stdout


def test_a_server_that_hangs_at_start_up_is_given_up_at_the_start_up_timeout(
    tmp_path: Path,
) -> None:
    started = time.monotonic()
    done = toolcall(
        "tools",
        "--no-default-tools",
        "--mcp",
        f"{SERVER} --hang-at-start",
        cwd=tmp_path,
        env={"TOOLCALL_MCP_TIMEOUT": "3"},
    )
    assert done.returncode == 0 and done.stdout.strip() == "No tools are loaded."
    (warning,) = done.stderr.splitlines()
    assert "did not start within 3 s ($TOOLCALL_MCP_TIMEOUT)" in warning
    assert time.monotonic() - started < 20


def test_no_server_process_outlives_the_command(tmp_path: Path) -> None:
    marker = f"--marker-{os.getpid()}-{time.monotonic_ns()}"
    played = script(tmp_path, call("slow_count", to=1), "ok")
    toolcall(
        "run",
        "x",
        "--model",
        "scripted",
        "--script",
        str(played),
        "--mcp",
        f"{SERVER} {marker}",
        "--mcp",
        f"{SERVER} {marker} --hang-at-start",
        "--tool-timeout",
        "1",
        cwd=tmp_path,
        env={"TOOLCALL_MCP_TIMEOUT": "2"},
    )
    deadline = time.monotonic() + 10
    while any(marker in line for line in fixture_processes()) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert not any(marker in line for line in fixture_processes())


def test_streamable_http_server_from_a_config_url(tmp_path: Path) -> None:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    server = subprocess.Popen(
        [sys.executable, str(FIXTURE), "--http", str(port)],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        _wait_for_port(port)
        config = tmp_path / "config.toml"
        config.write_text(
            f'[mcp.servers.notes]\nurl = "http://127.0.0.1:{port}/mcp"\n', encoding="utf-8"
        )
        played = script(tmp_path, call("read_note", title="plans"), "Kyoto in April.")
        done = toolcall(
            "run",
            "plans?",
            "--model",
            "scripted",
            "--script",
            str(played),
            "--json",
            cwd=tmp_path,
            env={"TOOLCALL_CONFIG": str(config)},
        )
        assert done.returncode == 0, done.stderr
        (result,) = finished(events(done.stdout))
        assert result["ok"] and result["content"] == "visit Kyoto in April"
        listed = toolcall("tools", cwd=tmp_path, env={"TOOLCALL_CONFIG": str(config)})
        assert "notes__calculate" in listed.stdout and "mcp:notes" in listed.stdout
    finally:
        server.terminate()
        server.wait(timeout=10)


def _wait_for_port(port: int) -> None:
    # Generous: the fixture imports the mcp SDK and uvicorn, which took over 30 s on a 2-core
    # machine whose cores a llama-server held; a healthy start returns as soon as it listens.
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        with socket.socket() as probe:
            if probe.connect_ex(("127.0.0.1", port)) == 0:
                return
        time.sleep(0.1)
    raise AssertionError(f"the fixture server did not listen on {port}")


def test_a_killed_server_in_chat_is_one_line_and_the_chat_goes_on(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    registry = ToolRegistry()
    servers, problems = start_servers(
        [server_from_flag(SERVER)], registry, call_timeout=10, start_timeout=30
    )
    assert problems == [] and servers is not None
    model = ScriptedModel(
        [call("restart_service"), "It went down.", call("read_note", title="plans"), "No notes."]
    )
    session = Session(
        model=model, strategy=get_strategy("regex"), registry=registry, limits=Limits(), mcp=servers
    )
    try:
        with create_pipe_input() as pipe:
            pipe.send_text("restart the service\rwhat are my plans?\r/exit\r")
            code = piped_chat(session, pipe, tmp_path).loop()
    finally:
        session.close()
    out = capsys.readouterr().out
    assert code == 0
    (line,) = [x for x in out.splitlines() if x.startswith("warning: MCP server 'fixture'")]
    assert "stopped" in line and "its tools are withdrawn" in line
    assert "answer: It went down." in out and "answer: No notes." in out
    assert "unknown tool `read_note`" in out
    assert len(registry) == 0


# --- descriptions and config -------------------------------------------------------------------


@pytest.mark.parametrize(
    ("command", "name"),
    [
        ("mcp-server-time", "time"),
        ("/opt/bin/github-mcp --read-only", "github"),
        ("npx -y @modelcontextprotocol/server-filesystem /tmp", "filesystem"),
        ("uvx mcp-server-fetch", "fetch"),
        (f"{sys.executable} {FIXTURE}", "fixture"),
    ],
)
def test_a_flag_server_is_named_from_its_command(command: str, name: str) -> None:
    assert server_from_flag(command).name == name


def test_config_tables_describe_stdio_and_http_servers(tmp_path: Path) -> None:
    path = tmp_path / "config.toml"
    path.write_text(
        "[mcp.servers.clock]\n"
        'command = "mcp-server-time"\nargs = ["--local-timezone", "Asia/Tokyo"]\n'
        'env = { TZ = "UTC" }\n'
        '[mcp.servers.remote]\nurl = "https://example.test/mcp"\n',
        encoding="utf-8",
    )
    clock, remote = load_config(path).mcp_servers
    assert clock == ServerSpec(
        "clock", "mcp-server-time", ("--local-timezone", "Asia/Tokyo"), (("TZ", "UTC"),)
    )
    ours = {"PATH": "/bin", "TZ": "Europe/Paris", "OPENAI_API_KEY": "sk-secret-123456789"}
    # The server's own env over the few variables a program needs; never the user's keys.
    assert clock.environment(ours) == {"PATH": "/bin", "TZ": "UTC"}
    assert remote == ServerSpec("remote", url="https://example.test/mcp")


@pytest.mark.parametrize(
    ("table", "problem"),
    [
        ('[mcp.servers.x]\nargs = ["a"]\n', "needs either command"),
        ('[mcp.servers.x]\ncommand = "a"\nurl = "http://h/mcp"\n', "needs either command"),
        ('[mcp.servers.x]\ncommand = "a"\nargs = "b"\n', "args must be a list of strings"),
        ('[mcp.servers.x]\ncommand = "a"\nenv = { A = 1 }\n', "env must be a table of strings"),
        ('[mcp.servers.x]\nurl = "ftp://h"\n', "url must be an http"),
        ('[mcp.servers.x]\ncommand = "a"\ncwd = "/"\n', "unknown key(s) cwd"),
        ('[mcp.servers."a b"]\ncommand = "a"\n', "its name must be"),
        ("[mcp]\nserver = 1\n", "[mcp] takes only"),
    ],
)
def test_a_bad_server_table_is_one_config_error(tmp_path: Path, table: str, problem: str) -> None:
    path = tmp_path / "config.toml"
    path.write_text(table, encoding="utf-8")
    with pytest.raises(ConfigError) as raised:
        load_config(path)
    assert problem in str(raised.value) and str(path) in str(raised.value)
    done = toolcall("tools", cwd=tmp_path, env={"TOOLCALL_CONFIG": str(path)})
    assert done.returncode == 2 and len(done.stderr.splitlines()) == 1
    assert done.stderr.startswith("toolcall: error: config ")


def test_an_empty_mcp_flag_is_a_usage_error(tmp_path: Path) -> None:
    done = toolcall("tools", "--mcp", " ", cwd=tmp_path)
    assert done.returncode == 2 and "--mcp needs a command" in done.stderr


class _Hints:
    def __init__(self, **hints: bool | None) -> None:
        for key in ("read_only_hint", "destructive_hint", "idempotent_hint", "open_world_hint"):
            setattr(self, key, hints.get(key))


def test_annotations_map_onto_the_policy() -> None:
    plain = policy_from_annotations(None)
    assert (plain.permission, plain.dangerous, plain.cacheable) == ("write", False, False)
    read = policy_from_annotations(_Hints(read_only_hint=True, open_world_hint=False))
    assert (read.permission, read.dangerous, read.cacheable) == ("read", False, True)
    # A read-only tool of an open world (a web search) gives a new answer each time.
    assert not policy_from_annotations(_Hints(read_only_hint=True)).cacheable
    destructive = policy_from_annotations(_Hints(destructive_hint=True))
    assert destructive.dangerous and destructive.permission == "write"
    repeatable = _Hints(idempotent_hint=True, open_world_hint=False)
    assert policy_from_annotations(repeatable).cacheable
    assert not policy_from_annotations(
        _Hints(idempotent_hint=False, open_world_hint=False)
    ).cacheable


def test_closing_twice_and_closing_unstarted_servers_is_quiet() -> None:
    servers = McpServers([], start_timeout=1, call_timeout=1)
    assert servers.start() == []
    servers.close()
    servers.close()


def test_isolate_tools_leaves_mcp_tools_to_their_server(tmp_path: Path) -> None:
    played = script(tmp_path, call("read_note", title="plans"), "Kyoto.")
    done = run_played(tmp_path, "plans", played, "--isolate-tools")
    (result,) = finished(events(done.stdout))
    assert result["ok"] and result["content"] == "visit Kyoto in April"


def test_a_server_s_secret_arguments_are_masked_where_they_are_shown() -> None:
    # Found in review: the trace header and warning lines held `--api-key sk-live-...` whole.
    spec = ServerSpec(
        "notes",
        "notes-server",
        ("--api-key", "live-abcdef123456", "--token=tok-987654321", "--port", "8080",
         "sk-abcdefghijk"),
    )  # fmt: skip
    shown = spec.traced()["args"]
    assert shown[0] == "--api-key" and "abcdef123456" not in shown[1]
    assert shown[2].startswith("--token=") and "987654321" not in shown[2]
    assert shown[3:5] == ["--port", "8080"]  # not a secret: shown as given
    assert "abcdefghijk" not in shown[5]
    assert "abcdef123456" not in spec.where and "--port 8080" in spec.where


# --- a server that says what no SDK would (tests/mcp_servers/hostile_server.py) ----------------

HOSTILE = Path(__file__).parent / "mcp_servers" / "hostile_server.py"


def hostile(
    tmp_path: Path,
    tools: list[dict[str, Any]],
    results: dict[str, Any] | None = None,
    noise: list[str] | None = None,
) -> str:
    """The --mcp command of a server that lists `tools` and answers as `results` says."""
    plan = tmp_path / "plan.json"
    plan.write_text(
        json.dumps({"tools": tools, "results": results or {}, "noise": noise or []}),
        encoding="utf-8",
    )
    return f"{sys.executable} {HOSTILE} {plan}"


def listed_tool(name: str, schema: dict[str, Any]) -> dict[str, Any]:
    return {"name": name, "description": f"The {name} tool.", "inputSchema": schema}


def words_schema(word: dict[str, Any]) -> dict[str, Any]:
    return {"type": "object", "properties": {"word": word}, "required": ["word"]}


def real_toolcall(*args: str, cwd: Path, timeout: float) -> subprocess.CompletedProcess[str]:
    """`python -m toolcall_cli ARGS` in a process of its own: a hang fails the test at
    `timeout` (in this process nothing could stop it)."""
    return subprocess.run(
        [sys.executable, "-m", "toolcall_cli", *args],
        capture_output=True,
        text=True,
        cwd=cwd,
        env={**os.environ, "PYTHONIOENCODING": "utf-8"},
        timeout=timeout,
    )


class SilentServer:
    """A loopback HTTP server that takes connections and never answers; it counts them."""

    def __init__(self) -> None:
        self.socket = socket.create_server(("127.0.0.1", 0))
        self.port = self.socket.getsockname()[1]
        self.socket.settimeout(0.1)
        self.accepted: list[socket.socket] = []
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._accept, daemon=True)
        self._thread.start()

    def _accept(self) -> None:
        while not self._stop.is_set():
            try:
                connection, _ = self.socket.accept()
            except OSError:
                continue
            self.accepted.append(connection)  # held open, never answered

    def close(self) -> None:
        self._stop.set()
        self._thread.join(timeout=5)
        for connection in self.accepted:
            connection.close()
        self.socket.close()


def test_a_remote_ref_is_never_fetched_and_the_run_ends_within_its_time(tmp_path: Path) -> None:
    # Found by an attacker's pass: jsonschema fetched the $ref, from a server that never
    # answered, and the run was still waiting at 90 s despite --tool-timeout 3 --timeout 10.
    silent = SilentServer()
    try:
        url = f"http://127.0.0.1:{silent.port}/schema.json"
        command = hostile(
            tmp_path,
            [
                listed_tool("lookup", words_schema({"$ref": url})),
                listed_tool("define", {"$ref": f"{url}#/definitions/word", "type": "object"}),
            ],
        )
        played = script(tmp_path, call("lookup", word="cat") + call("define", word="cat"), "ok")
        started = time.monotonic()
        done = real_toolcall(
            "run", "look up cat", "--model", "scripted", "--script", str(played),
            "--mcp", command, "--no-default-tools", "--tool-timeout", "3", "--timeout", "10",
            "--json", cwd=tmp_path, timeout=60,
        )  # fmt: skip
        took = time.monotonic() - started
        assert silent.accepted == []  # nothing was fetched
    finally:
        silent.close()
    assert done.returncode == 0, done.stderr
    assert took < 10 + 30  # the run's own limit, and slack for a loaded machine's start-up
    warnings = [line for line in done.stderr.splitlines() if "left out" in line]
    assert len(warnings) == 2 and all(url in line for line in warnings)
    assert "fetches nothing" in warnings[0] and "Traceback" not in done.stderr
    results = finished(events(done.stdout))
    assert [r["error_kind"] for r in results] == ["unknown_tool", "unknown_tool"]


def test_a_file_ref_never_puts_the_files_contents_anywhere(tmp_path: Path) -> None:
    # Found by an attacker's pass: a file:// $ref put the file's enum into the feedback.
    secret = tmp_path / "secret.json"
    secret.write_text('{"enum": ["TOP-SECRET-VALUE-9431"]}', encoding="utf-8")
    command = hostile(tmp_path, [listed_tool("lookup", words_schema({"$ref": secret.as_uri()}))])
    played = script(tmp_path, call("lookup", word="cat"), "ok")
    trace = tmp_path / "trace.jsonl"
    done = real_toolcall(
        "run", "look up cat", "--model", "scripted", "--script", str(played), "--mcp", command,
        "--no-default-tools", "--trace", str(trace), cwd=tmp_path, timeout=60,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    everything = done.stdout + done.stderr + trace.read_text(encoding="utf-8")
    assert "TOP-SECRET-VALUE-9431" not in everything
    (warning,) = [line for line in done.stderr.splitlines() if "left out" in line]
    assert secret.as_uri() in warning and "fetches nothing" in warning


def test_a_catastrophic_pattern_is_stopped_at_the_tool_timeout(tmp_path: Path) -> None:
    # Found by an attacker's pass: `^(a+)+$` against "a" * 40 + "!" hung past every timeout.
    # The regex module answers that one at once; `^(a|aa)+$` defeats it, and is stopped.
    schema = {
        "type": "object",
        "properties": {
            "plain": {"type": "string", "pattern": "^(a+)+$"},
            "twice": {"type": "string", "pattern": "^(a|aa)+$"},
        },
    }
    command = hostile(tmp_path, [listed_tool("spell", schema)])
    played = script(
        tmp_path,
        call("spell", plain="a" * 40 + "!") + call("spell", twice="a" * 60 + "!"),
        "I could not spell it.",
    )
    started = time.monotonic()
    done = real_toolcall(
        "run", "spell it", "--model", "scripted", "--script", str(played), "--mcp", command,
        "--no-default-tools", "--tool-timeout", "2", "--timeout", "20", "--json",
        cwd=tmp_path, timeout=90,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert time.monotonic() - started < 20 + 30
    plain, twice = finished(events(done.stdout))
    assert plain["error_kind"] == "invalid_arguments" and "does not match" in plain["content"]
    assert twice["error_kind"] == "timeout"
    assert "could not be checked against its schema within 2 s" in twice["content"]


def test_checking_arguments_is_bounded_by_the_run_timeout_too(tmp_path: Path) -> None:
    schema = words_schema({"type": "string", "pattern": "^(a|aa)+$"})
    command = hostile(tmp_path, [listed_tool("spell", schema)])
    played = script(tmp_path, call("spell", word="a" * 60 + "!"), "unused")
    started = time.monotonic()
    done = real_toolcall(
        "run", "spell it", "--model", "scripted", "--script", str(played), "--mcp", command,
        "--no-default-tools", "--tool-timeout", "600", "--timeout", "6", "--json",
        cwd=tmp_path, timeout=90,
    )  # fmt: skip
    assert time.monotonic() - started < 6 + 30, done.stderr
    stream = events(done.stdout)
    (result,) = finished(stream)
    assert result["error_kind"] == "timeout" and "could not be checked" in result["content"]
    assert any(e["kind"] == "limit_reached" and e["limit"] == "timeout" for e in stream)


def test_one_tool_the_protocol_cannot_read_is_left_out_alone(tmp_path: Path) -> None:
    # Found by an attacker's pass: one tool with `"type": "objekt"` withdrew the whole server.
    command = hostile(
        tmp_path,
        [
            listed_tool("good", {"type": "object", "properties": {}}),
            listed_tool("bad", {"type": "objekt"}),
            listed_tool("worse", {"type": "object", "properties": {"a": {"type": "strng"}}}),
            {"description": "no name, no schema"},
        ],
    )
    done = toolcall("tools", "--no-default-tools", "--mcp", command, cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert [line.split("(")[0] for line in done.stdout.splitlines()] == ["good"]
    names = ("'bad'", "'worse'", "number 4")
    lines = done.stderr.splitlines()
    assert len(lines) == 3
    bad, worse, nameless = (next(x for x in lines if f"tool {n}" in x) for n in names)
    assert "tool 'bad' left out" in bad and "inputSchema.type" in bad
    assert "tool 'worse' left out" in worse and "not valid JSON Schema" in worse
    assert "tool number 4 left out" in nameless
    assert "Traceback" not in done.stderr


def test_names_that_only_differ_in_what_a_tool_name_may_not_hold_stay_two_tools(
    tmp_path: Path,
) -> None:
    # Both were `____`: the second was left out, "no name ... is free for it".
    empty = {"type": "object", "properties": {}}
    results = {"查询库存": {"text": "42 in stock"}, "删除订单": {"text": "order deleted"}}
    listed = [listed_tool("查询库存", empty), listed_tool("删除订单", empty)]
    command = hostile(tmp_path, listed, results)
    done = toolcall("tools", "--no-default-tools", "--mcp", command, cwd=tmp_path)
    assert done.returncode == 0 and "left out" not in done.stderr, done.stderr
    names = [line.split("(")[0] for line in done.stdout.splitlines()]
    assert len(set(names)) == 2 and all(TOOL_NAME.fullmatch(name) for name in names)
    played = tmp_path / "script.jsonl"
    call = {"tool_calls": [{"name": names[1], "arguments": {}}]}
    played.write_text(json.dumps(call) + '\n"ok"\n', encoding="utf-8")
    ran = toolcall(
        "run", "delete it", "--no-default-tools", "--strategy", "schema", "--model", "scripted",
        "--script", str(played), "--mcp", command, "--json", cwd=tmp_path,
    )  # fmt: skip
    assert ran.returncode == 0, ran.stderr
    assert "order deleted" in ran.stdout  # the second name reaches the server as 删除订单


def test_lines_on_stdout_that_are_not_json_rpc_are_one_line(tmp_path: Path) -> None:
    # Found by an attacker's pass: the SDK printed a full traceback for each such line.
    command = hostile(
        tmp_path,
        [listed_tool("echo_word", words_schema({"type": "string"}))],
        results={"echo_word": {"text": "cat"}},
        noise=["this is not json", "{broken", "[1, 2"],
    )
    played = script(tmp_path, call("echo_word", word="cat"), call("echo_word", word="dog"), "ok")
    # A process of its own: in this one, pytest's log capture would take the SDK's tracebacks.
    done = real_toolcall(
        "run", "echo", "--model", "scripted", "--script", str(played), "--mcp", command,
        "--no-default-tools", "--json", cwd=tmp_path, timeout=60,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert "Traceback" not in done.stderr and "Failed to parse" not in done.stderr
    (warning,) = done.stderr.splitlines()
    assert "not JSON-RPC: 'this is not json'" in warning and "further such lines" in warning
    stream = events(done.stdout)
    assert [r["content"] for r in finished(stream)] == ["cat", "cat"]
    assert not [e for e in stream if e["kind"] == "notice" and "JSON-RPC" in e["message"]]


def test_a_huge_result_is_read_only_to_its_head(tmp_path: Path) -> None:
    # Found by an attacker's pass: a 200 MB result took 600 MB before the timeout. Here 24 MB,
    # against the 4 MiB a message is read to: what toolcall allocates stays near that bound.
    size = 24_000_000
    command = hostile(
        tmp_path,
        [listed_tool("dump", {"type": "object", "properties": {}})],
        results={"dump": {"repeat": "x", "times": size}},
    )
    registry = ToolRegistry()
    servers, problems = start_servers(
        [server_from_flag(command)], registry, call_timeout=120, start_timeout=30
    )
    assert servers is not None and problems == []
    try:
        found = registry.get("dump")
        assert found is not None
        tracemalloc.start()
        try:
            text = found.func()
            _, peak = tracemalloc.get_traced_memory()
        finally:
            tracemalloc.stop()
        notes = [w.message for w in servers.withdrawn()]
    finally:
        servers.close()
    assert peak < 5 * MIN_MESSAGE_BYTES < size
    assert text.startswith("x" * 1000) and len(text) < MIN_MESSAGE_BYTES + 1000
    sent = size + 100  # the JSON-RPC around the text
    assert text.endswith(f"the answer was {sent:,} bytes; only its first 4,194,304 were read.")
    (note,) = notes
    assert f"sent a result of {sent:,} bytes" in note


def test_true_and_false_as_parameter_schemas_are_read_everywhere(tmp_path: Path) -> None:
    # Valid JSON Schema that the prompt, coercion and validation each read as an object.
    schema = {
        "type": "object",
        "properties": {"word": {"anyOf": [True, {"type": "integer"}]}, "n": True, "never": False},
        "required": ["word", "n"],
    }
    command = hostile(tmp_path, [listed_tool("lookup", schema)])
    played = script(tmp_path, call("lookup", word="5"), call("lookup", word="5", n=[1]), "ok")
    for strategy in ("regex", "stream"):
        done = toolcall(
            "run", "look", "--model", "scripted", "--script", str(played), "--mcp", command,
            "--no-default-tools", "--strategy", strategy, "--json", cwd=tmp_path,
        )  # fmt: skip
        assert done.returncode == 0, done.stderr
        missing, ran = finished(events(done.stdout))
        assert "missing required argument `n` (any value)" in missing["content"]
        assert ran["ok"] and ran["content"] == "done"


def test_a_name_that_needed_no_change_keeps_it_beside_one_cleaned_to_it() -> None:
    from toolcall_cli.tools.mcp_spec import tool_names

    names = tool_names(["a.b", "a_b", "查询库存", "删除订单"])
    assert names["a_b"] == "a_b"  # valid as it was: unchanged
    assert names["a.b"].startswith("a_b_") and names["a.b"] != "a_b"
    assert len({names["查询库存"], names["删除订单"]}) == 2
