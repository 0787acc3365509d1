"""The `@tool` marker, the Tool value (spec, callable and policy) and the registry of tools."""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from typing import Any, Literal, TypeVar, overload

from toolcall_cli.messages import ToolSpec
from toolcall_cli.tools.schema import ToolDefinitionError, spec_from_function

F = TypeVar("F", bound=Callable[..., Any])

TOOL_MARK = "__toolcall_tool__"
"""The attribute `@tool` sets on a function; the loader registers only functions carrying it."""


Permission = Literal["read", "write", "admin"]
PERMISSIONS: tuple[Permission, ...] = ("read", "write", "admin")
"""In increasing order: a session's --allow level admits a tool at or below it."""


@dataclass(frozen=True)
class ToolOptions:
    """What `@tool(...)` was given. Checked when the tool is built, not when the file imports."""

    name: str | None = None
    timeout: float | None = None
    dangerous: bool = False
    cacheable: bool = True
    permission: Permission = "write"
    rate_limit: float | None = None
    concurrency: int | None = None
    isolate: bool = False


@overload
def tool(func: F, /) -> F: ...


@overload
def tool(
    *,
    name: str | None = None,
    timeout: float | None = None,
    dangerous: bool = False,
    cacheable: bool = True,
    permission: Permission = "write",
    rate_limit: float | None = None,
    concurrency: int | None = None,
    isolate: bool = False,
) -> Callable[[F], F]: ...


def tool(
    func: F | None = None,
    /,
    *,
    name: str | None = None,
    timeout: float | None = None,
    dangerous: bool = False,
    cacheable: bool = True,
    permission: Permission = "write",
    rate_limit: float | None = None,
    concurrency: int | None = None,
    isolate: bool = False,
) -> F | Callable[[F], F]:
    """Mark a function as a tool; usable bare (`@tool`) or with its policy (`@tool(timeout=5)`).

    - `timeout`: seconds before a call is stopped (default: the run's --tool-timeout);
    - `dangerous`: ask the user before each call;
    - `cacheable`: the same arguments give the same result, so a repeated call reuses it;
    - `permission`: "read" < "write" (default) < "admin": runs only when the session's --allow
      reaches it;
    - `rate_limit`: calls per minute across the session;
    - `concurrency`: how many of its calls may run at once (1: one at a time);
    - `isolate`: run each call in a worker process, killed at its timeout.

    The function is returned unchanged (still callable as before), only marked.
    """
    options = ToolOptions(
        name=name,
        timeout=timeout,
        dangerous=dangerous,
        cacheable=cacheable,
        permission=permission,
        rate_limit=rate_limit,
        concurrency=concurrency,
        isolate=isolate,
    )

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
    """A runnable tool: what the model sees (spec) plus the callable and its policy, whose fields
    mean what `tool()` says of its options (None: the run's default, or no limit)."""

    spec: ToolSpec
    func: Callable[..., Any]
    source: str
    """The file the tool was loaded from ("" when built in code)."""
    timeout: float | None = None
    dangerous: bool = False
    cacheable: bool = True
    permission: Permission = "write"
    """A tool that does not say is taken to write: only a declared `read` runs under `--allow
    read`."""
    rate_limit: float | None = None
    concurrency: int | None = None
    isolate: bool = False

    @property
    def name(self) -> str:
        return self.spec.name

    @classmethod
    def from_function(cls, func: Callable[..., Any], *, source: str = "") -> Tool:
        """Build a Tool from a (marked or plain) function; raises ToolDefinitionError."""
        options = tool_options(func) or ToolOptions()
        name = getattr(func, "__name__", repr(func))
        _check_positive(name, "timeout", options.timeout, "a positive number of seconds")
        _check_positive(
            name, "rate_limit", options.rate_limit, "a positive number of calls a minute"
        )
        if options.concurrency is not None and (
            not isinstance(options.concurrency, int)
            or isinstance(options.concurrency, bool)
            or options.concurrency < 1
        ):
            raise ToolDefinitionError(f"{name}: concurrency must be a whole number, 1 or more")
        if options.permission not in PERMISSIONS:
            allowed = ", ".join(PERMISSIONS)
            raise ToolDefinitionError(f"{name}: permission must be one of {allowed}")
        return cls(
            spec=spec_from_function(func, name=options.name),
            func=func,
            source=source,
            timeout=options.timeout,
            dangerous=bool(options.dangerous),
            cacheable=bool(options.cacheable),
            permission=options.permission,
            rate_limit=options.rate_limit,
            concurrency=options.concurrency,
            isolate=bool(options.isolate),
        )

    def policy(self) -> list[str]:
        """The tool's policy in words, for `toolcall tools`: `timeout 5s`, `dangerous`, ..."""
        parts: list[str] = [self.permission]
        if self.timeout is not None:
            parts.append(f"timeout {self.timeout:g}s")
        if self.dangerous:
            parts.append("asks first")
        if not self.cacheable:
            parts.append("never reused")
        if self.rate_limit is not None:
            parts.append(f"{self.rate_limit:g}/min")
        if self.concurrency is not None:
            parts.append(f"{self.concurrency} at a time")
        if self.isolate:
            parts.append("own process")
        return parts


def _check_positive(name: str, option: str, value: float | None, what: str) -> None:
    if value is None:
        return
    valid = isinstance(value, (int, float)) and not isinstance(value, bool)
    if not valid or not math.isfinite(value) or value <= 0:
        raise ToolDefinitionError(f"{name}: {option} must be {what}")


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

    def remove(self, name: str) -> Tool | None:
        """Take a tool out (a reloaded plugin no longer defines it, an MCP server stopped); None
        when there was none."""
        return self._tools.pop(name, None)

    def replace(self, item: Tool) -> None:
        """Add a tool, or put it in place of the one of its name, keeping that one's position
        (a reloaded plugin's new version stays where the user saw it in /tools)."""
        self._tools[item.name] = item

    def names(self) -> list[str]:
        return list(self._tools)

    def specs(self) -> list[ToolSpec]:
        # A snapshot first (list() of a dict is one step under the GIL): search_tools reads
        # this in a pool thread while the loop's thread may withdraw a stopped server's tools.
        return [item.spec for item in list(self._tools.values())]

    def __iter__(self) -> Iterator[Tool]:
        return iter(list(self._tools.values()))

    def __len__(self) -> int:
        return len(self._tools)

    def __contains__(self, name: object) -> bool:
        return name in self._tools
