"""Loading tools.d plugins: what registers, and one clear line for each thing that goes wrong."""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
from in_process import toolcall

from toolcall_cli.tools.loader import (
    bundled_tools_dir,
    load_tools,
    tool_dirs,
    user_tools_dir,
)


def write(directory: Path, name: str, source: str) -> Path:
    directory.mkdir(parents=True, exist_ok=True)
    path = directory / name
    path.write_text(textwrap.dedent(source), encoding="utf-8")
    return path


GOOD = """
    from toolcall_cli import tool

    @tool
    def echo(text: str) -> str:
        '''Echo the text back.'''
        return text
"""


def test_loads_marked_functions_with_their_source(tmp_path: Path) -> None:
    path = write(tmp_path, "echo.py", GOOD)
    result = load_tools([tmp_path])
    assert result.problems == []
    assert result.registry.names() == ["echo"]
    echo = result.registry.get("echo")
    assert echo is not None
    assert echo.source == str(path)
    assert echo.spec.description == "Echo the text back."
    assert echo.func("hi") == "hi"


def test_only_marked_functions_defined_in_the_file_register(tmp_path: Path) -> None:
    write(tmp_path, "aaa_base.py", GOOD)
    write(
        tmp_path,
        "bbb_user.py",
        """
        import importlib
        from pathlib import Path
        from os.path import join
        from toolcall_cli import tool
        from toolcall_cli.tools.registry import TOOL_MARK

        def helper(x: int) -> int:
            return x

        @tool(name="mine")
        def mine(x: int) -> int:
            return helper(x)
        """,
    )
    result = load_tools([tmp_path])
    assert result.problems == []
    assert result.registry.names() == ["echo", "mine"]


def test_imported_marked_tool_is_not_registered_twice(tmp_path: Path) -> None:
    lib = write(tmp_path / "lib", "shared_tools.py", GOOD)
    sys.path.insert(0, str(lib.parent))
    try:
        write(tmp_path / "plugins", "reexport.py", "from shared_tools import echo\n")
        result = load_tools([tmp_path / "plugins"])
    finally:
        sys.path.remove(str(lib.parent))
        sys.modules.pop("shared_tools", None)
    assert result.problems == []
    assert result.registry.names() == []


def test_broken_plugin_is_one_line_naming_the_file_and_others_still_load(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    write(tmp_path, "a_good.py", GOOD)
    write(tmp_path, "broken.py", "import os\n\nvalue = x + 1\n")
    write(tmp_path, "c_syntax.py", "def oops(:\n    pass\n")
    write(tmp_path, "d_exit.py", "import sys\nsys.exit(3)\n")
    write(tmp_path, "e_import.py", "import no_such_module_for_toolcall_tests\n")
    write(
        tmp_path,
        "z_good.py",
        """
        from toolcall_cli import tool

        @tool
        def shout(text: str) -> str:
            return text.upper()
        """,
    )
    result = load_tools([tmp_path])
    assert result.registry.names() == ["echo", "shout"]
    assert result.problems[0] == (
        "broken.py: could not load: NameError: name 'x' is not defined (line 3)"
    )
    by_file = dict(p.split(": could not load: ", 1) for p in result.problems)
    assert list(by_file) == ["broken.py", "c_syntax.py", "d_exit.py", "e_import.py"]
    assert by_file["broken.py"] == "NameError: name 'x' is not defined (line 3)"
    assert by_file["c_syntax.py"].startswith("SyntaxError: ")
    assert by_file["c_syntax.py"].endswith("(line 1)")
    assert by_file["d_exit.py"] == "SystemExit: 3 (line 2)"
    assert by_file["e_import.py"].startswith("ModuleNotFoundError: No module named")
    for problem in result.problems:
        assert "\n" not in problem
        assert "Traceback" not in problem


def test_schema_error_skips_only_that_function(tmp_path: Path) -> None:
    write(
        tmp_path,
        "mixed.py",
        """
        from toolcall_cli import tool

        @tool
        def fine(n: int) -> int:
            return n

        @tool
        def untyped(n):
            return n
        """,
    )
    result = load_tools([tmp_path])
    assert result.registry.names() == ["fine"]
    assert len(result.problems) == 1
    assert "mixed.py" in result.problems[0]
    assert "untyped: parameter `n` has no type annotation" in result.problems[0]


def test_duplicate_names_keep_the_first_and_name_both_files(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)  # problems show paths relative to the working dir
    first = write(tmp_path / "one", "echo.py", GOOD)
    write(tmp_path / "two", "echo_again.py", GOOD.replace("back.", "back again."))
    result = load_tools([tmp_path / "one", tmp_path / "two"])
    assert result.registry.names() == ["echo"]
    kept = result.registry.get("echo")
    assert kept is not None and kept.source == str(first)
    assert result.problems == [
        "two/echo_again.py: tool `echo` skipped: the name is already used by one/echo.py"
    ]


def test_same_file_name_in_two_dirs_does_not_clash(tmp_path: Path) -> None:
    write(tmp_path / "one", "tools.py", GOOD)
    write(tmp_path / "two", "tools.py", GOOD.replace("def echo", "def echo2"))
    result = load_tools([tmp_path / "one", tmp_path / "two"])
    assert result.problems == []
    assert result.registry.names() == ["echo", "echo2"]


def test_files_load_in_sorted_order_and_underscore_files_are_skipped(tmp_path: Path) -> None:
    write(tmp_path, "b.py", GOOD.replace("def echo", "def tool_b"))
    write(tmp_path, "a.py", GOOD.replace("def echo", "def tool_a"))
    write(tmp_path, "_private.py", GOOD.replace("def echo", "def hidden"))
    write(tmp_path, "notes.txt", "not python")
    result = load_tools([tmp_path])
    assert result.registry.names() == ["tool_a", "tool_b"]


def test_missing_dirs_are_skipped_by_the_loader(tmp_path: Path) -> None:
    missing = tmp_path / "nope"
    assert load_tools([missing]).problems == []


@pytest.mark.parametrize("command", ["run", "tools"])
def test_a_tools_dir_that_is_not_one_is_a_usage_error(tmp_path: Path, command: str) -> None:
    """A typo in --tools would otherwise run without the user's tools and exit 0."""
    path = write(tmp_path, "echo.py", GOOD)
    for given, why in ((tmp_path / "nope", "no such directory"), (path, "is not a directory")):
        args = [command, "What is 2+2?"] if command == "run" else [command]
        done = toolcall(*args, "--tools", str(given), cwd=tmp_path)
        assert done.returncode == 2
        assert done.stderr == f"toolcall: error: --tools {given}: {why}\n"
        assert done.stdout == ""


def test_loading_does_not_touch_sys_path(tmp_path: Path) -> None:
    write(tmp_path, "echo.py", GOOD)
    before = list(sys.path)
    load_tools([tmp_path])
    assert sys.path == before


def test_plugin_dataclasses_and_postponed_annotations_work(tmp_path: Path) -> None:
    write(
        tmp_path,
        "points.py",
        """
        from __future__ import annotations
        from dataclasses import dataclass
        from typing import Literal
        from toolcall_cli import tool

        @dataclass
        class Point:
            x: int

        @tool
        def move(x: int, way: Literal["left", "right"] = "left") -> int:
            return Point(x - 1 if way == "left" else x + 1).x
        """,
    )
    result = load_tools([tmp_path])
    assert result.problems == []
    move = result.registry.get("move")
    assert move is not None
    assert move.func(1, "right") == 2
    assert move.spec.parameters["properties"]["way"]["enum"] == ["left", "right"]


def test_tool_dirs_order_and_dedupe(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "config"))
    extra = [Path("mine"), tmp_path / "mine", tmp_path / "other"]
    dirs = tool_dirs(extra, include_bundled=True, cwd=tmp_path)
    assert dirs == [
        bundled_tools_dir().resolve(),
        user_tools_dir().resolve(),
        (tmp_path / "tools.d").resolve(),
        (tmp_path / "mine").resolve(),
        (tmp_path / "other").resolve(),
    ]
    without = tool_dirs([], include_bundled=False, cwd=tmp_path)
    assert bundled_tools_dir().resolve() not in without


def test_user_tools_dir_is_under_the_app_dir(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "config"))
    if sys.platform.startswith("linux"):
        assert user_tools_dir() == tmp_path / "config" / "toolcall" / "tools.d"
    assert user_tools_dir().name == "tools.d"


REPO = Path(__file__).resolve().parent.parent
BUNDLED = {"get_weather", "calculate", "get_time", "convert_units"}


def test_bundled_dir_ships_the_example_tools() -> None:
    result = load_tools([bundled_tools_dir()])
    assert result.problems == []
    assert set(result.registry.names()) == BUNDLED


def test_the_top_level_tools_d_is_the_one_source_of_the_bundled_tools() -> None:
    # In a source checkout (an editable install, or the tests run from the repo), the bundled
    # tools are the repo's own tools.d/; the package tree keeps no second copy to drift.
    assert bundled_tools_dir() == REPO / "tools.d"
    outside_a_package = [
        path
        for path in (REPO / "toolcall_cli").rglob("*.py")
        if not (path.parent / "__init__.py").is_file()
    ]
    assert outside_a_package == []


def test_a_tool_defined_twice_in_one_file_is_reported(tmp_path: Path) -> None:
    (tmp_path / "p").mkdir()
    (tmp_path / "p" / "twice.py").write_text(
        "from toolcall_cli import tool\n\n"
        "@tool\ndef paint(color: str) -> str:\n    return color\n\n"
        "@tool\ndef paint(color: str, size: int) -> str:\n    return color * size\n",
        encoding="utf-8",
    )
    loaded = load_tools([tmp_path / "p"])
    assert loaded.registry.names() == ["paint"]
    assert len(loaded.problems) == 1
    assert "twice.py" in loaded.problems[0] and "`paint` is defined 2 times" in loaded.problems[0]


HOSTILE_PLUGINS = {
    "a_generator_exit.py": "raise GeneratorExit('bye')\n",
    "b_custom_base.py": "class Boom(BaseException):\n    pass\n\nraise Boom('custom')\n",
    # Found while the loader looks for marked functions, after the import itself succeeded.
    "c_hostile_attr.py": (
        "class Weird:\n    def __getattr__(self, name):\n"
        "        raise RuntimeError('no attributes here')\n\nthing = Weird()\n"
    ),
    "d_hostile_base_attr.py": (
        "class Boom(BaseException):\n    pass\n\nclass Weird:\n"
        "    def __getattr__(self, name):\n        raise Boom('attr')\n\nthing = Weird()\n"
    ),
    "e_bad_str.py": (
        "class Odd(Exception):\n    def __str__(self):\n        raise ValueError('no text')\n\n"
        "raise Odd()\n"
    ),
    "f_huge_exit.py": "import sys\nsys.exit('x' * 100_000 + '\\nsecond line')\n",
}


def test_a_plugin_raising_any_base_exception_is_one_line_and_others_load(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    for name, source in HOSTILE_PLUGINS.items():
        write(tmp_path, name, source)
    write(tmp_path, "z_good.py", GOOD)
    result = load_tools([tmp_path])
    assert result.registry.names() == ["echo"]
    assert [p.split(":", 1)[0] for p in result.problems] == list(HOSTILE_PLUGINS)
    for problem in result.problems:
        assert "\n" not in problem and len(problem) < 400
    by_file = dict(p.split(": ", 1) for p in result.problems)
    assert by_file["a_generator_exit.py"] == "could not load: GeneratorExit: bye (line 1)"
    assert by_file["b_custom_base.py"] == "could not load: Boom: custom (line 4)"
    assert "RuntimeError: no attributes here" in by_file["c_hostile_attr.py"]
    assert "Boom: attr" in by_file["d_hostile_base_attr.py"]
    assert by_file["e_bad_str.py"].startswith("could not load: Odd")
    assert "characters" in by_file["f_huge_exit.py"]  # says how long the cut message was


# What a plugin does at import is its own problem: it is one warning line, and the next plugin
# loads. The deadline is short here, so a hang costs the test a second.
STOPPED_PLUGINS = {
    "keyboard interrupt": ("raise KeyboardInterrupt\n", "KeyboardInterrupt (line 1)"),
    "os._exit": ("import os\n\nos._exit(3)\n", "called os._exit(3) at import (line 3)"),
    "busy loop": ("while True:\n    pass\n", "hung at import for more than 1 s (line "),
    "sleep": ("import time\n\ntime.sleep(1000)\n", "hung at import for more than 1 s (line 3)"),
    "interrupt in __str__": (
        "class Odd(Exception):\n    def __str__(self):\n        raise KeyboardInterrupt\n\n"
        "raise Odd()\n",
        "Odd: (its message could not be read) (line 5)",
    ),
}


@pytest.mark.parametrize("case", STOPPED_PLUGINS.values(), ids=list(STOPPED_PLUGINS))
def test_a_plugin_that_interrupts_exits_or_hangs_at_import_is_one_warning(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, case: tuple[str, str]
) -> None:
    source, problem = case
    monkeypatch.chdir(tmp_path)
    write(tmp_path, "a_stops.py", source)
    write(tmp_path, "b_good.py", GOOD)
    real_exit = os._exit
    result = load_tools([tmp_path], deadline=1)
    assert result.registry.names() == ["echo"]
    [line] = result.problems
    assert line.startswith(f"a_stops.py: could not load: {problem}")
    assert os._exit is real_exit  # held only while the plugin imported


def test_ctrl_c_while_a_plugin_loads_still_interrupts(tmp_path: Path) -> None:
    """The user's Ctrl-C (a real SIGINT, as the terminal sends it) stops the loading, even when
    the plugin swallows the KeyboardInterrupt it raised inside it."""
    write(tmp_path, "a_interrupted.py", "import os, signal\nos.kill(os.getpid(), signal.SIGINT)\n")
    write(
        tmp_path / "swallowed",
        "interrupted.py",
        "import os, signal\ntry:\n    os.kill(os.getpid(), signal.SIGINT)\n"
        "except KeyboardInterrupt:\n    pass\n",
    )
    # As a terminal starts Python: a suite run in the background (`pytest &`, a CI job started
    # so) passes SIGINT on ignored, and the guard rightly leaves an ignored SIGINT alone.
    before = signal.signal(signal.SIGINT, signal.default_int_handler)
    try:
        for directory in (tmp_path, tmp_path / "swallowed"):
            with pytest.raises(KeyboardInterrupt):
                load_tools([directory])
    finally:
        signal.signal(signal.SIGINT, before)


def test_a_plugin_that_interrupts_or_exits_at_start_is_one_warning_and_the_run_goes_on(
    tmp_path: Path,
) -> None:
    """Through a real process: the plugin's KeyboardInterrupt ended `toolcall run` with exit
    130 and nothing said; its os._exit ended it with the plugin's exit code."""
    write(tmp_path / "tools.d", "a_interrupt.py", "raise KeyboardInterrupt\n")
    write(tmp_path / "tools.d", "b_exit.py", "import os\nos._exit(3)\n")
    write(tmp_path / "tools.d", "c_good.py", GOOD)
    done = subprocess.run(
        [sys.executable, "-m", "toolcall_cli", "run", "--no-trace", "--no-default-tools", "hi"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    assert done.stderr.splitlines() == [
        "toolcall: warning: tools.d/a_interrupt.py: could not load: KeyboardInterrupt (line 1)",
        "toolcall: warning: tools.d/b_exit.py: could not load: called os._exit(3) at import "
        "(line 2)",
    ]
    assert "echo" in done.stdout  # the good plugin's tool is there


def test_tools_command_lists_the_others_beside_a_hostile_plugin(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from typer.testing import CliRunner

    from toolcall_cli.cli import app

    monkeypatch.chdir(tmp_path)
    write(tmp_path / "plugins", "boom.py", HOSTILE_PLUGINS["b_custom_base.py"])
    write(tmp_path / "plugins", "good.py", GOOD)
    done = CliRunner().invoke(app, ["tools", "--tools", "plugins", "--no-default-tools"])
    assert done.exit_code == 0, done.output
    warnings = [line for line in done.stderr.splitlines() if line]
    assert len(warnings) == 1
    assert warnings[0].startswith("toolcall: warning: plugins/boom.py: could not load: Boom")
    assert "echo" in done.stdout and "Traceback" not in done.output


def test_a_tools_d_beside_an_installed_package_is_not_taken_for_the_bundled_tools(
    tmp_path: Path,
) -> None:
    # An installed package whose wheel copy is missing, with some other tools.d lying in
    # site-packages: that directory is nobody's bundled tools (only a checkout's tools.d is).
    site = tmp_path / "site-packages"
    shutil.copytree(REPO / "toolcall_cli", site / "toolcall_cli")
    write(site / "tools.d", "stray.py", GOOD)
    asked = "from toolcall_cli.tools.loader import bundled_tools_dir as b; print(b())"
    done = subprocess.run(
        [sys.executable, "-c", asked],
        env={**os.environ, "PYTHONPATH": str(site)},
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert (done.returncode, done.stderr) == (0, "")
    assert done.stdout.strip() == str(site / "toolcall_cli" / "_bundled_tools")


def test_a_plugin_identical_to_one_already_loaded_is_skipped_silently(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    first = write(tmp_path / "one", "echo.py", GOOD)
    write(tmp_path / "two", "echo.py", GOOD)  # the same plugin reached by a second dir
    write(tmp_path / "two", "renamed_echo.py", GOOD)  # ... or under another name
    edited = GOOD.replace("back.", "back, edited.")
    write(tmp_path / "three", "echo.py", edited)  # a changed copy is another plugin
    result = load_tools([tmp_path / "one", tmp_path / "two", tmp_path / "three"])
    assert result.registry.names() == ["echo"]
    kept = result.registry.get("echo")
    assert kept is not None and kept.source == str(first)
    assert result.problems == [
        "three/echo.py: tool `echo` skipped: the name is already used by one/echo.py"
    ]


def test_an_identical_broken_plugin_is_reported_once(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    write(tmp_path / "one", "broken.py", "value = x + 1\n")
    write(tmp_path / "two", "broken.py", "value = x + 1\n")
    result = load_tools([tmp_path / "one", tmp_path / "two"])
    assert result.problems == [
        "one/broken.py: could not load: NameError: name 'x' is not defined (line 1)"
    ]


def test_an_installed_copy_and_the_repos_tools_d_load_the_bundled_tools_once(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # A non-editable install run from the repository root: the wheel's copy is the bundled dir
    # and the repo's tools.d is ./tools.d, two paths holding the same files.
    installed = tmp_path / "site-packages" / "toolcall_cli" / "_bundled_tools"
    installed.mkdir(parents=True)
    for plugin in bundled_tools_dir().glob("*.py"):
        (installed / plugin.name).write_bytes(plugin.read_bytes())
    monkeypatch.chdir(REPO)
    result = load_tools([installed, REPO / "tools.d"])
    assert result.problems == []
    assert set(result.registry.names()) == BUNDLED
    assert {Path(found.source).parent for found in result.registry} == {installed}


def test_no_default_tools_leaves_the_bundled_dir_out_even_as_the_working_dirs_tools_d(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "config"))
    bundled = bundled_tools_dir().resolve()
    checkout = bundled.parent  # running from the source checkout: ./tools.d is the bundled dir
    assert tool_dirs([], include_bundled=True, cwd=checkout).count(bundled) == 1
    assert bundled not in tool_dirs([], include_bundled=False, cwd=checkout)
    # Naming it with --tools is asking for it: that brings it back.
    asked = tool_dirs([Path("tools.d")], include_bundled=False, cwd=checkout)
    assert asked == [user_tools_dir().resolve(), bundled]
