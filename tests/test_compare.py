"""`toolcall prompt --all` and `toolcall compare`: every strategy side by side, on the offline
model, checked against what `toolcall prompt` and `toolcall run` say of each strategy alone."""

from __future__ import annotations

import json
import sys
from io import StringIO
from pathlib import Path
from typing import Any

import pytest
from fake_openai import Answer, FakeOpenAI
from in_process import toolcall
from rich.console import Console

from toolcall_cli.app.build import Toolbox
from toolcall_cli.app.options import SessionOptions
from toolcall_cli.app.settings import resolve_settings
from toolcall_cli.app.variants import all_variants
from toolcall_cli.cli._compare import ComparePlan, print_comparison, run_all
from toolcall_cli.evaluate.figures import RunTally
from toolcall_cli.events import RunFinished, RunStarted, ToolStarted
from toolcall_cli.messages import ToolCall
from toolcall_cli.tools.loader import load_tools, tool_dirs
from toolcall_cli.trace import read_trace
from toolcall_cli.trace.files import trace_dir, trace_files
from toolcall_cli.wire.tokens import estimate_tokens, request_tokens

FLAGS = {
    "regex": ["--strategy", "regex"],
    "schema tools": ["--strategy", "schema", "--schema-mode", "tools"],
    "schema json": ["--strategy", "schema", "--schema-mode", "json"],
    "schema required": ["--strategy", "schema", "--schema-mode", "required"],
    "stream tags": ["--strategy", "stream"],
}
"""Each label compare shows, and the flags that choose that strategy for `run` and `prompt`."""
ARITHMETIC = "What's 12*5+3?"
WEATHER = "北京和上海明天天气分别是多少？"


def as_json(done: Any) -> Any:
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)


def json_lines(done: Any) -> list[Any]:
    assert done.returncode == 0, done.stderr
    return [json.loads(line) for line in done.stdout.splitlines()]


def compare_dir() -> Path:
    """Where compare keeps its runs' traces, apart from the user's own."""
    return trace_dir() / "compare"


def run_alone(tmp_path: Path, question: str, label: str, *extra: str) -> list[dict[str, Any]]:
    """The events of `toolcall run` with one strategy's flags."""
    done = toolcall("run", question, *FLAGS[label], "--json", *extra, cwd=tmp_path)
    return [json.loads(line) for line in done.stdout.splitlines()]


# --- prompt --all ---------------------------------------------------------------------------


def test_prompt_all_gives_each_strategys_first_request_and_its_sizes(tmp_path: Path) -> None:
    shown = as_json(toolcall("prompt", WEATHER, "--all", "--json", cwd=tmp_path))
    assert [r["label"] for r in shown["requests"]] == list(FLAGS)
    for request in shown["requests"]:
        alone = as_json(toolcall("prompt", WEATHER, *FLAGS[request["label"]], cwd=tmp_path))
        assert request["body"] == alone
        systems = [m["content"] for m in alone["messages"] if m["role"] == "system"]
        assert request["sizes"]["system_prompt"] == {
            "chars": sum(map(len, systems)),
            "tokens": sum(map(estimate_tokens, systems)),
        }
        for part in ("tools", "response_format"):
            text = json.dumps(alone[part], ensure_ascii=False) if part in alone else ""
            assert request["sizes"][part] == {"chars": len(text), "tokens": estimate_tokens(text)}
        assert request["request_tokens"] == request_tokens(alone)


def test_prompt_all_shows_where_each_strategy_puts_its_tools(tmp_path: Path) -> None:
    shown = as_json(toolcall("prompt", "hi", "--all", "--json", cwd=tmp_path))
    sizes = {r["label"]: r["sizes"] for r in shown["requests"]}
    carried = {
        label: sorted(part for part, size in parts.items() if size["chars"])
        for label, parts in sizes.items()
    }
    assert carried == {
        "regex": ["system_prompt"],
        "schema tools": ["tools"],
        "schema json": ["response_format", "system_prompt"],
        "schema required": ["tools"],
        "stream tags": ["system_prompt"],
    }
    # required offers one tool more than native calling: final_answer.
    assert sizes["schema required"]["tools"]["chars"] > sizes["schema tools"]["tools"]["chars"]


def test_prompt_all_takes_the_stream_mode(tmp_path: Path) -> None:
    shown = as_json(
        toolcall("prompt", "hi", "--all", "--json", "--stream-mode", "native", cwd=tmp_path)
    )
    stream = shown["requests"][-1]
    assert stream["label"] == "stream native" and stream["body"]["stream"] is True
    assert {t["function"]["name"] for t in stream["body"]["tools"]} >= {"get_weather"}


def test_prompt_all_draws_a_size_table_and_a_panel_each(tmp_path: Path) -> None:
    sizes = as_json(toolcall("prompt", "hi", "--all", "--json", cwd=tmp_path))["requests"]
    wide = toolcall("prompt", "hi", "--all", cwd=tmp_path, env={"COLUMNS": "250"})
    assert wide.returncode == 0, wide.stderr
    rows = {line.split("│")[1].strip(): line for line in wide.stdout.splitlines() if "│" in line}
    for request in sizes:
        system = request["sizes"]["system_prompt"]
        assert request["label"] in rows
        if system["chars"]:
            assert f"{system['chars']:,} / {system['tokens']:,}" in rows[request["label"]]
    titles = [line for line in wide.stdout.splitlines() if "╭─ regex" in line]
    assert len(titles) == 1 and "╭─ schema tools" in titles[0]  # side by side
    narrow = toolcall("prompt", "hi", "--all", cwd=tmp_path, env={"COLUMNS": "70"})
    titles = [line for line in narrow.stdout.splitlines() if line.startswith("╭─")]
    assert len(titles) == 5 and all(line.count("╭─") == 1 for line in titles)  # stacked


def test_prompt_all_with_one_strategy_named_is_a_usage_error(tmp_path: Path) -> None:
    done = toolcall("prompt", "hi", "--all", "--strategy", "schema", cwd=tmp_path)
    assert done.returncode == 2 and "--all shows every strategy" in done.stderr


# --- compare --------------------------------------------------------------------------------


def compare(tmp_path: Path, question: str, *flags: str) -> dict[str, Any]:
    result: dict[str, Any] = as_json(toolcall("compare", question, "--json", *flags, cwd=tmp_path))
    return result


def test_compare_runs_every_strategy_and_each_figure_matches_a_run_alone(tmp_path: Path) -> None:
    shown = compare(tmp_path, WEATHER)
    assert shown["seeds"] == [0] and shown["model"] == "offline"
    assert [run["label"] for run in shown["runs"]] == list(FLAGS)
    for run in shown["runs"]:
        events = run_alone(tmp_path, WEATHER, run["label"], "--seed", "0")
        end = events[-1]
        assert run["stop_reason"] == end["stop_reason"] == "answered"
        assert run["iterations"] == end["iterations"]
        assert run["calls"] == end["tool_calls"] == 2  # 北京 and 上海
        assert run["tokens"] == end["usage"]["total_tokens"] and not run["tokens_estimated"]
        assert run["answer"] == next(e["text"] for e in events if e["kind"] == "final_answer")
        assert run["parse_errors"] == run["tool_errors"] == run["errors_recovered"] == 0
        assert 0 <= run["first_tool_start"] <= run["wall_time"]


@pytest.mark.parametrize(
    ("fault", "figure"), [("truncated", "parse_errors"), ("unknown_tool", "tool_errors")]
)
def test_compare_counts_the_faults_each_strategy_met(
    tmp_path: Path, fault: str, figure: str
) -> None:
    shown = compare(tmp_path, ARITHMETIC, "--faults", fault)
    for run in shown["runs"]:
        events = run_alone(tmp_path, ARITHMETIC, run["label"], "--seed", "0", "--faults", fault)
        parse_errors = sum(e["kind"] == "parse_error" for e in events)
        tool_errors = sum(e["kind"] == "tool_finished" and not e["result"]["ok"] for e in events)
        assert (run["parse_errors"], run["tool_errors"]) == (parse_errors, tool_errors)
        assert run[figure] >= 1, run["label"]
        assert run["stop_reason"] == "answered" and run["answer"] == "12*5+3 = 63"
        assert run["errors_recovered"] == parse_errors + tool_errors


def test_compare_repeat_gives_rates_per_strategy_over_seeds(tmp_path: Path) -> None:
    faults = (
        "--faults",
        "repeat_call,broken_batch",
        "--fault-rate",
        "0.6",
        "--max-iterations",
        "3",
    )
    shown = compare(tmp_path, WEATHER, "--repeat", "3", "--seed", "7", *faults)
    assert shown["seeds"] == [7, 8, 9]
    assert len(shown["runs"]) == 15
    for rated in shown["strategies"]:
        runs = [r for r in shown["runs"] if r["label"] == rated["label"]]
        assert [r["seed"] for r in runs] == [7, 8, 9]
        answered = sum(r["stop_reason"] == "answered" for r in runs)
        assert (rated["runs"], rated["answered"]) == (3, answered)
        assert rated["answered_rate"] == answered / 3
        assert rated["mean_iterations"] == round(sum(r["iterations"] for r in runs) / 3, 3)
        assert rated["parse_errors"] == sum(r["parse_errors"] for r in runs)
        assert rated["errors_recovered"] == sum(r["errors_recovered"] for r in runs)
        assert sum(rated["stop_reasons"].values()) == 3
    # A run stopped by the limit recovered nothing, whatever its best-effort answer says.
    stopped = [r for r in shown["runs"] if r["stop_reason"] == "limit"]
    assert stopped and any(r["parse_errors"] + r["tool_errors"] for r in stopped)
    assert all(r["errors_recovered"] == 0 for r in stopped)
    # Each seed is the one a run alone with that seed gets: the faults fire the same way.
    for run in shown["runs"]:
        if run["label"] in ("regex", "schema json"):
            alone = run_alone(tmp_path, WEATHER, run["label"], *faults, "--seed", str(run["seed"]))
            assert run["parse_errors"] == sum(e["kind"] == "parse_error" for e in alone)
            assert run["iterations"] == alone[-1]["iterations"]
            assert run["stop_reason"] == alone[-1]["stop_reason"]


def test_compare_prints_one_table_with_each_answer(tmp_path: Path) -> None:
    done = toolcall("compare", ARITHMETIC, "--faults", "unknown_tool", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    rows = [line for line in done.stdout.splitlines() if line.startswith(tuple(FLAGS))]
    assert len(rows) == 5
    for row in rows:
        assert "answered" in row and row.endswith("12*5+3 = 63")
        assert "/" in row  # recovered/errors: the unknown tool was an error, then answered
    assert "recovered: parse and tool errors in a run that went on to answer" in done.stdout


@pytest.mark.parametrize("repeat", ["1", "2"])
def test_compare_piped_leaves_no_spaces_at_the_ends_of_lines(tmp_path: Path, repeat: str) -> None:
    done = toolcall("compare", ARITHMETIC, "--repeat", repeat, cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert len(lines) > 5 and [line for line in lines if line != line.rstrip()] == []


def test_piped_lines_lose_the_padding_rich_adds_and_keep_a_text_s_own_spaces() -> None:
    """A table's padding, an indented block's and a wrapped line's space go; the spaces that
    end the lines of text shown as written (a Markdown hard break) stay."""
    from rich.console import Group
    from rich.padding import Padding
    from rich.table import Table
    from rich.text import Text

    from toolcall_cli.cli._running import pipe_console
    from toolcall_cli.render.verbatim import verbatim

    console = pipe_console()
    console.file, console.width = StringIO(), 40
    table = Table("strategy", "answer")
    table.add_row("regex", "a longer answer")
    table.add_row("schema", "short")
    written = Text("Roses  \nViolets  \nend", style=verbatim())
    console.print(table)
    console.print(Group(Text("result"), Padding(written, (0, 0, 0, 4), expand=False)))
    console.print(Text("toolcall's own words, " * 4, style="dim"))
    lines = console.file.getvalue().splitlines()
    assert "    Roses  " in lines and "    Violets  " in lines and "    end" in lines
    own = [line for line in lines if "Roses" not in line and "Violets" not in line]
    assert len(own) > 8 and [line for line in own if line != line.rstrip()] == []


def test_compare_repeat_prints_the_rates(tmp_path: Path) -> None:
    done = toolcall("compare", ARITHMETIC, "--repeat", "2", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert "seeds 0-1" in done.stdout
    assert done.stdout.count("2/2 (100%)") == 5 and done.stdout.count("answered 2") == 5


def test_compare_says_when_a_strategy_failed_and_still_exits_0(
    tmp_path: Path, refusing_port: int
) -> None:
    # Held for the whole test: a port bound and let go could be a parallel test's server's by
    # the time the five runs connect.
    url = f"http://127.0.0.1:{refusing_port}/v1"
    shown = compare(tmp_path, "hi", "--model", "m", "--base-url", url)
    assert {run["stop_reason"] for run in shown["runs"]} == {"model_failed"}
    assert all("cannot connect" in run["failure"] for run in shown["runs"])
    assert all(rated["answered_rate"] == 0 for rated in shown["strategies"])
    table = toolcall("compare", "hi", "--model", "m", "--base-url", url, cwd=tmp_path)
    assert table.returncode == 0 and table.stdout.count("model failed: cannot connect") == 5


def test_compare_writes_a_trace_per_strategy_and_seed(tmp_path: Path) -> None:
    traces = tmp_path / "traces"
    traces.mkdir()
    shown = compare(tmp_path, ARITHMETIC, "--repeat", "2", "--trace-dir", str(traces))
    files = sorted(traces.iterdir())
    assert len(files) == 10 and sorted(Path(r["trace"]) for r in shown["runs"]) == files
    assert shown["trace_dir"] == str(traces) and trace_dir().exists() is False
    for run in shown["runs"]:
        label = run["label"].replace(" ", "-")
        assert Path(run["trace"]).name.endswith(f"-compare-{label}-seed{run['seed']}.jsonl")
        trace = read_trace(Path(run["trace"]))
        assert trace.header is not None and trace.header["command"] == "compare"
        settings = trace.header["settings"]
        strategy, _, mode = run["label"].partition(" ")
        assert (settings["model"], settings["strategy"], settings["seed"]) == (
            "offline",
            strategy,
            run["seed"],
        )
        if strategy == "schema":
            assert settings["schema_mode"] == mode
        assert settings["sampling"] == {"seed": run["seed"]}
        assert {tool["name"] for tool in trace.header["tools"]} >= {"calculate", "get_weather"}
        first, last = trace.records[0], trace.records[-1]
        assert first["kind"] == "run_started" and first["strategy"] == strategy
        assert first["sampling"] == {"seed": run["seed"]}
        assert last["kind"] == "run_finished" and last["iterations"] == run["iterations"]
        assert Path(run["trace"]).stat().st_mode & 0o077 == 0  # owner-only


def test_compare_traces_go_to_their_own_folder_in_the_trace_directory_by_default(
    tmp_path: Path,
) -> None:
    done = toolcall("compare", ARITHMETIC, cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    written = trace_files(compare_dir())
    assert len(written) == 5
    assert (
        done.stdout.splitlines()[-1] == f"traces: 5 in {compare_dir()} (toolcall trace list --all)"
    )
    headers = [read_trace(path).header for path in written]
    assert [(h or {})["command"] for h in headers] == ["compare"] * 5
    assert trace_files(trace_dir()) == []  # none among the user's own runs
    listed = json_lines(toolcall("trace", "list", "--all", "--json", cwd=tmp_path))
    assert {row["command"] for row in listed} == {"compare"}
    assert sorted((row["strategy"], row["stop_reason"]) for row in listed) == sorted(
        [("regex", "answered"), ("schema", "answered"), ("schema", "answered"),
         ("schema", "answered"), ("stream", "answered")]
    )  # fmt: skip
    shown = compare(tmp_path, ARITHMETIC)
    assert shown["trace_dir"] == str(compare_dir())
    assert {Path(run["trace"]) for run in shown["runs"]} == set(trace_files(compare_dir())) - set(
        written
    )


def test_compare_traces_are_pruned_as_every_run_s(tmp_path: Path) -> None:
    config = tmp_path / "config.toml"
    config.write_text("[defaults]\ntrace_keep = 3\n", encoding="utf-8")
    env = {"TOOLCALL_CONFIG": str(config)}
    done = toolcall("compare", ARITHMETIC, "--json", cwd=tmp_path, env=env)
    kept = trace_files(compare_dir())
    assert done.returncode == 0 and len(kept) == 3
    runs = json.loads(done.stdout)["runs"]
    assert [Path(run["trace"]) for run in runs[-3:]] == kept  # the newest three


@pytest.mark.parametrize(
    ("flags", "config"), [(["--no-trace"], ""), ([], "[defaults]\ntrace = false\n")]
)
def test_compare_without_traces(tmp_path: Path, flags: list[str], config: str) -> None:
    path = tmp_path / "config.toml"
    path.write_text(config, encoding="utf-8")
    done = toolcall("compare", ARITHMETIC, *flags, cwd=tmp_path, env={"TOOLCALL_CONFIG": str(path)})
    assert done.returncode == 0, done.stderr
    assert trace_files(compare_dir()) == [] and "traces:" not in done.stdout
    shown = json.loads(
        toolcall("compare", ARITHMETIC, "--json", *flags, cwd=tmp_path,
                 env={"TOOLCALL_CONFIG": str(path)}).stdout
    )  # fmt: skip
    assert shown["trace_dir"] is None and {run["trace"] for run in shown["runs"]} == {None}


def test_compare_traces_keep_keys_and_url_credentials_out(tmp_path: Path) -> None:
    key, password = "sk-compare-SECRET-12345", "pw-compare-SECRET-678"
    with FakeOpenAI() as server:
        url = server.base_url.replace("http://", f"http://someone:{password}@")
        server.answers += [
            Answer(status=400, json_body={"error": {"message": f"bad key {key} for {url}"}})
            for _ in range(5)
        ]
        shown = compare(tmp_path, "hi", "--model", "m", "--base-url", url, "--api-key", key)
    assert len(server.requests) == 5
    assert {run["stop_reason"] for run in shown["runs"]} == {"model_failed"}
    for run in shown["runs"]:
        text = Path(run["trace"]).read_text(encoding="utf-8")
        assert key not in text and password not in text
        assert '"kind": "model_failed"' in text and "bad key ****" in text
        header = read_trace(Path(run["trace"])).header or {}
        assert header["settings"]["base_url"].startswith("http://****@127.0.0.1:")


def test_compare_trace_dir_and_no_trace_together_are_a_usage_error(tmp_path: Path) -> None:
    done = toolcall("compare", "hi", "--trace-dir", str(tmp_path), "--no-trace", cwd=tmp_path)
    assert done.returncode == 2 and "cannot be used together" in done.stderr
    assert done.stdout == "" and trace_files(compare_dir()) == []


@pytest.mark.parametrize(
    ("args", "needle"),
    [
        (["compare", ""], "empty"),
        (["compare", "hi", "--repeat", "0"], "--repeat"),
        (["compare", "hi", "--trace-dir", "no/such/dir"], "does not exist"),
        (["compare", "hi", "--faults", "bogus"], "unknown fault"),
        (["compare", "hi", "--model", "gpt-x"], "needs an endpoint"),
        (["compare", "hi", "--model", "scripted"], "a script is replies for one"),
    ],
)
def test_compare_usage_errors_exit_2(tmp_path: Path, args: list[str], needle: str) -> None:
    done = toolcall(*args, cwd=tmp_path)
    assert done.returncode == 2 and needle in done.stderr and done.stdout == ""


def test_the_answers_go_under_the_table_where_the_terminal_is_narrow(tmp_path: Path) -> None:
    settings = resolve_settings(SessionOptions())
    plugins = load_tools(tool_dirs([], include_bundled=True, cwd=tmp_path))
    plan = ComparePlan(
        question=ARITHMETIC,
        settings=settings,
        toolbox=Toolbox(plugins.registry, plugins),
        retrieval=None,
        variants=all_variants("tags"),
        seeds=(0,),
    )
    runs = run_all(plan)

    def shown(width: int) -> list[str]:
        out = StringIO()
        console = Console(file=out, width=width, force_terminal=True, color_system=None)
        print_comparison(plan, runs, console)
        return out.getvalue().splitlines()

    wide = shown(140)
    assert sum(line.endswith("12*5+3 = 63") and "answered" in line for line in wide) == 5
    narrow = shown(80)
    assert all(len(line) <= 80 for line in narrow)
    assert [line for line in narrow if line.endswith(": 12*5+3 = 63")] == [
        f"{label}: 12*5+3 = 63" for label in FLAGS
    ]


def test_a_server_given_up_on_in_one_run_is_said_for_the_runs_after_it(tmp_path: Path) -> None:
    # The servers start once for the comparison: the regex run's call kills this one, and the
    # four rows after it were shown as if they compared the strategies on the same tools.
    fixture = Path(__file__).parent / "mcp_servers" / "fixture_server.py"
    done = toolcall(
        "compare", "Restart the note service", "--no-default-tools", "--no-trace",
        "--mcp", f"{sys.executable} {fixture}", cwd=tmp_path,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    (line,) = [line for line in done.stderr.splitlines() if "given up on" in line]
    assert "MCP server 'fixture'" in line and "regex run (seed 0)" in line
    assert "their rows do not compare" in line


def test_the_first_tool_start_is_read_from_when_its_event_arrived() -> None:
    ticks = iter(range(100))
    tally = RunTally("regex", 0, clock=lambda: float(next(ticks)))
    call = ToolCall(id="#1.0", name="calculate", arguments={"expression": "1+1"})
    for event in (
        RunStarted(question="q", model="m", strategy="regex", tools=()),
        ToolStarted(call=call),
        ToolStarted(call=call),
        RunFinished(stop_reason="answered", iterations=1, tool_calls=1, elapsed=3.0),
    ):
        tally.add(event)
    figures = tally.figures()
    assert figures.first_tool_start == 1.0 and figures.wall_time == 3.0
    # No usage and no reply seen: 0 is what the run used, not an estimate.
    assert figures.tokens == 0 and not figures.tokens_estimated


def test_compare_chooses_each_request_s_tools_as_run_does(tmp_path: Path) -> None:
    catalogue = Path(__file__).resolve().parent.parent / "examples" / "catalogue"
    traces = tmp_path / "traces"
    traces.mkdir()
    done = toolcall(
        "compare", "--tools", str(catalogue), "--retrieve", "3", "--trace-dir", str(traces),
        "What's the weather in Tokyo?", cwd=tmp_path,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    files = sorted(traces.glob("*.jsonl"))
    assert len(files) == 5  # one run per strategy
    for path in files:
        records = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]
        chosen = [r for r in records if r.get("kind") == "tools_chosen"]
        assert chosen and all(len(r["sent"]) == 3 and r["total"] > 200 for r in chosen), path
