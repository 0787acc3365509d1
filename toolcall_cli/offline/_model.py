"""The embedded offline model (the default): reads any strategy's request, decides, and answers
in that strategy's wire format exactly as an OpenAI-compatible server would. Faults plug in
between deciding and writing (FaultBase): when one fires, and what it may look at."""

from __future__ import annotations

import hashlib
import json
import random
import re
from collections import Counter
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, replace
from typing import Any, ClassVar

from toolcall_cli.messages import ToolSpec
from toolcall_cli.offline import _lexicon as lx
from toolcall_cli.offline._answers import ask_for, direct_answer, final_answer, no_currency_tool
from toolcall_cli.offline._planner import (
    asks_currency_conversion,
    chained_calls,
    context_calls,
    conversion_calls,
    handles_currencies,
    make_plan,
    pending_calls,
)
from toolcall_cli.offline._question import Reading, read_question
from toolcall_cli.offline._recovery import failed_calls, fix_call, retry_allowed, retry_lead_in
from toolcall_cli.offline._request import (
    DEPENDS_KEY,
    ID_KEY,
    RESERVED_DEPENDS,
    RESERVED_ID,
    CallFormat,
    Conversation,
    Decision,
    Exchange,
    PlannedCall,
    Shape,
    read_conversation,
    repair_budget,
    replies_since_question,
)
from toolcall_cli.wire import ModelRequest
from toolcall_cli.wire.completions import AssistantOutput, WireCall, respond

_MAX_TURNS = 8
_SAMPLING_FIELDS = ("temperature", "top_p", "seed", "max_tokens")


def decide(conversation: Conversation) -> Decision:
    """The next step: the calls still needed, or the final answer."""
    tools = conversation.tools
    reading = read_question(conversation.question, tools)
    if not conversation.turns:
        return first_step(reading, conversation)
    history = [e for turn in conversation.turns for e in turn]
    if len(conversation.turns) < _MAX_TURNS:
        failures = failed_calls(history)
        retries = [
            fixed
            for e in conversation.turns[-1]
            if e.failed
            and not e.unparsed
            and not e.call.skipped
            and (fixed := fix_call(e, reading, tools))
            and retry_allowed(fixed, e, failures)
        ]
        if retries:
            return Decision(tuple(retries), retry_lead_in(conversation.turns[-1], reading))
        more = pending_calls(reading, tools, history) or conversion_calls(reading, tools, history)
        if more and any(e.unparsed for e in conversation.turns[-1]):
            # Calls that could not be read are made again in full: say why.
            return Decision(tuple(more), retry_lead_in(conversation.turns[-1], reading))
        if more:
            return Decision(tuple(more), lead_in(more, reading, follow_up=True))
    return Decision(text=final_answer(reading, conversation.turns, tools))


def first_step(reading: Reading, conversation: Conversation) -> Decision:
    """The question's own calls; else what the conversation so far makes of it; else a partial
    attempt; else ask for what the tool needs; else answer without tools."""
    tools = conversation.tools
    if asks_currency_conversion(reading) and not any(handles_currencies(t) for t in tools):
        return Decision(text=no_currency_tool(reading, tools))
    planned = make_plan(reading, tools)
    if planned.calls and planned.complete:
        chain = chained_calls(planned.calls, reading, tools) if conversation.format.dag else ()
        if chain:
            return Decision(chain, chain_lead_in(chain, reading))
        return Decision(planned.calls, lead_in(planned.calls, reading))
    follow_up = tuple(context_calls(reading, tools, conversation.earlier))
    if follow_up:
        return Decision(follow_up, lead_in(follow_up, reading))
    if planned.calls:
        return Decision(planned.calls, lead_in(planned.calls, reading))
    if planned.wanted is not None and planned.wanted.spec is not None:
        return Decision(text=ask_for(planned.wanted.spec, planned.wanted.missing, reading))
    return direct_answer(reading, tools)


def tool_list(calls: Sequence[PlannedCall]) -> str:
    counts = Counter(call.name for call in calls)
    return ", ".join(f"{n} ×{c}" if c > 1 else n for n, c in counts.items())


def lead_in(calls: Sequence[PlannedCall], reading: Reading, *, follow_up: bool = False) -> str:
    tools = tool_list(calls)
    if follow_up:
        return f"拿到结果了，接下来调用 {tools}。" if reading.zh else f"Got that. Next, {tools}."
    if reading.zh:
        return f"好的，我先调用 {tools} 获取需要的信息。"
    return f"Let me call {tools} to find out."


def chain_lead_in(calls: Sequence[PlannedCall], reading: Reading) -> str:
    firsts = tool_list([c for c in calls if not c.depends_on])
    seconds = tool_list([c for c in calls if c.depends_on])
    if reading.zh:
        return f"好的，我调用 {firsts}，并把它的结果直接交给 {seconds}。"
    return f"Let me call {firsts} and pass its result straight to {seconds}."


def write_output(decision: Decision, fmt: CallFormat, call_ids: Sequence[str]) -> AssistantOutput:
    if decision.is_answer and fmt.shape == "json":
        return AssistantOutput(json.dumps({"answer": decision.text}, ensure_ascii=False))
    if decision.is_answer and fmt.answer_tool and call_ids:
        arguments = json.dumps({"answer": decision.text}, ensure_ascii=False)
        return AssistantOutput(
            None, (WireCall(call_ids[0], fmt.answer_tool, arguments),), "tool_calls"
        )
    if decision.is_answer:
        return AssistantOutput(decision.text)
    style = decision.style
    if fmt.shape == "native":
        calls = tuple(
            WireCall(call_id, c.name, written_json(written_call(c, fmt), style))
            for call_id, c in zip(call_ids, decision.calls, strict=True)
        )
        return AssistantOutput(None, calls, "tool_calls")
    payloads = [written_json(written_call(c, fmt), style) for c in decision.calls]
    if fmt.shape == "json":
        return AssistantOutput(payloads[0])  # this mode carries one call per reply
    tags = [fmt.tagged(payload) for payload in payloads]
    return AssistantOutput("\n".join([decision.text, *tags]) if decision.text else "\n".join(tags))


def written_call(call: PlannedCall, fmt: CallFormat) -> dict[str, Any]:
    """What a call's JSON holds: its arguments (native), or its name and arguments as the
    prompt's examples write them (text, json). With --dag, its own name and the calls it waits
    for go where the request shows them: reserved arguments (native), or keys beside (text)."""
    native = fmt.shape == "native"
    fields = dict(call.arguments) if native else {"name": call.name, "arguments": call.arguments}
    if not fmt.dag:
        return fields
    id_key, depends_key = (RESERVED_ID, RESERVED_DEPENDS) if native else (ID_KEY, DEPENDS_KEY)
    if call.ref:
        fields = {**fields, id_key: call.ref} if native else {id_key: call.ref, **fields}
    if call.depends_on:
        fields[depends_key] = list(call.depends_on)
    return fields


_IDENTIFIER_RE = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


def written_json(value: Any, style: frozenset[str] = frozenset()) -> str:
    """JSON as the model writes it; with a style, as carelessly as models do: `{'a': 'it\\'s'}`,
    `{a: 1}`, `{"a": 1,}` (json-repair's everyday work)."""
    if isinstance(value, str) and "single_quotes" in style:
        inner = json.dumps(value, ensure_ascii=False)[1:-1].replace('\\"', '"')
        return "'" + inner.replace("'", "\\'") + "'"
    if not style or not isinstance(value, (dict, list)):
        return json.dumps(value, ensure_ascii=False)
    if isinstance(value, list):
        items = [written_json(item, style) for item in value]
    else:
        bare = "unquoted_keys" in style
        items = [
            f"{k if bare and _IDENTIFIER_RE.fullmatch(k) else written_json(k, style)}: "
            f"{written_json(v, style)}"
            for k, v in ((str(k), v) for k, v in value.items())
        ]
    ends = "{}" if isinstance(value, dict) else "[]"
    comma = "," if items and "trailing_comma" in style else ""
    return f"{ends[0]}{', '.join(items)}{comma}{ends[1]}"


def digest(*parts: object) -> str:
    text = "|".join(json.dumps(p, ensure_ascii=False, sort_keys=True, default=str) for p in parts)
    return hashlib.sha256(text.encode()).hexdigest()


class OfflineModel:
    """The default model: deterministic for a given request and seed, no network, no key."""

    name = "offline"

    def __init__(self, seed: int = 0, faults: Sequence[FaultBase] = ()) -> None:
        self.seed = seed
        self.faults = tuple(faults)

    def stream(self, request: ModelRequest) -> Iterator[dict[str, Any]]:
        body = request.body
        # Sampling settings change nothing here (the model is deterministic, seeded on its
        # construction), so they leave the digest, and with it every draw, as it was.
        key = digest(self.seed, {k: v for k, v in body.items() if k not in _SAMPLING_FIELDS})
        with repair_budget():  # not across the yields below: they run in the caller's context
            output = self.answer(body, key)
        yield from respond(body, output, response_id=f"chatcmpl-{key[:24]}", rng=random.Random(key))

    def answer(self, body: dict[str, Any], key: str) -> AssistantOutput:
        """The reply to a request, faults and all, before it is cut into the wire's shape."""
        conversation = read_conversation(body)
        context = FaultContext(
            conversation, replies_since_question(body), bool(body.get("stream")), key
        )
        decision = decide(conversation)
        for fault in self.faults:
            decision = fault.alter_decision(decision, context)
        # An answer written as a final_answer call (tool_choice "required") needs an id too.
        call_ids = self.call_ids(body, conversation, max(len(decision.calls), 1))
        output = write_output(decision, conversation.format, call_ids)
        for fault in self.faults:
            output = fault.alter_output(output, context)
        return output

    def call_ids(self, body: dict[str, Any], conversation: Conversation, count: int) -> list[str]:
        """Ids unique within a conversation: from the seed, the question and the history length."""
        position = len(body.get("messages") or [])
        return [
            f"call_{digest(self.seed, conversation.question, position, i)[:24]}"
            for i in range(count)
        ]


CORRECTS_AFTER_ERROR = 0.8
"""The chance that the model fixes a mistake the engine reported; else it makes it once more."""

ALL_SHAPES: frozenset[Shape] = frozenset({"text", "native", "json"})
TEXT_ONLY: frozenset[Shape] = frozenset({"text"})
"""For framing faults: next to native `tool_calls` prose is normal, and JSON mode's grammar allows
nothing around the object; there are no tags to fence, drop or split."""


@dataclass(frozen=True)
class FaultContext:
    """What a fault may look at: what the model read from the request, how many turns came
    before, whether the reply is streamed."""

    conversation: Conversation
    turn: int
    """The model's replies since the question, readable or not (a cut-off call counts too)."""
    streaming: bool
    key: str
    """The request's digest (seed and body): faults derive their own RNGs from it."""

    @property
    def format(self) -> CallFormat:
        return self.conversation.format


class FaultBase:
    """A deliberate misbehaviour: it may change what the model decides (a wrong argument name) or
    how it writes it (single quotes). This base decides when it fires; each kind says how it
    applies and what the engine says back."""

    kind: ClassVar[str]
    about: ClassVar[str]
    """One line for `toolcall faults`."""
    shapes: ClassVar[frozenset[Shape]] = ALL_SHAPES
    reported_as: ClassVar[re.Pattern[str] | None] = None
    """How the engine's error about this mistake reads; None when the engine fixes it silently."""

    def __init__(self, rate: float = 1.0) -> None:
        self.rate = rate

    def alter_decision(self, decision: Decision, context: FaultContext) -> Decision:
        return decision

    def alter_output(self, output: AssistantOutput, context: FaultContext) -> AssistantOutput:
        return output

    def rng(self, context: FaultContext) -> random.Random:
        """This fault's own draws for this request, independent of the other faults."""
        return random.Random(f"{context.key}:{self.kind}")

    def fires(self, context: FaultContext, applicable: bool) -> bool:
        if not applicable or self.rate <= 0 or context.format.shape not in self.shapes:
            return False
        chance = random.Random(f"{context.key}:{self.kind}:fires").random()
        if self.repeating(context):
            return chance >= CORRECTS_AFTER_ERROR
        return not self.had_opportunity(context) and chance < self.rate

    def had_opportunity(self, context: FaultContext) -> bool:
        """Whether an earlier reply could already have carried this fault: it fires fresh only
        on its first opportunity. Most faults apply to the first reply that makes calls."""
        return context.turn > 0

    def repeating(self, context: FaultContext) -> bool:
        """The engine reported this mistake on the last turn, and not on the turn before (so a
        mistake is made at most twice in a row)."""
        turns = context.conversation.turns
        return (
            bool(turns)
            and self.reported(turns[-1])
            and not (len(turns) > 1 and self.reported(turns[-2]))
        )

    def reported(self, turn: Sequence[Exchange]) -> bool:
        pattern = self.reported_as
        return pattern is not None and any(pattern.search(e.result or "") for e in turn)


def tool_spec(context: FaultContext, name: str) -> ToolSpec | None:
    return next((t for t in context.conversation.tools if t.name == name), None)


def asks_in_chinese(context: FaultContext) -> bool:
    return lx.has_cjk(context.conversation.question)


def with_call(decision: Decision, index: int, call: PlannedCall) -> Decision:
    return replace(decision, calls=(*decision.calls[:index], call, *decision.calls[index + 1 :]))
