"""The chat-completions request as a model on the other end reads it (wire/completions writes its
reply): the shape and call format asked for, the tools offered (native `tools`, a JSON schema's
branches, or a text prompt's `# Tools` section), the question, and the calls made since with
what came back; and an error, for what it names. The two demo models, offline/ and the test
partner (models/_partner.py), read requests through it, so neither knows more than this reads.
It reads as much as a model's context would hold, each character a bounded number of times."""

from __future__ import annotations

import contextlib
import difflib
import json
import math
import re
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field, replace
from typing import Any, Literal

from toolcall_cli.messages import ToolSpec

ID_KEY, DEPENDS_KEY, RESERVED_ID, RESERVED_DEPENDS = "id", "depends_on", "_id", "_depends_on"
"""The --dag syntax, as its prompt and reserved arguments teach it: a call names itself and
what it waits for; `{{name.field}}` stands for a field of a result."""
READ_CHARS, READ_TURNS, READ_CALLS = 20_000, 32, 64
"""What is read of a message, of a conversation (its latest turns), of a reply."""


@dataclass(frozen=True)
class Call:
    name: str
    arguments: dict[str, Any]
    key: tuple[str, Any] | None = field(default=None, compare=False)
    """The argument that tells a planned call from its siblings (city 北京, not 上海)."""
    written: str | None = field(default=None, compare=False)
    """Its text, when that was no JSON object: the arguments are then a repair's guess (or none:
    a server's history may carry unreadable arguments as a JSON string of the text)."""
    ref: str | None = field(default=None, compare=False)
    depends_on: tuple[str, ...] = field(default=(), compare=False)
    skipped: bool = field(default=False, compare=False)
    """Its placeholder could not be put in (what it waited for failed): it never ran."""


@dataclass(frozen=True)
class Exchange:
    """A call made, and what came back (None: nothing did)."""

    call: Call
    result: str | None

    @property
    def failed(self) -> bool:
        return self.result is None or self.result.lstrip()[:5].lower() == "error"

    @property
    def unparsed(self) -> bool:
        """Its text could not be read: no call to correct, but one to make again whole."""
        return self.failed and self.call.written is not None


@dataclass(frozen=True)
class CallFormat:
    shape: Literal["text", "native", "json"] = "text"
    open_tag: str = "<tool_call>"
    close_tag: str = "</tool_call>"
    dag: bool = False
    answer_tool: str | None = None
    """`final_answer` when a call is required and that tool offered: answer through it."""
    must_call: bool = False
    """tool_choice requires a call ("required" without final_answer, or a named function)."""


@dataclass(frozen=True)
class Conversation:
    question: str
    tools: tuple[ToolSpec, ...]
    turns: tuple[tuple[Exchange, ...], ...] = ()
    """The model's turns since the question: its calls and what came back."""
    format: CallFormat = CallFormat()
    replies: int = 0
    """Its replies since the question, those whose calls could not be read too."""


def read_conversation(body: dict[str, Any]) -> Conversation:
    messages = [m for m in body.get("messages") or [] if isinstance(m, dict)]
    fmt = call_format(body, messages)
    asked = [i for i, m in enumerate(messages) if is_question(m)]
    after = messages[asked_first(messages, asked) + 1 :] if asked else []
    tools = offered(read_tools(body, fmt, messages), body.get("tool_choice"), fmt)
    replies = sum(m.get("role") == "assistant" or is_summary(m) for m in after)
    question = text_of(messages[asked[-1]]) if asked else ""
    return Conversation(question, tuple(tools), read_turns(after, fmt), fmt, replies)


def offered(tools: list[ToolSpec], choice: Any, fmt: CallFormat) -> list[ToolSpec]:
    """The tools the model may call: none with tool_choice "none", only the one a named
    function names, never the final_answer it answers through."""
    named = member(choice, "function").get("name") if isinstance(choice, dict) else None
    kept = [t for t in tools if t.name != fmt.answer_tool]
    return [t for t in kept if choice != "none" and named in (None, t.name)]


def asked_first(messages: list[dict[str, Any]], asked: list[int]) -> int:
    """Where the latest question was first asked: asked again right after a note of the
    program's (which says to answer it), the same words go on with that question's turns; asked
    again after an answer, they are a new question."""
    first = len(asked) - 1
    while (
        first > 0
        and is_note(messages[asked[first] - 1])
        and text_of(messages[asked[first - 1]]) == text_of(messages[asked[first]])
    ):
        first -= 1
    return asked[first]


def text_of(message: dict[str, Any]) -> str:
    """A message's text (a system prompt's whole: it holds the tools)."""
    content = message.get("content")
    if isinstance(content, list):
        content = "".join(str(p.get("text", "")) for p in content if isinstance(p, dict))
    if not isinstance(content, str):
        return ""
    return content if message.get("role") == "system" else content[:READ_CHARS]


def is_question(message: dict[str, Any]) -> bool:
    """A user message that asks: no tool results, no bracketed note of the program's."""
    text = text_of(message).lstrip()
    return message.get("role") == "user" and not text.startswith(("<tool_result", "["))


def is_note(message: dict[str, Any]) -> bool:
    """A user message in brackets: a note of the program's, not the user's words."""
    return message.get("role") == "user" and text_of(message).lstrip().startswith("[")


def is_summary(message: dict[str, Any]) -> bool:
    """Earlier rounds compacted into a note, a line `- name(arguments) -> result` each."""
    text = text_of(message)
    return message.get("role") == "user" and text.startswith("[") and "\n- " in text


def call_format(body: dict[str, Any], messages: list[dict[str, Any]]) -> CallFormat:
    """The shape asked for, and the tags of the prompt's example call (`<tool_call>{"name"`)."""
    prompt, tools = system_text(messages), native_tools(body)
    tags = next((t for p in prompt.split('{"name"')[:-1] if (t := tags_before(p))), None)
    opening, closing = tags or ("<tool_call>", "</tool_call>")
    if isinstance(body.get("tools"), list):
        dag = any(RESERVED_ID in member(t.parameters, "properties") for t in tools)
        return CallFormat("native", opening, closing, dag, *required_call(body, tools))
    if member(body, "response_format").get("type") in ("json_schema", "json_object"):
        return CallFormat("json", opening, closing)
    examples = [read_json(p.split(closing, 1)[0]) for p in prompt.split(opening)[1:]]
    dag = any(isinstance(e, dict) and ID_KEY in e and DEPENDS_KEY in e for e in examples)
    return CallFormat("text", opening, closing, dag)


def required_call(body: dict[str, Any], tools: list[ToolSpec]) -> tuple[str | None, bool]:
    """What tool_choice requires: with "required" and a final_answer tool, answers through it
    (toolcall's schema strategy); else whether a call must come ("required", a named one)."""
    choice = body.get("tool_choice")
    answers = choice == "required" and any(t.name == "final_answer" for t in tools)
    must = isinstance(choice, dict) or (choice == "required" and not answers)
    return ("final_answer" if answers else None), must


def tags_before(text: str) -> tuple[str, str] | None:
    head = text.rstrip()
    name = head[head.rfind("<") + 1 : -1] if head.endswith(">") and "<" in head else ""
    if name[:1].isalpha() and all(c.isalnum() or c in "_.:-" for c in name):
        return f"<{name}>", f"</{name}>"
    return None


def system_text(messages: list[dict[str, Any]]) -> str:
    return "\n".join(text_of(m) for m in messages if m.get("role") == "system")


def member(value: Any, key: str) -> dict[str, Any]:
    found = value.get(key) if isinstance(value, dict) else None
    return found if isinstance(found, dict) else {}


def properties(spec: ToolSpec) -> dict[str, dict[str, Any]]:
    """A tool's parameters (name → schema), as many as a model would read."""
    props = spec.parameters.get("properties")
    items = list(props.items())[:128] if isinstance(props, dict) else []
    return {k: v for k, v in items if isinstance(v, dict)}


def required(spec: ToolSpec) -> list[str]:
    names = spec.parameters.get("required")
    return [n for n in names if isinstance(n, str)] if isinstance(names, list) else []


def enum_values(schema: dict[str, Any]) -> list[Any]:
    """The values a parameter allows: its `enum`, or one in its `anyOf` branches."""
    branches = schema.get("anyOf")
    options = [schema, *(branches if isinstance(branches, list) else [])]
    enums = [o["enum"] for o in options if isinstance(o, dict) and isinstance(o.get("enum"), list)]
    return list(enums[0][:1000]) if enums else []


def description_of(schema: dict[str, Any]) -> str:
    return str(schema.get("description", ""))[:1000]


def read_tools(body: dict[str, Any], fmt: CallFormat, messages: list[Any]) -> list[ToolSpec]:
    """The tools offered: `tools`, the prompt's `# Tools` section, or JSON mode's branches."""
    if fmt.shape == "native":
        return [without_reserved(t) for t in native_tools(body)]
    if fmt.shape == "text":
        return prompt_tools(system_text(messages))
    schema = member(member(member(body, "response_format"), "json_schema"), "schema")
    branches = schema.get("anyOf")
    found = [
        member(b, "properties") for b in (branches if isinstance(branches, list) else [])[:128]
    ]
    names = [(member(props, "name").get("const"), props) for props in found]
    return [ToolSpec(n, "", member(p, "arguments")) for n, p in names if isinstance(n, str)]


def without_reserved(tool: ToolSpec) -> ToolSpec:
    """The reserved arguments are about the calls, not the tool."""
    props = member(tool.parameters, "properties")
    kept = {k: v for k, v in props.items() if k not in (RESERVED_ID, RESERVED_DEPENDS)}
    return ToolSpec(tool.name, tool.description, {**tool.parameters, "properties": kept})


def native_tools(body: dict[str, Any]) -> list[ToolSpec]:
    functions = [member(entry, "function") for entry in (body.get("tools") or [])[:128]]
    named = [f for f in functions if isinstance(f.get("name"), str)]
    return [
        ToolSpec(f["name"], str(f.get("description") or "")[:2000], member(f, "parameters"))
        for f in named
    ]


def prompt_tools(prompt: str) -> list[ToolSpec]:
    """The tools of a prompt's `# Tools` section: `## name`, a description, and lines
    `- param: type (required|optional, default x) — description`; else those it lists as JSON
    in <tools>, as Qwen's and Hermes' own chat templates do."""
    return section_tools(prompt) or listed_tools(prompt)


def listed_tools(prompt: str) -> list[ToolSpec]:
    """The tools of a prompt's <tools> block: JSON objects, each a "tools" entry of the request
    ({"type": "function", "function": {...}}) or the function itself."""
    # every block: the templates name the empty tags ("within <tools></tools> XML tags") first
    text, decoder, at = "\n".join(tools_blocks(prompt)), json.JSONDecoder(), 0
    tools: list[ToolSpec] = []
    while (start := text.find("{", at)) >= 0 and len(tools) < 128:
        try:
            value, at = decoder.raw_decode(text, start)
        except (ValueError, RecursionError):
            break
        function = member(value, "function") or (value if isinstance(value, dict) else {})
        if isinstance(function.get("name"), str):
            about = str(function.get("description") or "")[:2000]
            tools.append(ToolSpec(function["name"], about, member(function, "parameters")))
    return tools


def tools_blocks(prompt: str) -> Iterator[str]:
    """What each <tools>...</tools> holds, read once from start to end: a regular expression
    searched anew from every unclosed <tools> made a long prompt of them quadratic."""
    at = 0
    while (start := prompt.find("<tools>", at)) >= 0:
        end = prompt.find("</tools>", start)
        if end < 0:
            return
        yield prompt[start + len("<tools>") : end]
        at = end + len("</tools>")


def section_tools(prompt: str) -> list[ToolSpec]:
    """The tools of toolcall's own `# Tools` section: `## name`, a description, a parameter a
    line."""
    _, found, rest = prompt.partition("# Tools\n")
    tools = []
    for section in rest.split("\n# ", 1)[0].split("## ")[1:128] if found else []:
        name, _, text = section.partition("\n")
        about, _, listed = text.partition("Parameters:")
        params = [p for line in listed.splitlines() if (p := read_parameter(line.strip()))]
        required = [name for name, _, need in params if need]
        schema = {
            "type": "object",
            "properties": {n: s for n, s, _ in params},
            "required": required,
        }
        tools.append(ToolSpec(name.strip(), about.strip().replace("(no description)", ""), schema))
    return tools


def read_parameter(line: str) -> tuple[str, dict[str, Any], bool] | None:
    name, colon, rest = line.removeprefix("- ").partition(": ")
    marks = [(rest.find(f" ({need}"), need) for need in ("required", "optional")]
    at, need = min(((i, n) for i, n in marks if i >= 0), default=(-1, ""))
    if not line.startswith("- ") or not colon or " " in name or at < 0:
        return None
    kind, tail = rest[:at], rest[at + len(need) + 2 :]
    schema, tail = parameter_schema(kind, tail)
    return (name, schema, need == "required") if tail.startswith(")") else None


def parameter_schema(kind: str, tail: str) -> tuple[dict[str, Any], str]:
    """A parameter's schema from its type (`string`, `"a" | "b"`, `any`) and what follows it
    (`, default x) — description`), and what is left unread of that."""
    options = kind.split(" | ")
    schema: dict[str, Any] = {"type": kind} if kind != "any" else {}
    if all(o.startswith('"') for o in options):
        schema = {"enum": [read_json(o, o) for o in options]}
    if tail.startswith(", default "):
        end = tail.find(") — ") if ") — " in tail else len(tail) - 1
        schema["default"], tail = read_json(tail[10:end], tail[10:end]), tail[end:]
    if tail.startswith(") — "):
        schema["description"] = tail[4:]
    return schema, tail


@dataclass
class _Turn:
    calls: list[tuple[str, Call]]
    results: dict[int, str] = field(default_factory=dict)

    def attach(self, call_id: str, name: str, content: str) -> None:
        """A result goes to its call: by id, else the first open call of its name, else the
        first open call; one for no call read back gets a call of its own, unread. Past
        READ_CALLS results a turn reads no more (10,000 of them took minutes)."""
        if len(self.results) >= READ_CALLS:
            return
        waiting = [i for i in range(len(self.calls)) if i not in self.results]
        by_id = [i for i in waiting if call_id and self.calls[i][0] == call_id]
        by_name = [i for i in waiting if self.calls[i][1].name == name]
        chosen = (by_id or by_name or waiting or [len(self.calls)])[0]
        if chosen == len(self.calls):
            self.calls.append((call_id, Call(name, {}, written="")))
        self.results[chosen] = content

    def exchanges(self, dag: bool) -> tuple[Exchange, ...]:
        made = [Exchange(call, self.results.get(i)) for i, (_, call) in enumerate(self.calls)]
        results = {e.call.ref: e.result or "" for e in made if e.call.ref and not e.failed}
        return tuple(replace(e, call=as_run(e.call, results)) if dag else e for e in made)


def read_turns(messages: list[dict[str, Any]], fmt: CallFormat) -> tuple[tuple[Exchange, ...], ...]:
    turns: list[_Turn] = []
    for message in messages:
        role, text = message.get("role"), text_of(message)
        if is_summary(message):
            turns.append(summary_turn(text))
        elif role == "assistant":
            turns.append(_Turn(assistant_calls(message, fmt)[:READ_CALLS]))
        elif role == "tool" and turns:
            call_id, name = message.get("tool_call_id"), message.get("name")
            turns[-1].attach(str(call_id or ""), str(name or ""), text)
        elif role == "user" and turns and text.lstrip().startswith("<tool_result"):
            for call_id, name, content in tagged_results(text)[:READ_CALLS]:
                turns[-1].attach(call_id, name, content)
    return tuple(turn.exchanges(fmt.dag) for turn in turns[-READ_TURNS:] if turn.calls)


def summary_turn(text: str) -> _Turn:
    """Compacted rounds: each `- name(arguments) -> result` line, a call made."""
    turn = _Turn([])
    for line in text.splitlines()[:READ_CALLS]:
        head, arrow, result = line.removeprefix("- ").partition(") -> ")
        name, paren, arguments = head.partition("(")
        if arrow and paren and " " not in name:
            turn.results[len(turn.calls)] = result
            turn.calls.append(("", Call(name, read_object(arguments)[0] or {})))
    return turn


def tagged_results(text: str) -> list[tuple[str, str, str]]:
    """(id, name, content) of each closed `<tool_result id=".." name="..">` block."""
    found = []
    for piece in text.split("</tool_result>")[:-1]:
        head, _, content = piece[piece.rfind("<tool_result") :].partition(">")
        call_id, name = (head.partition(f'{k}="')[2].partition('"')[0] for k in ("id", "name"))
        found.append((call_id, name, content.strip("\n")))
    return found


def assistant_calls(message: dict[str, Any], fmt: CallFormat) -> list[tuple[str, Call]]:
    """Its calls: native ones, or the JSON in its tags (or in ```json fences, as chat models
    write them; or its whole text in JSON mode). With --dag, what a call names itself and
    waits for comes from its reserved arguments (native) or the keys beside them (text)."""
    native = message.get("tool_calls")
    if isinstance(native, list):
        entries = [e for e in native[:READ_CALLS] if isinstance(e, dict)]
        return [
            (str(e.get("id") or ""), native_call(member(e, "function"), fmt.dag)) for e in entries
        ]
    calls = [text_call(piece, fmt.dag) for piece in call_texts(text_of(message), fmt)]
    return [("", c) for c in calls if c.name or c.written is not None]


def call_texts(text: str, fmt: CallFormat) -> list[str]:
    """The text of each call a reply writes: in its tags, else in ```json fences."""
    if fmt.shape == "json":
        return [text]
    tagged = [p.split(fmt.close_tag, 1)[0] for p in text.split(fmt.open_tag)[1:]]
    fenced = [p.removeprefix("json").strip() for p in text.split("```")[1::2]]
    return (tagged or [p for p in fenced if p[:1] == "{"])[:READ_CALLS]


def text_call(piece: str, dag: bool) -> Call:
    """A call written as `{"name": .., "arguments": {..}}` (or "parameters", as some write it)."""
    payload, repaired = read_object(piece)
    found = payload or {}
    arguments = found.get("arguments", found.get("parameters"))
    arguments = read_object(arguments)[0] if isinstance(arguments, str) else arguments
    call = Call(
        str(found.get("name") or ""), as_dict(arguments), written=piece if repaired else None
    )
    return linked(call, found if dag else {}, ID_KEY, DEPENDS_KEY)


def native_call(function: dict[str, Any], dag: bool) -> Call:
    raw = function.get("arguments")
    arguments, written = native_arguments(raw) if isinstance(raw, str) else (raw, None)
    kept = {k: v for k, v in as_dict(arguments).items() if k not in (RESERVED_ID, RESERVED_DEPENDS)}
    call = Call(str(function.get("name") or ""), kept, written=written)
    return linked(call, arguments if dag else {}, RESERVED_ID, RESERVED_DEPENDS)


def native_arguments(raw: str) -> tuple[dict[str, Any] | None, str | None]:
    """A native call's arguments text, read once: the object it holds, and, for arguments that
    were no JSON object, their text as the model wrote them (a server's history carries such
    text as a JSON string of it, since a server that reads the history back refuses broken
    JSON; a client may echo it as it came)."""
    strict = read_json(raw, ValueError)
    arguments, repaired = object_of(raw, strict)
    if arguments is not None and not repaired:
        return arguments, None
    return arguments, strict if isinstance(strict, str) and strict.strip() else raw


def linked(call: Call, fields: Any, ref_key: str, waits_key: str) -> Call:
    """The call with the name it gave itself and what it waits for (--dag)."""
    ref, waits = (fields.get(k) if isinstance(fields, dict) else None for k in (ref_key, waits_key))
    items = waits if isinstance(waits, list) else [] if waits is None else [waits]
    named = str(ref) if isinstance(ref, (str, int)) and str(ref).strip() else None
    return replace(call, ref=named, depends_on=tuple(dict.fromkeys(map(str, items))))


def as_run(call: Call, results: dict[str, str]) -> Call:
    """The call as the engine ran it (--dag): each whole-argument placeholder `{{ref.field}}`
    put in from that result; skipped when it cannot be."""
    arguments = dict(call.arguments)
    for name, value in call.arguments.items():
        if isinstance(value, str) and value[:2] == "{{" and value[-2:] == "}}" and "." in value:
            ref, _, key = value[2:-2].partition(".")
            data = read_json(results.get(ref, ""))
            if not isinstance(data, dict) or key not in data:
                return replace(call, skipped=True)
            arguments[name] = data[key]
    return replace(call, arguments=arguments)


def as_dict(value: Any) -> dict[str, Any]:
    return dict(value) if isinstance(value, dict) else {}


def read_json(text: str, otherwise: Any = None) -> Any:
    try:
        return json.loads(text)
    except (ValueError, RecursionError):
        return otherwise


def read_object(text: str) -> tuple[dict[str, Any] | None, bool]:
    """A JSON object, and whether it had to be repaired (a repair is a guess; long broken text
    is not repaired: json-repair is slow on some)."""
    return object_of(text, read_json(text, ValueError))


def object_of(text: str, value: Any) -> tuple[dict[str, Any] | None, bool]:
    """read_object, given what strict JSON made of `text` (ValueError when it is none)."""
    repaired = value is ValueError
    if repaired and text.strip() and len(text) <= 800:
        import json_repair  # only for broken JSON (a fault's): most requests hold none

        with contextlib.suppress(ValueError, RecursionError, TypeError, IndexError):
            value = json_repair.loads(text)
    return (value if isinstance(value, dict) else None), repaired


_QUOTED = re.compile(r"(?<![A-Za-z])'([^']+)'(?![A-Za-z])|\"([^\"]+)\"|“([^”]+)”|`([^`]+)`")


def quoted(text: str) -> str | None:
    """The first text a question quotes ("…", '…', “…”, `…`); an apostrophe in a word is none."""
    found = _QUOTED.search(text)
    return next(g for g in found.groups() if g) if found else None


# --- reading an error, as any model would -------------------------------------------------------

Supply = Callable[[str, dict[str, Any]], Any]
"""A value for a parameter (its name, its schema) from what the model knows, or None."""


def is_number(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


TYPES: dict[str, Callable[[Any], bool]] = {
    "string": lambda v: isinstance(v, str),
    "integer": lambda v: isinstance(v, int) and not isinstance(v, bool),
    "number": is_number,
    "boolean": lambda v: isinstance(v, bool),
}


def repaired(call: Call, error: str, tools: Sequence[ToolSpec], supply: Supply) -> Call | None:
    """The call put right from what its error names, as a model that has never seen the
    program's sentences reads them: a tool it names for an unknown one; an argument it names
    that the tool does not take, moved to the parameter it names that was meant (a required
    one the call lacks, else one alike) or left out; a required one it names and the call
    lacks, supplied; a value it points at, made one it lists as allowed or of the type it names;
    a value it quotes beside ours, so alike it was meant ("'Pari' ... 'Paris'"). None when it
    names no tool the call could have meant."""
    spec = next((t for t in tools if t.name == call.name), None)
    if spec is None:
        meant = closest(call.name, [t.name for t in tools if named(error, t.name)])
        return replace(call, name=meant) if meant else None
    return replace(call, arguments=repaired_arguments(call.arguments, error, spec, supply))


def repaired_arguments(
    arguments: dict[str, Any], error: str, spec: ToolSpec, supply: Supply
) -> dict[str, Any]:
    """A known tool's arguments put right from what the error names (see repaired)."""
    props, needed = properties(spec), required(spec)
    pointed = [p for p in props if named(error, p)]
    arguments = moved(requoted(arguments, error), error, props, needed, pointed)
    lacking = [p for p in needed if p in pointed and p not in arguments]
    supplied = {name: supply(name, member(props, name)) for name in lacking}
    arguments |= {n: v for n, v in supplied.items() if v is not None}
    return {n: fit(v, member(props, n), error) if n in pointed else v for n, v in arguments.items()}


def requoted(arguments: dict[str, Any], error: str) -> dict[str, Any]:
    """Each value the error quotes beside another so alike it was meant, made that one."""
    quoted = [a or b for a, b in re.findall(r"'([^'\n]{1,80})'|\"([^\"\n]{1,80})\"", error[:2000])]
    alike = [q for q in quoted if q not in arguments.values()]
    return {n: closest(v, alike, 0.8) or v if v in quoted else v for n, v in arguments.items()}


def moved(
    arguments: dict[str, Any],
    error: str,
    props: dict[str, dict[str, Any]],
    needed: list[str],
    pointed: list[str],
) -> dict[str, Any]:
    """Each argument the error names that the tool does not take, moved to the parameter it
    names that was meant (a required one the call lacks, else one alike), or left out."""
    for wrong in [a for a in list(arguments) if a not in props and named(error, a)]:
        value, free = arguments.pop(wrong), [p for p in pointed if p not in arguments]
        meant = closest(wrong, [p for p in free if p in needed]) or closest(wrong, free, 0.5)
        arguments |= {meant: value} if meant else {}
    return arguments


def fit(value: Any, schema: dict[str, Any], error: str) -> Any:
    """A value as the error says it must be: the allowed value it lists nearest to ours, or of
    the type it names (the number in a text, the text of a number)."""
    listed = [o for o in enum_values(schema) if named(error, str(o))]
    kind = str(schema.get("type"))
    if listed and value not in listed:
        return next(o for o in listed if str(o) == closest(str(value), list(map(str, listed))))
    if kind not in TYPES or TYPES[kind](value) or not named(error, kind):
        return value
    if kind in ("number", "integer"):
        number = number_in(value, kind)
        return value if number is None else number
    return str(value) if kind == "string" else value


def number_in(value: Any, kind: str) -> int | float | None:
    """The number a value writes ("12 km" → 12), whole where the type or the number is."""
    found = re.search(r"-?\d+(?:\.\d+)?", str(value))
    return whole(float(found[0]), kind) if found else None


def whole(number: float, kind: Any) -> int | float:
    """A number as a whole one where its type (`integer`) or its value is: 12.0 → 12."""
    fits = math.isfinite(number) and (kind == "integer" or number.is_integer())
    return int(number) if fits else number


def named(text: str, word: str) -> bool:
    """`word` stands in `text` as a name of its own, not inside a longer one."""
    return bool(word) and re.search(rf"(?<!\w){re.escape(word)}(?!\w)", text) is not None


def closest(word: str, candidates: Sequence[str], cutoff: float = 0.0) -> str | None:
    """The candidate most like `word` (case aside), if any is at least `cutoff` alike."""

    def alike(candidate: str) -> float:
        return difflib.SequenceMatcher(None, word.casefold(), candidate.casefold()).ratio()

    best = max(candidates, key=alike, default=None)
    return best if best is not None and alike(best) >= cutoff else None
