"""MCP servers as tools: started once for the session, their tools in the same registry as the
plugins' (same validation, timeout, cache, rate limits and approval), stopped at its end.

The `mcp` SDK is async, and the rest of toolcall is not: one asyncio loop runs in a daemon thread
for all of a session's servers, each ClientSession stays open there for the session's life, and
a tool's function (called in the pool's thread, as any tool's is) hands its call to that loop.

A server that fails (it cannot start, dies, or hangs on a call) is one line, never a traceback:
a warning at start-up, or a Notice in the run (the session drains `withdrawn()` between events
and takes the server's tools out of the registry on the loop's own thread). The run goes on.
So is a server that misbehaves without failing (lines on stdout that are not JSON-RPC, a result
too long to read whole, one tool the protocol cannot read): see _mcp_wire.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import contextlib
import json
import logging
import os
import tempfile
import threading
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, TextIO, cast

from toolcall_cli.messages import ToolSpec
from toolcall_cli.tools._mcp_wire import bounded_stdio, guarded
from toolcall_cli.tools.mcp_spec import (
    PREFIX_SEPARATOR,
    ServerSpec,
    policy_from_annotations,
    tool_names,
)
from toolcall_cli.tools.registry import Tool, ToolRegistry
from toolcall_cli.tools.schema import TOOL_NAME
from toolcall_cli.tools.validation import readable_schema, schema_problem

if TYPE_CHECKING:
    from mcp.client.session import ClientSession

STOP_TIMEOUT = 10.0
"""Seconds to wait for every server to stop (the SDK closes stdin, then terminates, then kills,
each bounded by 2 s)."""
ANSWER_GRACE = 0.25
"""A call gives up this long before the pool's own timeout would, so the call's error result
says that the server hung, and its tools are withdrawn before the result is shown."""
MAX_STDERR_LINE = 200
MIN_MESSAGE_BYTES = 4 << 20
"""A message from a server is read up to this many bytes at least (a long tool listing fits)."""


def message_limit(max_result_chars: int) -> int:
    """The most of one message read from a server: room for a result of `max_result_chars`
    characters however its JSON writes them (up to 12 bytes for one, as a `\\ud83d\\ude00`
    pair), and never less than MIN_MESSAGE_BYTES. A longer result keeps its head, and is cut for
    the model as a plugin's is."""
    return max(MIN_MESSAGE_BYTES, 12 * max_result_chars + (64 << 10))


class ToolError(Exception):
    """The server answered the call with an error (isError): the model reads its text."""


class ServerDown(Exception):
    """The server is gone (or was given up on); the call could not be made."""


@dataclass(frozen=True)
class Withdrawal:
    """A server given up on mid-session: the line to show, and the registry names of its tools."""

    server: str
    message: str
    tools: tuple[str, ...]


@dataclass
class _Server:
    """One server's connection, kept open by a task on the loop until it is stopped."""

    spec: ServerSpec
    stderr: TextIO
    session: ClientSession | None = None
    listed: list[Any] = field(default_factory=list)
    """The server's tools as it listed them (mcp.types.Tool)."""
    failure: str | None = None
    down: bool = False
    ready: asyncio.Event = field(default_factory=asyncio.Event)
    ended: asyncio.Event = field(default_factory=asyncio.Event)
    scope: Any = None
    """The anyio cancel scope the keeping task runs in: cancelling it stops the server."""
    stopping: bool = False
    names: dict[str, str] = field(default_factory=dict)
    """Registry name → the server's own tool name."""
    left_out: list[str] = field(default_factory=list)
    """One line per listed tool the protocol cannot read (see _mcp_wire.guarded)."""
    notes: list[str] = field(default_factory=list)
    """Notes on the server not shown yet (see note())."""
    noted: set[str] = field(default_factory=set)
    """The notes shown only once that have been."""
    lock: threading.Lock = field(default_factory=threading.Lock)
    """Notes are made on the loop's thread and taken on the session's."""

    def note(self, text: str, once: bool) -> None:
        """Keep a one-line note about the server to show (once, when `once`: the first such)."""
        kind = text.split(":", 1)[0]
        with self.lock:
            if once and kind in self.noted:
                return
            self.noted.add(kind)
            more = "; further such lines are ignored" if once else ""
            self.notes.append(f"MCP server {self.spec.name!r} {text}{more}")

    def take_notes(self) -> list[str]:
        with self.lock:
            taken, self.notes = self.notes, []
        return taken

    def last_stderr_line(self) -> str:
        """The server's last line on stderr (which is kept off the terminal), for a failure."""
        try:
            self.stderr.flush()
            self.stderr.seek(0)
            lines = [line.strip() for line in self.stderr.read().splitlines() if line.strip()]
        except (OSError, ValueError):
            return ""
        if not lines:
            return ""
        line = lines[-1]
        return line if len(line) <= MAX_STDERR_LINE else line[:MAX_STDERR_LINE] + "…"


class McpServers:
    """A session's MCP servers. `start()` them, `add_tools()` to a registry, `close()` at the end.

    `call_timeout` is the run's tool timeout: a call not answered by then means the server hung.
    """

    def __init__(
        self,
        specs: Sequence[ServerSpec],
        *,
        start_timeout: float,
        call_timeout: float,
        max_message_bytes: int = MIN_MESSAGE_BYTES,
    ) -> None:
        self.specs = tuple(specs)
        self._start_timeout = start_timeout
        self.call_timeout = call_timeout
        self.max_message_bytes = max_message_bytes
        self._servers: list[_Server] = []
        """The servers that started and listed their tools."""
        self._opened: list[_Server] = []
        """Every server begun, started or not: close() stops what still runs of them."""
        self._loop: asyncio.AbstractEventLoop | None = None
        self._thread: threading.Thread | None = None
        self._withdrawn: list[Withdrawal] = []
        self._lock = threading.Lock()
        self._closed = False

    # --- start-up -----------------------------------------------------------------------------

    def start(self) -> list[str]:
        """Start every server at once, wait for each to list its tools (or fail, or pass the
        start-up timeout); one line per server that could not be used."""
        if not self.specs:
            return []
        _quiet_sdk_logging()
        try:
            return self._start_all(self._running_loop())
        except BaseException:  # Ctrl-C while servers start: none of them may be left running
            self.close()
            raise

    def _start_all(self, loop: asyncio.AbstractEventLoop) -> list[str]:
        problems: list[str] = []
        started = [(spec, self._submit(self._open(spec), loop)) for spec in self.specs]
        for spec, future in started:
            try:
                server = future.result(timeout=self._start_timeout + STOP_TIMEOUT)
            except Exception as error:  # the loop itself failed: still one line
                problems.append(f"MCP server {spec.name!r} ({spec.where}) did not start: {error}")
                continue
            if server.failure is not None:
                problems.append(server.failure)
            else:
                self._servers.append(server)
                problems += server.take_notes()
        return problems

    def _running_loop(self) -> asyncio.AbstractEventLoop:
        if self._loop is None:
            loop = asyncio.new_event_loop()
            thread = threading.Thread(target=loop.run_forever, name="mcp-servers", daemon=True)
            thread.start()
            self._loop, self._thread = loop, thread
        return self._loop

    @staticmethod
    def _submit(coroutine: Any, loop: asyncio.AbstractEventLoop) -> concurrent.futures.Future[Any]:
        return asyncio.run_coroutine_threadsafe(coroutine, loop)

    async def _open(self, spec: ServerSpec) -> _Server:
        # Server stderr goes to a file of ours, never to the terminal: its last line is what a
        # failure shows. The file lives as long as the server (closed when it stops).
        stderr = cast(TextIO, tempfile.TemporaryFile(mode="w+", encoding="utf-8"))  # noqa: SIM115
        server = _Server(spec, stderr)
        self._opened.append(server)
        keeper = asyncio.get_running_loop().create_task(self._keep(server))
        try:
            await asyncio.wait_for(server.ready.wait(), self._start_timeout)
        except asyncio.TimeoutError:
            _stop(server)
            # Stopped first, so the line shows all the server wrote before it was given up on.
            await asyncio.wait({keeper}, timeout=STOP_TIMEOUT)
            server.failure = self._failed(
                server, f"did not start within {self._start_timeout:g} s ($TOOLCALL_MCP_TIMEOUT)"
            )
        if server.failure is not None:
            _stop(server)
            await asyncio.wait({keeper}, timeout=STOP_TIMEOUT)
            server.stderr.close()
        return server

    async def _keep(self, server: _Server) -> None:
        """Open the transport and the session, list the tools, then hold both open until the
        server is stopped; everything is entered and left in this one task, as anyio requires.
        Stopping cancels its scope: the SDK's shutdown of a stdio server is shielded from that
        (stdin closed, then terminate, then kill), so no process is left behind."""
        import anyio
        from mcp.client.session import ClientSession

        with anyio.CancelScope() as scope:
            server.scope = scope
            if server.stopping:
                scope.cancel()
            try:
                async with contextlib.AsyncExitStack() as stack:
                    streams = await stack.enter_async_context(self._transport(server))
                    streams = await stack.enter_async_context(
                        guarded(streams, server.left_out, server.note)
                    )
                    session = await stack.enter_async_context(ClientSession(*streams))
                    await session.initialize()
                    server.listed = await _all_tools(session)
                    server.session = session
                    server.ready.set()
                    await anyio.sleep_forever()
            except Exception as error:
                if not server.ready.is_set():
                    server.failure = self._failed(server, f"did not start: {_reason(error)}")
            finally:
                server.ready.set()
                server.ended.set()

    def _transport(self, server: _Server) -> contextlib.AbstractAsyncContextManager[Any]:
        """The server's streams: a subprocess over stdio (read with bounds where the platform
        has process groups), or streamable HTTP to its URL."""
        spec = server.spec
        if spec.url is not None:
            from mcp.client.streamable_http import streamable_http_client

            return streamable_http_client(spec.url, max_sse_event_size=self.max_message_bytes)
        if os.name != "posix":
            from mcp.client.stdio import StdioServerParameters, stdio_client

            parameters = StdioServerParameters(
                command=spec.command or "", args=list(spec.args), env=spec.environment()
            )
            return stdio_client(parameters, errlog=server.stderr)
        return bounded_stdio(
            [spec.command or "", *spec.args],
            spec.environment(),
            server.stderr,
            max_message_bytes=self.max_message_bytes,
            note=server.note,
        )

    def _failed(self, server: _Server, what: str) -> str:
        last = server.last_stderr_line()
        said = f"; it said: {last}" if last else ""
        return f"MCP server {server.spec.name!r} ({server.spec.where}) {what}{said}"

    # --- tools ----------------------------------------------------------------------------------

    def add_tools(self, registry: ToolRegistry) -> list[str]:
        """Add every started server's tools to `registry`; a name another tool (a plugin's, or
        another server's) already has takes the server's prefix: `time__get_current_time`.
        One line per tool that still could not be added."""
        names = [str(tool.name) for s in self._servers for tool in s.listed]
        owns = tool_names(names)
        offered = Counter(owns[name] for name in names)
        problems: list[str] = []
        for server in self._servers:
            left_out = list(server.left_out)
            for listed in server.listed:
                own = owns[str(listed.name)]
                clash = own in registry or offered[own] > 1
                name = f"{server.spec.name}{PREFIX_SEPARATOR}{own}" if clash else own
                schema = listed.input_schema if isinstance(listed.input_schema, dict) else {}
                unusable = schema_problem(schema) if schema else None
                skipped = f"tool {listed.name!r} left out:"
                if unusable is not None:
                    left_out.append(f"{skipped} its input schema {unusable}")
                elif not TOOL_NAME.fullmatch(name) or name in registry:
                    free = "no name of at most 64 letters, digits, _ or - is free for it"
                    left_out.append(f"{skipped} {free} (tried {name})")
                else:
                    registry.add(self._tool(server, listed, name, schema))
                    server.names[name] = str(listed.name)
            problems += [f"MCP server {server.spec.name!r}: {line}" for line in left_out]
        return problems

    def _tool(self, server: _Server, listed: Any, name: str, schema: dict[str, Any]) -> Tool:
        hints = policy_from_annotations(listed.annotations)
        spec = ToolSpec(
            name=name,
            description=str(listed.description or getattr(listed, "title", None) or ""),
            parameters=readable_schema(schema) or {"type": "object", "properties": {}},
        )
        own = str(listed.name)

        def call(**arguments: Any) -> str:
            return self.call(server, own, arguments)

        call.__name__ = name
        return Tool(
            spec=spec,
            func=call,
            source=f"mcp:{server.spec.name}",
            dangerous=hints.dangerous,
            cacheable=hints.cacheable,
            permission="read" if hints.permission == "read" else "write",
        )

    def call(self, server: _Server, tool: str, arguments: dict[str, Any]) -> str:
        """Call `tool` on `server` from a tool thread: its text, or ToolError / ServerDown."""
        if server.down or server.session is None or self._loop is None:
            raise ServerDown(f"the MCP server {server.spec.name!r} is not running")
        wait = max(self.call_timeout - ANSWER_GRACE, self.call_timeout * 0.8)
        future = self._submit(_call(server.session, tool, arguments, wait), self._loop)
        try:
            result = future.result(timeout=wait + 1.0)
        except (TimeoutError, concurrent.futures.TimeoutError):
            future.cancel()
            raise self._give_up(server, self._no_answer(tool)) from None
        except Exception as error:
            raise self._give_up(server, f"stopped ({_reason(error)})") from None
        if result is None:
            raise self._give_up(server, self._no_answer(tool))
        text = result_text(result)
        if result.is_error:
            raise ToolError(text or "the tool failed and said nothing more")
        return text

    def _no_answer(self, tool: str) -> str:
        return f"did not answer `{tool}` within the tool timeout ({self.call_timeout:g} s)"

    def _give_up(self, server: _Server, what: str) -> ServerDown:
        """Mark `server` down, ask the session to withdraw its tools, and stop it. The user's
        line names the command and the server's last words; the model's only what it can use."""
        with self._lock:
            first = not server.down and not self._closed  # closing: nobody is left to tell
            server.down = True
            if first:
                message = f"{self._failed(server, what)}; its tools are withdrawn"
                self._withdrawn.append(Withdrawal(server.spec.name, message, tuple(server.names)))
        if first and self._loop is not None:
            with contextlib.suppress(RuntimeError):  # the loop closed meanwhile
                self._loop.call_soon_threadsafe(_stop, server)
        return ServerDown(
            f"the MCP server {server.spec.name!r} {what}; its tools are withdrawn. "
            "Answer without them."
        )

    def given_up(self) -> list[str]:
        """The names of the servers given up on (they stopped, or hung on a call)."""
        return [server.spec.name for server in self._servers if server.down]

    def withdrawn(self) -> list[Withdrawal]:
        """Servers given up on since the last call, each reported once; and the notes on
        servers since then (withdrawing no tools)."""
        with self._lock:
            found, self._withdrawn = self._withdrawn, []
        for server in self._servers:
            found += [Withdrawal(server.spec.name, note, ()) for note in server.take_notes()]
        return found

    # --- the end --------------------------------------------------------------------------------

    def close(self) -> None:
        """Stop every server (their processes end: stdin closed, then terminated, then killed)
        and the loop; quietly, and only once."""
        if self._closed:
            return
        self._closed = True
        loop = self._loop
        if loop is None:
            return
        with contextlib.suppress(Exception):
            self._submit(self._stop_all(), loop).result(timeout=STOP_TIMEOUT)
        loop.call_soon_threadsafe(loop.stop)
        if self._thread is not None:
            self._thread.join(timeout=STOP_TIMEOUT)
        if not loop.is_running():
            with contextlib.suppress(Exception):
                _cancel_leftovers(loop)
                loop.close()
        for server in self._opened:
            with contextlib.suppress(OSError, ValueError):
                server.stderr.close()

    async def _stop_all(self) -> None:
        for server in self._opened:
            _stop(server)
        ends = [asyncio.ensure_future(s.ended.wait()) for s in self._opened if not s.ended.is_set()]
        if ends:
            await asyncio.wait(ends, timeout=STOP_TIMEOUT - 1.0)
            for end in ends:
                end.cancel()


def _quiet_sdk_logging() -> None:
    """The SDK logs what it cannot read with a traceback, and Python prints a record no handler
    takes on stderr; what toolcall has to say about a server is its own one line. A program
    that handles logging itself still gets the SDK's records."""
    logger = logging.getLogger("mcp")
    if not any(isinstance(handler, logging.NullHandler) for handler in logger.handlers):
        logger.addHandler(logging.NullHandler())


def _cancel_leftovers(loop: asyncio.AbstractEventLoop) -> None:
    """Tasks still pending (a call abandoned mid-way) are cancelled and run to their end, so
    nothing prints "Task was destroyed but it is pending" at exit."""
    pending = [task for task in asyncio.all_tasks(loop) if not task.done()]
    for task in pending:
        task.cancel()
    if pending:
        loop.run_until_complete(asyncio.wait(pending, timeout=2.0))
    loop.run_until_complete(loop.shutdown_asyncgens())


def _stop(server: _Server) -> None:
    """Stop the task that keeps `server` open (on the loop's thread)."""
    server.stopping = True
    if server.scope is not None:
        server.scope.cancel()


async def _all_tools(session: ClientSession) -> list[Any]:
    """Every tool the server lists, page after page."""
    import mcp.types as types

    listed = await session.list_tools()
    tools = list(listed.tools)
    seen: set[str] = set()
    while listed.next_cursor and listed.next_cursor not in seen and len(tools) < 10_000:
        seen.add(listed.next_cursor)
        params = types.PaginatedRequestParams(cursor=listed.next_cursor)
        listed = await session.list_tools(params=params)
        tools.extend(listed.tools)
    return tools


async def _call(
    session: ClientSession, tool: str, arguments: dict[str, Any], wait: float
) -> Any | None:
    """The server's CallToolResult, or None when it did not answer within `wait` seconds."""
    import anyio

    with anyio.move_on_after(wait):
        return await session.call_tool(tool, arguments)
    return None


def result_text(result: Any) -> str:
    """What the model reads: the text blocks joined; the structured content as JSON when there
    is no text; a short mark for what cannot be shown as text (an image, say)."""
    parts: list[str] = []
    for block in result.content or []:
        kind = getattr(block, "type", "")
        if kind == "text":
            parts.append(str(block.text))
        elif kind == "resource" and hasattr(getattr(block, "resource", None), "text"):
            parts.append(str(block.resource.text))
        else:
            mime = getattr(block, "mime_type", None) or getattr(block, "uri", None) or ""
            parts.append(f"[{kind or 'unknown'} content{' ' + str(mime) if mime else ''}]")
    text = "\n".join(parts)
    if not text.strip() and result.structured_content is not None:
        return json.dumps(result.structured_content, ensure_ascii=False, default=str)
    return text


def _reason(error: BaseException) -> str:
    """An exception as one short line; an exception group by its first leaf."""
    while getattr(error, "exceptions", None):  # an ExceptionGroup (3.11+, or anyio's backport)
        error = error.exceptions[0]  # type: ignore[attr-defined]
    if isinstance(error, FileNotFoundError):
        return f"no such command: {error.filename or error}"
    if isinstance(error, PermissionError):
        return f"cannot run it: {error.strerror or error}"
    text = str(error).strip().splitlines()[0] if str(error).strip() else ""
    name = type(error).__name__
    if name == "MCPError" and text.lower() == "connection closed":
        return "the connection closed"
    return f"{name}: {text}" if text else name


def start_servers(
    specs: Iterable[ServerSpec],
    registry: ToolRegistry,
    *,
    call_timeout: float,
    start_timeout: float,
    max_result_chars: int = 0,
) -> tuple[McpServers | None, list[str]]:
    """Start `specs`, add their tools to `registry`: the servers (None when there are none) and
    one line per problem. A message longer than a result of `max_result_chars` needs (and
    never less than MIN_MESSAGE_BYTES) is read only in part: see message_limit."""
    chosen = list(specs)
    if not chosen:
        return None, []
    servers = McpServers(
        chosen,
        start_timeout=start_timeout,
        call_timeout=call_timeout,
        max_message_bytes=message_limit(max_result_chars),
    )
    problems = servers.start()
    problems += servers.add_tools(registry)
    return servers, problems
