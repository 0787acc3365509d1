"""What an MCP server sends, read with bounds and checked before the SDK's session sees it.

A server is somebody else's program, and the SDK trusts it more than toolcall may:

- its stdio transport holds a whole line in memory however long it grows (a 200 MB tool result
  took 600 MB), and logs a full traceback on the terminal for each line that is not JSON-RPC.
  `bounded_stdio` reads at most `max_message_bytes` of a line: a tool result past that keeps
  its head (its text, then cut for the model as any tool's result is), anything else past it
  is answered as an error; a line that is not JSON-RPC becomes a note, never a traceback;
- its session refuses a whole `tools/list` for one tool it cannot read (`"type": "objekt"`),
  and checks results against each tool's output schema on the event loop, where a catastrophic
  pattern would hold every server's calls. `guarded` leaves out only the tools the protocol
  cannot read, each with a line naming it, and drops output schemas (toolcall reads a result
  as text and never needs one).
"""

from __future__ import annotations

import contextlib
import os
import signal
from collections.abc import AsyncIterator, Callable
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from mcp.client._transport import TransportStreams
    from mcp.shared.message import SessionMessage

Note = Callable[[str, bool], None]
"""Where a one-line note about the server goes: its text, and whether it is shown only the
first time (lines that are not JSON-RPC come by the hundred) or each time (a cut result)."""

STOP_WAIT = 2.0
"""Seconds a stopping server has after its stdin closes, then after SIGTERM (as the SDK)."""


# --- stdio, bounded ---------------------------------------------------------------------------


@contextlib.asynccontextmanager
async def bounded_stdio(
    command: list[str],
    environment: dict[str, str],
    stderr: Any,
    *,
    max_message_bytes: int,
    note: Note,
) -> AsyncIterator[TransportStreams]:
    """The server's streams over stdio, as the SDK's `stdio_client` gives them, but a message is
    read to at most `max_message_bytes`. The server runs in a session of its own (its process
    group is stopped with it): stdin closed, then SIGTERM, then SIGKILL, each after 2 s."""
    import anyio
    from mcp.shared.message import SessionMessage

    process = await anyio.open_process(
        command, env=environment, stderr=stderr, start_new_session=True
    )
    incoming, read_stream = anyio.create_memory_object_stream[SessionMessage | Exception](0)
    write_stream, outgoing = anyio.create_memory_object_stream[SessionMessage](0)

    async def read_stdout() -> None:
        # Read to the end even when the session is gone: a server blocked writing to a full
        # pipe could not read that its stdin closed, and would wait for its SIGTERM.
        assert process.stdout is not None
        lines = _Lines(max_message_bytes)
        async with incoming:
            with contextlib.suppress(anyio.ClosedResourceError, anyio.BrokenResourceError):
                async for chunk in process.stdout:
                    for head, size in lines.feed(chunk):
                        await _deliver(incoming, head, size, max_message_bytes, note)
            for head, size in lines.end():
                await _deliver(incoming, head, size, max_message_bytes, note)

    async def write_stdin() -> None:
        assert process.stdin is not None
        try:
            async with outgoing:
                async for sent in outgoing:
                    text = sent.message.model_dump_json(by_alias=True, exclude_unset=True)
                    await process.stdin.send((text + "\n").encode())
        except (anyio.ClosedResourceError, anyio.BrokenResourceError, OSError):
            await incoming.aclose()  # the session sees the end, not a request hanging

    async with anyio.create_task_group() as tasks:
        tasks.start_soon(read_stdout)
        tasks.start_soon(write_stdin)
        try:
            yield read_stream, write_stream
        finally:
            with anyio.CancelScope(shield=True):
                await _stop(process, read_stream, write_stream)
            tasks.cancel_scope.cancel()


async def _deliver(incoming: Any, head: bytes, size: int, limit: int, note: Note) -> None:
    """One line from the server's stdout, to the session: a message, a tool result cut to its
    head, or nothing (a line that is not JSON-RPC is noted and dropped; the SDK would log it)."""
    import anyio

    message = _message(head) if size <= limit else _cut(head, size, limit, note)
    if message is None and size <= limit and head.strip():
        note(f"wrote a line to stdout that is not JSON-RPC: {_preview(head)}", True)
    if message is not None:
        with contextlib.suppress(anyio.ClosedResourceError, anyio.BrokenResourceError):
            await incoming.send(message)  # not when the session is gone: the line is drained


def _message(line: bytes) -> SessionMessage | None:
    import mcp.types as types
    from mcp.shared.message import SessionMessage

    try:
        return SessionMessage(types.jsonrpc_message_adapter.validate_json(line, by_name=False))
    except ValueError:  # pydantic's ValidationError is one
        return None


def _cut(head: bytes, size: int, limit: int, note: Note) -> SessionMessage | None:
    """A message longer than `limit`, read only to its head: a tool result keeps the text read
    (and says it was cut); another answer is an error, so its request does not wait forever."""
    import mcp.types as types
    from mcp.shared.message import SessionMessage

    partial = _partial_json(head)
    ident = partial.get("id") if isinstance(partial, dict) else None
    if not isinstance(ident, (int, str)) or isinstance(ident, bool):
        note(
            f"sent a message of {size:,} bytes, over the {limit:,}-byte limit; it was dropped",
            False,
        )
        return None
    result = partial.get("result")
    content = result.get("content") if isinstance(result, dict) else None
    if isinstance(content, list):
        note(
            f"sent a result of {size:,} bytes; only its first {limit:,} were read "
            "(the model gets its head, cut as any tool's result is)",
            False,
        )
        texts = [
            {"type": "text", "text": block["text"]}
            for block in content
            if isinstance(block, dict) and isinstance(block.get("text"), str)
        ]
        told = f"[toolcall] the answer was {size:,} bytes; only its first {limit:,} were read."
        body = {"content": [*texts, {"type": "text", "text": told}]}
        response = types.JSONRPCResponse(jsonrpc="2.0", id=ident, result=body)
        return SessionMessage(response)
    message = f"the server's answer was {size:,} bytes, over toolcall's limit of {limit:,}"
    error = types.ErrorData(code=types.INTERNAL_ERROR, message=message)
    return SessionMessage(types.JSONRPCError(jsonrpc="2.0", id=ident, error=error))


def _partial_json(head: bytes) -> Any:
    """As much of a JSON text cut short as can be read (jiter's partial mode keeps a string cut
    mid-way); None when even that fails."""
    import jiter

    text = head.decode("utf-8", "ignore").encode()  # a character cut in two is dropped
    try:
        return jiter.from_json(text, partial_mode="trailing-strings")
    except ValueError:
        return None


def _preview(line: bytes) -> str:
    text = line.decode("utf-8", "replace").strip()
    shown = "".join(c if c.isprintable() else "?" for c in text[:80])
    return repr(shown + ("…" if len(text) > 80 else ""))


class _Lines:
    """Splits a byte stream into lines, keeping at most `limit` bytes of each (and its size)."""

    def __init__(self, limit: int) -> None:
        self._limit = limit
        self._head = bytearray()
        self._size = 0

    def feed(self, chunk: bytes) -> list[tuple[bytes, int]]:
        done: list[tuple[bytes, int]] = []
        start = 0
        while True:
            end = chunk.find(b"\n", start)
            piece = chunk[start:] if end < 0 else chunk[start:end]
            room = self._limit - len(self._head)
            if room > 0:
                self._head += piece[:room]
            self._size += len(piece)
            if end < 0:
                return done
            done.append((bytes(self._head), self._size))
            self._head, self._size = bytearray(), 0
            start = end + 1

    def end(self) -> list[tuple[bytes, int]]:
        """The last line, when the stream ended without a newline."""
        return [(bytes(self._head), self._size)] if self._size else []


async def _stop(process: Any, *streams: Any) -> None:
    """Stop the server: stdin closed, then SIGTERM to its process group, then SIGKILL."""
    import anyio

    with contextlib.suppress(Exception):
        await process.stdin.aclose()
    for sent in (None, signal.SIGTERM, signal.SIGKILL):
        if sent is not None:
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.killpg(process.pid, sent)
        if await _exited(process, STOP_WAIT):
            break
    for stream in (process.stdout, *streams):
        with contextlib.suppress(Exception):
            await stream.aclose()
    await anyio.lowlevel.checkpoint()


async def _exited(process: Any, within: float) -> bool:
    """Whether the process ends within `within` seconds (its returncode, polled: waiting for it
    would also wait for its pipes, which a child it left behind may hold open)."""
    import anyio

    with anyio.move_on_after(within):
        while process.returncode is None:
            await anyio.sleep(0.01)
        return True
    return False


# --- the listing, checked ---------------------------------------------------------------------


@contextlib.asynccontextmanager
async def guarded(
    streams: TransportStreams, left_out: list[str], note: Note
) -> AsyncIterator[TransportStreams]:
    """The transport's streams with the session's side checked: each `tools/list` answer keeps
    the tools the protocol can read (a line for each other goes to `left_out`) and none of their
    output schemas; an exception the transport hands over (a line it could not read) is noted
    once."""
    import anyio
    from mcp.shared.message import SessionMessage

    read, write = streams
    to_session, session_reads = anyio.create_memory_object_stream[SessionMessage | Exception](0)
    session_writes, from_session = anyio.create_memory_object_stream[SessionMessage](0)
    asked: dict[Any, str] = {}
    """Request id → method, for the requests the session sent."""
    version: list[str] = []

    async def inward() -> None:
        async with to_session:
            with contextlib.suppress(anyio.ClosedResourceError, anyio.BrokenResourceError):
                async for item in read:
                    if isinstance(item, Exception):
                        note(f"sent what could not be read: {_one_line(item)}", True)
                        continue
                    _check(item, asked, version, left_out)
                    await to_session.send(item)

    async def outward() -> None:
        async with from_session:
            with contextlib.suppress(anyio.ClosedResourceError, anyio.BrokenResourceError):
                async for item in from_session:
                    method = getattr(item.message, "method", None)
                    if hasattr(item.message, "id") and isinstance(method, str):
                        asked[item.message.id] = method
                    await write.send(item)

    async with anyio.create_task_group() as tasks:
        tasks.start_soon(inward)
        tasks.start_soon(outward)
        try:
            yield session_reads, session_writes
        finally:
            tasks.cancel_scope.cancel()


def _check(
    item: SessionMessage, asked: dict[Any, str], version: list[str], left_out: list[str]
) -> None:
    result = getattr(item.message, "result", None)
    method = asked.pop(getattr(item.message, "id", None), None)
    if not isinstance(result, dict):
        return
    if method == "initialize" and isinstance(result.get("protocolVersion"), str):
        version[:] = [result["protocolVersion"]]
    if method == "tools/list" and isinstance(result.get("tools"), list):
        result["tools"] = _readable_tools(result, version[0] if version else "", left_out)


def _readable_tools(result: dict[str, Any], version: str, left_out: list[str]) -> list[Any]:
    """The listed tools the SDK can read, each without its output schema."""
    kept: list[Any] = []
    for index, tool in enumerate(result["tools"]):
        problem = _tool_problem(result, tool, version)
        if problem is None:
            kept.append({k: v for k, v in tool.items() if k != "outputSchema"})
            continue
        name = tool.get("name") if isinstance(tool, dict) else None
        named = repr(name) if isinstance(name, str) else f"number {index + 1}"
        left_out.append(f"tool {named[:80]} left out: its listing is not valid MCP ({problem})")
    return kept


def _tool_problem(result: dict[str, Any], tool: Any, version: str) -> str | None:
    """Why the SDK would refuse `tool` (and with it the whole listing), or None."""
    import mcp.types as types
    import pydantic
    from mcp_types import methods

    if not isinstance(tool, dict):
        return "not an object"
    try:
        types.Tool.model_validate(tool, by_name=False)
        methods.validate_server_result("tools/list", version, {**result, "tools": [tool]})
    except pydantic.ValidationError as error:
        first = error.errors()[0]
        loc = list(first["loc"])
        loc = loc[2:] if loc[:1] == ["tools"] else loc  # ("tools", 0, ...) from the listing
        where = ".".join(str(part) for part in loc) or "the tool"
        return f"{where}: {first['msg']}"[:160]
    except (KeyError, ValueError):  # a protocol version the SDK does not check results of
        pass
    return None


def _one_line(error: BaseException) -> str:
    text = str(error).strip().splitlines()
    return f"{type(error).__name__}: {text[0][:120]}" if text else type(error).__name__
