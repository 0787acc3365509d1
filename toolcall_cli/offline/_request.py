"""Reading a chat-completions request body as any model would: the wire shape and call format
asked for, the tools offered, the question, the calls made since and their results, the chat
before it; and what the model decides from them."""

from __future__ import annotations

import bisect
import itertools
import json
import re
from collections.abc import Hashable, Iterable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass, field, replace
from functools import cached_property
from typing import Any, Literal

from toolcall_cli.messages import ToolSpec
from toolcall_cli.offline._words import properties

# The --dag syntax, written as the --dag prompt and the reserved schema arguments teach it: a call
# names itself and lists the calls it waits for beside its name and arguments (text) or among its
# arguments (native), and `{{name.field}}` stands for a field of a result. The model's own
# literals, as any model would write after reading that prompt (it knows only the request).
ID_KEY, DEPENDS_KEY = "id", "depends_on"
RESERVED_ID, RESERVED_DEPENDS = "_id", "_depends_on"
_PLACEHOLDER_RE = re.compile(r"\{\{(?P<ref>[\w-]+)\.(?P<field>\w+)\}\}")

# How much of a request the model reads. A request can hold far more than a conversation of a
# model's needs: past these, the rest is not read, so that what a request costs grows with its
# length only (each is many times what the engine itself sends).
MAX_CALLS_READ = 64
"""Calls of one turn (the engine runs 8 of a reply at most)."""
MAX_ARGUMENTS = 64
"""Arguments of one call."""
MAX_ARGUMENT_DEPTH = 32
"""Levels of arrays and objects in a call's arguments."""
MAX_PROPERTIES = 128
"""Parameters of one tool."""
MAX_ENUM_VALUES = 1000
"""Enum values in all the tools of a request, as OpenAI's structured outputs allow."""
MAX_ANY_OF = 64
"""Options of one parameter's `anyOf`."""


@dataclass(frozen=True)
class PlannedCall:
    """One call the model means to make."""

    name: str
    arguments: dict[str, Any]
    key: tuple[str, Any] | None = field(default=None, compare=False)
    """The parameter and value that tells this call apart from its siblings (city 北京 vs 上海)."""
    garbled: bool = field(default=False, compare=False)
    """Read back from call text that was not valid JSON (cut off or broken): the arguments are
    a repair's guess, not necessarily what was meant."""
    ref: str | None = field(default=None, compare=False)
    """The call's own name, for another call of the same reply to use its result (--dag)."""
    depends_on: tuple[str, ...] = field(default=(), compare=False)
    """The names of the calls of the same reply it waits for."""
    skipped: bool = field(default=False, compare=False)
    """Read back with a placeholder that could not be put in (the call it waits for failed):
    it never ran, and there is nothing in it to correct."""


UNPARSED_RE = re.compile(
    r"not valid JSON|never closed|ended inside a tool call|is not a JSON object|"
    r"not the JSON object|matches neither a call|without a function name|could not be read|"
    r"holds no tool call|block is empty",
    re.I,
)


@dataclass(frozen=True)
class Exchange:
    """A call made in an earlier turn and the result that came back for it (None if none did)."""

    call: PlannedCall
    result: str | None

    # Cached: each is asked again and again of every exchange, and reads the whole result.
    @cached_property
    def failed(self) -> bool:
        return self.result is None or self.result.lstrip()[:5].lower() == "error"

    @cached_property
    def unparsed(self) -> bool:
        """The call never ran because its text could not be parsed (cut off, broken JSON):
        what was read back of it is not what the model meant, so it is made again in full."""
        return self.failed and (
            self.call.garbled or UNPARSED_RE.search(self.result or "") is not None
        )


@dataclass(frozen=True)
class EarlierQuestion:
    """A question asked before the current one in the same conversation, with its calls."""

    question: str
    exchanges: tuple[Exchange, ...] = ()
    """Every call made for it, with its result, turn after turn."""


Shape = Literal["text", "native", "json"]
"""text: tools in the system prompt, calls as tagged text; native: `tools` / `tool_calls`;
json: `response_format` json_schema, one JSON object per reply."""


@dataclass(frozen=True)
class CallFormat:
    """How the request wants calls written: its wire shape and, for text, the tags that the
    system prompt's example call is written in."""

    shape: Shape = "text"
    open_tag: str = "<tool_call>"
    close_tag: str = "</tool_call>"
    dag: bool = False
    """The request offers calls that wait for another's result (--dag): its prompt's example
    calls carry an id and a depends_on (text), or its tools the reserved arguments (native)."""
    answer_tool: str | None = None
    """A native request that requires a call (`tool_choice: "required"`) and offers a tool to
    answer through (`final_answer`): the answer is written as a call to it."""

    def tagged(self, call_json: str) -> str:
        return f"{self.open_tag}{call_json}{self.close_tag}"


@dataclass(frozen=True)
class Conversation:
    """Everything the model reads from one request."""

    question: str
    tools: tuple[ToolSpec, ...]
    turns: tuple[tuple[Exchange, ...], ...] = ()
    """The model's earlier turns since the question, each with its calls and their results."""
    earlier: tuple[EarlierQuestion, ...] = ()
    """The questions before this one, oldest first (a chat's history)."""
    format: CallFormat = CallFormat()


@dataclass(frozen=True)
class Decision:
    """What to say: calls (with an optional lead-in sentence), or a final answer."""

    calls: tuple[PlannedCall, ...] = ()
    text: str = ""
    """The lead-in sentence when there are calls; the whole answer when there are none."""
    style: frozenset[str] = frozenset()
    """How carelessly the calls' JSON is written: `single_quotes`, `trailing_comma`,
    `unquoted_keys` (faults)."""

    @property
    def is_answer(self) -> bool:
        return not self.calls


def same_call(a: PlannedCall, b: PlannedCall) -> bool:
    return a.name == b.name and a.arguments == b.arguments


def call_key(call: PlannedCall) -> Hashable:
    """What tells calls apart, as a set member: two calls have the same key when same_call
    says they are the same, so a set finds a call among many without comparing each."""
    return (call.name, frozen(call.arguments))


def frozen(value: Any) -> Hashable:
    """A JSON value as a set member, equal to another where the values are equal (1 == 1.0): an
    object as the frozenset of its items, an array as the tuple of its items."""
    if isinstance(value, dict):
        return frozenset((key, frozen(item)) for key, item in value.items())
    if isinstance(value, list):
        return tuple(frozen(item) for item in value)
    return value  # type: ignore[no-any-return]


def request_shape(body: dict[str, Any]) -> Shape:
    if isinstance(body.get("tools"), list):
        return "native"
    if member(body, "response_format").get("type") in ("json_schema", "json_object"):
        return "json"
    return "text"


_EXAMPLE_CALL_RE = re.compile(r'<([A-Za-z][\w.:-]*)>\s*\{\s*"name"')


def call_format(body: dict[str, Any]) -> CallFormat:
    """The shape asked for and the tags to write calls in: those of the system prompt's example
    call (`<tool_call>{"name": ...`), as a model learns them from reading it. Without an
    example, the common `<tool_call>`."""
    shape = request_shape(body)
    prompt = system_text(body)
    example = _EXAMPLE_CALL_RE.search(prompt)
    tags = (f"<{example[1]}>", f"</{example[1]}>") if example else ("<tool_call>", "</tool_call>")
    if shape == "native":
        dag = any(RESERVED_ID in properties(t) for t in native_tools(body))
    else:
        examples = between(prompt, *tags)
        dag = shape == "text" and any(
            isinstance(e, dict) and ID_KEY in e and DEPENDS_KEY in e for e in map(decode, examples)
        )
    return CallFormat(shape, *tags, dag, required_answer_tool(body))


def between(text: str, open_tag: str, close_tag: str) -> list[str]:
    """The text inside each pair of tags, each open tag closed by the first close tag after it
    (as the regex `OPEN(.*?)CLOSE` finds them). By hand: as that regex, many open tags never
    closed would cost the square of the text's length."""
    found: list[str] = []
    position = text.find(open_tag)
    while position >= 0:
        start = position + len(open_tag)
        end = text.find(close_tag, start)
        if end < 0:  # nor is any later open tag closed
            break
        found.append(text[start:end])
        position = text.find(open_tag, end + len(close_tag))
    return found


ANSWER_TOOL = "final_answer"


def required_answer_tool(body: dict[str, Any]) -> str | None:
    """`final_answer` when the request requires a call and offers that tool, else None."""
    if body.get("tool_choice") != "required":
        return None
    offered = native_tools(body)
    return ANSWER_TOOL if any(t.name == ANSWER_TOOL for t in offered) else None


def message_text(message: dict[str, Any]) -> str:
    """A message's content as text, whether a string or a list of content parts."""
    content = message.get("content")
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "".join(str(p.get("text", "")) for p in content if isinstance(p, dict))
    return ""


def read_tools(body: dict[str, Any], fmt: CallFormat) -> tuple[ToolSpec, ...]:
    prompt_tools = tools_from_prompt(system_text(body))
    if fmt.shape == "native":
        return as_read(without_reserved(t) if fmt.dag else t for t in native_tools(body))
    if fmt.shape == "json":
        described = {t.name: t.description for t in prompt_tools}
        return as_read(tools_from_schema(body.get("response_format", {}), described))
    return as_read(prompt_tools)


def as_read(tools: Iterable[ToolSpec]) -> tuple[ToolSpec, ...]:
    """The tools as the model reads them: each with its first MAX_PROPERTIES parameters, the
    enums of all of them holding MAX_ENUM_VALUES values at most."""
    left = MAX_ENUM_VALUES
    read: list[ToolSpec] = []
    for spec in tools:
        props = spec.parameters.get("properties")
        if not isinstance(props, dict):
            read.append(spec)
            continue
        kept: dict[str, Any] = {}
        for name, schema in itertools.islice(props.items(), MAX_PROPERTIES):
            kept[name], left = enum_as_read(schema, left)
        read.append(ToolSpec(spec.name, spec.description, {**spec.parameters, "properties": kept}))
    return tuple(read)


def enum_as_read(schema: Any, left: int) -> tuple[Any, int]:
    """A parameter's schema with no more than `left` enum values (in `enum`, or in the options
    of its `anyOf`, of which it keeps MAX_ANY_OF), and how many are left after it."""
    if not isinstance(schema, dict):
        return schema, left
    if isinstance(schema.get("enum"), list):
        values = schema["enum"][:left]
        return {**schema, "enum": values}, left - len(values)
    options = schema.get("anyOf")
    if not isinstance(options, list):
        return schema, left
    kept = []
    for option in options[:MAX_ANY_OF]:
        if isinstance(option, dict) and isinstance(option.get("enum"), list):
            option = {**option, "enum": option["enum"][:left]}
            left -= len(option["enum"])
        kept.append(option)
    return {**schema, "anyOf": kept}, left


def without_reserved(spec: ToolSpec) -> ToolSpec:
    """A tool as the model plans with it: the reserved arguments are about the calls, not it."""
    reserved = (RESERVED_ID, RESERVED_DEPENDS)
    kept = {k: v for k, v in properties(spec).items() if k not in reserved}
    return ToolSpec(spec.name, spec.description, {**spec.parameters, "properties": kept})


def system_text(body: dict[str, Any]) -> str:
    messages = [m for m in body.get("messages") or [] if isinstance(m, dict)]
    return "\n\n".join(message_text(m) for m in messages if m.get("role") == "system")


def native_tools(body: dict[str, Any]) -> list[ToolSpec]:
    """The request's `tools`, leaving out any entry without a function name."""
    tools: list[ToolSpec] = []
    for entry in body.get("tools") or []:
        function = entry.get("function") if isinstance(entry, dict) else None
        if isinstance(function, dict) and isinstance(function.get("name"), str):
            about = str(function.get("description") or "")
            tools.append(ToolSpec(function["name"], about, member(function, "parameters")))
    return tools


def tools_from_schema(response_format: Any, described: dict[str, str]) -> tuple[ToolSpec, ...]:
    """The tools of a JSON-mode schema: each anyOf branch with `name: {const}` and `arguments`."""
    branches = member(member(response_format, "json_schema"), "schema").get("anyOf")
    tools: list[ToolSpec] = []
    for branch in branches if isinstance(branches, list) else []:
        props = member(branch, "properties")
        name = member(props, "name").get("const")
        if not isinstance(name, str):
            continue
        about = branch.get("description") or member(props, "name").get("description")
        arguments = member(props, "arguments")
        tools.append(ToolSpec(name, str(about or described.get(name, "")), arguments))
    return tuple(tools)


def member(value: Any, key: str) -> dict[str, Any]:
    """`value[key]` when both are JSON objects, else an empty one."""
    found = value.get(key) if isinstance(value, dict) else None
    return found if isinstance(found, dict) else {}


@dataclass(frozen=True)
class ParameterLine:
    """One `- name: type (required, default 3) — description` line of a prompt's tool."""

    name: str
    type: str
    need: str
    default: str | None
    description: str | None


_NEEDS = (" (required", " (optional")
_DEFAULT_MARK = ", default "
_DESCRIPTION_MARK = " — "


def parameter_line(line: str) -> ParameterLine | None:
    """The line read as the regex `^- NAME: TYPE \\((required|optional)(, default DEFAULT)?\\)
    ( — DESCRIPTION)?$` reads it, with the shortest TYPE and DEFAULT that fit; None when it is no
    such line. By hand: as that regex, with its two lazy parts, a long line of many "(required"
    costs the square of its length."""
    if not line.startswith("- "):
        return None
    colon = 2
    while colon < len(line) and line[colon] != ":" and not line[colon].isspace():
        colon += 1
    if colon == 2 or not line.startswith(": ", colon):
        return None
    type_start = colon + 2
    # Where a `)` may close the parentheses: the line ends after it, or a description follows.
    closings = [
        i
        for i, char in enumerate(line)
        if char == ")" and (i + 1 == len(line) or line.startswith(_DESCRIPTION_MARK, i + 1))
    ]
    for need_at in need_positions(line, type_start):
        after = need_at + len(_NEEDS[0])
        default_start = after + len(_DEFAULT_MARK)
        has_default = line.startswith(_DEFAULT_MARK, after)
        first = bisect.bisect_left(closings, default_start if has_default else after)
        if first == len(closings) or (not has_default and closings[first] != after):
            continue
        close = closings[first]
        described = close + 1 < len(line)
        return ParameterLine(
            name=line[2:colon],
            type=line[type_start:need_at],
            need=line[need_at + 2 : after],
            default=line[default_start:close] if has_default else None,
            description=line[close + 1 + len(_DESCRIPTION_MARK) :] if described else None,
        )
    return None


def need_positions(line: str, start: int) -> list[int]:
    """Where " (required" or " (optional" begins, from `start` on, in order."""
    positions: list[int] = []
    for need in _NEEDS:
        at = line.find(need, start)
        while at >= 0:
            positions.append(at)
            at = line.find(need, at + 1)
    return sorted(positions)


def tools_from_prompt(text: str) -> tuple[ToolSpec, ...]:
    """The tools of a text-protocol system prompt: its `# Tools` section."""
    match = re.search(r"^# Tools\s*$(.*?)(?=^# |\Z)", text, re.M | re.S)
    if not match:
        return ()
    sections = re.split(r"^## ", match.group(1), flags=re.M)[1:]
    return tuple(tool_from_section(section) for section in sections)


def tool_from_section(section: str) -> ToolSpec:
    name, _, rest = section.partition("\n")
    description, _, params = rest.partition("\nParameters:")
    if not params and rest.startswith("Parameters:"):
        description, params = "", rest[len("Parameters:") :]
    found = [p for line in params.strip().splitlines() if (p := parameter_line(line.strip()))]
    props = {p.name: parameter_schema(p) for p in found}
    required = [p.name for p in found if p.need == "required"]
    parameters: dict[str, Any] = {"type": "object", "properties": props, "required": required}
    description = "" if description.strip() == "(no description)" else description.strip()
    return ToolSpec(name.strip(), description, parameters)


def parameter_schema(found: ParameterLine) -> dict[str, Any]:
    schema = type_schema(found.type.strip())
    if found.default is not None:
        schema["default"] = decode(found.default)
    if found.description:
        schema["description"] = found.description.strip()
    return schema


_ARRAY_OF = "array of "
MAX_ARRAY_DEPTH = 8
"""Arrays of arrays read, at most; deeper, the type is read as any."""


def type_schema(kind: str) -> dict[str, Any]:
    """The schema behind a prompt's type words: `integer`, `"a" | "b"`, `array of string`."""
    start = depth = 0
    while kind.startswith(_ARRAY_OF, start):
        start, depth = start + len(_ARRAY_OF), depth + 1
    if depth > MAX_ARRAY_DEPTH:
        return {}
    schema = item_schema(kind[start:])
    for _ in range(depth):
        schema = {"type": "array", "items": schema}
    return schema


def item_schema(kind: str) -> dict[str, Any]:
    """A type that is no array: a name, or literals and types joined by " | "."""
    parts = [p.strip() for p in kind.split(" | ")]
    if len(parts) > 1 or kind.startswith('"'):
        literals = [decode(p) for p in parts]
        if all(not (isinstance(v, str) and v == p) for v, p in zip(literals, parts, strict=True)):
            return {"enum": literals}
        return {"anyOf": [type_schema(p) for p in parts]}
    return {"type": kind} if kind != "any" else {}


# How the engine marks what it adds to the chat, as a model learns it from reading: compacted
# tool rounds ("[context summary] 3 earlier tool round(s), compacted:") and its instructions
# ("[toolcall] Answer now without tools"). Neither is a question.
_SUMMARY_MARK = "[context summary]"
_ENGINE_NOTE_MARK = "[toolcall]"
_COMPACTED_RE = re.compile(re.escape(_SUMMARY_MARK) + r" (\d{1,6}) earlier tool round")


def replies_since_question(body: dict[str, Any]) -> int:
    """Assistant replies after the question, compacted rounds included: unlike the turns the
    model can read back, this also counts a reply whose call could not be parsed."""
    count = 0
    for message in around_question(body)[2]:
        summary = is_summary_message(message)
        compacted = _COMPACTED_RE.match(message_text(message)) if summary else None
        count += int(compacted.group(1)) if compacted else message.get("role") == "assistant"
    return count


def read_conversation(body: dict[str, Any]) -> Conversation:
    fmt = call_format(body)
    before, question, after = around_question(body)
    # The answer tool is how to answer, not a tool that finds anything out.
    tools = tuple(t for t in read_tools(body, fmt) if t.name != fmt.answer_tool)
    return Conversation(
        question, tools, read_turns(after, fmt), earlier_questions(before, fmt), fmt
    )


def earlier_questions(
    messages: list[dict[str, Any]], fmt: CallFormat
) -> tuple[EarlierQuestion, ...]:
    """The chat before the question: each earlier question with the calls made for it."""
    starts = [i for i, m in enumerate(messages) if is_question_message(m)]
    return tuple(
        EarlierQuestion(
            message_text(messages[start]),
            tuple(e for turn in read_turns(messages[start + 1 : end], fmt) for e in turn),
        )
        for start, end in zip(starts, [*starts[1:], len(messages)][: len(starts)], strict=True)
    )


_RESULT_OPEN, _RESULT_NAME, _RESULT_CLOSE = '<tool_result id="', '" name="', "</tool_result>"


def tagged_results(text: str) -> list[tuple[str, str, str]]:
    """(id, name, content) of each `<tool_result id="ID" name="NAME">CONTENT</tool_result>`, as
    the regex with lazy ID, NAME and CONTENT finds them (a newline just inside either tag is
    not content). By hand: as that regex, many open tags never closed would cost the square of
    the text's length."""
    found: list[tuple[str, str, str]] = []
    position = text.find(_RESULT_OPEN)
    while position >= 0:  # each part not found now is not found after a later tag either
        id_start = position + len(_RESULT_OPEN)
        id_end = text.find(_RESULT_NAME, id_start)
        if id_end < 0:
            break
        name_start = id_end + len(_RESULT_NAME)
        name_end = text.find('">', name_start)
        if name_end < 0:
            break
        start = name_end + 2 + text.startswith("\n", name_end + 2)
        close = text.find(_RESULT_CLOSE, start)
        if close < 0:
            break
        end = close - 1 if close > start and text[close - 1] == "\n" else close
        found.append((text[id_start:id_end], text[name_start:name_end], text[start:end]))
        position = text.find(_RESULT_OPEN, close + len(_RESULT_CLOSE))
    return found


def is_result_message(message: dict[str, Any]) -> bool:
    text = message_text(message).lstrip()
    return message.get("role") == "user" and text.startswith("<tool_result")


def is_summary_message(message: dict[str, Any]) -> bool:
    """The engine's compaction of older tool rounds: not a question."""
    return message.get("role") == "user" and message_text(message).startswith(_SUMMARY_MARK)


def is_question_message(message: dict[str, Any]) -> bool:
    """A user message that asks something (not tool results, not a compaction summary, not an
    instruction from the engine such as "answer without tools")."""
    return message.get("role") == "user" and not (
        is_result_message(message)
        or is_summary_message(message)
        or message_text(message).startswith(_ENGINE_NOTE_MARK)
    )


def around_question(body: dict[str, Any]) -> tuple[list[dict[str, Any]], str, list[dict[str, Any]]]:
    """The messages before the latest user message that asks something, its text, and the
    messages after it."""
    messages = [m for m in body.get("messages") or [] if isinstance(m, dict)]
    for i in range(len(messages) - 1, -1, -1):
        if is_question_message(messages[i]):
            return messages[:i], message_text(messages[i]), messages[i + 1 :]
    return [], "", []


@dataclass
class _Turn:
    calls: list[tuple[str, PlannedCall]]
    results: dict[int, str] = field(default_factory=dict)

    def attach(self, call_id: str, name: str, content: str) -> None:
        """Tie a result to its call: by id, else the first open call of that name, else in order."""
        open_calls = [i for i in range(len(self.calls)) if i not in self.results]
        by_id = [i for i in open_calls if call_id and self.calls[i][0] == call_id]
        by_name = [i for i in open_calls if self.calls[i][1].name == name]
        candidates = by_id or by_name or open_calls
        if not candidates and len(self.calls) >= MAX_CALLS_READ:
            return  # past what the model reads of a turn
        if not candidates:  # a result for a call we could not read back: keep it, unnamed args
            self.calls.append((call_id, PlannedCall(name, {})))
            candidates = [len(self.calls) - 1]
        self.results[candidates[0]] = content

    def exchanges(self, fmt: CallFormat) -> tuple[Exchange, ...]:
        ran = [Exchange(call, self.results.get(i)) for i, (_, call) in enumerate(self.calls)]
        if not fmt.dag:
            return tuple(ran)
        results = {e.call.ref: e.result or "" for e in ran if e.call.ref and not e.failed}
        return tuple(replace(e, call=as_run(e.call, results)) for e in ran)


_SUMMARY_LINE_RE = re.compile(r"^- (?P<name>[^\s(]+)\((?P<args>.*)\) -> (?P<result>.*)$")


def summary_turn(text: str) -> _Turn:
    """Compacted rounds as one turn: each `- name(args) -> preview` line is a call made."""
    turn = _Turn([])
    for line in text.splitlines():
        found = _SUMMARY_LINE_RE.match(line)
        if found:
            call = PlannedCall(found["name"], as_arguments(read_object(found["args"])[0]))
            turn.calls.append(("", call))
            turn.results[len(turn.calls) - 1] = found["result"]
    return turn


def read_turns(messages: list[dict[str, Any]], fmt: CallFormat) -> tuple[tuple[Exchange, ...], ...]:
    turns: list[_Turn] = []
    for message in messages:
        role = message.get("role")
        if is_summary_message(message):
            turns.append(summary_turn(message_text(message)))
        elif role == "assistant":
            turns.append(_Turn(assistant_calls(message, fmt)))
        elif role == "tool" and turns:
            turns[-1].attach(
                str(message.get("tool_call_id") or ""),
                str(message.get("name") or ""),
                message_text(message),
            )
        elif is_result_message(message) and turns:
            for call_id, name, content in tagged_results(message_text(message)):
                turns[-1].attach(call_id, name, content)
    return tuple(turn.exchanges(fmt) for turn in turns if turn.calls)


_FENCE = "```"


def fenced_objects(text: str) -> list[str]:
    r"""The `{...}` of each ```json block, as the regex (re.S)
        ```(?:json)?\s*\n(\{.*?\})\s*\n```
    finds them: a fence, maybe `json`, spaces ending in a newline, then an object up to the first
    `}` that spaces ending in a newline and a fence follow. By hand: as that regex, many fences
    never closed would cost the square of the text's length."""
    found: list[str] = []
    fence = text.find(_FENCE)
    while fence >= 0:
        after = fence + len(_FENCE)
        brace = newline_then(text, after + 4 if text.startswith("json", after) else after, "{")
        if brace < 0:
            fence = text.find(_FENCE, fence + 1)
            continue
        close = text.find("}", brace)
        while close >= 0 and newline_then(text, close + 1, _FENCE) < 0:
            close = text.find("}", close + 1)
        if close < 0:  # nor can any later block close
            break
        found.append(text[brace : close + 1])
        fence = text.find(_FENCE, newline_then(text, close + 1, _FENCE) + len(_FENCE))
    return found


def newline_then(text: str, start: int, mark: str) -> int:
    """Where `mark` begins, if from `start` only spaces that end in a newline come before it;
    else -1."""
    end = start
    while end < len(text) and text[end].isspace():
        end += 1
    return end if end > start and text[end - 1] == "\n" and text.startswith(mark, end) else -1


def assistant_calls(message: dict[str, Any], fmt: CallFormat) -> list[tuple[str, PlannedCall]]:
    # With --dag a call's own name and what it waits for are among its arguments (native) or
    # beside them (text).
    if isinstance(message.get("tool_calls"), list):
        dag = fmt.dag and fmt.shape == "native"
        calls = [c for c in message["tool_calls"] if isinstance(c, dict)][:MAX_CALLS_READ]
        return [native_call(c, dag) for c in calls]
    text = message_text(message)
    segments = [part.split(fmt.close_tag, 1)[0] for part in text.split(fmt.open_tag)[1:]]
    if not segments:  # calls it wrote as ```json blocks, as chat-tuned models do
        segments = fenced_objects(text)
    segments = segments[:MAX_CALLS_READ]
    read = map(read_object, [text] if fmt.shape == "json" else segments)
    dag = fmt.dag and fmt.shape == "text"
    return [("", call_from_payload(p, dag, garbled=g)) for p, g in read if p and "name" in p]


def native_call(entry: dict[str, Any], dag: bool = False) -> tuple[str, PlannedCall]:
    found = entry.get("function")
    function: dict[str, Any] = found if isinstance(found, dict) else {}
    arguments = function.get("arguments")
    decoded, repaired = read_object(arguments) if isinstance(arguments, str) else (arguments, False)
    garbled = repaired and bool(str(arguments).strip())
    call = PlannedCall(str(function.get("name") or ""), as_arguments(decoded), garbled=garbled)
    call_id = str(entry.get("id") or "")
    if not dag:
        return call_id, call
    reserved = (RESERVED_ID, RESERVED_DEPENDS)
    arguments = {k: v for k, v in call.arguments.items() if k not in reserved}
    return call_id, replace(call, arguments=arguments, **linked(call.arguments, *reserved))


def call_from_payload(
    payload: dict[str, Any], dag: bool = False, *, garbled: bool = False
) -> PlannedCall:
    arguments = payload.get("arguments", payload.get("parameters"))
    if isinstance(arguments, str):
        arguments = read_object(arguments)[0]
    call = PlannedCall(str(payload["name"]), as_arguments(arguments), garbled=garbled)
    return replace(call, **linked(payload, ID_KEY, DEPENDS_KEY)) if dag else call


def linked(fields: dict[str, Any], id_key: str, depends_key: str) -> dict[str, Any]:
    """A call's own name and the calls it waits for, as its payload or its reserved arguments
    give them (the `ref` and `depends_on` of a planned call)."""
    ref, waits = fields.get(id_key), fields.get(depends_key)
    items = waits if isinstance(waits, list) else [] if waits is None else [waits]
    return {
        "ref": str(ref) if isinstance(ref, (str, int)) and str(ref).strip() else None,
        "depends_on": tuple(dict.fromkeys(str(item) for item in items)),
    }


def as_run(call: PlannedCall, results: dict[str, str]) -> PlannedCall:
    """The call as the engine ran it (--dag): each placeholder it wrote, a whole argument, put in
    from the field of the result it names; skipped when one cannot be (that call failed or its
    result holds no such field)."""
    arguments = dict(call.arguments)
    for name, value in call.arguments.items():
        found = _PLACEHOLDER_RE.fullmatch(value) if isinstance(value, str) else None
        if found is None:
            continue
        data = decode(results.get(found["ref"], ""))
        if not isinstance(data, dict) or found["field"] not in data:
            return replace(call, skipped=True)
        arguments[name] = data[found["field"]]
    return replace(call, arguments=arguments)


def as_arguments(value: Any) -> dict[str, Any]:
    """A call's arguments as the model reads them: its first MAX_ARGUMENTS, and none at all when
    they nest deeper than MAX_ARGUMENT_DEPTH (they are no arguments a tool of its takes)."""
    if not isinstance(value, dict) or nested_deeper(value, MAX_ARGUMENT_DEPTH):
        return {}
    return dict(itertools.islice(value.items(), MAX_ARGUMENTS))


def nested_deeper(value: Any, depth: int) -> bool:
    """Whether arrays and objects nest more than `depth` levels deep in `value` (iteratively:
    a recursion would fail on what it is meant to find)."""
    level: list[Any] = [value]
    for _ in range(depth + 1):
        level = [
            item
            for container in level
            for item in (container.values() if isinstance(container, dict) else container)
            if isinstance(item, (dict, list))
        ]
        if not level:
            return False
    return True


def decode(content: str) -> Any:
    """A JSON value, or the text itself when it is not JSON."""
    try:
        return json.loads(content)
    except (ValueError, RecursionError):  # not JSON, or nested past what the parser follows
        return content


REPAIR_BUDGET = 800
"""Characters of broken JSON that one request may have repaired. json-repair's time grows with
the square of some text (1,600 characters of "1{" take it a second); what the model's own faults
write comes to a few hundred characters a request. Past the budget broken JSON is unreadable,
as a cut-off call is."""

_repair_left: ContextVar[int | None] = ContextVar("repair_left", default=None)


@contextmanager
def repair_budget() -> Iterator[None]:
    """Reading one request: the repairs it may have are counted (outside, they are not)."""
    token = _repair_left.set(REPAIR_BUDGET)
    try:
        yield
    finally:
        _repair_left.reset(token)


def read_object(text: str) -> tuple[dict[str, Any] | None, bool]:
    """A JSON object from text, and whether it had to be repaired (our own faults included):
    what a repair reads is a guess at what was meant."""
    try:
        value = json.loads(text)
    except (ValueError, RecursionError):
        return repaired_object(text), True
    return (value if isinstance(value, dict) else None), False


def repaired_object(text: str) -> dict[str, Any] | None:
    """What json-repair reads in broken JSON, within the request's budget."""
    left = _repair_left.get()
    if not text.strip() or (left is not None and len(text) > left):
        return None
    if left is not None:
        _repair_left.set(left - len(text))
    import json_repair  # only for broken JSON (a fault's); most requests hold none

    try:
        value = json_repair.loads(text)
    except (ValueError, RecursionError):  # nested past what json-repair follows
        return None
    return value if isinstance(value, dict) else None
