"""The `@tool` marker, the Tool value (spec, callable and policy) and the registry of tools."""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from typing import Any, TypeVar, overload

from toolcall_cli.messages import ToolSpec
from toolcall_cli.tools.schema import ToolDefinitionError, spec_from_function

F = TypeVar("F", bound=Callable[..., Any])

TOOL_MARK = "__toolcall_tool__"
"""The attribute `@tool` sets on a function; the loader registers only functions carrying it."""


@dataclass(frozen=True)
class ToolOptions:
    """What `@tool(...)` was given. Checked when the tool is built, not when the file imports."""

    name: str | None = None
    timeout: float | None = None
    dangerous: bool = False
    cacheable: bool = True


@overload
def tool(func: F, /) -> F: ...


@overload
def tool(
    *,
    name: str | None = None,
    timeout: float | None = None,
    dangerous: bool = False,
    cacheable: bool = True,
) -> Callable[[F], F]: ...


def tool(
    func: F | None = None,
    /,
    *,
    name: str | None = None,
    timeout: float | None = None,
    dangerous: bool = False,
    cacheable: bool = True,
) -> F | Callable[[F], F]:
    """Mark a function as a tool; usable bare (`@tool`) or with options (`@tool(timeout=5)`).

    The function is returned unchanged (still callable as before), only marked.
    """
    options = ToolOptions(name=name, timeout=timeout, dangerous=dangerous, cacheable=cacheable)

    def mark(target: F) -> F:
        setattr(target, TOOL_MARK, options)
        MARKED.append(target)
        return target

    return mark(func) if func is not None else mark


MARKED: list[Any] = []
"""Everything `@tool` marked, in order. The loader reads (and clears) what one plugin file
marked, to see a tool that a later definition in the same file silently replaced."""


def tool_options(obj: object) -> ToolOptions | None:
    """The options `@tool` left on `obj`, or None when it is not a marked tool."""
    options = getattr(obj, TOOL_MARK, None)
    return options if isinstance(options, ToolOptions) else None


@dataclass(frozen=True)
class Tool:
    """A runnable tool: what the model sees (spec) plus the callable and its policy."""

    spec: ToolSpec
    func: Callable[..., Any]
    source: str
    """The file the tool was loaded from ("" when built in code)."""
    timeout: float | None = None
    """Seconds before a call is abandoned; None means the run's default."""
    dangerous: bool = False
    """Needs the user's approval before each call."""
    cacheable: bool = True
    """Same arguments give the same result, so a repeated call may reuse it."""

    @property
    def name(self) -> str:
        return self.spec.name

    @classmethod
    def from_function(cls, func: Callable[..., Any], *, source: str = "") -> Tool:
        """Build a Tool from a (marked or plain) function; raises ToolDefinitionError."""
        options = tool_options(func) or ToolOptions()
        _check_timeout(func, options.timeout)
        return cls(
            spec=spec_from_function(func, name=options.name),
            func=func,
            source=source,
            timeout=options.timeout,
            dangerous=options.dangerous,
            cacheable=options.cacheable,
        )


def _check_timeout(func: Callable[..., Any], timeout: float | None) -> None:
    if timeout is None:
        return
    valid = isinstance(timeout, (int, float)) and not isinstance(timeout, bool)
    if not valid or not math.isfinite(timeout) or timeout <= 0:
        name = getattr(func, "__name__", repr(func))
        raise ToolDefinitionError(f"{name}: timeout must be a positive number of seconds")


class ToolRegistry:
    """The tools of a session by name, in load order."""

    def __init__(self, tools: Iterable[Tool] = ()) -> None:
        self._tools: dict[str, Tool] = {}
        for item in tools:
            self.add(item)

    @classmethod
    def from_functions(cls, *funcs: Callable[..., Any]) -> ToolRegistry:
        """A registry of in-code functions (handy for tests and embedding)."""
        return cls(Tool.from_function(func) for func in funcs)

    def add(self, item: Tool) -> None:
        """Add a tool; a second tool with the same name is refused with ValueError."""
        if item.name in self._tools:
            raise ValueError(f"a tool named {item.name!r} is already registered")
        self._tools[item.name] = item

    def get(self, name: str) -> Tool | None:
        return self._tools.get(name)

    def names(self) -> list[str]:
        return list(self._tools)

    def specs(self) -> list[ToolSpec]:
        return [item.spec for item in self._tools.values()]

    def __iter__(self) -> Iterator[Tool]:
        return iter(list(self._tools.values()))

    def __len__(self) -> int:
        return len(self._tools)

    def __contains__(self, name: object) -> bool:
        return name in self._tools
