"""The katas, one per part of the whiteboard answer, each named by the strategy it belongs to
(regex, schema, stream, or the loop): what each asks the user to write, and where its battery,
its reference solution and its whiteboard-sized reference are. Nothing here imports a battery:
the CLI lists and starts katas without loading the offline model."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Kata:
    name: str
    layer: str
    """Where it sits in the engine: request (what goes out), protocol (reading calls),
    execution (checking them), loop."""
    strategy: str
    """The strategy it belongs to: regex, schema, stream, or loop (all of them)."""
    writes: str
    """What the user writes, as a signature."""
    about: str
    required: tuple[str, ...]
    """The names the user's file must define."""
    battery: str
    """The module whose `battery(conformance_dir)` grades it."""
    short_fails: tuple[str, ...] = ()
    """The categories the whiteboard-sized reference fails (its docstring says why that is
    acceptable in an interview); it passes every other category."""

    @property
    def solution(self) -> str:
        """The module of its reference solution (read as text, never imported by toolcall)."""
        return f"toolcall_cli.kata.solutions.{self.name}"

    @property
    def short(self) -> str:
        """The module of its whiteboard-sized reference (at most SHORT_LINES lines)."""
        return f"toolcall_cli.kata.solutions.short_{self.name}"

    @property
    def file_name(self) -> str:
        return f"kata_{self.name}.py"


KATAS: tuple[Kata, ...] = (
    Kata(
        "request",
        "request",
        "schema",
        "tool_schema(func) -> dict; build_request(question, tools, history) -> dict",
        "a Python signature as a JSON Schema, and the chat-completions body with calls and ids",
        ("tool_schema", "build_request"),
        "toolcall_cli.kata._request_kata",
    ),
    Kata(
        "prompt",
        "request",
        "regex",
        "system_prompt(tools) -> str",
        "the text protocol's system prompt, read by the offline model and a prompt follower",
        ("system_prompt",),
        "toolcall_cli.kata._prompt_kata",
    ),
    Kata(
        "parse",
        "protocol",
        "regex",
        "parse_tool_calls(text) -> list[dict]",
        "read <tool_call> blocks out of a whole reply, repairing what models get wrong",
        ("parse_tool_calls",),
        "toolcall_cli.kata._parse_kata",
        ("strings", "broken JSON", "code fence"),
    ),
    Kata(
        "schema",
        "execution",
        "schema",
        "build_schema(tools) -> dict; validate_call(tools, call) -> (arguments, errors)",
        "the anyOf schema of a reply, then coercion and field errors for one call",
        ("build_schema", "validate_call"),
        "toolcall_cli.kata._schema_kata",
        ("coercion", "range", "wrong arguments"),
    ),
    Kata(
        "stream",
        "protocol",
        "stream",
        "class StreamParser: feed(chunk) -> list[dict]; close() -> list[dict]",
        "read calls while the reply streams in, keeping display text apart",
        ("StreamParser",),
        "toolcall_cli.kata._stream_kata",
        ("strings", "broken JSON", "code fence", "long reply"),
    ),
    Kata(
        "loop",
        "loop",
        "loop",
        "agent_loop(chat, tools, question, max_iterations) -> str | None",
        "call, run, feed back, stop: against a model that misbehaves on purpose",
        ("agent_loop",),
        "toolcall_cli.kata._loop_kata",
    ),
)

SHORT_LINES = 60
"""The most lines a whiteboard-sized reference may have."""

NAMES = tuple(kata.name for kata in KATAS)


class UnknownKata(ValueError):
    pass


def find_kata(name: str) -> Kata:
    for kata in KATAS:
        if kata.name == name:
            return kata
    raise UnknownKata(f"no kata named {name!r}; the katas: {', '.join(NAMES)}")
