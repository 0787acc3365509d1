"""The four katas, one per layer of the engine under the three strategies (regex, schema,
stream) and the loop they share: what each asks the user to write, and
where its battery and reference solution are. Nothing here imports a battery: the CLI lists
and starts katas without loading the offline model."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Kata:
    name: str
    layer: str
    """Where it sits in the engine: protocol (reading calls), execution (checking them), loop."""
    strategy: str
    """The strategy whose layer it is (regex, schema, stream), as `--strategy` names it."""
    writes: str
    """What the user writes, as a signature."""
    about: str
    required: tuple[str, ...]
    """The names the user's file must define."""
    battery: str
    """The module whose `battery(conformance_dir)` grades it."""

    @property
    def solution(self) -> str:
        """The module of its reference solution (read as text, never imported by toolcall)."""
        return f"toolcall_cli.kata.solutions.{self.name}"

    @property
    def file_name(self) -> str:
        return f"kata_{self.name}.py"


KATAS: tuple[Kata, ...] = (
    Kata(
        "parse",
        "protocol",
        "regex: string parsing",
        "parse_tool_calls(text) -> list[dict]",
        "read <tool_call> blocks out of a whole reply, repairing what models get wrong",
        ("parse_tool_calls",),
        "toolcall_cli.kata._parse_kata",
    ),
    Kata(
        "schema",
        "execution",
        "schema: JSON Schema",
        "build_schema(tools) -> dict; validate_call(tools, call) -> (arguments, errors)",
        "the anyOf schema of a reply, then coercion and field errors for one call",
        ("build_schema", "validate_call"),
        "toolcall_cli.kata._schema_kata",
    ),
    Kata(
        "stream",
        "protocol",
        "stream: the streaming state machine",
        "class StreamParser: feed(chunk) -> list[dict]; close() -> list[dict]",
        "read calls while the reply streams in, keeping display text apart",
        ("StreamParser",),
        "toolcall_cli.kata._stream_kata",
    ),
    Kata(
        "loop",
        "loop",
        "every strategy: the agent loop",
        "agent_loop(chat, tools, question, max_iterations) -> str | None",
        "call, run, feed back, stop: against a model that misbehaves on purpose",
        ("agent_loop",),
        "toolcall_cli.kata._loop_kata",
    ),
)

NAMES = tuple(kata.name for kata in KATAS)


class UnknownKata(ValueError):
    pass


def find_kata(name: str) -> Kata:
    for kata in KATAS:
        if kata.name == name:
            return kata
    raise UnknownKata(f"no kata named {name!r}; the katas: {', '.join(NAMES)}")
