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
    assert "toolcall_cli.cli.commands" in loaded  # the help really was built
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
