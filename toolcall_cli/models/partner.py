"""A test partner with no plan memory: given the first calls to make (a faulty one among them is
the experiment's input), it makes them, and after an error it repairs a call only from what the
error's text names: the request's tool names, the called tool's parameter names and allowed
values, a type name, the word JSON. Besides the error it has its own call, as the conversation
shows it, and the question; nothing tells it the right call but the error. After results it
answers with them. It shows that toolcall's errors carry what a model needs to fix its call,
whatever their words: it knows none of them."""

from __future__ import annotations

import difflib
import json
import random
import re
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any

from toolcall_cli.wire import ModelRequest
from toolcall_cli.wire.completions import AssistantOutput, WireCall, respond

OPEN, CLOSE = "<tool_call>", "</tool_call>"
"""The text protocol's tags, as every text-protocol prompt shows them."""
_NUMBER = re.compile(r"-?\d+(?:\.\d+)?")
_QUOTED = re.compile(r"\"([^\"]+)\"|'([^']+)'|“([^”]+)”|`([^`]+)`")
_PAIR = re.compile(r'"(\w+)"\s*:\s*("(?:[^"\\]|\\.)*"?|-?\d+(?:\.\d+)?|true|false|null)')
_PARAMETER = re.compile(r"^- (\w+): (.*?) \((required|optional)")
_TYPES: dict[str, type | tuple[type, ...]] = {
    "string": str,
    "number": (int, float),
    "integer": int,
    "boolean": bool,
}


Tools = dict[str, tuple[dict[str, Any], list[str]]]
"""Each tool's parameter schemas by name, and its required parameters."""


@dataclass(frozen=True)
class PartnerCall:
    """A call the partner writes: `arguments` as a dict, or as text written as it stands (JSON
    broken on purpose); `cut` ends the reply inside it, as a reply out of tokens does."""

    name: str
    arguments: dict[str, Any] | str = field(default_factory=dict)
    cut: bool = False

    @property
    def text(self) -> str:
        if isinstance(self.arguments, str):
            return self.arguments
        return json.dumps(self.arguments, ensure_ascii=False)


@dataclass(frozen=True)
class Made:
    """A call of an earlier reply, as the conversation shows it, and what came back for it."""

    call: PartnerCall
    result: str

    @property
    def failed(self) -> bool:
        return self.result.lstrip().lower().startswith("error")


@dataclass(frozen=True)
class Seen:
    """What the partner reads of a request: the question, the tools offered (each parameter's
    schema, and which are required), its calls since the question and their results."""

    question: str
    tools: Tools
    turns: list[list[Made]]
    shape: str
    """"native" (`tools`), "json" (`response_format`) or "text" (tags)."""


class Partner:
    """The test partner (see the module): deterministic, no network, no plan memory."""

    name = "partner"

    def __init__(self, first: Sequence[PartnerCall]) -> None:
        self.first = tuple(first)

    def stream(self, request: ModelRequest) -> Iterator[dict[str, Any]]:
        seen = read(request.body)
        decided = self.decide(seen)
        output = written(decided, seen.shape, len(request.body.get("messages") or []))
        yield from respond(request.body, output, response_id="partner", rng=random.Random(0))

    def decide(self, seen: Seen) -> list[PartnerCall] | str:
        if not seen.turns:
            return list(self.first)
        failed = [made for made in seen.turns[-1] if made.failed]
        tried = {(m.call.name, m.call.text) for turn in seen.turns for m in turn}
        fixes = [repaired(made, seen) for made in failed]
        if failed and all(f is not None and (f.name, f.text) not in tried for f in fixes):
            return [f for f in fixes if f is not None]
        return answer(seen)


def answer(seen: Seen) -> str:
    """What came back, and what could not be done."""
    done = [m for turn in seen.turns for m in turn if not m.failed]
    lines = [f"{m.call.name}: {m.result.strip()}" for m in done]
    lines += [f"I could not make {m.call.name} work." for m in seen.turns[-1] if m.failed]
    return "\n".join(lines)


# --- repairing a call from its error -----------------------------------------------------------


def repaired(made: Made, seen: Seen) -> PartnerCall | None:
    """The call put right from what its error names, or None when the error names nothing to
    put right."""
    error, call = made.result, made.call
    if isinstance(call.arguments, str):  # its text could not be read back
        again = reread(call, seen.question)
        return again if mentions(error, again.name) or mentions(error, "JSON") else None
    if call.name not in seen.tools:
        named = [tool for tool in seen.tools if mentions(error, tool)]
        meant = closest(call.name, named)
        return PartnerCall(meant, call.arguments) if meant else None
    properties, required = seen.tools[call.name]
    arguments = fixed(dict(call.arguments), properties, required, error, seen.question)
    return PartnerCall(call.name, arguments) if arguments != call.arguments else None


def fixed(
    arguments: dict[str, Any],
    properties: dict[str, Any],
    required: list[str],
    error: str,
    question: str,
) -> dict[str, Any]:
    """The arguments changed where the error points: a name the tool does not take goes to the
    parameter it was meant for (else away), a required one it lacks comes from the question, a
    value gets the type or the allowed value the error names."""
    named = [p for p in properties if mentions(error, p)]
    arguments = renamed(arguments, properties, required, named, error)
    for name in [p for p in required if p in named and p not in arguments]:
        value = from_question(question, properties[name])
        if value is not None:
            arguments[name] = value
    return {
        name: fitted(value, properties[name], error) if name in named else value
        for name, value in arguments.items()
    }


def renamed(
    arguments: dict[str, Any],
    properties: dict[str, Any],
    required: list[str],
    named: list[str],
    error: str,
) -> dict[str, Any]:
    """Each argument the tool does not take, and the error names, moved to the named parameter
    it was meant for: a required one it lacks, else one alike enough; else left out."""
    moved = {a: v for a, v in arguments.items() if a in properties or not mentions(error, a)}
    for wrong in [a for a in arguments if a not in moved]:
        free = [p for p in named if p not in moved]
        meant = closest(wrong, [p for p in free if p in required]) or closest(wrong, free, 0.5)
        if meant:
            moved[meant] = arguments[wrong]
    return moved


def fitted(value: Any, schema: dict[str, Any], error: str) -> Any:
    """`value` as the error says it must be: one of the allowed values it lists, or of the type
    it names."""
    options = [o for o in schema.get("enum") or [] if mentions(error, str(o))]
    if options and value not in options:
        return closest(str(value), [str(o) for o in options], 0.0)
    kind = schema.get("type")
    if not isinstance(kind, str) or not mentions(error, kind) or of_type(value, kind):
        return value
    if kind in ("number", "integer"):
        found = _NUMBER.search(str(value))
        number = float(found.group()) if found else None
        return value if number is None else int(number) if number.is_integer() else number
    return str(value) if kind == "string" else value


def of_type(value: Any, kind: str) -> bool:
    wanted = _TYPES.get(kind)
    return wanted is None or (
        isinstance(value, wanted) and (kind == "boolean") == isinstance(value, bool)
    )


def reread(call: PartnerCall, question: str) -> PartnerCall:
    """The call again from the text the conversation shows of it, each value it cut short
    completed from the question."""
    arguments = {
        key: completed(value, question) if isinstance(value, str) else value
        for key, value in pairs(call.text).items()
    }
    name = str(arguments.pop("name", call.name))
    return PartnerCall(name, arguments)


def pairs(text: str) -> dict[str, Any]:
    """The `"key": value` pairs that can be read in JSON text, broken or cut short as it may be."""
    found = {}
    for key, raw in _PAIR.findall(text):
        closed = raw if raw.endswith('"') or not raw.startswith('"') else raw + '"'
        value = read_json(closed)
        if value is not None:
            found[key] = value
    return found


def completed(value: str, question: str) -> str:
    """A value cut short, as the question writes it whole: the rest of the word it starts."""
    at = question.find(value)
    if not value or at < 0:
        return value
    end = at + len(value)
    while end < len(question) and not question[end].isspace():
        end += 1
    return question[at:end].rstrip("?？.。!！,，")


def from_question(question: str, schema: dict[str, Any]) -> Any:
    """A value for a parameter the question gives: a number, or a text it quotes."""
    if schema.get("type") in ("number", "integer"):
        found = _NUMBER.search(question)
        return json.loads(found.group()) if found else None
    quoted = _QUOTED.search(question)
    return next(g for g in quoted.groups() if g) if quoted else None


def mentions(text: str, word: str) -> bool:
    """`word` stands in `text` as a word of its own (not inside a longer name)."""
    return bool(word) and re.search(rf"(?<![\w]){re.escape(word)}(?![\w])", text) is not None


def closest(word: str, candidates: Sequence[str], cutoff: float = 0.0) -> str | None:
    """The candidate most like `word` (case aside), if any is at least `cutoff` alike."""
    scored = [
        (difflib.SequenceMatcher(None, word.casefold(), c.casefold()).ratio(), c)
        for c in candidates
    ]
    best = max(scored, default=None, key=lambda s: s[0])
    return best[1] if best is not None and best[0] >= cutoff else None


# --- the request and the reply, as any model reads and writes them ------------------------------


def read(body: dict[str, Any]) -> Seen:
    messages = [m for m in body.get("messages") or [] if isinstance(m, dict)]
    shape = "native" if body.get("tools") else "json" if body.get("response_format") else "text"
    asked = [i for i, m in enumerate(messages) if is_question(m)]
    start = asked[-1] if asked else 0
    question = text_of(messages[start]) if asked else ""
    return Seen(question, tools_of(body, messages), turns_of(messages[start + 1 :]), shape)


def is_question(message: dict[str, Any]) -> bool:
    """A user message that asks: not results, not a bracketed note from the program."""
    text = text_of(message).lstrip()
    return message.get("role") == "user" and not text.startswith(("<tool_result", "["))


def text_of(message: dict[str, Any]) -> str:
    content = message.get("content")
    return content if isinstance(content, str) else ""


def tools_of(body: dict[str, Any], messages: list[dict[str, Any]]) -> Tools:
    """Each tool's parameters and required ones: from `tools`, the JSON schema's branches, or
    the system prompt's `## name` sections and their `- param: type (required)` lines."""
    prompt = "\n".join(text_of(m) for m in messages if m.get("role") == "system")
    functions = [t.get("function") or {} for t in body.get("tools") or []]
    return {**from_functions([*functions, *schema_branches(body)]), **from_prompt(prompt)}


def schema_branches(body: dict[str, Any]) -> list[dict[str, Any]]:
    """JSON mode's calls, as functions: each anyOf branch with a `name` const."""
    schema = (body.get("response_format") or {}).get("json_schema", {}).get("schema", {})
    found = []
    for branch in schema.get("anyOf") or []:
        props = branch.get("properties") or {}
        if "const" in (props.get("name") or {}):
            found.append({"name": props["name"]["const"], "parameters": props.get("arguments")})
    return found


def from_functions(functions: list[dict[str, Any]]) -> Tools:
    found: Tools = {}
    for function in functions:
        parameters = function.get("parameters") or {}
        properties = parameters.get("properties") or {}
        found[function["name"]] = (properties, parameters.get("required") or [])
    return found


def from_prompt(prompt: str) -> Tools:
    found: Tools = {}
    for section in prompt.split("\n## ")[1:]:
        lines = section.splitlines()
        params = [p.groups() for line in lines if (p := _PARAMETER.match(line))]
        properties = {name: prompt_schema(kind) for name, kind, _ in params}
        required = [name for name, _, need in params if need == "required"]
        found[lines[0].strip()] = (properties, required)
    return found


def prompt_schema(kind: str) -> dict[str, Any]:
    """`number` or `"today" | "tomorrow"` as a schema."""
    if kind.startswith('"'):
        return {"enum": [json.loads(part) for part in kind.split(" | ")]}
    return {"type": kind}


def turns_of(messages: list[dict[str, Any]]) -> list[list[Made]]:
    turns: list[list[Made]] = []
    for message in messages:
        if message.get("role") == "assistant":
            calls = calls_of(message)
            if calls:
                turns.append([Made(call, "") for call in calls])
        elif turns and message.get("role") in ("tool", "user"):
            answered = [m for m in turns[-1] if m.result]
            results = [text_of(message)] if message["role"] == "tool" else blocks(text_of(message))
            for i, result in enumerate(results, len(answered)):
                if i < len(turns[-1]):
                    turns[-1][i] = Made(turns[-1][i].call, result)
    return turns


def calls_of(message: dict[str, Any]) -> list[PartnerCall]:
    """The calls of an assistant message: native ones, or tagged (or JSON) text, each read
    back as a call when its JSON can be read, else kept as the text it is."""
    native = message.get("tool_calls") or []
    if native:
        return [read_call(c["function"]["name"], c["function"]["arguments"]) for c in native]
    text = text_of(message)
    pieces = [p.split(CLOSE, 1)[0] for p in text.split(OPEN)[1:]] or ([text] if "{" in text else [])
    calls = []
    for piece in pieces:
        whole = read_json(piece)
        if isinstance(whole, dict) and isinstance(whole.get("arguments"), dict):
            calls.append(PartnerCall(str(whole.get("name")), whole["arguments"]))
        else:
            calls.append(PartnerCall(str(pairs(piece).get("name", "")), piece))
    return calls


def read_call(name: str, arguments: str) -> PartnerCall:
    value = read_json(arguments)
    return PartnerCall(name, value if isinstance(value, dict) else arguments)


def read_json(text: str) -> Any:
    try:
        return json.loads(text)
    except ValueError:
        return None


def blocks(text: str) -> list[str]:
    """The results of a text-protocol message: each `<tool_result ...>` block's content."""
    found = []
    for part in text.split("<tool_result")[1:]:
        body = part.split(">", 1)[-1].split("</tool_result>", 1)[0]
        found.append(body.strip())
    return found


def written(decided: list[PartnerCall] | str, shape: str, position: int) -> AssistantOutput:
    """The reply in the request's wire shape."""
    if isinstance(decided, str):
        return AssistantOutput(json.dumps({"answer": decided}) if shape == "json" else decided)
    cut = "length" if any(c.cut for c in decided) else None
    if shape == "native":
        calls = tuple(
            WireCall(f"call_{position}_{i}", c.name, c.text) for i, c in enumerate(decided)
        )
        return AssistantOutput(None, calls, cut or "tool_calls")
    if shape == "json":
        return AssistantOutput(as_json(decided[0]), finish_reason=cut or "stop")
    tagged = [OPEN + as_json(c) + ("" if c.cut else CLOSE) for c in decided]
    return AssistantOutput("\n".join(tagged), finish_reason=cut or "stop")


def as_json(call: PartnerCall) -> str:
    """The call as a JSON object of its name and arguments, unclosed when it is cut."""
    text = f'{{"name": {json.dumps(call.name)}, "arguments": {call.text}'
    return text if call.cut else text + "}"
