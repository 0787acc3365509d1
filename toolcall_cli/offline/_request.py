"""Reading a chat-completions request body as any model would: the wire shape and call format
asked for, the tools offered, the question, the calls made since and their results, the chat
before it; and what the model decides from them."""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field, replace
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

    @property
    def failed(self) -> bool:
        return self.result is None or self.result.lstrip().lower().startswith("error")

    @property
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
        examples = re.findall(re.escape(tags[0]) + r"(.*?)" + re.escape(tags[1]), prompt, re.S)
        dag = shape == "text" and any(
            isinstance(e, dict) and ID_KEY in e and DEPENDS_KEY in e for e in map(decode, examples)
        )
    return CallFormat(shape, *tags, dag, required_answer_tool(body))


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
        return tuple(without_reserved(t) if fmt.dag else t for t in native_tools(body))
    if fmt.shape == "json":
        described = {t.name: t.description for t in prompt_tools}
        return tools_from_schema(body.get("response_format", {}), described)
    return prompt_tools


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


_PARAM_RE = re.compile(
    r"^- (?P<name>[^:\s]+): (?P<type>.*?) \((?P<need>required|optional)"
    r"(?:, default (?P<default>.*?))?\)(?: — (?P<description>.*))?$"
)


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
    found = [m for line in params.strip().splitlines() if (m := _PARAM_RE.match(line.strip()))]
    props = {m["name"]: parameter_schema(m) for m in found}
    required = [m["name"] for m in found if m["need"] == "required"]
    parameters: dict[str, Any] = {"type": "object", "properties": props, "required": required}
    description = "" if description.strip() == "(no description)" else description.strip()
    return ToolSpec(name.strip(), description, parameters)


def parameter_schema(found: re.Match[str]) -> dict[str, Any]:
    schema = type_schema(found["type"].strip())
    if found["default"] is not None:
        schema["default"] = decode(found["default"])
    if found["description"]:
        schema["description"] = found["description"].strip()
    return schema


def type_schema(kind: str) -> dict[str, Any]:
    """The schema behind a prompt's type words: `integer`, `"a" | "b"`, `array of string`."""
    if kind.startswith("array of "):
        return {"type": "array", "items": type_schema(kind[len("array of ") :])}
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
_COMPACTED_RE = re.compile(re.escape(_SUMMARY_MARK) + r" (\d+) earlier tool round")


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


_RESULT_RE = re.compile(r'<tool_result id="(.*?)" name="(.*?)">\n?(.*?)\n?</tool_result>', re.S)


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
            for call_id, name, content in _RESULT_RE.findall(message_text(message)):
                turns[-1].attach(call_id, name, content)
    return tuple(turn.exchanges(fmt) for turn in turns if turn.calls)


_FENCED_RE = re.compile(r"```(?:json)?\s*\n(\{.*?\})\s*\n```", re.S)


def assistant_calls(message: dict[str, Any], fmt: CallFormat) -> list[tuple[str, PlannedCall]]:
    # With --dag a call's own name and what it waits for are among its arguments (native) or
    # beside them (text).
    if isinstance(message.get("tool_calls"), list):
        dag = fmt.dag and fmt.shape == "native"
        return [native_call(c, dag) for c in message["tool_calls"] if isinstance(c, dict)]
    text = message_text(message)
    segments = [part.split(fmt.close_tag, 1)[0] for part in text.split(fmt.open_tag)[1:]]
    if not segments:  # calls it wrote as ```json blocks, as chat-tuned models do
        segments = _FENCED_RE.findall(text)
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
    return dict(value) if isinstance(value, dict) else {}


def decode(content: str) -> Any:
    """A JSON value, or the text itself when it is not JSON."""
    try:
        return json.loads(content)
    except ValueError:
        return content


def read_object(text: str) -> tuple[dict[str, Any] | None, bool]:
    """A JSON object from text, and whether it had to be repaired (our own faults included):
    what a repair reads is a guess at what was meant."""
    try:
        value, repaired = json.loads(text), False
    except ValueError:
        import json_repair  # only for broken JSON (a fault's); most requests hold none

        value, repaired = (json_repair.loads(text) if text.strip() else None), True
    return (value if isinstance(value, dict) else None), repaired
