"""`toolcall --help` starts without the modules only a run needs (issue 14: fast start-up).

Start-up time itself is measured by bench/run.py, never here: what a test can hold steady is
which modules a fresh interpreter has loaded once the help is printed.
"""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

# Libraries the help never needs: the HTTP client, schema validation, fast JSON, the state
# directory, the chat prompt, MCP and file watching.
HEAVY_LIBRARIES = (
    "httpx",
    "jsonschema",
    "jiter",
    "platformdirs",
    "prompt_toolkit",
    "mcp",
    "watchfiles",
)
# toolcall's own modules behind a run: the loop, the strategies, the models that talk HTTP, the
# offline model, the tools' executor and the renderers.
HEAVY_MODULES = (
    "toolcall_cli.loop",
    "toolcall_cli.strategies",
    "toolcall_cli.models.openai_compat",
    "toolcall_cli.offline",
    "toolcall_cli.tools.executor",
    "toolcall_cli.tools.loader",
    "toolcall_cli.render",
    "toolcall_cli.repl",
)

_LOADED_AFTER = """
import json, sys
from toolcall_cli.cli import main
sys.argv = ["toolcall", *{argv!r}]
try:
    main()
except SystemExit:
    pass
sys.stderr.write("\\nMODULES " + json.dumps(sorted(sys.modules)) + "\\n")
"""


def loaded_after(*argv: str) -> set[str]:
    """The modules a fresh interpreter holds after running `toolcall ARGV`."""
    done = subprocess.run(
        [sys.executable, "-c", _LOADED_AFTER.format(argv=list(argv))],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    marker = [line for line in done.stderr.splitlines() if line.startswith("MODULES ")]
    assert marker, done.stderr
    modules: list[str] = json.loads(marker[-1].removeprefix("MODULES "))
    return set(modules)


@pytest.mark.parametrize("argv", [("--help",), ("run", "--help")])
def test_help_loads_none_of_the_heavy_modules(argv: tuple[str, ...]) -> None:
    loaded = loaded_after(*argv)
    assert "toolcall_cli.cli._commands" in loaded  # the help really was built
    heavy = sorted(
        name
        for name in loaded
        if name.split(".")[0] in HEAVY_LIBRARIES
        or any(name == m or name.startswith(m + ".") for m in HEAVY_MODULES)
    )
    assert heavy == []


def test_a_run_still_loads_what_it_needs() -> None:
    """The check above can fail: the same probe after a real run finds the loop."""
    loaded = loaded_after("run", "What is 2+3?", "--no-trace", "--quiet")
    assert {"toolcall_cli.loop", "toolcall_cli.offline"} <= loaded


# What a piped offline run (`toolcall run ... --no-trace`, the common first run and the one
# bench/run.py times) never needs: the HTTP client, schema validation (its calls fit their
# schemas plainly), typer's pydantic conversion (its flags are plain values), rich (no terminal),
# json-repair (its JSON is strict), the state directory, the strategies not chosen, and the
# packages of the other commands.
NOT_IN_AN_OFFLINE_RUN = (
    "httpx",
    "jsonschema",
    "pydantic",
    "rich",
    "json_repair",
    "platformdirs",
    "mcp",
    "prompt_toolkit",
    "watchfiles",
    "toolcall_cli.strategies.schema",
    "toolcall_cli.strategies._stream",
    "toolcall_cli.models.openai_compat",
    "toolcall_cli.render._live",
    "toolcall_cli.kata",
    "toolcall_cli.serve",
    "toolcall_cli.eject",
    "toolcall_cli.repl",
)


def _loaded_of(loaded: set[str], names: tuple[str, ...]) -> list[str]:
    return sorted(
        name for name in loaded if any(name == n or name.startswith(n + ".") for n in names)
    )


@pytest.mark.parametrize(
    "argv",
    [
        ("run", "What is 12*7?", "--no-trace", "--quiet"),
        ("run", "北京和上海明天天气分别是多少？", "--no-trace"),
        ("run", "What's the weather in Tokyo and in Berlin?", "--no-trace", "--json"),
    ],
)
def test_an_offline_run_loads_only_what_it_uses(argv: tuple[str, ...]) -> None:
    loaded = loaded_after(*argv)
    assert {"toolcall_cli.loop", "toolcall_cli.offline", "toolcall_cli.tools.executor"} <= loaded
    assert _loaded_of(loaded, NOT_IN_AN_OFFLINE_RUN) == []


def test_the_run_check_can_fail() -> None:
    """The same probe finds what a run does load when asked for it: the schema strategy, and
    jsonschema, pydantic and json-repair for a run whose model makes mistakes to judge."""
    loaded = loaded_after(
        "run",
        "What's 12*5+3?",
        "--strategy",
        "schema",
        "--faults",
        "wrong_param,single_quotes",
        "--max-iterations",
        "3",
        "--no-trace",
    )
    assert _loaded_of(loaded, ("toolcall_cli.strategies.schema", "pydantic", "jsonschema")) != []
