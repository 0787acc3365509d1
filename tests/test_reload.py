"""Hot reload of tools.d (tools/reload.py): what a reload tells, what it keeps, what it runs."""

from __future__ import annotations

import io
import json
import os
import subprocess
import sys
import threading
from pathlib import Path

import pytest
from piped_chat import piped_chat
from prompt_toolkit.completion import CompleteEvent
from prompt_toolkit.document import Document
from prompt_toolkit.input import PipeInput, create_pipe_input

from toolcall_cli.messages import ToolSpec
from toolcall_cli.offline import OfflineModel
from toolcall_cli.repl import Repl, SlashCompleter, ToolWatcher
from toolcall_cli.session import Session
from toolcall_cli.strategies import get_strategy
from toolcall_cli.tools.loader import display_path, load_tools
from toolcall_cli.tools.registry import Tool, ToolRegistry
from toolcall_cli.tools.reload import ToolChange, ToolReloader, tool_changes
from toolcall_cli.trace import TraceWriter

WEATHER_DOC = "Get the weather (天气) for a city."


def plugin(name: str, answer: str, doc: str = WEATHER_DOC) -> str:
    """A plugin file's text: one tool `name` that answers `answer`."""
    return "from toolcall_cli import tool\n" + tool_def(name, answer, doc)


def tool_def(name: str, answer: str, doc: str = WEATHER_DOC) -> str:
    return f'\n\n@tool\ndef {name}(city: str) -> str:\n    """{doc}"""\n    return {answer!r}\n'


def loaded(directory: Path) -> tuple[ToolRegistry, ToolReloader]:
    result = load_tools([directory])
    assert result.problems == []
    return result.registry, ToolReloader(result)


def answer(registry: ToolRegistry, name: str) -> object:
    found = registry.get(name)
    assert found is not None, f"{name} is not in the registry"
    return found.func(city="Paris")


def lines(reloader: ToolReloader, registry: ToolRegistry) -> list[str]:
    return [notice.message for notice in reloader.reload(registry).notices()]


@pytest.fixture
def tools_dir(tmp_path: Path) -> Path:
    directory = tmp_path / "tools.d"
    directory.mkdir()
    (directory / "weather.py").write_text(plugin("get_weather", "sunny"), encoding="utf-8")
    return directory


def test_an_edit_new_file_and_deleted_file_are_changed_added_and_removed(tools_dir: Path) -> None:
    registry, reloader = loaded(tools_dir)
    weather, clock = tools_dir / "weather.py", tools_dir / "clock.py"
    assert lines(reloader, registry) == []  # nothing changed yet
    weather.write_text(plugin("get_weather", "light snow"), encoding="utf-8")
    clock.write_text(plugin("get_time", "12:00", "The time in a city."), encoding="utf-8")
    assert lines(reloader, registry) == [
        f"reload: changed get_weather (code) · {display_path(weather)}",
        f"reload: added get_time · {display_path(clock)}",
    ]
    assert answer(registry, "get_weather") == "light snow"
    assert answer(registry, "get_time") == "12:00"
    weather.unlink()
    assert lines(reloader, registry) == [f"reload: removed get_weather · {display_path(weather)}"]
    assert registry.names() == ["get_time"]


def test_a_changed_description_is_a_spec_change_and_a_moved_line_no_change(
    tools_dir: Path,
) -> None:
    registry, reloader = loaded(tools_dir)
    weather = tools_dir / "weather.py"
    weather.write_text(plugin("get_weather", "sunny", "The weather now."), encoding="utf-8")
    assert lines(reloader, registry) == [
        f"reload: changed get_weather (spec) · {display_path(weather)}"
    ]
    found = registry.get("get_weather")
    assert found is not None and found.spec.description == "The weather now."
    # Lines added above the function move it, and change neither its spec nor its code.
    weather.write_text("# a comment\n\n" + weather.read_text(encoding="utf-8"), encoding="utf-8")
    assert lines(reloader, registry) == [
        f"reload: {display_path(weather)} loaded anew; no tool's spec or code changed"
    ]


def test_tool_changes_names_what_differs() -> None:
    def first(city: str) -> str:
        """Weather."""
        return "a"

    def second(city: str) -> str:
        """Weather."""
        return "b"

    old = Tool.from_function(first, source="w.py")
    spec = ToolSpec("get_weather", "Weather.", old.spec.parameters)
    before = {"get_weather": Tool(spec=spec, func=first, source="w.py")}
    after = {"get_weather": Tool(spec=spec, func=second, source="w.py", dangerous=True)}
    assert tool_changes(before, after) == [
        ToolChange("changed", "get_weather", "w.py", ("code", "policy"))
    ]
    assert tool_changes(before, before) == []
    assert tool_changes({}, after) == [ToolChange("added", "get_weather", "w.py")]
    assert tool_changes(before, {}) == [ToolChange("removed", "get_weather", "w.py")]


@pytest.mark.parametrize(
    ("broken", "problem"),
    [
        ("def get_weather(city: str) -> str\n    return 'x'\n", "could not load: SyntaxError"),
        ("import no_such_module_here\n", "could not load: ModuleNotFoundError"),
        (
            "from toolcall_cli import tool\n\n\n@tool(timeout=-1)\n"
            "def get_weather(city: str) -> str:\n    return 'x'\n",
            "skipped tool: get_weather: timeout must be a positive number of seconds",
        ),
    ],
    ids=["syntax error", "import error", "tool definition error"],
)
def test_a_broken_edit_keeps_the_last_good_version_with_one_warning(
    tools_dir: Path, broken: str, problem: str
) -> None:
    registry, reloader = loaded(tools_dir)
    weather = tools_dir / "weather.py"
    weather.write_text(plugin("get_weather", "rain"), encoding="utf-8")
    reloader.reload(registry)
    weather.write_text(broken, encoding="utf-8")
    report = reloader.reload(registry)
    assert report.changes == []
    [warning] = report.notices()
    assert warning.level == "warning"
    assert warning.message.startswith(f"reload: {display_path(weather)}: {problem}")
    assert warning.message.endswith("; its last good version stays in use")
    assert answer(registry, "get_weather") == "rain"
    assert lines(reloader, registry) == []  # told once, not again at every reload
    weather.write_text(plugin("get_weather", "fog"), encoding="utf-8")
    assert lines(reloader, registry) == [
        f"reload: changed get_weather (code) · {display_path(weather)}"
    ]
    assert answer(registry, "get_weather") == "fog"


def test_a_reload_runs_the_new_code_even_when_size_and_mtime_match(
    tools_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Python's __pycache__ copy is trusted while the file's size and whole-second mtime are
    the same: an edit within the same second that keeps the size must still be seen."""
    monkeypatch.setattr(sys, "dont_write_bytecode", False)  # the start leaves a cached copy
    registry, reloader = loaded(tools_dir)
    assert list((tools_dir / "__pycache__").glob("*.pyc"))
    weather = tools_dir / "weather.py"
    before = weather.stat()
    weather.write_text(plugin("get_weather", "rainy"), encoding="utf-8")  # "sunny": same size
    os.utime(weather, ns=(before.st_atime_ns, before.st_mtime_ns))
    assert weather.stat().st_size == before.st_size
    reloader.reload(registry)
    assert answer(registry, "get_weather") == "rainy"


def test_only_plugin_tools_are_touched_and_a_clash_is_the_loaders_line(tmp_path: Path) -> None:
    tools_dir = tmp_path / "tools.d"
    tools_dir.mkdir()
    (tools_dir / "a.py").write_text(plugin("get_weather", "sunny"), encoding="utf-8")
    registry, reloader = loaded(tools_dir)

    def server_time(city: str) -> str:
        """The time, from an MCP server."""
        return "mcp"

    registry.add(Tool.from_function(server_time, source="mcp:time"))
    # b.py takes the MCP tool's name and a.py's: both are left out, as the loader says it.
    b = tools_dir / "b.py"
    b.write_text(plugin("server_time", "plugin") + tool_def("get_weather", "b"), encoding="utf-8")
    together = load_tools([tools_dir])  # what the loader says of the same files at start
    told = lines(reloader, registry)
    clashes = [problem for problem in together.problems if "skipped" in problem]
    assert len(clashes) == 1 and clashes[0] in "\n".join(told)
    taken = "tool `server_time` skipped: the name is already used by mcp:time"
    assert f"reload: {display_path(b)}: {taken}" in told
    assert answer(registry, "server_time") == "mcp" and answer(registry, "get_weather") == "sunny"
    # a.py goes: its name is free, and b.py's tool of that name comes in.
    (tools_dir / "a.py").unlink()
    assert lines(reloader, registry) == [
        f"reload: changed get_weather (code, was in {display_path(tools_dir / 'a.py')}) · "
        f"{display_path(b)}"
    ]
    assert answer(registry, "get_weather") == "b" and answer(registry, "server_time") == "mcp"


def test_the_watcher_sees_a_plugin_file_and_stops(tmp_path: Path) -> None:
    seen = threading.Event()
    watcher = ToolWatcher([tmp_path], seen.set)
    watcher.start()
    try:
        (tmp_path / "_helpers.py").write_text("x = 1\n", encoding="utf-8")
        (tmp_path / "notes.txt").write_text("not a plugin\n", encoding="utf-8")
        assert not watcher.changed.wait(1.0)  # files the loader does not load are not changes
        (tmp_path / "weather.py").write_text(plugin("get_weather", "sunny"), encoding="utf-8")
        assert watcher.changed.wait(10) and seen.is_set()
    finally:
        watcher.stop()
    assert watcher._thread is not None and not watcher._thread.is_alive()
    assert watcher.problem is None


def piped_repl(
    session: Session,
    reloader: ToolReloader,
    pipe: PipeInput,
    tmp_path: Path,
    trace: TraceWriter | None = None,
) -> Repl:
    """A chat that reads `pipe`, with /reload and no watcher (the tests edit, then reload)."""
    return piped_chat(session, pipe, tmp_path, trace=trace, reloader=reloader, watch=False)


def test_slash_reload_in_chat_and_the_next_answer_uses_the_new_code(
    tools_dir: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    registry, reloader = loaded(tools_dir)
    session = Session(model=OfflineModel(), strategy=get_strategy("regex"), registry=registry)
    trace = io.StringIO()
    question = "What's the weather in Paris?\r"
    with create_pipe_input() as pipe:
        repl = piped_repl(session, reloader, pipe, tmp_path, trace=TraceWriter(trace))
        pipe.send_text(f"/help\r/reload\r{question}\x04")
        assert repl.loop() == 0
        first = capsys.readouterr().out
        (tools_dir / "weather.py").write_text(plugin("get_weather", "light snow"), "utf-8")
        pipe.send_text(f"/reload\r/reload\r{question}\x04")
        assert repl.loop() == 0
        second = capsys.readouterr().out
    assert "/reload" in first and "reload: nothing changed" in first  # /help, then /reload
    assert "sunny" in first and "light snow" not in first
    changed = f"reload: changed get_weather (code) · {display_path(tools_dir / 'weather.py')}"
    assert second.count(changed) == 1 and second.count("reload: nothing changed") == 1
    assert "light snow" in second and "sunny" not in second  # the same call, the new code
    records = [json.loads(line) for line in trace.getvalue().splitlines()]
    kinds = [record["kind"] for record in records]
    assert kinds.count("run_started") == 2
    # What the reload said is recorded inside the next run, right after it started.
    second_run = kinds.index("run_started", kinds.index("run_started") + 1)
    assert records[second_run + 1]["kind"] == "notice"
    assert records[second_run + 1]["message"] == changed


def test_the_completer_offers_slash_reload() -> None:
    session = Session(model=OfflineModel(), strategy=get_strategy("regex"), registry=ToolRegistry())
    completer = SlashCompleter(session)
    offered = completer.get_completions(Document("/rel"), CompleteEvent())
    assert [completion.text for completion in offered] == ["/reload"]


def test_a_name_stays_with_the_file_that_held_it(tmp_path: Path) -> None:
    """a.py loads before b.py; when a.py later defines b.py's tool too, b.py's keeps working
    and a.py's is the one left out, with the loader's line."""
    tools_dir = tmp_path / "tools.d"
    tools_dir.mkdir()
    a, b = tools_dir / "a.py", tools_dir / "b.py"
    a.write_text(plugin("get_time", "noon", "The time."), encoding="utf-8")
    b.write_text(plugin("get_weather", "sunny"), encoding="utf-8")
    registry, reloader = loaded(tools_dir)
    a.write_text(plugin("get_time", "noon", "The time.") + tool_def("get_weather", "a"), "utf-8")
    assert lines(reloader, registry) == [
        f"reload: {display_path(a)} loaded anew; no tool's spec or code changed",
        f"reload: {display_path(a)}: tool `get_weather` skipped: the name is already used by "
        f"{display_path(b)}",
    ]
    assert answer(registry, "get_weather") == "sunny"
    assert registry.names() == ["get_time", "get_weather"]


def test_an_always_approval_is_asked_again_when_a_reload_changes_the_tool_s_code(
    tools_dir: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # Found in review: "always" was kept by name, so new code under the name ran unasked.
    (tools_dir / "weather.py").write_text(plugin("get_weather", "sunny"), encoding="utf-8")
    (tools_dir / "wind.py").write_text(plugin("get_wind", "calm"), encoding="utf-8")
    registry, reloader = loaded(tools_dir)
    session = Session(model=OfflineModel(), strategy=get_strategy("regex"), registry=registry)
    session.policy.always.update({"get_weather", "get_wind"})
    with create_pipe_input() as pipe:
        repl = piped_repl(session, reloader, pipe, tmp_path)
        (tools_dir / "weather.py").write_text(plugin("get_weather", "hail"), "utf-8")
        (tools_dir / "wind.py").write_text(
            plugin("get_wind", "calm", doc="Get the wind (风) for a city."), "utf-8"
        )
        pipe.send_text("/reload\r\x04")
        assert repl.loop() == 0
    out = capsys.readouterr().out
    assert "changed get_weather (code)" in out and "changed get_wind (spec)" in out
    # New code asks again; a new description of the same code keeps the user's answer.
    assert session.policy.always == {"get_wind"}


# --- a plugin edited to hang or to end the process --------------------------------------------

# The chat on a pipe in a process of its own, so that a regression (a hang, an exit) fails the
# test within its timeout instead of taking the test run with it.
CHAT_DRIVER = """
import sys
from pathlib import Path

from piped_chat import piped_chat
from prompt_toolkit.input import create_pipe_input

from toolcall_cli.offline import OfflineModel
from toolcall_cli.session import Session
from toolcall_cli.strategies import get_strategy
from toolcall_cli.tools.loader import load_tools
from toolcall_cli.tools.reload import ToolReloader

tools_dir, edit = Path(sys.argv[1]), sys.argv[2]
loaded = load_tools([tools_dir])
reloader = ToolReloader(loaded)
reloader.deadline = 1.0
session = Session(model=OfflineModel(), strategy=get_strategy("regex"), registry=loaded.registry)
question = "What's the weather in Paris?\\r"
with create_pipe_input() as pipe:
    repl = piped_chat(session, pipe, tools_dir.parent, reloader=reloader, watch=False)
    (tools_dir / "weather.py").write_text(edit, encoding="utf-8")
    pipe.send_text(f"/reload\\r{question}/reload\\r{question}\\x04")
    print("chat ended", repl.loop())
"""

BROKEN_AT_IMPORT = {
    "busy loop": ("while True:\n    pass\n", "hung at import for more than 1 s (line "),
    "sleep": ("import time\ntime.sleep(1000)\n", "hung at import for more than 1 s (line 2)"),
    "os._exit": ("import os\nos._exit(3)\n", "called os._exit(3) at import (line 2)"),
    "keyboard interrupt": ("raise KeyboardInterrupt\n", "KeyboardInterrupt (line 1)"),
    "system exit": ("raise SystemExit(4)\n", "SystemExit: 4 (line 1)"),
}


@pytest.mark.parametrize("case", BROKEN_AT_IMPORT.values(), ids=list(BROKEN_AT_IMPORT))
def test_a_plugin_edited_to_hang_or_exit_at_import_costs_only_that_plugin(
    tools_dir: Path, case: tuple[str, str]
) -> None:
    edit, problem = case
    done = subprocess.run(
        [sys.executable, "-c", CHAT_DRIVER, str(tools_dir), edit],
        cwd=tools_dir.parent,
        env={**os.environ, "PYTHONPATH": os.pathsep.join([str(Path(__file__).parent), *sys.path])},
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.rstrip().endswith("chat ended 0")
    # One warning, at the first /reload; the second finds nothing new to say.
    told = [line for line in done.stderr.splitlines() if line.startswith("toolcall:")]
    assert len(told) == 1, done.stderr
    assert told[0].startswith(
        f"toolcall: warning: reload: tools.d/weather.py: could not load: {problem}"
    )
    assert told[0].endswith("; its last good version stays in use")
    assert done.stdout.count("reload: nothing changed") == 1
    # The chat kept answering, both times with the last good version of the tool.
    assert done.stdout.count("answer:") == 2 and done.stdout.count("-> sunny") == 2


UNSTOPPABLE_IN_THE_CHILD = {
    # The alarm that ends a hang in the child is swallowed: the parent kills the child.
    "a hang that swallows the alarm": (
        "import time\nwhile True:\n    try:\n        time.sleep(100)\n"
        "    except BaseException:\n        pass\n",
        "hung at import for more than 1 s",
    ),
    "a signal": (
        "import os, signal\nos.kill(os.getpid(), signal.SIGKILL)\n",
        "was killed by SIGKILL at import",
    ),
    "an exit below os._exit": ("import posix\nposix._exit(5)\n", "exited with code 5 at import"),
}


@pytest.mark.skipif(not hasattr(os, "killpg"), reason="POSIX signals and process groups")
@pytest.mark.parametrize(
    "case", UNSTOPPABLE_IN_THE_CHILD.values(), ids=list(UNSTOPPABLE_IN_THE_CHILD)
)
def test_how_a_child_that_never_answered_ended_is_the_problem(
    tmp_path: Path, case: tuple[str, str]
) -> None:
    from toolcall_cli.tools._import_check import check_imports

    source, problem = case
    plugin_file = tmp_path / "stuck.py"
    plugin_file.write_text(source, encoding="utf-8")
    good = tmp_path / "good.py"
    good.write_text(plugin("get_weather", "sunny"), encoding="utf-8")
    # The product's own grace for a child's start: a grace of 1 s left the good file's child,
    # checked beside, 2 s to start an interpreter and import toolcall, near what a loaded
    # machine takes, and a late answer would be taken for a hang.
    assert check_imports([plugin_file, good], deadline=1) == {
        plugin_file: problem,
        good: None,
    }
