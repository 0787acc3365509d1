"""A test partner with no plan memory: given the first calls to make (a faulty one among them is
the experiment's input), it makes them, and after an error it repairs a call only from what the
error's text names: the request's tool names, the called tool's parameter names and allowed
values, a type name, the word JSON. Besides the error it has its own call, as the conversation
shows it, and the question; nothing tells it the right call but the error. After results it
answers with them. It shows that toolcall's errors carry what a model needs to fix its call,
whatever their words: it knows none of them."""

from __future__ import annotations

import json
import random
import re
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any

from toolcall_cli.models import _conversation as rq
from toolcall_cli.wire import ModelRequest
from toolcall_cli.wire.completions import AssistantOutput, WireCall, respond

_PAIR = re.compile(r'"(\w+)"\s*:\s*("(?:[^"\\]|\\.)*"?|-?\d+(?:\.\d+)?|true|false|null)')


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


class Partner:
    """The test partner (see the module): deterministic, no network, no plan memory."""

    name = "partner"

    def __init__(self, first: Sequence[PartnerCall]) -> None:
        self.first = tuple(first)

    def stream(self, request: ModelRequest) -> Iterator[dict[str, Any]]:
        seen = rq.read_conversation(request.body)
        decided = self.decide(seen)
        output = written(decided, seen.format, len(request.body.get("messages") or []))
        yield from respond(request.body, output, response_id="partner", rng=random.Random(0))

    def decide(self, seen: rq.Conversation) -> list[PartnerCall] | str:
        if not seen.turns:
            return list(self.first)
        failed = [e for e in seen.turns[-1] if e.failed]
        made = [e.call for turn in seen.turns for e in turn]
        fixes = [repaired(e, seen) for e in failed]
        if failed and all(f is not None and f not in made for f in fixes):
            return [PartnerCall(f.name, f.arguments) for f in fixes if f is not None]
        return answer(seen, failed)


def answer(seen: rq.Conversation, failed: list[rq.Exchange]) -> str:
    """Each result in words, and each call still failing said so."""
    done = [
        f"{e.call.name}: {in_words(e.result or '')}" for t in seen.turns for e in t if not e.failed
    ]
    return "\n".join([*done, *(f"I could not make {e.call.name} work." for e in failed)])


def in_words(result: str) -> str:
    """A result as an answer says it: a JSON result's fields one by one (`temp_c 10`), its
    items in a row; never its JSON handed back."""
    data = rq.read_json(result.strip())
    if isinstance(data, dict):
        return ", ".join(f"{key} {value}" for key, value in data.items())
    return ", ".join(map(str, data)) if isinstance(data, list) else result.strip()


def repaired(made: rq.Exchange, seen: rq.Conversation) -> rq.Call | None:
    """The call put right from what its error names, or None when it names nothing to put
    right: a call whose text could not be read is written again (completed from the question)
    when the error names it or its JSON."""
    error, call = made.result or "", made.call
    if call.written is not None:
        again = reread(call, seen.question)
        return again if rq.named(error, again.name) or rq.named(error, "JSON") else None
    fixed = rq.repaired(
        call, error, seen.tools, lambda _, schema: from_question(seen.question, schema)
    )
    return fixed if fixed != call else None


def reread(call: rq.Call, question: str) -> rq.Call:
    """The call again from its text, each value it cut short completed from the question."""
    found = {}
    for key, raw in _PAIR.findall(call.written or ""):
        value = rq.read_json(raw if raw.endswith('"') or not raw.startswith('"') else raw + '"')
        found[key] = completed(value, question) if isinstance(value, str) else value
    return rq.Call(str(found.pop("name", call.name)), found)


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
        found = re.search(r"-?\d+(?:\.\d+)?", question)
        return json.loads(found.group()) if found else None
    return rq.quoted(question)


def written(decided: list[PartnerCall] | str, fmt: rq.CallFormat, position: int) -> AssistantOutput:
    """The reply in the request's wire shape."""
    if isinstance(decided, str):
        return AssistantOutput(json.dumps({"answer": decided}) if fmt.shape == "json" else decided)
    cut = "length" if any(c.cut for c in decided) else None
    if fmt.shape == "native":
        calls = [WireCall(f"call_{position}_{i}", c.name, c.text) for i, c in enumerate(decided)]
        return AssistantOutput(None, tuple(calls), cut or "tool_calls")
    texts = [
        f'{{"name": {json.dumps(c.name)}, "arguments": {c.text}' + ("" if c.cut else "}")
        for c in decided
    ]
    if fmt.shape == "json":
        return AssistantOutput(texts[0], finish_reason=cut or "stop")
    tagged = [
        fmt.open_tag + t + ("" if c.cut else fmt.close_tag)
        for t, c in zip(texts, decided, strict=True)
    ]
    return AssistantOutput("\n".join(tagged), finish_reason=cut or "stop")
