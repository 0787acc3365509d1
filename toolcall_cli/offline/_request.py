"""Reading a chat-completions request as any model would: the wire shape and call format asked
for, the tools offered, the question, the calls made since and what came back, the chat before
it. Each reader looks at each character a bounded number of times, and reads only so much of a
request as a model's context would hold."""

from __future__ import annotations

import json
from dataclasses import dataclass, field, replace
from typing import Any, Literal

from toolcall_cli.messages import ToolSpec
from toolcall_cli.offline._reading import properties

ID_KEY, DEPENDS_KEY = "id", "depends_on"
RESERVED_ID, RESERVED_DEPENDS = "_id", "_depends_on"
"""The --dag syntax as its prompt and reserved schema arguments teach it: a call names itself
and what it waits for, and `{{name.field}}` stands for a field of a result."""
ANSWER_TOOL = "final_answer"
READ_CHARS = 20_000
"""How much of one message the model reads."""
READ_TURNS, READ_CALLS = 32, 64
"""The latest turns of a conversation it reads, and the calls of one reply."""
REPAIR_CHARS = 800
"""The longest broken JSON it reads back (json-repair is slow on some long text)."""


@dataclass(frozen=True)
class Call:
    """One call the model means to make, or made."""

    name: str
    arguments: dict[str, Any]
    key: tuple[str, Any] | None = field(default=None, compare=False)
    """The argument that tells it apart from its siblings (city 北京, not 上海)."""
    garbled: bool = field(default=False, compare=False)
    """Read back from text that was no valid JSON: the arguments are a repair's guess."""
    ref: str | None = field(default=None, compare=False)
    depends_on: tuple[str, ...] = field(default=(), compare=False)
    skipped: bool = field(default=False, compare=False)
    """Its placeholder could not be put in (what it waited for failed): it never ran."""


@dataclass(frozen=True)
class Exchange:
    """A call of an earlier turn and what came back (None: nothing did)."""

    call: Call
    result: str | None

    @property
    def failed(self) -> bool:
        return self.result is None or self.result.lstrip()[:5].lower() == "error"

    @property
    def unparsed(self) -> bool:
        """Its text could not be read, so what was read back of it is no call to correct."""
        return self.failed and self.call.garbled


Shape = Literal["text", "native", "json"]


@dataclass(frozen=True)
class CallFormat:
    """How calls are written: the wire shape, the prompt's tags, --dag, an answer tool."""

    shape: Shape = "text"
    open_tag: str = "<tool_call>"
    close_tag: str = "</tool_call>"
    dag: bool = False
    answer_tool: str | None = None
    """`final_answer`, when a call is required and that tool is offered: answer through it."""

    def tagged(self, call_json: str) -> str:
        return f"{self.open_tag}{call_json}{self.close_tag}"


@dataclass(frozen=True)
class Conversation:
    question: str
    tools: tuple[ToolSpec, ...]
    turns: tuple[tuple[Exchange, ...], ...] = ()
    """The model's turns since the question: its calls and what came back."""
    earlier: tuple[tuple[str, tuple[Exchange, ...]], ...] = ()
    """Earlier questions of the chat, each with every call made for it."""
    format: CallFormat = CallFormat()
    replies: int = 0
    """Its replies since the question, including ones whose calls could not be read."""


@dataclass(frozen=True)
class Decision:
    """Calls (with a lead-in sentence), or the answer."""

    calls: tuple[Call, ...] = ()
    text: str = ""
    style: frozenset[str] = frozenset()
    """How carelessly the calls' JSON is written (faults): single_quotes, trailing_comma..."""


def read_conversation(body: dict[str, Any]) -> Conversation:
    messages = [m for m in body.get("messages") or [] if isinstance(m, dict)]
    fmt = call_format(body, messages)
    starts = [i for i, m in enumerate(messages) if is_question(m)]
    at = starts[-1] if starts else len(messages)
    after = messages[at + 1 :]
    earlier = tuple(
        (text_of(messages[s]), tuple(e for t in read_turns(messages[s + 1 : end], fmt) for e in t))
        for s, end in zip(starts[:-1][-READ_TURNS:], starts[1:][-READ_TURNS:], strict=True)
    )
    return Conversation(
        question=text_of(messages[at]) if starts else "",
        tools=tuple(t for t in read_tools(body, fmt, messages) if t.name != fmt.answer_tool),
        turns=read_turns(after, fmt),
        earlier=earlier,
        format=fmt,
        replies=sum(m.get("role") == "assistant" or is_summary(m) for m in after),
    )


def text_of(message: dict[str, Any]) -> str:
    """Its text (a system prompt whole: it holds the tools)."""
    content = message.get("content")
    if isinstance(content, list):
        content = "".join(str(p.get("text", "")) for p in content if isinstance(p, dict))
    if not isinstance(content, str):
        return ""
    return content if message.get("role") == "system" else content[:READ_CHARS]


def is_question(message: dict[str, Any]) -> bool:
    """A user message that asks: not tool results, not a note in brackets from the program."""
    text = text_of(message).lstrip()
    return message.get("role") == "user" and not text.startswith(("<tool_result", "["))


def is_summary(message: dict[str, Any]) -> bool:
    """Earlier rounds compacted into a note: each line `- name(arguments) -> result`."""
    text = text_of(message)
    return message.get("role") == "user" and text.startswith("[") and "\n- " in text


def call_format(body: dict[str, Any], messages: list[dict[str, Any]]) -> CallFormat:
    """The shape asked for, and the tags of the prompt's example call (`<tool_call>{"name"`)."""
    native = isinstance(body.get("tools"), list)
    schema = member(body, "response_format").get("type") in ("json_schema", "json_object")
    shape: Shape = "native" if native else "json" if schema else "text"
    prompt = "\n".join(text_of(m) for m in messages if m.get("role") == "system")
    open_tag, close_tag = example_tags(prompt)
    if shape == "native":
        dag = any(RESERVED_ID in properties(t) for t in native_tools(body))
    else:
        examples = [read_json(p.split(close_tag, 1)[0]) for p in prompt.split(open_tag)[1:]]
        wants = (ID_KEY, DEPENDS_KEY)
        dag = shape == "text" and any(
            isinstance(e, dict) and all(k in e for k in wants) for e in examples
        )
    required = body.get("tool_choice") == "required"
    answer = (
        ANSWER_TOOL if required and any(t.name == ANSWER_TOOL for t in native_tools(body)) else None
    )
    return CallFormat(shape, open_tag, close_tag, dag, answer)


def example_tags(prompt: str) -> tuple[str, str]:
    """The tags an example call in the prompt is written in; else `<tool_call>`."""
    for piece in prompt.split('{"name"')[:-1]:
        head = piece.rstrip()
        start = head.rfind("<")
        name = head[start + 1 : -1] if start >= 0 and head.endswith(">") else ""
        if name and name[0].isalpha() and all(c.isalnum() or c in "_.:-" for c in name):
            return f"<{name}>", f"</{name}>"
    return "<tool_call>", "</tool_call>"


def read_tools(
    body: dict[str, Any], fmt: CallFormat, messages: list[dict[str, Any]]
) -> list[ToolSpec]:
    prompt = "\n".join(text_of(m) for m in messages if m.get("role") == "system")
    described = prompt_tools(prompt)
    if fmt.shape == "native":
        return [without_reserved(t) if fmt.dag else t for t in native_tools(body)]
    if fmt.shape == "text":
        return described
    about = {t.name: t.description for t in described}
    branches = member(member(member(body, "response_format"), "json_schema"), "schema").get("anyOf")
    tools = []
    for branch in branches[:128] if isinstance(branches, list) else []:
        props = member(branch, "properties")
        name = member(props, "name").get("const")
        if isinstance(name, str):
            text = branch.get("description") or member(props, "name").get("description")
            tools.append(
                ToolSpec(name, str(text or about.get(name, "")), member(props, "arguments"))
            )
    return tools


def native_tools(body: dict[str, Any]) -> list[ToolSpec]:
    found = (member(entry, "function") for entry in (body.get("tools") or [])[:128])
    return [
        ToolSpec(f["name"], str(f.get("description") or "")[:2000], member(f, "parameters"))
        for f in found
        if isinstance(f.get("name"), str)
    ]


def without_reserved(spec: ToolSpec) -> ToolSpec:
    """The reserved arguments are about the calls, not the tool."""
    kept = {k: v for k, v in properties(spec).items() if k not in (RESERVED_ID, RESERVED_DEPENDS)}
    return ToolSpec(spec.name, spec.description, {**spec.parameters, "properties": kept})


def member(value: Any, key: str) -> dict[str, Any]:
    found = value.get(key) if isinstance(value, dict) else None
    return found if isinstance(found, dict) else {}


def prompt_tools(prompt: str) -> list[ToolSpec]:
    """The tools of a text-protocol prompt's `# Tools` section: `## name`, a description, and
    `- param: type (required|optional, default x) — description` lines."""
    _, found, rest = prompt.partition("# Tools\n")
    if not found:
        return []
    tools = []
    for section in rest.split("\n# ", 1)[0].split("## ")[1:128]:
        name, _, text = section.partition("\n")
        about, _, listed = text.partition("Parameters:")
        lines = [read_parameter(line.strip()) for line in listed.splitlines()]
        params = [p for p in lines if p is not None]
        schema = {
            "type": "object",
            "properties": {p[0]: p[1] for p in params},
            "required": [p[0] for p in params if p[2]],
        }
        about = about.strip()
        tools.append(ToolSpec(name.strip(), "" if about == "(no description)" else about, schema))
    return tools


def read_parameter(line: str) -> tuple[str, dict[str, Any], bool] | None:
    name, colon, rest = line.removeprefix("- ").partition(": ")
    marks = [(rest.find(f" ({need}"), need) for need in ("required", "optional")]
    at, need = min(((i, n) for i, n in marks if i >= 0), default=(-1, ""))
    if not line.startswith("- ") or not colon or not name or " " in name or at < 0:
        return None
    schema, tail = type_schema(rest[:at]), rest[at + len(need) + 2 :]
    if tail.startswith(", default "):
        end = tail.find(") — ")
        default, tail = (tail[10:end], tail[end:]) if end >= 0 else (tail[10:-1], ")")
        schema["default"] = read_json(default, default)
    if not tail.startswith(")"):
        return None
    if tail.startswith(") — "):
        schema["description"] = tail[4:]
    return name, schema, need == "required"


def type_schema(kind: str) -> dict[str, Any]:
    """The schema of a prompt's type words: `integer`, `"a" | "b"`, `array of string`."""
    if kind.startswith("array of "):
        return {"type": "array", "items": type_schema(kind[9:])}
    parts = kind.split(" | ")
    if kind.startswith('"') and all(p.startswith('"') for p in parts):
        return {"enum": [read_json(p, p) for p in parts]}
    if len(parts) > 1:
        return {"anyOf": [type_schema(p) for p in parts]}
    return {} if kind == "any" else {"type": kind}


# --- turns -------------------------------------------------------------------------------------


@dataclass
class _Turn:
    calls: list[tuple[str, Call]]
    results: dict[int, str] = field(default_factory=dict)

    def attach(self, call_id: str, name: str, content: str) -> None:
        """A result goes to its call: by id, else the first open call of its name, else the
        first open call; a result for no call read back gets a call of its own."""
        open_calls = [i for i in range(len(self.calls)) if i not in self.results]
        by_id = [i for i in open_calls if call_id and self.calls[i][0] == call_id]
        by_name = [i for i in open_calls if self.calls[i][1].name == name]
        chosen = (by_id or by_name or open_calls or [len(self.calls)])[0]
        if chosen == len(self.calls):
            self.calls.append((call_id, Call(name, {})))
        self.results[chosen] = content

    def exchanges(self, dag: bool) -> tuple[Exchange, ...]:
        made = [Exchange(call, self.results.get(i)) for i, (_, call) in enumerate(self.calls)]
        if not dag:
            return tuple(made)
        results = {e.call.ref: e.result or "" for e in made if e.call.ref and not e.failed}
        return tuple(replace(e, call=as_run(e.call, results)) for e in made)


def read_turns(messages: list[dict[str, Any]], fmt: CallFormat) -> tuple[tuple[Exchange, ...], ...]:
    turns: list[_Turn] = []
    for message in messages:
        role, text = message.get("role"), text_of(message)
        if is_summary(message):
            turns.append(summary_turn(text))
        elif role == "assistant":
            turns.append(_Turn(assistant_calls(message, fmt)[:READ_CALLS]))
        elif role == "tool" and turns:
            turns[-1].attach(
                str(message.get("tool_call_id") or ""), str(message.get("name") or ""), text
            )
        elif role == "user" and turns and text.lstrip().startswith("<tool_result"):
            for call_id, name, content in tagged_results(text)[:READ_CALLS]:
                turns[-1].attach(call_id, name, content)
    return tuple(turn.exchanges(fmt.dag) for turn in turns[-READ_TURNS:] if turn.calls)


def summary_turn(text: str) -> _Turn:
    """Compacted rounds as one turn: each `- name(arguments) -> result` line, a call made."""
    turn = _Turn([])
    for line in text.splitlines()[:READ_CALLS]:
        head, arrow, result = line.partition(") -> ")
        name, paren, arguments = head.removeprefix("- ").partition("(")
        if line.startswith("- ") and arrow and paren and name and " " not in name:
            turn.calls.append(("", Call(name, read_object(arguments)[0] or {})))
            turn.results[len(turn.calls) - 1] = result
    return turn


def tagged_results(text: str) -> list[tuple[str, str, str]]:
    """(id, name, content) of each `<tool_result id=".." name="..">` block that is closed."""
    found = []
    for piece in text.split("</tool_result>")[:-1]:
        head, _, content = piece[piece.rfind("<tool_result") :].partition(">")
        call_id = head.partition('id="')[2].partition('"')[0]
        name = head.partition('name="')[2].partition('"')[0]
        found.append((call_id, name, content.strip("\n")))
    return found


def assistant_calls(message: dict[str, Any], fmt: CallFormat) -> list[tuple[str, Call]]:
    """Its calls: native ones, or the JSON in its tags (or fenced, as chat models write them,
    or the whole text in JSON mode). With --dag, a call's name and what it waits for are read
    from its reserved arguments (native) or the keys beside them (text)."""
    if isinstance(message.get("tool_calls"), list):
        return [
            native_call(c, fmt.dag)
            for c in message["tool_calls"][:READ_CALLS]
            if isinstance(c, dict)
        ]
    text = text_of(message)
    pieces = [p.split(fmt.close_tag, 1)[0] for p in text.split(fmt.open_tag)[1:]]
    if fmt.shape == "json":
        pieces = [text]
    elif not pieces:  # calls written as ```json blocks
        fenced = (p.removeprefix("json").strip() for p in text.split("```")[1::2])
        pieces = [p for p in fenced if p.startswith("{") and p.endswith("}")]
    calls = []
    for piece in pieces[:READ_CALLS]:
        payload, garbled = read_object(piece)
        if payload and "name" in payload:
            arguments = payload.get("arguments", payload.get("parameters"))
            if isinstance(arguments, str):
                arguments = read_object(arguments)[0]
            call = Call(str(payload["name"]), as_object(arguments), garbled=garbled)
            calls.append(
                ("", replace(call, **linked(payload, ID_KEY, DEPENDS_KEY)) if fmt.dag else call)
            )
    return calls


def native_call(entry: dict[str, Any], dag: bool) -> tuple[str, Call]:
    function = member(entry, "function")
    arguments = function.get("arguments")
    decoded, repaired = read_object(arguments) if isinstance(arguments, str) else (arguments, False)
    call = Call(str(function.get("name") or ""), as_object(decoded), garbled=repaired)
    if dag:
        kept = {k: v for k, v in call.arguments.items() if k not in (RESERVED_ID, RESERVED_DEPENDS)}
        call = replace(
            call, arguments=kept, **linked(call.arguments, RESERVED_ID, RESERVED_DEPENDS)
        )
    return str(entry.get("id") or ""), call


def linked(fields: dict[str, Any], id_key: str, depends_key: str) -> dict[str, Any]:
    ref, waits = fields.get(id_key), fields.get(depends_key)
    items = waits if isinstance(waits, list) else [] if waits is None else [waits]
    return {
        "ref": str(ref) if isinstance(ref, (str, int)) and str(ref).strip() else None,
        "depends_on": tuple(dict.fromkeys(str(item) for item in items)),
    }


def as_run(call: Call, results: dict[str, str]) -> Call:
    """The call as the engine ran it (--dag): each whole-argument placeholder `{{ref.field}}`
    put in from that result; skipped when it cannot be."""
    arguments = dict(call.arguments)
    for name, value in call.arguments.items():
        inner = (
            value[2:-2]
            if isinstance(value, str) and value.startswith("{{") and value.endswith("}}")
            else ""
        )
        ref, dot, key = inner.partition(".")
        if not dot:
            continue
        data = read_json(results.get(ref, ""), None)
        if not isinstance(data, dict) or key not in data:
            return replace(call, skipped=True)
        arguments[name] = data[key]
    return replace(call, arguments=arguments)


def as_object(value: Any) -> dict[str, Any]:
    return dict(value) if isinstance(value, dict) else {}


def read_json(text: str, otherwise: Any = None) -> Any:
    """A JSON value, or `otherwise` when the text is none."""
    try:
        return json.loads(text)
    except (ValueError, RecursionError):
        return otherwise


def read_object(text: str) -> tuple[dict[str, Any] | None, bool]:
    """A JSON object from text, and whether it had to be repaired (a repair is a guess)."""
    value = read_json(text, ValueError)
    if value is not ValueError:
        return (value if isinstance(value, dict) else None), False
    if not text.strip() or len(text) > REPAIR_CHARS:
        return None, True
    import json_repair  # only for broken JSON (a fault's); most requests hold none

    try:
        value = json_repair.loads(text)
    except (ValueError, RecursionError, TypeError, IndexError):
        return None, True
    return (value if isinstance(value, dict) else None), True
