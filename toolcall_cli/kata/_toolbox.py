"""The tools the loop kata's runs give the user's agent_loop, built from a description, so that
the judge (which knows what each call should give) and the process running the user's code
(which runs them) build the same ones. Light to import: the process running the user's code
builds one per case."""

from __future__ import annotations

import threading
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from toolcall_cli.tools.loader import bundled_tools_dir, load_tools

TOOL_NAMES = ("get_weather", "calculate", "convert_units")
"""The bundled tools the loop gets: deterministic, so the checker knows every right result."""
HANGING_SECONDS = 60.0
"""How long the tool that hangs waits at most, when nothing releases it."""


@dataclass
class Toolbox:
    """The functions the loop gets, and what the checker needs to know what each call gives."""

    functions: dict[str, Callable[..., Any]]
    raising: dict[str, str] = field(default_factory=dict)
    """Tools that always raise: name → the message they raise with."""
    hanging: set[str] = field(default_factory=set)
    released: threading.Event = field(default_factory=threading.Event)


ToolboxSpec = tuple[str, ...]
"""A toolbox by description: ("bundled",), ("failing", message), ("hanging",) or
("echo", *names)."""
BUNDLED: ToolboxSpec = ("bundled",)


def make_toolbox(spec: Sequence[str]) -> Toolbox:
    kind, *rest = spec
    if kind == "failing":
        return failing(rest[0])
    if kind == "hanging":
        return hanging()
    if kind == "echo":
        return Toolbox({name: echo(name) for name in rest})
    return bundled()


def bundled() -> Toolbox:
    registry = load_tools([bundled_tools_dir()]).registry
    return Toolbox({t.name: t.func for t in registry if t.name in TOOL_NAMES})


def failing(message: str) -> Toolbox:
    box = bundled()

    def get_weather(city: str, day: str = "today") -> Any:
        raise RuntimeError(message)

    box.functions["get_weather"] = get_weather
    box.raising["get_weather"] = message
    return box


def hanging() -> Toolbox:
    box = bundled()

    def get_weather(city: str, day: str = "today") -> Any:
        box.released.wait(HANGING_SECONDS)
        return {"city": city, "note": "far too late"}

    box.functions["get_weather"] = get_weather
    box.hanging.add("get_weather")
    return box


def echo(name: str) -> Callable[..., Any]:
    def tool(**arguments: Any) -> Any:
        return {"tool": name, "received": arguments}

    return tool
